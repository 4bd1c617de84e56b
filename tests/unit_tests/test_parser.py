"""The pure parser: events, invariants, bounds, errors."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_refs import BRACKET_SYNTAX, COMPILED, DAGGER_SYNTAX, ID_SYNTAX, CitationParser, Marker, Text
from langchain_refs.streaming import _parser
from langchain_refs.streaming._parser import Event, parse_ids
from tests.unit_tests.cases import CASE_IDS, CASES, Case
from tests.unit_tests.strategies import ANY_TEXT, every_split, per_char, random_splits


def run(chunks: list[str], parser: CitationParser | None = None) -> list[Event]:
    parser = parser or CitationParser()
    events: list[Event] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.close())
    return normalise(events)


def normalise(events: list[Event]) -> list[Event]:
    """Merge adjacent Text events (their boundaries depend on chunking)."""
    merged: list[Event] = []
    for event in events:
        if isinstance(event, Text) and merged and isinstance(merged[-1], Text):
            merged[-1] = Text(text=merged[-1].text + event.text)
        elif not (isinstance(event, Text) and not event.text):
            merged.append(event)
    return merged


def reassemble(events: list[Event]) -> str:
    return "".join(e.text if isinstance(e, Text) else e.raw for e in events)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_events_match_the_table(case: Case) -> None:
    """Whole, char-by-char and every split point give the hand-written events of the case."""
    expected = list(case.events)
    assert run([case.answer]) == expected
    assert run(per_char(case.answer)) == expected
    for chunks in every_split(case.answer):
        assert run(chunks) == expected, chunks


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_nothing_is_lost(case: Case) -> None:
    """Text and marker events put back together give the input exactly."""
    assert reassemble(run([case.answer])) == case.answer


@settings(max_examples=400, deadline=None)
@given(data=st.data(), text=ANY_TEXT)
def test_random_text_random_splits(data: st.DataObject, text: str) -> None:
    """Random marker-ish text: same events as whole, nothing lost, bound kept."""
    expected = run([text])
    assert reassemble(expected) == text
    parser = CitationParser(max_holdback=16)
    seen = ""
    released: list[Event] = []
    for chunk in data.draw(random_splits(text)):
        seen += chunk
        released.extend(parser.feed(chunk))
        # At every moment: released + held is exactly what came in.
        assert reassemble(released) + parser.held == seen
        assert len(parser.held) <= 16
        assert parser.held == "" or parser.held[0] in "[【"
    released.extend(parser.close())
    assert reassemble(released) == text


def test_marker_fields() -> None:
    """A marker reports its raw text, its ids in order and malformed items."""
    assert run(["x[NUMBER](id=5, 2-3, , 9-7)y"]) == [
        Text(text="x"),
        Marker(raw="[NUMBER](id=5, 2-3, , 9-7)", ids=(5, 2, 3), malformed=("", "9-7")),
        Text(text="y"),
    ]


def test_adjacent_markers_are_separate_events() -> None:
    """`[1](id=3)[2](id=4)` gives two markers and no text between."""
    assert run(["[1](id=3)[2](id=4)"]) == [
        Marker(raw="[1](id=3)", ids=(3,)),
        Marker(raw="[2](id=4)", ids=(4,)),
    ]


def test_parse_ids_bounds() -> None:
    """Negative ids parse (they are rejected later); huge ranges are malformed."""
    assert parse_ids("-1") == ((-1,), ())
    assert parse_ids("1-100000") == ((), ("1-100000",))
    assert parse_ids("") == ((), ("",))


def test_parse_ids_items() -> None:
    """Each item is an id, a range of at most 32 ids, or malformed; leading zeros do not count as digits."""
    assert parse_ids("1-32") == (tuple(range(1, 33)), ())
    assert parse_ids("2-34") == ((), ("2-34",))
    assert parse_ids(" 4 - 6 ,7") == ((4, 5, 6, 7), ())
    assert parse_ids("1 2, 1-2-3, -, 9-7, -3-5, 3") == ((3,), ("1 2", "1-2-3", "-", "9-7", "-3-5"))
    assert parse_ids("123456789, 1234567890") == ((123456789,), ("1234567890",))
    assert parse_ids("0000000003") == ((3,), ())


def test_partial_marker_is_held_until_complete() -> None:
    """A marker split at any point is held, then emitted once complete."""
    parser = CitationParser()
    assert parser.feed("ab[1](i") == [Text(text="ab")]
    assert parser.held == "[1](i"
    assert parser.feed("d=2)c") == [Marker(raw="[1](id=2)", ids=(2,)), Text(text="c")]


def test_close_flushes_partial_marker_verbatim() -> None:
    """An unfinished marker at the end comes out as text."""
    parser = CitationParser()
    parser.feed("see [NUMBER](id=1,")
    assert parser.close() == [Text(text="[NUMBER](id=1,")]


def test_feed_after_close_is_an_error() -> None:
    """Text after the end of the stream is refused with a clear error."""
    parser = CitationParser()
    parser.close()
    with pytest.raises(RuntimeError, match="after close"):
        parser.feed("x")


def test_holdback_bound_releases_opener() -> None:
    """Past the bound the opener is released and scanning goes on after it."""
    parser = CitationParser(max_holdback=8)
    events = parser.feed("[1](id=1,2,3)")
    assert reassemble(events) + parser.held == "[1](id=1,2,3)"
    assert len(parser.held) <= 8


@pytest.mark.parametrize("bad", [0, -5])
def test_bad_holdback_is_refused(bad: int) -> None:
    """A non-positive bound is a clear error."""
    with pytest.raises(ValueError, match="max_holdback"):
        CitationParser(max_holdback=bad)


def test_no_syntax_is_refused() -> None:
    """A parser with nothing to recognise is a clear error."""
    with pytest.raises(ValueError, match="syntaxes"):
        CitationParser(())


def test_modes() -> None:
    """The mode follows fences and code spans."""
    parser = CitationParser()
    parser.feed("``")
    assert parser.mode == "prose"  # the run may still grow into a fence
    parser.feed("`py\n")
    assert parser.mode == "fence"
    parser.feed("```\n`a")
    assert parser.mode == "inline code"
    parser.feed("`")
    assert parser.mode == "inline code"  # run may continue: ``a`` vs `a`
    parser.feed(" ")
    assert parser.mode == "prose"


@pytest.mark.parametrize(
    ("text", "ids"),
    [("A【3†source】", (3,)), ("A【4:0†report.pdf】", (4,))],
)
def test_dagger_syntax(text: str, ids: tuple[int, ...]) -> None:
    """`【k†source】` is recognised when switched on."""
    events = run([text], CitationParser((ID_SYNTAX, DAGGER_SYNTAX)))
    assert events[-1] == Marker(raw=text[1:], ids=ids, syntax="dagger")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A [3] B", [Text(text="A "), Marker(raw="[3]", ids=(3,), syntax="bracket"), Text(text=" B")]),
        ("A [3, 5]", [Text(text="A "), Marker(raw="[3, 5]", ids=(3, 5), syntax="bracket")]),
        ("see [3](https://x.org)", [Text(text="see [3](https://x.org)")]),
        ("list[0] and x[1]", [Text(text="list[0] and x[1]")]),
        # As the quick start says: not right after a letter or digit.
        ("capital[1].", [Text(text="capital[1].")]),
        ("capital [1].", [Text(text="capital "), Marker(raw="[1]", ids=(1,), syntax="bracket"), Text(text=".")]),
        ("capital.[1]", [Text(text="capital."), Marker(raw="[1]", ids=(1,), syntax="bracket")]),
    ],
)
def test_bracket_syntax(text: str, expected: list[Event]) -> None:
    """Bare `[k]` is recognised when switched on, but not links or indexing."""
    for chunks in [[text], per_char(text), *every_split(text)]:
        assert run(chunks, CitationParser((ID_SYNTAX, BRACKET_SYNTAX))) == expected


# -- regression tests for issue 9 ------------------------------------------------------


def every_chunking(text: str) -> list[list[str]]:
    return [[text], per_char(text), *every_split(text)]


def test_code_span_across_lines_does_not_depend_on_chunking() -> None:
    """An unclosed backtick followed by line ends gives the same events whole and per character."""
    text = "Use `x\nthen y\nsee[1](id=1)"
    for chunks in every_chunking(text):
        assert run(chunks) == [Text(text="Use `x\nthen y\nsee"), Marker(raw="[1](id=1)", ids=(1,))]


def test_stray_backtick_on_a_short_line_costs_nothing() -> None:
    """A backtick with no closer and a line that ends soon is an ordinary character: both markers are found."""
    text = "Press the ` key[1](id=1). Then type help[2](id=2)."
    for chunks in every_chunking(text):
        assert run(chunks) == [
            Text(text="Press the ` key"),
            Marker(raw="[1](id=1)", ids=(1,)),
            Text(text=". Then type help"),
            Marker(raw="[2](id=2)", ids=(2,)),
            Text(text="."),
        ]


@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"])
def test_every_line_end_ends_a_code_span(line_end: str) -> None:
    """A line feed, CR LF and a bare CR each end an unclosed span: markers on both lines are found."""
    text = f"a ` b[1](id=3){line_end}{line_end}c[1](id=4)"
    for chunks in every_chunking(text):
        assert run(chunks) == [
            Text(text="a ` b"),
            Marker(raw="[1](id=3)", ids=(3,)),
            Text(text=f"{line_end}{line_end}c"),
            Marker(raw="[1](id=4)", ids=(4,)),
        ]


def test_long_line_after_a_stray_backtick_is_code_to_its_end() -> None:
    """Past the holdback bound an unclosed span is code, but only to the end of its line."""
    text = "x ` " + "y" * 20 + "[1](id=1)\nz[1](id=2)"
    for chunks in every_chunking(text):
        assert run(chunks, CitationParser(max_holdback=16)) == [
            Text(text="x ` " + "y" * 20 + "[1](id=1)\nz"),
            Marker(raw="[1](id=2)", ids=(2,)),
        ]


def test_fence_after_a_stray_backtick() -> None:
    """A fence on the line after a stray backtick protects its content and markers after it are found."""
    text = "a ` b\n```\ncode[1](id=1)\n\nmore[1](id=2)\n```\nafter[1](id=3)"
    for chunks in every_chunking(text):
        assert run(chunks) == [
            Text(text="a ` b\n```\ncode[1](id=1)\n\nmore[1](id=2)\n```\nafter"),
            Marker(raw="[1](id=3)", ids=(3,)),
        ]
    parser = CitationParser()
    parser.feed("a ` b\n")
    assert parser.mode == "prose"
    parser.feed("```\n")
    assert parser.mode == "fence"


def test_open_span_holds_a_possible_marker_until_settled() -> None:
    """In an unsettled span only a possible marker and what follows it are held, then settled either way."""
    parser = CitationParser()
    assert parser.feed("a `b [1](id=1)") == [Text(text="a `b ")]
    assert parser.mode == "inline code"
    assert parser.held == "[1](id=1)"
    assert parser.feed(" c`") == []  # one backtick closes the span, unless the run goes on
    assert parser.held == "[1](id=1) c`"
    assert parser.feed(" d") == [Text(text="[1](id=1) c` d")]
    assert parser.mode == "prose"
    parser = CitationParser()
    parser.feed("a `b [1](id=1)")
    assert parser.feed("\n") == [Marker(raw="[1](id=1)", ids=(1,)), Text(text="\n")]


@pytest.mark.parametrize(
    "text",
    [
        "Paris[1](id=1 2) is big.",
        "Paris[1](id=1-2-3) is big.",
        "Paris[1](id=-) is big.",
        "Paris[1](id=9-7) is big.",
        "Paris[1](id=1-300) is big.",
        "Paris[1](id=1-255) is big.",
    ],
)
def test_malformed_id_list_keeps_the_words(text: str) -> None:
    """A marker that names no id and holds something that is not one stays text, verbatim."""
    for chunks in every_chunking(text):
        assert run(chunks) == [Text(text=text)]


def test_malformed_item_beside_a_valid_id() -> None:
    """A marker with a valid id cites it and reports the malformed items."""
    assert run(["A[1](id=2, 1-300) B[2](id=1 2, 3)"]) == [
        Text(text="A"),
        Marker(raw="[1](id=2, 1-300)", ids=(2,), malformed=("1-300",)),
        Text(text=" B"),
        Marker(raw="[2](id=1 2, 3)", ids=(3,), malformed=("1 2",)),
    ]


@settings(max_examples=200, deadline=None)
@given(id_list=st.text(alphabet="0123456789-, ", max_size=200))
def test_range_expansion_is_bounded(id_list: str) -> None:
    """However an id list is written, it yields at most 32 ids per item and never raises."""
    ids, malformed = parse_ids(id_list)
    assert len(ids) <= 32 * (id_list.count(",") + 1)
    assert len(ids) + len(malformed) >= id_list.count(",") + 1


def test_huge_id_is_malformed_not_a_crash() -> None:
    """Ids of thousands of digits (past Python's int limit) never raise: they are malformed."""
    digits = "7" * 5000
    parser = CitationParser(max_holdback=10_000)
    assert run([f"a[1](id={digits}) b"], parser) == [Text(text=f"a[1](id={digits}) b")]
    parser = CitationParser(max_holdback=10_000)
    assert run([f"[1](id=2, 1-{digits})"], parser) == [
        Marker(raw=f"[1](id=2, 1-{digits})", ids=(2,), malformed=(f"1-{digits}",)),
    ]
    dagger = f"【{digits}†x】"
    assert run([dagger], CitationParser((DAGGER_SYNTAX,), max_holdback=10_000)) == [Text(text=dagger)]
    bracket = f"see [{digits}] ok"
    assert run([bracket], CitationParser((BRACKET_SYNTAX,), max_holdback=10_000)) == [Text(text=bracket)]


def test_bracket_marker_at_the_bound_sees_the_next_character() -> None:
    """A bare `[k]` exactly as long as the bound is still not taken when a `(` follows it."""
    for chunks in every_chunking("x [3](y)"):
        assert run(chunks, CitationParser((BRACKET_SYNTAX,), max_holdback=3)) == [Text(text="x [3](y)")]


@pytest.mark.parametrize("line_end", ["\n", "\r", ""])
def test_stray_backtick_line_of_exactly_the_bound_is_prose(line_end: str) -> None:
    """A line (or answer) that ends exactly max_holdback characters after a stray backtick: the backtick is text."""
    line = "`" + "a" * 6 + "[1](id=1)"  # 16 characters from the backtick to the line end
    assert len(line) == 16
    text = f"x {line}{line_end}"
    for chunks in every_chunking(text):
        assert run(chunks, CitationParser(max_holdback=16)) == [
            Text(text="x `aaaaaa"),
            Marker(raw="[1](id=1)", ids=(1,)),
            *([Text(text=line_end)] if line_end else []),
        ]


@pytest.mark.parametrize("line_end", ["\n", "\r", ""])
def test_stray_backtick_line_one_past_the_bound_is_code(line_end: str) -> None:
    """One character more than max_holdback between the backtick and the line end: the span is code."""
    text = "x `" + "a" * 7 + f"[1](id=1){line_end}y[1](id=2)"
    for chunks in every_chunking(text):
        assert run(chunks, CitationParser(max_holdback=16)) == [
            Text(text="x `" + "a" * 7 + f"[1](id=1){line_end}y" if line_end else text),
            *([Marker(raw="[1](id=2)", ids=(2,))] if line_end else []),
        ]


# -- the states and their transitions --------------------------------------------

# The parser's source: in the compiled build the module is an extension module (its __file__ the .so, its
# __doc__ None); the wheel ships the .py beside it.
PARSER_SOURCE = Path(_parser.__file__).with_name("_parser.py").read_text(encoding="utf-8")

HEADER_ROW = regex.compile(
    r"^ {8}(prose|open span|code span|fence) +([A-Z_]+) +(prose|open span|code span|fence) ", regex.MULTILINE
)


def taken_transitions(texts: list[str], monkeypatch: pytest.MonkeyPatch) -> set[tuple[str, str, str]]:
    """(state, event, next state) of every transition the parser takes on ``texts``, chunked every way."""
    taken: set[tuple[str, str, str]] = set()
    take = _parser.CitationParser._take

    def recording(self: CitationParser, event: Any) -> None:
        before = self._mode
        take(self, event)
        taken.add((before.value, event.name, self._mode.value))

    monkeypatch.setattr(_parser.CitationParser, "_take", recording)
    for text in texts:
        for chunks in every_chunking(text) if len(text) < 200 else [[text], per_char(text)]:
            run(chunks)
            run(chunks, CitationParser(max_holdback=16))
    return taken


def test_header_table_is_the_transition_table() -> None:
    """The states table in the parser's header lists exactly the rows of _TRANSITIONS."""
    header = {(a, event, b) for a, event, b in HEADER_ROW.findall(ast.get_docstring(ast.parse(PARSER_SOURCE)) or "")}
    table = {(a.value, event.name, b.value) for (a, event), b in _parser._TRANSITIONS.items()}
    assert header == table
    assert len(table) == 8


@pytest.mark.skipif(COMPILED, reason="records transitions by patching CitationParser._take: a compiled class cannot be")
def test_the_case_table_takes_every_transition_and_no_other(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every transition the parser takes on the cases is a row of the table, and every row is taken."""
    texts = [case.answer for case in CASES]
    taken = taken_transitions(texts, monkeypatch)
    table = {(a.value, event.name, b.value) for (a, event), b in _parser._TRANSITIONS.items()}
    assert taken == table


def test_the_state_changes_only_through_the_table() -> None:
    """``self._mode`` is assigned in __init__ and in _take only; every event _take is given is in the table."""
    tree = ast.parse(PARSER_SOURCE)
    assigning: set[str] = set()
    events_used: set[str] = set()
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Attribute) and t.attr == "_mode" for t in targets):
                    assigning.add(function.name)
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "_take"
                and isinstance(node.args[0], ast.Attribute)
            ):
                events_used.add(node.args[0].attr)
    assert assigning == {"__init__", "_take"}
    assert events_used == {event.name for _, event in _parser._TRANSITIONS}


def test_a_code_span_closes_only_on_a_run_of_its_own_length() -> None:
    """A longer backtick run inside a span is code, not its end: only a run as long as the opener closes it."""
    text = "x `a``[1](id=1)` y[1](id=2)"
    for chunks in every_chunking(text):
        assert run(chunks) == [Text(text="x `a``[1](id=1)` y"), Marker(raw="[1](id=2)", ids=(2,))]


def test_a_settled_code_span_closes_only_on_a_run_of_its_own_length() -> None:
    """Past the bound (the span settled as code) a longer run still does not end it; its own length does."""
    code = "`" + "a" * 20 + "``[1](id=1)`"
    text = f"x {code} y[1](id=2)"
    for chunks in every_chunking(text):
        assert run(chunks, CitationParser(max_holdback=16)) == [
            Text(text=f"x {code} y"),
            Marker(raw="[1](id=2)", ids=(2,)),
        ]


def test_a_marker_exactly_as_long_as_the_bound_is_a_marker() -> None:
    """A marker of exactly max_holdback characters is found in every chunking; with a bound one less it is text."""
    text = "A[1](id=3)."
    for chunks in every_chunking(text):
        assert run(chunks, CitationParser(max_holdback=9)) == [
            Text(text="A"),
            Marker(raw="[1](id=3)", ids=(3,)),
            Text(text="."),
        ]
        assert run(chunks, CitationParser(max_holdback=8)) == [Text(text=text)]


def test_a_bare_marker_exactly_as_long_as_the_bound_waits_for_the_next_character() -> None:
    """A bare [k] of exactly max_holdback characters at a chunk's end is held for the next character, then taken."""
    for chunks in every_chunking("x [3]."):
        assert run(chunks, CitationParser((BRACKET_SYNTAX,), max_holdback=3)) == [
            Text(text="x "),
            Marker(raw="[3]", ids=(3,), syntax="bracket"),
            Text(text="."),
        ]


@pytest.mark.parametrize("id_list", [",x", "x,", " , 1 2", "-"])
def test_an_id_list_of_only_malformed_items_is_text(id_list: str) -> None:
    """No id and a malformed item that is not empty: not a marker, the words stay."""
    text = f"see [1](id={id_list}) ok"
    for chunks in every_chunking(text):
        assert run(chunks) == [Text(text=text)]


def test_an_empty_id_list_is_a_marker_with_no_id() -> None:
    """``id=`` and ``id=,`` are markers that name nothing (the session drops and reports them)."""
    assert run(["a[1](id=)"]) == [Text(text="a"), Marker(raw="[1](id=)", ids=(), malformed=("",))]
    assert run(["a[1](id=,)"]) == [Text(text="a"), Marker(raw="[1](id=,)", ids=(), malformed=("", ""))]
