"""Write a generated table into its marked section of the project README."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def replace_section(name: str, text: str) -> None:
    """Put ``text`` between ``<!-- name:start -->`` and ``<!-- name:end -->`` in README.md."""
    content = README.read_text(encoding="utf-8")
    pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.DOTALL)
    if not pattern.search(content):
        raise SystemExit(f"README.md has no <!-- {name}:start --> ... <!-- {name}:end --> section")
    README.write_text(pattern.sub(lambda m: m[1] + text + "\n" + m[2], content), encoding="utf-8")
