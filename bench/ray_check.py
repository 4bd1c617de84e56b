"""``langchain-refs check`` at scale: rows/s of the local engine and of the Ray engine with 1 and 2 CPUs.

    python bench/ray_check.py                  # prints the table (20,000 rows, about 2 minutes on 2 cores)
    python bench/ray_check.py --write-readme   # ... and puts it in docs/ray.md (the ray section)
    python bench/ray_check.py --rows 2000      # a quick look

All three runs check the same generated rows (``generated_rows`` of
``tests/integration_tests/test_ray_check.py``: RefChecker-shaped items,
seeded) with the offline checker, ``extract-check``, in one run of this
script. The local engine is the ``check`` command in this process; the Ray
engine is `check_with_ray` on a local Ray started with ``num_cpus`` 1, then
2, one worker per CPU, 1,000 rows per batch. Wall time is the job's, Ray's
start excluded (shown apart: a cluster pays it once, not per job). CPU time
is that of this process and every process under it (the Ray workers, the
raylet, Ray Data's coordinating actors), read from ``/proc`` while the job
runs, so Ray's own overhead is counted; the checking workers' share is
shown apart. A 20-row job shows what any job costs however small. Each
engine's output is checked to be the local engine's before a figure is
shown. Figures are one run's: on a shared machine, run it twice.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.readme import replace_section  # noqa: E402
from bench.run import commit, machine  # noqa: E402
from langchain_refs.apps import main as command  # noqa: E402
from langchain_refs.apps.check import check_with_ray  # noqa: E402
from tests.integration_tests.test_ray_check import generated_rows  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def tree_times() -> dict[int, tuple[str, float]]:
    """(name, own CPU seconds) of this process and each process under it (Ray's raylet, workers...)."""
    parents: dict[int, int] = {}
    found: dict[int, tuple[str, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        # After the name: state, ppid, ... utime and stime are the 14th and 15th fields of the line.
        parents[int(entry.name)] = int(fields[1])
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        found[int(entry.name)] = (name, (int(fields[11]) + int(fields[12])) / TICKS)
    me = os.getpid()

    def mine(pid: int) -> bool:
        while pid not in (me, 0, 1) and pid in parents:
            pid = parents[pid]
        return pid == me

    return {pid: value for pid, value in found.items() if mine(pid)}


def measured(run: Callable[[], Any]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds of the process tree, CPU seconds of the checking workers) of one run.

    Ray's workers end with the job and nobody's child-time counters get theirs, so the tree is sampled
    every 0.1 s while the job runs and each process counts with the last CPU time it was seen with.
    """
    before = tree_times()
    seen = dict(before)
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.1):
            seen.update(tree_times())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    wall = time.perf_counter()
    run()
    wall = time.perf_counter() - wall
    stop.set()
    sampler.join()
    seen.update(tree_times())
    spent = {pid: (name, cpu - before.get(pid, (name, 0.0))[1]) for pid, (name, cpu) in seen.items()}
    workers = sum(cpu for name, cpu in spent.values() if name.startswith("ray::MapWorker"))
    return wall, sum(cpu for _, cpu in spent.values()), workers


def read_results(folder: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for part in sorted(folder.glob("part-*.jsonl"))
        for line in part.read_text(encoding="utf-8").splitlines()
    ]


SMALL = 20  # rows of the job that shows an engine's fixed cost per job


def run(rows: int, batch_size: int) -> dict[str, Any]:
    import ray

    results: dict[str, Any] = {"rows": rows, "batch_size": batch_size, "engines": []}
    with tempfile.TemporaryDirectory() as tmp:
        source, small = Path(tmp) / "rows.jsonl", Path(tmp) / "small.jsonl"
        lines = generated_rows(rows, seed=20)
        source.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        small.write_text("".join(line + "\n" for line in lines[:SMALL]), encoding="utf-8")

        def local(given: Path, out: Path) -> None:
            command(["check", "extract-check", "--input", str(given), "--output", str(out), "--no-progress"])

        fixed = measured(lambda: local(small, Path(tmp) / "local-small.jsonl"))[0]
        wall, cpu, _ = measured(lambda: local(source, Path(tmp) / "local.jsonl"))
        expected = [json.loads(line) for line in (Path(tmp) / "local.jsonl").read_text(encoding="utf-8").splitlines()]
        results["engines"].append({"engine": "local (1 process)", "wall": wall, "cpu": cpu, "fixed": fixed})
        for cpus in (1, 2):
            started = time.perf_counter()
            ray.init(num_cpus=cpus, include_dashboard=False, logging_level="warning")
            ray.data.DataContext.get_current().enable_progress_bars = False
            startup = time.perf_counter() - started

            def on_ray(given: Path, out: Path, cpus: int = cpus) -> None:
                check_with_ray(str(given), str(out), batch_size=batch_size, concurrency=cpus)

            # First, as a user's first job on a running Ray: what any job costs, however small.
            fixed = measured(lambda cpus=cpus: on_ray(small, Path(tmp) / f"ray-small-{cpus}"))[0]
            out = Path(tmp) / f"ray-{cpus}"
            wall, cpu, workers = measured(lambda out=out: on_ray(source, out))
            ray.shutdown()
            if read_results(out) != expected:
                raise SystemExit(f"Ray with {cpus} CPUs wrote other results than the local engine")
            name = f"Ray, {cpus} CPU{'s' if cpus > 1 else ''}"
            results["engines"].append(
                {"engine": name, "wall": wall, "cpu": cpu, "workers": workers, "fixed": fixed, "startup": startup}
            )
    return results


def table(results: dict[str, Any]) -> str:
    rows = results["rows"]
    local, one, two = results["engines"]
    lines = [
        f"`langchain-refs check extract-check`, offline checker, {rows:,} generated rows, "
        f"{results['batch_size']:,} per Ray batch; {machine()}, load average {results.get('load', 0.0):.1f} at "
        f"the start; commit {commit()}; `{results['command']}`.",
        "",
        "| engine | rows/s | wall s | CPU s, all processes | CPU s in the checking workers "
        f"| rows per worker CPU s | wall s of a {SMALL}-row job |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| {local['engine']} | {rows / local['wall']:,.0f} | {local['wall']:.1f} | {local['cpu']:.1f} "
        f"| {local['cpu']:.1f} | {rows / local['cpu']:,.0f} | {local['fixed']:.2f} |",
    ]
    for engine in (one, two):
        lines.append(
            f"| {engine['engine']} | {rows / engine['wall']:,.0f} | {engine['wall']:.1f} | {engine['cpu']:.1f} "
            f"| {engine['workers']:.1f} | {rows / engine['workers']:,.0f} | {engine['fixed']:.2f} |"
        )
    lines += [
        "",
        f"Ray's own start ({one['startup']:.1f} s and {two['startup']:.1f} s) is not in the wall times: a cluster "
        "starts once, not per job. From 1 to 2 CPUs the job's speed changes "
        f"{one['wall'] / two['wall']:.2f}x (2.00x is perfect scaling). The worker CPU time includes each "
        "worker's start (imports, the checker "
        "built once).",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=20_000, help="generated rows (default 20,000)")
    parser.add_argument("--batch-size", type=int, default=1000, help="rows per Ray batch and shard")
    parser.add_argument("--write-readme", action="store_true", help="replace the ray section of docs/ray.md")
    args = parser.parse_args()
    if args.write_readme and args.rows != 20_000:
        parser.error("the docs show 20,000 rows: drop --rows")
    results = run(args.rows, args.batch_size)
    # The machine's load when the run started: other work on the 2 cores bends the Ray figures most.
    results["load"] = os.getloadavg()[0]
    results["command"] = "python bench/ray_check.py" + (f" --rows {args.rows}" if args.rows != 20_000 else "")
    text = table(results)
    print(text)
    if args.write_readme:
        replace_section("ray", text)


if __name__ == "__main__":
    main()
