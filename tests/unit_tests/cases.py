"""One table of citation cases, checked at every layer: parser, session, runnable.

Each case is run against `sample_documents()` with `TextReferenceStyle`:
1 a.html#chap1, 2 a.html#chap2, 3 b.pdf, 4 b.pdf, 5 c.pdf, 6 d.csv,
7 (no source), 8 https://e.org/x titled "E & co".
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.unit_tests.fakes import CLASSIC_ANSWER


def listing(*labels: str) -> str:
    """The Text style's list of sources."""
    if not labels:
        return ""
    return "\n\n" + "".join(f"- [{n}] {label}\n" for n, label in enumerate(labels, start=1))


@dataclass(frozen=True)
class Case:
    name: str
    answer: str
    expected: str


LONG_MARKER = "A[1](id=" + "1, " * 25 + "3)"

CASES = [
    Case(
        "classic",
        CLASSIC_ANSWER,
        "Yes[1], certainly[2], no[1], yes[3], yes[4]" + listing("b.pdf", "a.html#chap2", "a.html#chap1", "c.pdf"),
    ),
    Case("number placeholder", "Paris is big[NUMBER](id=5).", "Paris is big[1]." + listing("c.pdf")),
    Case("any integer", "A[42](id=1) B[-3](id=2)", "A[1] B[2]" + listing("a.html#chap1", "a.html#chap2")),
    Case("several ids", "A[1](id=3, 5) B[2](id=3,5)", "A[1][2] B[1][2]" + listing("b.pdf", "c.pdf")),
    Case("range", "A[1](id=1-3).", "A[1][2][3]." + listing("a.html#chap1", "a.html#chap2", "b.pdf")),
    Case("spaces inside", "A[ 1 ](id = 3) B[2]( id=5 )", "A[1] B[2]" + listing("b.pdf", "c.pdf")),
    Case(
        "adjacent same source once",
        "A[1](id=3)[2](id=4) B[3](id=4)[4](id=5)",
        "A[1] B[1][2]" + listing("b.pdf", "c.pdf"),
    ),
    Case("adjacent sources", "A[1](id=1)[2](id=2)", "A[1][2]" + listing("a.html#chap1", "a.html#chap2")),
    Case(
        "invalid ids dropped",
        "A[1](id=0) B[2](id=9) C[3](id=-1) D[4](id=) E[5](id=9, 3).",
        "A B C D E[1]." + listing("b.pdf"),
    ),
    Case("backtick fence", "```\nx[1](id=3)\n```\nY[1](id=3)", "```\nx[1](id=3)\n```\nY[1]" + listing("b.pdf")),
    Case(
        "tilde fence with info",
        "~~~python\nl[1](id=3)\n~~~\nok[1](id=5)",
        "~~~python\nl[1](id=3)\n~~~\nok[1]" + listing("c.pdf"),
    ),
    Case(
        "fence closes only with its own char",
        "```\n~~~\n[1](id=3)\n```\nx[1](id=3)",
        "```\n~~~\n[1](id=3)\n```\nx[1]" + listing("b.pdf"),
    ),
    Case(
        "shorter run does not close a fence",
        "````\n```\n[1](id=3)\n````\nx[1](id=3)",
        "````\n```\n[1](id=3)\n````\nx[1]" + listing("b.pdf"),
    ),
    Case(
        "indented fence",
        "   ```\n[1](id=3)\n   ```\nz[1](id=5)",
        "   ```\n[1](id=3)\n   ```\nz[1]" + listing("c.pdf"),
    ),
    Case("inline code", "Use `f[1](id=3)` here[1](id=5)", "Use `f[1](id=3)` here[1]" + listing("c.pdf")),
    Case("double backtick span", "``a ` [1](id=3)`` b[1](id=3)", "``a ` [1](id=3)`` b[1]" + listing("b.pdf")),
    Case(
        "code span ends at a blank line",
        "a ` b[1](id=3)\n\nc[1](id=3)",
        "a ` b[1](id=3)\n\nc[1]" + listing("b.pdf"),
    ),
    Case(
        "markdown links kept",
        "See [the docs](https://x.org) and [1](https://y.org)[1](id=1)",
        "See [the docs](https://x.org) and [1](https://y.org)[1]" + listing("a.html#chap1"),
    ),
    Case("checklists kept", "- [ ] todo\n- [x] done[1](id=1)", "- [ ] todo\n- [x] done[1]" + listing("a.html#chap1")),
    Case("indexing kept", "use list[0] or d[k][1](id=2)", "use list[0] or d[k][1]" + listing("a.html#chap2")),
    Case("unclosed bracket at end", "tail [", "tail ["),
    Case("unfinished marker at end", "tail [1](id=3", "tail [1](id=3"),
    Case(
        "unicode",
        "Café 🎉[1](id=8) 日本語[2](id=7)。",
        "Café 🎉[1] 日本語[2]。" + listing("E & co (https://e.org/x)", "untitled document"),
    ),
    Case("nested brackets", "[[1](id=3)]", "[[1]]" + listing("b.pdf")),
    Case(
        "near misses stay text",
        "[1](id=3 x) [1](idx=3) [1] (id=3) [a](id=3) [1](id=3",
        "[1](id=3 x) [1](idx=3) [1] (id=3) [a](id=3) [1](id=3",
    ),
    Case("dagger syntax is off by default", "A【3†source】 B[1]", "A【3†source】 B[1]"),
    Case("marker longer than the holdback bound", LONG_MARKER, LONG_MARKER),
    Case("plain prose", "Just prose, no citations at all.", "Just prose, no citations at all."),
    Case("marker first", "[1](id=3) starts here", "[1] starts here" + listing("b.pdf")),
    Case("empty answer", "", ""),
]

CASE_IDS = [case.name for case in CASES]
