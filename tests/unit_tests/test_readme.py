"""The README's code runs, its printed samples are true, and CI runs its test command."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.DOTALL | re.MULTILINE)


def blocks() -> list[tuple[str, str]]:
    return [(m[1], m[2]) for m in BLOCK.finditer((ROOT / "README.md").read_text(encoding="utf-8"))]


def test_readme_python_blocks_print_what_the_readme_shows() -> None:
    """Each python block runs (in order, sharing names); a text block after it is its output."""
    namespace: dict[str, object] = {"__name__": "readme"}
    found = blocks()
    ran = 0
    for index, (language, code) in enumerate(found):
        if language != "python":
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"README block {index}", "exec"), namespace)
        ran += 1
        following = found[index + 1] if index + 1 < len(found) else None
        if following and following[0] == "text":
            assert out.getvalue().rstrip("\n") == following[1].rstrip("\n"), f"README block {index}"
    assert ran >= 4


def test_ci_runs_the_readme_commands() -> None:
    """The README shows a demo command and a test command; .ci/run runs the test command."""
    demo_line, test_line = next(code for language, code in blocks() if language == "bash").strip().splitlines()
    assert "langchain-refs demo" in demo_line
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in test_line.split(" && "):
        assert command in ci, command


def test_readme_demo_sample_is_what_the_demo_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """The sample terminal output in the README is what `langchain-refs demo` prints."""
    from langchain_refs.apps import main

    sample = next(code for language, code in blocks() if language == "text" and code.startswith("$ langchain-refs"))
    command, expected = sample.split("\n", 1)
    question = command.split('"')[1]
    main(["demo", "--delay", "0", question])
    assert capsys.readouterr().out.rstrip("\n") == expected.rstrip("\n")
