"""The types a user's program gets from the package, checked by mypy itself (`typing_usage.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api", reason="the typing test needs mypy: pip install -e '.[dev]'")
pytest.importorskip("langchain.agents", reason="the typing test needs the agents extra: pip install -e '.[agents]'")

USAGE = Path(__file__).with_name("typing_usage.py")


@pytest.mark.slow
def test_a_users_program_type_checks_with_the_errors_it_should_have() -> None:
    """mypy --strict on typing_usage.py: clean, so every marked error is still caught and every type is as asserted."""
    stdout, stderr, status = mypy_api.run(["--strict", "--no-error-summary", "--python-version", "3.10", str(USAGE)])
    assert (status, stdout, stderr) == (0, "", "")
