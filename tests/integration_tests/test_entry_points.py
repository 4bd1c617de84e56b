"""The console scripts as a user runs them, in a process of their own."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def default_sigint() -> None:
    """In the child, before it runs: Ctrl-C does what it does in a terminal.

    A background job of a non-interactive shell ignores SIGINT, and a child
    inherits that; the tests that send SIGINT would then test nothing.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def serving() -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`serve --port 0` in a process of its own (Ctrl-C as in a terminal), and the address it announced.

    The process is killed at the end if it still runs (a failed assertion leaves no server behind).
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "langchain_refs", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    try:
        assert process.stdout is not None
        announced = process.stdout.readline()
        found = re.fullmatch(r"langchain-refs chat UI on (http://127\.0\.0\.1:\d+)\n", announced)
        assert found, announced
        yield process, found[1]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def console_script() -> str:
    """The installed ``langchain-refs`` script, beside this Python or on PATH."""
    beside = Path(sys.executable).parent / "langchain-refs"
    script = str(beside) if beside.exists() else shutil.which("langchain-refs")
    if script is None:
        pytest.skip("the langchain-refs console script is not installed: pip install -e .")
    return script


@pytest.mark.slow
def test_console_script_and_module_entry_points() -> None:
    """Both `langchain-refs` and `python -m langchain_refs` run the demo."""
    commands = [[sys.executable, "-m", "langchain_refs"]]
    script = shutil.which("langchain-refs")
    if script:
        commands.append([script])
    for command in commands:
        out = subprocess.run(
            [*command, "demo", "--delay", "0", "How much text is held back?"],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
        assert re.search(r"held back\[1\]\.", out)


def run_script(*args: str, **options: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "langchain_refs", *args], capture_output=True, text=True, timeout=120, **options
    )


@pytest.mark.slow
def test_demo_with_stdin_closed() -> None:
    """`langchain-refs demo < /dev/null`: one line saying no question was asked, exit 2, no traceback."""
    done = run_script("demo", "--delay", "0", stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "langchain-refs: no question asked: give one as an argument or type it at the prompt"
    ]
    assert done.stdout == ""  # stdin is no terminal: no prompt


@pytest.mark.slow
def test_demo_with_the_question_piped_in() -> None:
    """`echo question | langchain-refs demo`: the answer alone on stdout, no prompt before it."""
    done = run_script("demo", "--delay", "0", input="Which URLs become links?\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Only http, https, mailto and relative URLs become links[1].")


