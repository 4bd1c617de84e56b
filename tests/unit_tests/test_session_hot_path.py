"""The session's shortcuts give what the plain reading gives: what the speed work of issue 25 must keep."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_refs import ReferenceSession, TextReferenceStyle
from langchain_refs.streaming import ID_SYNTAX, AnswerContext, CitationParser, Text
from langchain_refs.streaming import _parser as parser_module
from langchain_refs.streaming import _session as session_module
from tests.unit_tests.fakes import sample_documents

_CLAIM_PIECES = list("a2 .!?\u3002\uff01\uff1f\"')]\u201d\u2019\n\r\t\x0b\x1c\x85\xa0\u2028\u3000,-")


@settings(max_examples=3000, deadline=None)
@given(
    head=st.one_of(
        st.text(alphabet=st.sampled_from(_CLAIM_PIECES), max_size=40),
        st.lists(st.sampled_from(["2.5", "e.g.", "docs.example.org", "a. ", '?" ', "\n", "b"]), max_size=12).map(
            "".join
        ),
    )
)
def test_claim_start_is_the_backward_search(head: str) -> None:
    """The claim starts where the sentence-end pattern, searched in the reversed text, says: terminators tried first."""
    found = session_module._SENTENCE_END_BACKWARDS.search(head[::-1])
    assert session_module._claim_start(head) == (0 if found is None else len(head) - found.start())


_ID_PIECES = list("[]()-+0123456789NUMBERid=, \txa")


def _prefixes_of(markers: list[str]) -> st.SearchStrategy[str]:
    """Any prefix of one of ``markers`` (the empty one and the whole marker too)."""
    return st.sampled_from(markers).flatmap(lambda marker: st.integers(0, len(marker)).map(lambda n: marker[:n]))


@settings(max_examples=3000, deadline=None)
@given(
    text=st.one_of(
        st.text(alphabet=st.sampled_from(_ID_PIECES), max_size=20),
        _prefixes_of(["[2](id=1, 3)", "[NUMBER](id=4)", "[ -3 ] ( id = 1-2 )", "[+1](id=)x"]),
    ),
    start=st.integers(0, 3),
    bound=st.integers(1, 24),
)
def test_one_call_asks_for_a_marker_or_a_prefix(text: str, start: int, bound: int) -> None:
    """The combined id pattern gives the whole marker if there is one, else whether a prefix of one ends the text."""
    buf = "ab[" + text
    whole = re.compile(ID_SYNTAX.pattern.pattern).match(buf, start, start + bound)
    either = parser_module._ID_MARKER_OR_PREFIX.match(buf, start, start + bound)
    if whole is not None:
        assert either is not None
        assert either.lastgroup != "more"
        assert (either[0], either["ids"]) == (whole[0], whole["ids"])
    else:
        prefix = parser_module._ID_PREFIX.match(buf[: start + bound], start)
        assert (either is not None) == (prefix is not None)
        assert either is None or either.lastgroup == "more"


@settings(max_examples=3000, deadline=None)
@given(
    text=st.one_of(
        st.text(alphabet=st.sampled_from(_ID_PIECES), max_size=20),
        _prefixes_of(["[2](id=1, 3)", "[NUMBER](id=4,-5)", "[ -3 ] ( id = 1-2 )", "[12](id=\t7 ,8"]),
    ),
    lead=st.sampled_from(["", "[", "x"]),
    by_str=st.booleans(),
)
def test_str_prefix_check_is_the_prefix_pattern(text: str, lead: str, by_str: bool) -> None:
    """The str-method reading of a held id marker says what `_ID_PREFIX` says, for any text."""
    buf = lead + text
    assert parser_module._is_id_prefix(buf, by_str=by_str) == (parser_module._ID_PREFIX.match(buf) is not None)


@settings(max_examples=3000, deadline=None)
@given(
    text=st.one_of(
        st.text(alphabet=st.sampled_from(_ID_PIECES), max_size=20),
        st.sampled_from(["[2](id=1, 3)", "[NUMBER](id=4,-5)x", "[ -3 ] ( id = 1-2 )", "[12](id=\t7 ,8)"]).flatmap(
            lambda marker: st.integers(0, len(marker)).map(lambda n: marker[:n] + ")" + marker[n:])
        ),
    ),
    start=st.integers(0, 2),
)
def test_str_marker_reading_is_the_marker_pattern(text: str, start: int) -> None:
    """A marker read with str methods up to its first ")" is what the marker-or-prefix pattern matches there."""
    buf = "a[" + text
    close = buf.find(")", start)
    ids_start = parser_module._id_list_start(buf, start, close, by_str=True) if close >= 0 else -1
    if ids_start >= 0:
        match = parser_module._ID_MARKER_OR_PREFIX.match(buf, start)
        assert match is not None
        assert match.lastgroup != "more"
        assert (match.end(), match["ids"]) == (close + 1, buf[ids_start:close])
    assert parser_module._id_list_start(buf, start, max(close, start), by_str=False) == -1


@settings(max_examples=3000, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("0123456789, \t-x\u0663\u00b2")), max_size=24))
def test_plain_ids_are_read_as_the_plain_ids_pattern_says(text: str) -> None:
    """A list `_PLAIN_IDS` matches whole is its ids, int() of each piece; any other list takes the item-by-item path."""
    ids, malformed = parser_module.parse_ids(text)
    if parser_module._PLAIN_IDS.fullmatch(text) is not None:
        assert (ids, malformed) == (tuple(map(int, text.split(","))), ())
    else:
        assert not text.isascii() or not text.isdigit() or len(text) > 9


_SCAN_PIECES = ["a", " ", "[", "]", "(", ")", "id=", "1", "2, 3", "NUMBER", "`", "```", "~~~", "\n", "\r", "x[0]", "\t"]


@settings(max_examples=2000, deadline=None)
@given(chunks=st.lists(st.lists(st.sampled_from(_SCAN_PIECES), max_size=5).map("".join), max_size=12))
def test_scan_from_the_declined_position_is_the_full_scan(chunks: list[str]) -> None:
    """`feed` scanning from where `pass_through` found the first special character gives what the full scan gives."""
    fast = CitationParser()
    full = CitationParser()
    for chunk in chunks:
        events = fast.feed(chunk)
        if full.pass_through(chunk):
            assert events == ([Text(text=chunk)] if chunk else [])
        else:
            full._declined = None
            assert events == full._process(full._pending + chunk, final=False)
    assert fast.close() == full.close()
    assert fast.held == full.held == ""


def _session_output(style: TextReferenceStyle, text: str) -> tuple[str, str]:
    session = ReferenceSession(sample_documents(), source_key=style.source_of, style=style)
    out = "".join(session.feed(text[i : i + 3]) for i in range(0, len(text), 3)) + session.close()
    return out, session.references.to_json()


def test_a_template_style_is_asked_once_per_number_and_document() -> None:
    """The session keeps a template style's rendering of each (number, document) and gives the same output."""

    class Asked(TextReferenceStyle):
        """Asked every time: its own render_citation turns the reuse off."""

        def render_citation(self, ref: int, media: Any, answer: AnswerContext) -> str | None:
            return super().render_citation(ref, media, answer)

    style = TextReferenceStyle()
    assert style.reuses_citations
    assert not Asked().reuses_citations
    asked: list[int] = []
    render = style.render_citation

    def counted(ref: int, media: Any, answer: AnswerContext) -> str | None:
        asked.append(ref)
        return render(ref, media, answer)

    style.render_citation = counted  # type: ignore[method-assign]
    text = "A[1](id=1) b[1](id=1) c[1](id=2) d[2](id=1, 2) e[1](id=9) f[NUMBER](id=1)."
    assert _session_output(style, text) == _session_output(Asked(), text)
    assert asked == [1, 2]
