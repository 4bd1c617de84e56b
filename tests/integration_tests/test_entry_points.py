"""The console scripts as a user runs them, in a process of their own."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

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