@pytest.mark.slow
def test_demo_ctrl_c_mid_answer() -> None:
    """SIGINT while the answer streams: exit 130 and one line "interrupted", no traceback."""
    process = subprocess.Popen(
        [sys.executable, "-m", "langchain_refs", "demo", "--delay", "0.2", "How are sources numbered?"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,  # unbuffered: read(1) returns as soon as the first byte of the answer arrives
        preexec_fn=default_sigint,
    )
    assert process.stdout is not None
    first = process.stdout.read(1)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert first
    assert out.endswith(b"\n")  # the half-printed answer's line is ended
    assert len(first + out) < 200  # interrupted mid-answer, not after it
    assert process.returncode == 130
    assert err.decode().strip().splitlines() == ["langchain-refs: interrupted"]


@pytest.mark.slow
def test_check_with_a_missing_input(tmp_path: Path) -> None:
    """`langchain-refs check` on a missing file: one line naming it, exit 2, no traceback."""
    missing = tmp_path / "nope.json"
    done = run_script("check", "extract", "--input", str(missing), "--output", str(tmp_path / "o.json"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"langchain-refs: {missing}: no such file"]


@pytest.mark.slow
def test_serve_with_a_port_out_of_range() -> None:
    """`serve --port 99999`: one line saying what a port is, exit 2, nothing announced, no traceback."""
    done = run_script("serve", "--port", "99999")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        "langchain-refs serve: error: argument --port: a port is a number from 0 to 65535, got '99999' "
        "(see langchain-refs serve --help)"
    ]


@pytest.mark.slow
def test_serve_on_a_busy_port() -> None:
    """`serve` on a port another program listens on: one line, exit 2, and no address announced."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_script("serve", "--port", str(port))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"langchain-refs: cannot listen on 127.0.0.1:{port}: the port is in use (choose another with --port)"
    ]


@pytest.mark.slow
def test_serve_announces_its_address_once_serving_and_ctrl_c_exits_130() -> None:
    """`serve --port 0`: the announced address answers at once; Ctrl-C then exits 130 with one line."""
    with serving() as (process, address):
        assert address.rsplit(":", 1)[1] != "0"  # the port the system chose, not the 0 asked for
        with urllib.request.urlopen(address + "/", timeout=30) as page:  # no retry: it serves already
            assert page.status == 200
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert out == ""
    assert err.splitlines() == ["langchain-refs: interrupted"]


@pytest.mark.slow
@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["demo", "What is held back?"]])
def test_ctrl_c_while_the_package_imports(command: list[str]) -> None:
    """Ctrl-C while the console script still imports LangChain: exit 130, one line, no traceback."""
    process = subprocess.Popen(
        [console_script(), *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Python writes a line on stderr as each import ends: the signal comes mid-import.
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
        preexec_fn=default_sigint,
    )
    assert process.stderr is not None
    for line in process.stderr:
        if re.search(r"\| +langchain_core\.\w", line):
            break
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err[-2000:]
    assert out == ""
    assert [line for line in err.splitlines() if not line.startswith("import time:")] == ["langchain-refs: interrupted"]


@pytest.mark.slow
def test_agent_demo_ctrl_c_mid_answer_ends_at_once() -> None:
    """SIGINT while the agent's answer streams: exit 130 with one line, without waiting for the rest of the answer.

    At 0.5 s a token the rest of the answer takes about a minute; LangGraph waits for the model's worker
    thread before the interrupt gets out of its stream, so the offline model must be stopped first.
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "langchain_refs", "demo", "--agent", "--delay", "0.5", "How are sources numbered?"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
        preexec_fn=default_sigint,
    )
    assert process.stdout is not None
    tool_line = b""
    while not tool_line.endswith(b"]\n"):  # the search step's line, then the answer starts
        tool_line += process.stdout.read(1)
    first = process.stdout.read(1)
    time.sleep(2)  # a few tokens in: the main thread waits on LangGraph's stream, the model's thread sleeps
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert tool_line.startswith(b"[search_docs: ")
    assert first
    assert out.endswith(b"\n")
    assert process.returncode == 130
    assert err.decode().strip().splitlines() == ["langchain-refs: interrupted"]


@pytest.mark.slow
@pytest.mark.parametrize("presses", [1, 2])
def test_serve_ctrl_c_while_a_request_is_open_exits_at_once(presses: int) -> None:
    """Ctrl-C (once, or twice) while a client holds a request open: exit 130 within seconds, one line, no traceback.

    The client sends the headers and half the body of a POST, then waits: the request stays open for as
    long as the client likes, and uvicorn's graceful shutdown would wait for it, silently, forever.
    """
    with (
        serving() as (process, address),
        socket.create_connection(("127.0.0.1", int(address.rsplit(":", 1)[1])), timeout=10) as client,
    ):
        head = b"POST /api/chat HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        client.sendall(head + b'Content-Length: 100\r\n\r\n{"question": "Par')
        time.sleep(0.5)  # the server is reading the body
        started = time.monotonic()
        for _ in range(presses):
            process.send_signal(signal.SIGINT)
            time.sleep(0.2)
        out, err = process.communicate(timeout=15)
        took = time.monotonic() - started
    assert process.returncode == 130
    assert out == ""
    assert err.splitlines() == ["langchain-refs: interrupted"]
    assert took < 5
