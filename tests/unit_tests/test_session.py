"""Every case of the table, rendered by a session, under every chunking."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_refs import (
    DEFAULT_MAX_HOLDBACK,
    AnswerReferences,
    HTMLReferenceStyle,
    InvalidCitation,
    Marker,
    ReferenceSession,
    Text,
    TextReferenceStyle,
)
from langchain_refs.streaming import SourceRegistry
from langchain_refs.streaming._registry import OwnSource, resolve_source_keys
from tests.unit_tests.cases import CASE_IDS, CASES, Case
from tests.unit_tests.fakes import sample_documents
from tests.unit_tests.strategies import every_split, per_char, per_word, random_splits, whole


def render(chunks: Iterable[str]) -> str:
    style = TextReferenceStyle()
    session = ReferenceSession(sample_documents(), source_key=style.source_of, style=style)
    return "".join(session.feed(chunk) for chunk in chunks) + session.close()


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_whole(case: Case) -> None:
    """The answer in one chunk renders as expected."""
    assert render(whole(case.answer)) == case.expected


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_char_by_char(case: Case) -> None:
    """The answer fed one character at a time renders the same."""
    assert render(per_char(case.answer)) == case.expected


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_per_word(case: Case) -> None:
    """The answer fed word by word renders the same."""
    assert render(per_word(case.answer)) == case.expected


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_every_split_point(case: Case) -> None:
    """The answer cut in two at any character renders the same."""
    for chunks in every_split(case.answer):
        assert render(chunks) == case.expected, chunks


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_random_splits(case: Case, data: st.DataObject) -> None:
    """The answer cut at random points renders the same."""
    assert render(data.draw(random_splits(case.answer))) == case.expected


def test_plain_text_is_released_in_its_own_chunk() -> None:
    """A chunk that cannot begin a marker comes out whole, as the same object."""
    style = TextReferenceStyle()
    session = ReferenceSession(sample_documents(), source_key=style.source_of, style=style)
    chunk = "ordinary words, (parentheses) and ] brackets"
    assert session.feed(chunk) is chunk
    assert session.held == ""


def test_only_a_possible_marker_is_held() -> None:
    """Text is held back only from the opener of a marker that may still complete."""
    style = TextReferenceStyle()
    session = ReferenceSession(sample_documents(), source_key=style.source_of, style=style)
    assert session.feed("Paris is big [1](id") == "Paris is big "
    assert session.held == "[1](id"
    assert session.feed("=3) ok") == "[1] ok"
    assert session.held == ""


@pytest.mark.parametrize("bound", [1, 5, 16, DEFAULT_MAX_HOLDBACK])
def test_holdback_never_exceeds_bound(bound: int) -> None:
    """However the text goes on, no more than the bound is ever held back."""
    style = TextReferenceStyle()
    session = ReferenceSession(sample_documents(), source_key=style.source_of, style=style, max_holdback=bound)
    text = "x [1](id=" + "1," * 60 + "3) [NUMBER](id=3) [[[[ ["
    out = []
    for char in text:
        out.append(session.feed(char))
        assert len(session.held) <= bound
    out.append(session.close())
    rendered = "".join(out)
    assert "[1](id=" + "1," * 60 + "3)" in rendered
    if bound >= len("[NUMBER](id=3)"):
        assert "[NUMBER](id=3)" not in rendered


@settings(max_examples=300, deadline=None)
@given(data=st.data(), text=st.text(alphabet=st.characters(blacklist_characters="[`~"), max_size=80))
def test_text_without_opener_is_never_held(data: st.DataObject, text: str) -> None:
    """Text with no opener, backtick or tilde is never held, whatever the chunking."""
    style = TextReferenceStyle()
    session = ReferenceSession(sample_documents(), source_key=style.source_of, style=style)
    for chunk in data.draw(random_splits(text)):
        assert session.feed(chunk) == chunk
        assert session.held == ""
    assert session.close() == ""


# -- the claim a citation backs, in a long answer ------------------------------------

EARLIER = "An earlier sentence that says something else entirely. " * 40
LONG_CLAIM = (
    "The committee, after three years of hearings in four cities and a survey of more than "
    "twelve thousand households across every region of the country, concluded that the "
    "reform had lowered the average waiting time for a first appointment from nine weeks "
    "to a little under five, while leaving the cost per patient roughly where it had been"
)


def test_long_claim_is_the_whole_sentence() -> None:
    """A citation after a long sentence in a long answer backs that whole sentence, not its tail."""
    answer = EARLIER + LONG_CLAIM + "[1](id=3). After."
    style = TextReferenceStyle()
    session = ReferenceSession(sample_documents(), source_key=style.source_of, style=style)
    output = "".join(session.feed(answer[i : i + 7]) for i in range(0, len(answer), 7)) + session.close()
    (citation,) = session.references.citations
    assert len(LONG_CLAIM) > 300
    assert citation.text == LONG_CLAIM
    assert output[citation.text_start : citation.text_end] == LONG_CLAIM
    assert output[citation.start : citation.end] == "[1]"


# -- a marker's cost is bounded by its length -----------------------------------------


class _OneMarker:
    """A session whose parser, whatever it is fed, yields the text and then one given marker: the session's side.

    The marker reaches the session's own step for parser events (``_render``); the session's parser is left as
    it is (in the compiled build that attribute takes a `CitationParser` only).
    """

    def __init__(self, session: ReferenceSession, marker: Marker) -> None:
        self.session = session
        self.marker = marker

    def feed(self, text: str) -> str:
        return self.session._render([Text(text=text), self.marker])

    def close(self) -> str:
        return self.session.close()

    @property
    def references(self) -> AnswerReferences:
        return self.session.references


def session_with_marker(marker: Marker, *, keep_citations: bool = True) -> _OneMarker:
    style = TextReferenceStyle()
    docs = sample_documents()[:3]
    session = ReferenceSession(docs, source_key=style.source_of, style=style, keep_citations=keep_citations)
    return _OneMarker(session, marker)


def test_huge_range_is_one_log_line_and_one_invalid_citation(caplog: pytest.LogCaptureFixture) -> None:
    """A marker naming 100,000 ids, 3 of them documents, cites the 3 and costs one log line and one entry."""
    marker = Marker(raw="[1](id=1-100000)", ids=tuple(range(1, 100_001)))
    session = session_with_marker(marker)
    with caplog.at_level(logging.WARNING, logger="langchain_refs"):
        output = session.feed("A") + session.close()
    assert output == "A[1][2][3]\n\n- [1] a.html#chap1\n- [2] a.html#chap2\n- [3] b.pdf\n"
    assert session.references.invalid_citations == (
        InvalidCitation(marker="[1](id=1-100000)", item="4-100000", reason="no documents 4-100000 (3 given)", offset=1),
    )
    assert len(caplog.records) == 1


def test_scattered_invalid_ids_are_bounded_without_kept_citations(caplog: pytest.LogCaptureFixture) -> None:
    """With keep_citations off, 5,000 scattered bad ids keep 100 entries and count the rest, in one log line."""
    marker = Marker(raw="[1](id=...)", ids=tuple(range(10, 10_010, 2)))
    session = session_with_marker(marker, keep_citations=False)
    with caplog.at_level(logging.WARNING, logger="langchain_refs"):
        assert session.feed("A") + session.close() == "A"
    references = session.references
    assert [i.item for i in references.invalid_citations] == [str(n) for n in range(10, 210, 2)]
    assert references.omitted_invalid_citations == 4_900
    assert len(caplog.records) == 1
    assert "dropped 5000 citations in '[1](id=...)'" in caplog.text


@pytest.mark.parametrize("marker", ["[1](id=1, 7, 8, 9, 10, 11, 12)", "[1](id=1-255)"])
def test_many_bad_markers_stay_bounded(caplog: pytest.LogCaptureFixture, marker: str) -> None:
    """2,000 markers with bad ids, through the parser: at most one log line and one entry each, 100 kept."""
    style = TextReferenceStyle()
    session = ReferenceSession(sample_documents()[:3], source_key=style.source_of, style=style, keep_citations=False)
    with caplog.at_level(logging.WARNING, logger="langchain_refs"):
        for _ in range(2_000):
            session.feed(f"x{marker} ")
        session.close()
    references = session.references
    kept = len(references.invalid_citations)
    assert len(caplog.records) <= 2_000
    assert kept <= 100
    # Every log line reports at least one entry; entries are bounded by what was written.
    assert len(caplog.records) <= kept + references.omitted_invalid_citations <= 2_000 * len(marker)
    if marker.endswith("12)"):
        # A list of ids is a marker whatever the parser makes of ranges: exact counts.
        assert len(caplog.records) == 2_000
        assert references.omitted_invalid_citations == 1_900
        assert references.invalid_citations[0].item == "7-12"


def test_invalid_ids_next_to_valid_ones_are_reported_as_written() -> None:
    """Runs of bad ids are split by good ids; a lone bad id keeps its own wording."""
    marker = Marker(raw="[1](id=0, 9, 1, 10, 11)", ids=(0, 9, 1, 10, 11))
    session = session_with_marker(marker)
    assert session.feed("A") + session.close() == "A[1]\n\n- [1] a.html#chap1\n"
    assert [(i.item, i.reason) for i in session.references.invalid_citations] == [
        ("0", "no document 0 (3 given)"),
        ("9", "no document 9 (3 given)"),
        ("10-11", "no documents 10-11 (3 given)"),
    ]


def test_a_citation_of_a_document_the_model_was_not_shown_is_dropped() -> None:
    """Document 2 was handed over but never shown: the model cannot know its id, so citing it is a guess."""
    documents = sample_documents()
    style = TextReferenceStyle()
    session = ReferenceSession(documents, source_key=style.source_of, style=style, unshown_positions=[2])
    out = session.feed("A[1](id=1). B[2](id=2, 3).") + session.close()
    assert out.startswith("A[1]. B[2].")
    assert [(c.number, c.document_positions) for c in session.references.citations] == [(1, (1,)), (2, (3,))]
    assert [(i.item, i.reason) for i in session.references.invalid_citations] == [
        ("2", "document 2 was not shown to the model")
    ]


def test_huge_id_does_not_crash_the_session() -> None:
    """An id past Python's int-to-str limit is reported, not raised."""
    marker = Marker(raw="[1](id=big)", ids=(10**5000,))
    session = session_with_marker(marker)
    assert session.feed("A") + session.close() == "A"
    (invalid,) = session.references.invalid_citations
    assert invalid.item.endswith("-bit number")


