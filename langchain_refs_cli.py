"""The ``langchain-refs`` console script: a Ctrl-C while the package imports ends it quietly too.

The command lives in ``langchain_refs.apps``; importing it (LangChain,
Jinja2, the grounding tables) takes a moment, and a Ctrl-C during that
moment would otherwise print Python's ``KeyboardInterrupt`` traceback. This
module stands outside the package so that importing it imports nothing
heavy: it catches that Ctrl-C and exits as every command does on Ctrl-C,
with one line and status 130.

Example:
    >>> main(["demo", "--delay", "0", "How do I run the tests?"])  # doctest: +ELLIPSIS
    The test suite runs offline with python -m pytest after installing the test extra[1]...
    0
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Import the command line and run it; 130 and one line when Ctrl-C comes first."""
    try:
        from langchain_refs.apps import main as run_command
    except KeyboardInterrupt:
        print("langchain-refs: interrupted", file=sys.stderr)
        return 130
    return run_command(argv)


if __name__ == "__main__":
    raise SystemExit(main())
