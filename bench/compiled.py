"""The compiled build in the benchmark: built once per state of the sources, run in a second process.

mypyc bakes each module's name into its compiled code, so the compiled build
cannot be imported beside the pure one under another name (as ``--compare``
does with an older revision). It runs in a process of its own instead, which
streams the same workloads and measures its own bare stream, floor and
middleware; ``run.py`` asks it for one run at a time, in turn with its own
contenders (A B C A' B' C' A B C ...), so both processes see the same moments
of a noisy machine, and each build's ratios are to the bare stream measured
in its own process. The two processes never run at once: one waits for the
other's answer.

The build is the wheel users get (``HATCH_BUILD_HOOK_ENABLE_MYPYC=1 python -m
build``), made from the working tree and unpacked under
``bench/results/compiled-<hash of the sources>`` (not committed), so a second
run of the same sources does not compile again; ``--compiled-wheel`` takes a
wheel built elsewhere (CI builds one).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = "BENCH_COMPILED_PACKAGE_DIR"
# Its rows are named by the pure process's contender names with this in front.
TAG = "compiled: "


def source_hash() -> str:
    """A hash of everything the compiled wheel is built from: the package's files and pyproject.toml."""
    digest = hashlib.sha256()
    files = [ROOT / "pyproject.toml", ROOT / "langchain_refs_cli.py"]
    files += sorted(
        path
        for path in (ROOT / "langchain_refs").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".so", ".pyd", ".pyc")
    )
    for path in files:
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def unpack(wheel: Path, into: Path) -> Path:
    """``wheel`` unpacked into ``into`` (a directory for sys.path, as pip would install it)."""
    if "none-any" in wheel.name:
        msg = f"{wheel.name} is the pure wheel: build the compiled one with HATCH_BUILD_HOOK_ENABLE_MYPYC=1"
        raise SystemExit(msg)
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(into)
    return into


def build(wheel: Path | None = None) -> Path:
    """A directory holding the compiled build: ``wheel`` unpacked, else the working tree's, built once and kept."""
    if wheel is not None:
        return unpack(wheel, Path(tempfile.mkdtemp(prefix="bench-compiled-")))
    site = ROOT / "bench" / "results" / f"compiled-{source_hash()}"
    if (site / "langchain_refs").is_dir():
        return site
    print("building the compiled wheel (HATCH_BUILD_HOOK_ENABLE_MYPYC=1 python -m build) ...", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="bench-wheel-") as out:
        # The sdist first, then the wheel from it: the .so files land in the sdist's unpacked copy, not here.
        subprocess.run(
            [sys.executable, "-m", "build", "--outdir", out, str(ROOT)],
            env={**os.environ, "HATCH_BUILD_HOOK_ENABLE_MYPYC": "1"},
            check=True,
            stdout=subprocess.DEVNULL,
        )
        (built,) = Path(out).glob("*.whl")
        shutil.rmtree(site, ignore_errors=True)
        for stale in site.parent.glob("compiled-*"):
            shutil.rmtree(stale, ignore_errors=True)
        return unpack(built, site)


class Worker:
    """The compiled build's process: one request, one answer, as JSON lines on its stdin and stdout."""

    def __init__(self, site: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve"],
            env={**os.environ, PACKAGE_DIR: str(site)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        hello = self.call("hello")
        if not hello["compiled"]:
            msg = f"the second process imported the pure build ({hello['file']}), not the compiled one"
            raise SystemExit(msg)
        self.file = hello["file"]

    def call(self, op: str, **arguments: Any) -> Any:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(json.dumps({"op": op, **arguments}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the compiled build's process ended (exit status {self.process.wait()})")
        answer = json.loads(line)
        if "error" in answer:
            raise SystemExit(f"the compiled build's process failed: {answer['error']}")
        return answer["result"]

    def timing(self, op: str, **arguments: Any) -> tuple[float, float]:
        wall, cpu = self.call(op, **arguments)
        return wall, cpu

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def serve() -> None:
    """The second process: import the compiled build, then time what it is asked to, one run per request."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, os.environ[PACKAGE_DIR])
    replies = sys.stdout
    sys.stdout = sys.stderr  # whatever else prints must not reach the replies

    import langchain_refs
    from bench import run

    loop = asyncio.new_event_loop()
    streams: dict[str, Any] = {}
    sessions: dict[str, Any] = {}
    session_texts: dict[tuple[int, bool], list[str]] = {}

    def handle(request: dict[str, Any]) -> Any:
        op = request["op"]
        if op == "hello":
            return {"compiled": langchain_refs.COMPILED, "file": langchain_refs.__file__}
        if op == "stream_setup":
            streams.clear()
            inner = run.inner_stream(request["chunk_size"], request["kind"], request["length"])
            streams.update(run.own_contenders(inner))
            return list(streams)
        if op == "stream_run":
            runnable = streams[request["name"]]
            if request["mode"] == "sync":
                return run.timed(lambda: run.drain(runnable, run.INPUTS))
            return run.timed(lambda: loop.run_until_complete(run.adrain(runnable, run.INPUTS)))
        if op == "session_setup":
            sessions.clear()
            sessions.update(run.session_middlewares())
            session_texts.update(run.session_texts())
            return list(sessions)
        if op == "session_run":
            key = (request["size"], request["markers"])
            return run.session_run(sessions[request["name"]], session_texts[key])
        if op == "passages":
            return run.passage_cost(request["repeats"])
        if op == "agent_stream":
            return run.agent_stream_cost(request["repeats"])
        msg = f"unknown request {op!r}"
        raise ValueError(msg)

    for line in sys.stdin:
        try:
            answer = {"result": handle(json.loads(line))}
        except Exception as error:  # reported to the first process, which stops with it
            answer = {"error": f"{type(error).__name__}: {error}"}
        replies.write(json.dumps(answer) + "\n")
        replies.flush()
    loop.close()


if __name__ == "__main__":
    if sys.argv[1:] != ["--serve"]:
        raise SystemExit("run by bench/run.py: python bench/compiled.py --serve")
    serve()