# -- HTML escaping of the model's words, on request ----------------------------------


def html_session(style: HTMLReferenceStyle) -> ReferenceSession:
    return ReferenceSession(sample_documents(), source_key=style.source_of, style=style, answer_id="a1")


ANSWER_WITH_HTML = "<b>Paris</b> & <i>co</i>[1](id=3) <script>x()</script>"


@pytest.mark.parametrize("chunks", [[ANSWER_WITH_HTML], list(ANSWER_WITH_HTML)], ids=["whole", "per char"])
def test_escape_text_escapes_the_models_words(chunks: list[str]) -> None:
    """With escape_text=True the model's words are HTML-escaped; citations stay markup and offsets hold."""
    session = html_session(HTMLReferenceStyle(escape_text=True))
    output = "".join(session.feed(c) for c in chunks) + session.close()
    body = output.split("\n<ol", 1)[0]
    assert body == (
        '&lt;b&gt;Paris&lt;/b&gt; &amp; &lt;i&gt;co&lt;/i&gt;<sup class="citation"><a href="#ref-a1-1">1</a></sup>'
        " &lt;script&gt;x()&lt;/script&gt;"
    )
    (citation,) = session.references.citations
    assert output[citation.start : citation.end] == '<sup class="citation"><a href="#ref-a1-1">1</a></sup>'
    assert citation.text == "&lt;b&gt;Paris&lt;/b&gt; &amp; &lt;i&gt;co&lt;/i&gt;"


