"""One table of citation cases, checked at every layer: parser, session, runnable.

Each case gives, written by hand, the parser's events (``events``) and the
text a session renders with `TextReferenceStyle` (``expected``) against
`sample_documents()`:
1 a.html#chap1, 2 a.html#chap2, 3 b.pdf, 4 b.pdf, 5 c.pdf, 6 d.csv,
7 (no source), 8 https://e.org/x titled "E & co".
All cases use the default holdback bound (64 characters).
"""

from __future__ import annotations

from dataclasses import dataclass

from langchain_refs import Marker, Text
from langchain_refs.streaming import Event
from tests.unit_tests.fakes import CLASSIC_ANSWER


def listing(*labels: str) -> str:
    """The Text style's list of sources."""
    if not labels:
        return ""
    return "\n\n" + "".join(f"- [{n}] {label}\n" for n, label in enumerate(labels, start=1))


def t(text: str) -> Text:
    """A text event."""
    return Text(text=text)


def m(raw: str, *ids: int, malformed: tuple[str, ...] = ()) -> Marker:
    """A marker event of the default syntax."""
    return Marker(raw=raw, ids=ids, malformed=malformed)


@dataclass(frozen=True)
class Case:
    name: str
    answer: str
    expected: str
    events: tuple[Event, ...]


LONG_MARKER = "A[1](id=" + "1, " * 25 + "3)"
STRAY_LINE = "Press the ` key and then hold it down for a few seconds to open the console[1](id=1)."
LONG_SPAN = "Run `pip install langchain-refs langchain-openai langchain-community chromadb` then cite"

