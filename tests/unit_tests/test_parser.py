"""The pure parser: events, invariants, bounds, errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_refs import BRACKET_SYNTAX, DAGGER_SYNTAX, ID_SYNTAX, CitationParser, Marker, Text
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
def test_events_do_not_depend_on_chunking(case: Case) -> None:
    """Whole, char-by-char and every split point give the same events."""
    expected = run([case.answer])
    assert run(per_char(case.answer)) == expected
    for chunks in every_split(case.answer):
        assert run(chunks) == expected


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
    ],
)
def test_bracket_syntax(text: str, expected: list[Event]) -> None:
    """Bare `[k]` is recognised when switched on, but not links or indexing."""
    for chunks in [[text], per_char(text), *every_split(text)]:
        assert run(chunks, CitationParser((ID_SYNTAX, BRACKET_SYNTAX))) == expected