def test_html_style_passes_the_models_words_by_default() -> None:
    """By default the HTML style leaves the model's words as written (as langchain-references does)."""
    session = html_session(HTMLReferenceStyle())
    output = session.feed(ANSWER_WITH_HTML) + session.close()
    assert output.startswith('<b>Paris</b> & <i>co</i><sup class="citation">')
    assert "<script>x()</script>" in output


# -- styles are configuration: per-answer data goes with each call -------------------


def test_one_style_serves_interleaved_answers_unchanged() -> None:
    """Two answers rendered at once with one style get their own ids and support; the style is untouched."""
    style = HTMLReferenceStyle()
    before = dict(vars(style))
    first, second = (
        ReferenceSession(sample_documents(), source_key=style.source_of, style=style, answer_id=a) for a in "AB"
    )
    out_first = first.feed("x[1](id=3)")
    out_second = second.feed("y[1](id=5)")
    out_first += first.feed(" z[2](id=5).")

    def unsupported(references: AnswerReferences) -> AnswerReferences:
        return replace(references, citations=tuple(replace(c, supported=False) for c in references.citations))

    out_second += second.close(unsupported)
    out_first += first.close()
    assert re.findall(r'(?:href="#|id=")(ref-[^"]*)"', out_first) == ["ref-A-1", "ref-A-2", "ref-A-1", "ref-A-2"]
    assert re.findall(r'(?:href="#|id=")(ref-[^"]*)"', out_second) == ["ref-B-1", "ref-B-1"]
    assert "unsupported" not in out_first
    assert '<li id="ref-B-1" value="1" class="unsupported">' in out_second
    assert vars(style) == before


