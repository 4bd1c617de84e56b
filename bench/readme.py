"""Write a generated table into its marked section of the project's documentation.

A section is marked ``<!-- name:start -->`` ... ``<!-- name:end -->`` in exactly
one page: the README or a page of ``docs/`` (the benchmark and scaling tables
live in ``docs/cost.md``, the grounding evaluation in ``docs/grounding.md``, the
claims evaluation in ``docs/checking.md``, the Ray table in ``docs/ray.md``).
The commands that write them keep their ``--write-readme`` flag.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def pages() -> list[Path]:
    """The pages a section may live in: the README, then the docs pages in name order."""
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- {re.escape(name)}:start -->\n).*?(<!-- {re.escape(name)}:end -->)", re.DOTALL)


def section_page(name: str) -> Path:
    """The one page that holds the section ``name``; exits with a message when none or several do."""
    pattern = _pattern(name)
    found = [page for page in pages() if pattern.search(page.read_text(encoding="utf-8"))]
    if len(found) != 1:
        where = ", ".join(str(p.relative_to(ROOT)) for p in found) or "no page"
        raise SystemExit(f"<!-- {name}:start --> ... <!-- {name}:end --> must be in one page, found in {where}")
    return found[0]


def replace_section(name: str, text: str) -> None:
    """Put ``text`` between ``<!-- name:start -->`` and ``<!-- name:end -->`` in the page that holds them."""
    page = section_page(name)
    content = page.read_text(encoding="utf-8")
    page.write_text(_pattern(name).sub(lambda m: m[1] + text + "\n" + m[2], content), encoding="utf-8")
    print(f"wrote the {name} section of {page.relative_to(ROOT)}")
