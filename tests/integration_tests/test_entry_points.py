"""The console scripts as a user runs them, in a process of their own."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


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


@pytest.mark.slow
def test_demo_ctrl_c_mid_answer() -> None:
    """SIGINT while the answer streams: exit 130 and one line "interrupted", no traceback."""
    process = subprocess.Popen(
        [sys.executable, "-m", "langchain_refs", "demo", "--delay", "0.2", "How are sources numbered?"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,  # unbuffered: read(1) returns as soon as the first byte of the answer arrives
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