# -- SourceRegistry on its own ----------------------------------------------------


def test_registry_numbers_sources_by_first_citation() -> None:
    """Numbers go 1, 2, 3 in order of first citation; documents of one source share their number."""
    registry = SourceRegistry(["a", "b", "a", "c"])
    assert [registry.cite(p) for p in (4, 3, 2, 1, 4)] == [1, 2, 3, 2, 1]
    assert registry.numbered() == [(1, "c", [4]), (2, "a", [3, 1]), (3, "b", [2])]


def test_registry_positions_are_kept_once_in_citation_order() -> None:
    """A document cited twice is listed once under its number, where it was first cited."""
    registry = SourceRegistry(["a", "a", "a"])
    for position in (3, 1, 3, 2, 1):
        registry.cite(position)
    assert registry.numbered() == [(1, "a", [3, 1, 2])]


def test_registry_remembers_the_document_cited_last_per_number() -> None:
    """last_cited names, per number, the position cited under it most recently."""
    registry = SourceRegistry(["a", "b", "a", "b"])
    registry.cite(1)
    registry.cite(2)
    assert registry.last_cited() == [1, 2]
    registry.cite(3)
    assert registry.last_cited() == [3, 2]
    registry.cite(4)
    registry.cite(1)
    assert registry.last_cited() == [1, 4]


def test_registry_number_if_cited_and_next_number() -> None:
    """Before a source is cited it has no number and the next one is offered; after, it keeps its own."""
    registry = SourceRegistry(["a", "b", "a"])
    assert registry.number_if_cited(3) is None
    assert registry.next_number() == 1
    registry.cite(2)
    assert registry.number_if_cited(3) is None
    assert registry.next_number() == 2
    registry.cite(1)
    assert registry.number_if_cited(3) == 2
    assert registry.number_if_cited(2) == 1
    assert registry.next_number() == 3
    assert len(registry) == 3
    assert registry.source_key(3) == "a"


def test_registry_cite_key_joins_the_numbering() -> None:
    """A key cited without a document takes a source's number, or the next one with no positions."""
    registry = SourceRegistry(["https://a.org", "b"])
    assert registry.cite_key("https://z.org") == 1
    assert registry.cite_key("https://a.org") == 2
    assert registry.cite(1) == 2
    assert registry.cite_key("https://z.org") == 1
    assert registry.number_of_key("b") is None
    assert registry.numbered() == [(1, "https://z.org", []), (2, "https://a.org", [1])]
    assert registry.last_cited() == [0, 1]


def test_registry_uncited_lists_every_source_with_no_citation() -> None:
    """Sources none of whose documents is cited, in order of their first document, with all their positions."""
    registry = SourceRegistry(["c", "a", "b", "a", "c", "d"])
    registry.cite(3)
    registry.cite(6)
    assert registry.uncited() == [("c", [1, 5]), ("a", [2, 4])]
    registry.cite(5)
    assert registry.uncited() == [("a", [2, 4])]


def test_registry_hands_out_copies() -> None:
    """Changing what numbered() or last_cited() returned changes nothing in the registry."""
    registry = SourceRegistry(["a", "a"])
    registry.cite(1)
    registry.numbered()[0][2].append(99)
    registry.last_cited().append(7)
    assert registry.numbered() == [(1, "a", [1])]
    assert registry.last_cited() == [1]


def test_resolve_source_keys_never_merges_documents_without_a_key() -> None:
    """A missing or empty key is the document's own source (its id, else its position); unhashable keys are repr'd."""

    class Doc:
        def __init__(self, source: object = None, id: str | None = None) -> None:
            self.metadata = {"source": source}
            self.id = id

    keys = resolve_source_keys(
        [Doc("3"), Doc(), Doc(""), Doc(id="x"), Doc(["u"]), Doc("3")], lambda d: d.metadata["source"]
    )
    assert keys == ["3", OwnSource("position 2"), OwnSource("position 3"), OwnSource("id x"), "['u']", "3"]
    assert OwnSource("position 3") != "3"
    registry = SourceRegistry(keys)
    assert [registry.cite(p) for p in (2, 3, 1, 6)] == [1, 2, 3, 3]