CASES = [
    Case(
        "classic",
        CLASSIC_ANSWER,
        "Yes[1], certainly[2], no[1], yes[3], yes[4]" + listing("b.pdf", "a.html#chap2", "a.html#chap1", "c.pdf"),
        (
            t("Yes"),
            m("[1](id=3)", 3),
            t(", certainly"),
            m("[2](id=2)", 2),
            t(", no"),
            m("[3](id=4)", 4),
            t(", yes"),
            m("[4](id=1)", 1),
            t(", yes"),
            m("[5](id=5)", 5),
        ),
    ),
    Case(
        "number placeholder",
        "Paris is big[NUMBER](id=5).",
        "Paris is big[1]." + listing("c.pdf"),
        (t("Paris is big"), m("[NUMBER](id=5)", 5), t(".")),
    ),
    Case(
        "any integer",
        "A[42](id=1) B[-3](id=2)",
        "A[1] B[2]" + listing("a.html#chap1", "a.html#chap2"),
        (t("A"), m("[42](id=1)", 1), t(" B"), m("[-3](id=2)", 2)),
    ),
    Case(
        "several ids",
        "A[1](id=3, 5) B[2](id=3,5)",
        "A[1][2] B[1][2]" + listing("b.pdf", "c.pdf"),
        (t("A"), m("[1](id=3, 5)", 3, 5), t(" B"), m("[2](id=3,5)", 3, 5)),
    ),
    Case(
        "range",
        "A[1](id=1-3).",
        "A[1][2][3]." + listing("a.html#chap1", "a.html#chap2", "b.pdf"),
        (t("A"), m("[1](id=1-3)", 1, 2, 3), t(".")),
    ),
    Case(
        "spaces inside",
        "A[ 1 ](id = 3) B[2]( id=5 )",
        "A[1] B[2]" + listing("b.pdf", "c.pdf"),
        (t("A"), m("[ 1 ](id = 3)", 3), t(" B"), m("[2]( id=5 )", 5)),
    ),
    Case(
        "adjacent same source once",
        "A[1](id=3)[2](id=4) B[3](id=4)[4](id=5)",
        "A[1] B[1][2]" + listing("b.pdf", "c.pdf"),
        (t("A"), m("[1](id=3)", 3), m("[2](id=4)", 4), t(" B"), m("[3](id=4)", 4), m("[4](id=5)", 5)),
    ),
    Case(
        "adjacent sources",
        "A[1](id=1)[2](id=2)",
        "A[1][2]" + listing("a.html#chap1", "a.html#chap2"),
        (t("A"), m("[1](id=1)", 1), m("[2](id=2)", 2)),
    ),
    Case(
        "invalid ids dropped",
        "A[1](id=0) B[2](id=9) C[3](id=-1) D[4](id=) E[5](id=9, 3).",
        "A B C D E[1]." + listing("b.pdf"),
        (
            t("A"),
            m("[1](id=0)", 0),
            t(" B"),
            m("[2](id=9)", 9),
            t(" C"),
            m("[3](id=-1)", -1),
            t(" D"),
            m("[4](id=)", malformed=("",)),
            t(" E"),
            m("[5](id=9, 3)", 9, 3),
            t("."),
        ),
    ),
    Case(
        "backtick fence",
        "```\nx[1](id=3)\n```\nY[1](id=3)",
        "```\nx[1](id=3)\n```\nY[1]" + listing("b.pdf"),
        (t("```\nx[1](id=3)\n```\nY"), m("[1](id=3)", 3)),
    ),
    Case(
        "tilde fence with info",
        "~~~python\nl[1](id=3)\n~~~\nok[1](id=5)",
        "~~~python\nl[1](id=3)\n~~~\nok[1]" + listing("c.pdf"),
        (t("~~~python\nl[1](id=3)\n~~~\nok"), m("[1](id=5)", 5)),
    ),
    Case(
        "fence closes only with its own char",
        "```\n~~~\n[1](id=3)\n```\nx[1](id=3)",
        "```\n~~~\n[1](id=3)\n```\nx[1]" + listing("b.pdf"),
        (t("```\n~~~\n[1](id=3)\n```\nx"), m("[1](id=3)", 3)),
    ),
    Case(
        "shorter run does not close a fence",
        "````\n```\n[1](id=3)\n````\nx[1](id=3)",
        "````\n```\n[1](id=3)\n````\nx[1]" + listing("b.pdf"),
        (t("````\n```\n[1](id=3)\n````\nx"), m("[1](id=3)", 3)),
    ),
    Case(
        "indented fence",
        "   ```\n[1](id=3)\n   ```\nz[1](id=5)",
        "   ```\n[1](id=3)\n   ```\nz[1]" + listing("c.pdf"),
        (t("   ```\n[1](id=3)\n   ```\nz"), m("[1](id=5)", 5)),
    ),
    Case(
        "fence in a list item, four spaces in",
        "10. Cite so:\n    ```\n    [1](id=3)\n    ```\nz[1](id=5)",
        "10. Cite so:\n    ```\n    [1](id=3)\n    ```\nz[1]" + listing("c.pdf"),
        (t("10. Cite so:\n    ```\n    [1](id=3)\n    ```\nz"), m("[1](id=5)", 5)),
    ),
    Case(
        "fence in a blockquote",
        "> ~~~\n> [1](id=3)\n> ~~~\nz[1](id=5)",
        "> ~~~\n> [1](id=3)\n> ~~~\nz[1]" + listing("c.pdf"),
        (t("> ~~~\n> [1](id=3)\n> ~~~\nz"), m("[1](id=5)", 5)),
    ),
    Case(
        "a quoted line with a marker is prose",
        "> Paris[1](id=3)\n>\n> ```x",
        "> Paris[1]\n>\n> ```x" + listing("b.pdf"),
        (t("> Paris"), m("[1](id=3)", 3), t("\n>\n> ```x")),
    ),
    Case(
        "fence lines ended by a bare CR",
        "x ` y\r```\r[1](id=3)\r```\rz[1](id=5)",
        "x ` y\r```\r[1](id=3)\r```\rz[1]" + listing("c.pdf"),
        (t("x ` y\r```\r[1](id=3)\r```\rz"), m("[1](id=5)", 5)),
    ),
    Case(
        "inline code",
        "Use `f[1](id=3)` here[1](id=5)",
        "Use `f[1](id=3)` here[1]" + listing("c.pdf"),
        (t("Use `f[1](id=3)` here"), m("[1](id=5)", 5)),
    ),
    Case(
        "double backtick span",
        "``a ` [1](id=3)`` b[1](id=3)",
        "``a ` [1](id=3)`` b[1]" + listing("b.pdf"),
        (t("``a ` [1](id=3)`` b"), m("[1](id=3)", 3)),
    ),
    Case(
        "unclosed backtick is literal when its line ends soon",
        "a ` b[1](id=3)\n\nc[1](id=3)",
        "a ` b[1]\n\nc[1]" + listing("b.pdf"),
        (t("a ` b"), m("[1](id=3)", 3), t("\n\nc"), m("[1](id=3)", 3)),
    ),
    Case(
        "CRLF ends a code span",
        "a ` b[1](id=3)\r\n\r\nc[1](id=3)",
        "a ` b[1]\r\n\r\nc[1]" + listing("b.pdf"),
        (t("a ` b"), m("[1](id=3)", 3), t("\r\n\r\nc"), m("[1](id=3)", 3)),
    ),
    Case(
        "code span does not cross a line",
        "Use `x\nthen y\nsee[1](id=1)",
        "Use `x\nthen y\nsee[1]" + listing("a.html#chap1"),
        (t("Use `x\nthen y\nsee"), m("[1](id=1)", 1)),
    ),
    Case(
        "stray backtick costs nothing on a short line",
        "Press the ` key[1](id=1). Then type help[2](id=2).",
        "Press the ` key[1]. Then type help[2]." + listing("a.html#chap1", "a.html#chap2"),
        (t("Press the ` key"), m("[1](id=1)", 1), t(". Then type help"), m("[2](id=2)", 2), t(".")),
    ),
    Case(
        "stray backtick on a long line protects that line only",
        STRAY_LINE + "\nThen type help[2](id=2).",
        STRAY_LINE + "\nThen type help[1]." + listing("a.html#chap2"),
        (t(STRAY_LINE + "\nThen type help"), m("[2](id=2)", 2), t(".")),
    ),
    Case(
        "stray backtick before a fence with a blank line",
        "a ` b\n```\ncode[1](id=1)\n\nmore[1](id=2)\n```\nafter[1](id=3)",
        "a ` b\n```\ncode[1](id=1)\n\nmore[1](id=2)\n```\nafter[1]" + listing("b.pdf"),
        (t("a ` b\n```\ncode[1](id=1)\n\nmore[1](id=2)\n```\nafter"), m("[1](id=3)", 3)),
    ),
    Case(
        "code span longer than the holdback bound",
        LONG_SPAN + "[1](id=5) and `x[1](id=3)`.",
        LONG_SPAN + "[1] and `x[1](id=3)`." + listing("c.pdf"),
        (t(LONG_SPAN), m("[1](id=5)", 5), t(" and `x[1](id=3)`.")),
    ),
    Case(
        "malformed id lists stay text",
        "Paris[1](id=1 2) is big. A[2](id=1-2-3) B[3](id=-) C[4](id=9-7) D[5](id=3 x).",
        "Paris[1](id=1 2) is big. A[2](id=1-2-3) B[3](id=-) C[4](id=9-7) D[5](id=3 x).",
        (t("Paris[1](id=1 2) is big. A[2](id=1-2-3) B[3](id=-) C[4](id=9-7) D[5](id=3 x)."),),
    ),
    Case(
        "range past the bound stays text",
        "A[1](id=1-300) B[2](id=1-255) C[3](id=1-33).",
        "A[1](id=1-300) B[2](id=1-255) C[3](id=1-33).",
        (t("A[1](id=1-300) B[2](id=1-255) C[3](id=1-33)."),),
    ),
    Case(
        "malformed item beside a valid id",
        "A[1](id=2, 1-300) B[2](id=1 2, 3).",
        "A[1] B[2]." + listing("a.html#chap2", "b.pdf"),
        (
            t("A"),
            m("[1](id=2, 1-300)", 2, malformed=("1-300",)),
            t(" B"),
            m("[2](id=1 2, 3)", 3, malformed=("1 2",)),
            t("."),
        ),
    ),
    Case(
        "id of ten digits stays text",
        "A[1](id=12345678901) B[2](id=0000000003)",
        "A[1](id=12345678901) B[1]" + listing("b.pdf"),
        (t("A[1](id=12345678901) B"), m("[2](id=0000000003)", 3)),
    ),
    Case(
        "markdown links kept",
        "See [the docs](https://x.org) and [1](https://y.org)[1](id=1)",
        "See [the docs](https://x.org) and [1](https://y.org)[1]" + listing("a.html#chap1"),
        (t("See [the docs](https://x.org) and [1](https://y.org)"), m("[1](id=1)", 1)),
    ),
    Case(
        "checklists kept",
        "- [ ] todo\n- [x] done[1](id=1)",
        "- [ ] todo\n- [x] done[1]" + listing("a.html#chap1"),
        (t("- [ ] todo\n- [x] done"), m("[1](id=1)", 1)),
    ),
    Case(
        "indexing kept",
        "use list[0] or d[k][1](id=2)",
        "use list[0] or d[k][1]" + listing("a.html#chap2"),
        (t("use list[0] or d[k]"), m("[1](id=2)", 2)),
    ),
    Case("unclosed bracket at end", "tail [", "tail [", (t("tail ["),)),
    Case("unfinished marker at end", "tail [1](id=3", "tail [1](id=3", (t("tail [1](id=3"),)),
    Case(
        "unicode",
        "Café 🎉[1](id=8) 日本語[2](id=7)。",
        "Café 🎉[1] 日本語[2]。" + listing("E & co (https://e.org/x)", "untitled document"),
        (t("Café 🎉"), m("[1](id=8)", 8), t(" 日本語"), m("[2](id=7)", 7), t("。")),
    ),
    Case("nested brackets", "[[1](id=3)]", "[[1]]" + listing("b.pdf"), (t("["), m("[1](id=3)", 3), t("]"))),
    Case(
        "near misses stay text",
        "[1](id=3 x) [1](idx=3) [1] (id=3) [a](id=3) [1](id=3",
        "[1](id=3 x) [1](idx=3) [1] (id=3) [a](id=3) [1](id=3",
        (t("[1](id=3 x) [1](idx=3) [1] (id=3) [a](id=3) [1](id=3"),),
    ),
    Case("dagger syntax is off by default", "A【3†source】 B[1]", "A【3†source】 B[1]", (t("A【3†source】 B[1]"),)),
    Case("marker longer than the holdback bound", LONG_MARKER, LONG_MARKER, (t(LONG_MARKER),)),
    Case(
        "plain prose",
        "Just prose, no citations at all.",
        "Just prose, no citations at all.",
        (t("Just prose, no citations at all."),),
    ),
    Case(
        "marker first",
        "[1](id=3) starts here",
        "[1] starts here" + listing("b.pdf"),
        (m("[1](id=3)", 3), t(" starts here")),
    ),
    Case("empty answer", "", "", ()),
]

CASE_IDS = [case.name for case in CASES]