@pytest.mark.parametrize("passages", [True, False])
def test_kept_citations_share_their_repeated_values(passages: bool) -> None:
    """A long answer keeps every citation: the same marker text and the same cited document are one object each."""
    style = TextReferenceStyle()
    session = ReferenceSession(sample_documents()[:3], source_key=style.source_of, style=style, passages=passages)
    for i in range(300):
        # Each marker is cut out of a chunk of its own: without sharing, each would be a string of its own.
        session.feed(f"Claim {i} is made here[{i % 2 + 1}](id={i % 2 + 1}). ")
    session.close()
    citations = session.references.citations
    assert len(citations) == 300
    assert {c.marker for c in citations} == {"[1](id=1)", "[2](id=2)"}
    assert len({id(c.marker) for c in citations}) == 2
    assert {c.document_positions for c in citations} == {(1,), (2,)}
    assert len({id(c.document_positions) for c in citations}) == 2


def test_closing_again_writes_nothing_more() -> None:
    """A second close returns "" (the held tail and the list were written by the first); the references stay."""
    style = TextReferenceStyle()
    session = ReferenceSession(sample_documents(), source_key=style.source_of, style=style)
    out = session.feed("Paris is big[1](id=1). Lyon[2](id=")
    out += session.close()
    assert out.startswith("Paris is big[1]. Lyon[2](id=\n\n- [1] ")
    assert out.count("- [1] ") == 1
    assert session.close() == ""
    assert [c.number for c in session.references.citations] == [1]


def test_the_session_takes_the_options_as_manage_references_does() -> None:
    """A metadata key for source_key and syntax names (one alone too) give what the resolved values give."""
    from langchain_refs.streaming import marker_syntaxes, source_key_function

    style = TextReferenceStyle()
    text = "Paris is big [1]. Lyon[2](id=2) too."

    def rendered(**options: object) -> str:
        session = ReferenceSession(sample_documents(), style=style, **options)  # type: ignore[arg-type]
        return session.feed(text) + session.close()

    resolved = rendered(source_key=source_key_function("source"), syntaxes=marker_syntaxes(("id", "bracket")))
    assert rendered(source_key="source", syntaxes=("id", "bracket")) == resolved
    assert rendered(source_key="source", syntaxes="bracket") == rendered(
        source_key=source_key_function("source"), syntaxes=marker_syntaxes(("bracket",))
    )
    assert resolved.startswith("Paris is big [1]. Lyon[2] too.\n\n- [1] ")
    # A wrong type is a TypeError in both builds; the compiled one's own check of the annotation speaks first.
    from langchain_refs import COMPILED

    wrong_type = "str object expected; got int" if COMPILED else "source_key must be a metadata key"
    with pytest.raises(TypeError, match=wrong_type):
        ReferenceSession(sample_documents(), source_key=5, style=style)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown marker syntax 'idd'"):
        ReferenceSession(sample_documents(), source_key="source", style=style, syntaxes="idd")


@pytest.mark.parametrize(
    ("documents", "style", "error", "message"),
    [
        (
            None,
            TextReferenceStyle(),
            ValueError,
            r"^ReferenceSession: documents must be a list of documents, got NoneType$",
        ),
        (
            "doc",
            TextReferenceStyle(),
            ValueError,
            r"^ReferenceSession: documents must be a list of documents, got str$",
        ),
        (
            [{"page_content": "Paris.", "metadata": {}}],
            TextReferenceStyle(),
            ValueError,
            r"^ReferenceSession: documents\[0\] is a dict, expected a document with page_content and metadata",
        ),
        ([], None, TypeError, r"^style must be a style such as MarkdownReferenceStyle\(\), got NoneType$"),
        (
            [],
            "markdown",
            TypeError,
            r"^style must be a style such as MarkdownReferenceStyle\(\), got the str 'markdown'$",
        ),
        ([], TextReferenceStyle, TypeError, r"^style must be a style, not the class TextReferenceStyle: write"),
    ],
)
def test_a_session_refuses_what_it_cannot_read_when_made(
    documents: object, style: object, error: type[Exception], message: str
) -> None:
    """Wrong documents or style fail when the session is made, one line each, not at the first marker."""
    with pytest.raises(error, match=message):
        ReferenceSession(documents, source_key="source", style=style)  # type: ignore[arg-type]
