"""Passages found as the citations close: exactly what `attach_passages` gives on the whole answer.

A session with the lexical engine finds the citations' passages, and makes their final values, as they
close (a few at a time, once no new document has been cited for a few citations); at the end it finds
the ones still waiting, and again the passages a document cited for the first time later made stale (it
changes the words' rarity). The expected references come from the plain path: the same answer through a
session with passages off, then `attach_passages` on its references.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document

from langchain_refs import COMPILED, AnswerReferences, Citation, LexicalScorer, ReferenceSession, TextReferenceStyle
from langchain_refs.streaming import attach_passages
from langchain_refs.text import PassageFinder, find_passages
from tests.unit_tests.strategies import random_splits

WORDS = ["Paris", "Lyon", "silk", "capital", "river", "old", "Rome", "birds", "fly", "the", "is", "of", "2024", "port"]
STYLE = TextReferenceStyle()


@st.composite
def documents(draw: st.DrawFn) -> list[Document]:
    """Two to six documents of a few sentences from a small vocabulary (so rarity matters); some share a text."""
    texts = draw(
        st.lists(
            st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), min_size=1, max_size=4).map(
                lambda sentences: " ".join(" ".join(words).capitalize() + "." for words in sentences)
            ),
            min_size=2,
            max_size=6,
        )
    )
    return [Document(text, metadata={"source": f"s{k % 4}"}) for k, text in enumerate(texts)]


@st.composite
def answers(draw: st.DrawFn, count: int) -> str:
    """Claims and markers; the ids a marker may name grow as the answer goes, so documents are first cited late.

    Markers name one to three ids (some out of range, some repeated), sit side by side (a group), or follow a
    blank claim.
    """
    pieces: list[str] = []
    for k in range(draw(st.integers(1, 10))):
        # The first citations name the first documents only: the others join the batch later.
        reach = min(count, 1 + k * count // 4)
        claim = " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=6)))
        ids = draw(st.lists(st.integers(0, reach + 1), min_size=1, max_size=3))
        marker = f"[{k + 1}](id={', '.join(map(str, ids))})"
        pieces.append(f"{claim}{marker}")
        if draw(st.booleans()):
            pieces.append(f"[{k + 2}](id={draw(st.integers(1, count))})")  # beside it: the same claim
        pieces.append(draw(st.sampled_from([". ", " ", "\n", ". Also "])))
    return "".join(pieces)


def streamed(
    docs: list[Document],
    chunks: list[str],
    verify: Callable[[AnswerReferences], AnswerReferences] | None = None,
    **options: Any,
) -> tuple[str, ReferenceSession]:
    """A session fed ``chunks``, then closed (with ``verify`` when given): its output, and the session."""
    session = ReferenceSession(docs, source_key=STYLE.source_of, style=STYLE, **options)
    out = "".join(session.feed(chunk) for chunk in chunks) + session.close(verify)
    return out, session


def plain(docs: list[Document], answer: str) -> tuple[str, AnswerReferences]:
    """The expected value: the answer with passages off (whole), then `attach_passages` on the whole answer."""
    out, session = streamed(docs, [answer], passages=False)
    return out, attach_passages(session.references, docs)


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[Document], str, list[str]]:
    docs = draw(documents())
    answer = draw(answers(len(docs)))
    return docs, answer, draw(random_splits(answer))


@st.composite
def long_cases(draw: st.DrawFn) -> tuple[list[Document], str, list[str]]:
    """Answers of 40 to 200 citations: long enough for passages to be found while the answer streams.

    Each document is first cited at a drawn citation (some late, after many passages were found), then at
    random; a few citations name two documents, a few have a blank claim, a few sit beside another.
    """
    docs = draw(documents())
    rng = draw(st.randoms(use_true_random=False))
    count = draw(st.integers(40, 200))
    first_cited = sorted(rng.randrange(count) for _ in docs)
    pieces = []
    for k in range(count):
        reach = max(1, sum(1 for first in first_cited if first <= k))
        ids = [rng.randint(1, reach) for _ in range(1 if rng.random() < 0.9 else 2)]
        claim = "" if rng.random() < 0.05 else " ".join(rng.choices(WORDS, k=rng.randint(1, 6)))
        pieces.append(f"{claim}[{k + 1}](id={', '.join(map(str, ids))})")
        if rng.random() < 0.1:
            pieces.append(f"[{k + 2}](id={rng.randint(1, reach)})")
        pieces.append(rng.choice([". ", " ", "\n", ". Also "]))
    answer = "".join(pieces)
    return docs, answer, draw(random_splits(answer))


@settings(max_examples=300, deadline=None)
@given(case=cases())
def test_passages_as_cited_are_those_of_the_whole_answer(case: tuple[list[Document], str, list[str]]) -> None:
    """Any answer, any chunking: the session's references equal `attach_passages` on the plain references."""
    assert_as_plain(*case)


def assert_as_plain(docs: list[Document], answer: str, chunks: list[str]) -> None:
    """The session fed ``chunks`` gives the plain path's output and references (the scores too, to the bit)."""
    expected_out, expected = plain(docs, answer)
    out, session = streamed(docs, chunks)
    assert out == expected_out
    assert session.references == expected
    assert session.references.to_dict() == expected.to_dict()


@settings(max_examples=100, deadline=None)
@given(case=cases())
def test_before_the_end_no_passage_is_shown(case: tuple[list[Document], str, list[str]]) -> None:
    """Read before close, the citations carry no passage (they may still change); after, the final ones."""
    docs, _, chunks = case
    session = ReferenceSession(docs, source_key=STYLE.source_of, style=STYLE)
    off = ReferenceSession(docs, source_key=STYLE.source_of, style=STYLE, passages=False)
    for chunk in chunks:
        session.feed(chunk)
        off.feed(chunk)
        assert session.references == off.references
    session.close()
    off.close()
    assert session.references == attach_passages(off.references, docs)


@settings(max_examples=100, deadline=None)
@given(case=cases())
def test_with_a_verifier_the_passages_are_those_of_the_verified_references(
    case: tuple[list[Document], str, list[str]],
) -> None:
    """The verifier sees the citations without passages; the passages are then attached to what it returns."""
    docs, answer, chunks = case
    seen: list[AnswerReferences] = []

    def verify(references: AnswerReferences) -> AnswerReferences:
        seen.append(references)
        return LexicalScorer().verify_citations(references, docs)

    _, session = streamed(docs, chunks, verify)
    _, off = streamed(docs, [answer], passages=False)
    assert seen == [off.references]
    assert session.references == attach_passages(LexicalScorer().verify_citations(off.references, docs), docs)


@settings(max_examples=100, deadline=None)
@given(case=cases(), change=st.sampled_from(["drop the first", "other words", "reversed"]))
def test_a_verifier_that_changes_the_citations_gets_the_passages_of_what_it_returns(
    case: tuple[list[Document], str, list[str]], change: str
) -> None:
    """Citations dropped, reworded or reordered by the verifier: each gets the passage `attach_passages` gives it."""
    docs, answer, chunks = case

    def verify(references: AnswerReferences) -> AnswerReferences:
        citations = list(references.citations)
        if change == "drop the first":
            citations = citations[1:]
        elif change == "other words":
            citations = [replace(c, text=c.text.upper() + " river") for c in citations]
        else:
            citations.reverse()
        return replace(references, citations=tuple(citations))

    _, session = streamed(docs, chunks, verify)
    _, off = streamed(docs, [answer], passages=False)
    assert session.references == attach_passages(verify(off.references), docs)


def test_a_document_cited_late_changes_an_earlier_passage() -> None:
    """The case the end exists for: the passage found as the first citation closed is not its final one."""
    rome = "Rome is old. Rome has a river. Rome has roads."
    river = "The river is long. Rivers are old. Old things rot."
    docs = [Document(rome, metadata={"source": "r"}), Document(river, metadata={"source": "v"})]
    answer = "Rome river old roads[1](id=1). Rivers are old[2](id=2)."
    # Within Rome's text alone (too few sentences to weigh rarity) the first claim's passage is another sentence.
    alone = find_passages([("Rome river old roads", rome)])[0]
    whole = find_passages([("Rome river old roads", rome), ("Rivers are old", river)])[0]
    assert alone.excerpt != whole.excerpt
    for chunks in ([answer], list(answer)):
        _, session = streamed(docs, chunks)
        passage = session.references.citations[0].passage
        assert passage is not None
        assert (passage.document_start, passage.document_end, passage.excerpt, passage.score) == (
            whole.start,
            whole.end,
            whole.excerpt,
            whole.score,
        )
        assert session.references == plain(docs, answer)[1]


def test_a_citation_of_two_new_documents_is_found_within_both() -> None:
    """One citation whose second document joins the batch after its first was scored: found within both."""
    docs = [Document("Rome is old. Rome has a river. Rome has roads."), Document("The river is long. Rivers are old.")]
    answer = "Rome river old roads[1](id=1, 2). Rome river old roads[2](id=2, 1)."
    _, session = streamed(docs, list(answer))
    assert session.references == plain(docs, answer)[1]


def test_native_citations_and_blank_claims_as_the_plain_path() -> None:
    """A native citation gets no passage; a citation with no words before it gets the first sentence at 0."""
    docs = [Document("Rome is old. Rome has a river.", metadata={"source": "r"})]
    session = ReferenceSession(docs, source_key=STYLE.source_of, style=STYLE)
    session.feed("[1](id=1) Rome river")
    session.cite_native("https://a.org", Document("", metadata={"source": "https://a.org"}), {"type": "citation"})
    session.feed(". Old Rome[2](id=1).")
    session.close()
    citations = session.references.citations
    assert [c.passage is None for c in citations] == [False, True, False]
    assert citations[0].passage is not None
    assert (citations[0].passage.excerpt, citations[0].passage.score) == ("Rome is old.", 0.0)
    off = ReferenceSession(docs, source_key=STYLE.source_of, style=STYLE, passages=False)
    off.feed("[1](id=1) Rome river")
    off.cite_native("https://a.org", Document("", metadata={"source": "https://a.org"}), {"type": "citation"})
    off.feed(". Old Rome[2](id=1).")
    off.close()
    assert session.references == attach_passages(off.references, docs)


def test_a_citation_read_in_its_group_keeps_that_value() -> None:
    """Read before its group closes, a citation is not changed by a document joining it nor by its passage."""
    docs = [
        Document("Rome is old. Paris is in France.", metadata={"source": "a"}),
        Document("Lyon is big. Paris is big.", metadata={"source": "a"}),  # the same source: the same number
    ]
    session = ReferenceSession(docs, source_key=STYLE.source_of, style=STYLE)
    session.feed("Paris is big[1](id=1)")
    alone = session.references
    session.feed("[2](id=2)")
    joined = session.references
    session.feed(". Done.")
    session.close()
    read = {"number": 1, "start": 12, "end": 15, "text_start": 0, "text_end": 12, "text": "Paris is big"}
    assert alone.citations == (Citation(**read, document_positions=(1,), marker="[1](id=1)"),)
    assert joined.citations == (Citation(**read, document_positions=(1, 2), marker="[1](id=1)"),)
    final = session.references.citations
    assert [(c.document_positions, c.passage is not None) for c in final] == [((1, 2), True)]


@settings(max_examples=60, deadline=None)
@given(case=long_cases())
def test_passages_found_while_a_long_answer_streams_are_those_of_the_whole_answer(
    case: tuple[list[Document], str, list[str]],
) -> None:
    """Long answers, passages found in the stream and found again when a document is cited late: the plain path's."""
    assert_as_plain(*case)


def test_a_document_first_cited_after_a_hundred_citations() -> None:
    """A hundred citations of one document (their passages found as they stream), then a second document's."""
    docs = [
        Document("Paris is old. Lyon has silk. Birds fly over the river.", metadata={"source": "a"}),
        Document("Silk is old. The river is the port of Lyon.", metadata={"source": "b"}),
    ]
    claims = ["Paris silk river", "old silk birds", "Lyon river birds", "the old river of Paris"]
    answer = "".join(f"{claims[k % 4]}[1](id=1). " for k in range(100))
    answer += "Lyon port river[2](id=2). Lyon silk[1](id=1)."
    for size in (1, 7, len(answer)):
        assert_as_plain(docs, answer, [answer[i : i + size] for i in range(0, len(answer), size)])
    _, expected = plain(docs, answer)
    # The second document changes the words' rarity (five sentences in the batch, not three): the first hundred
    # passages, found before it joined, had other scores then, and are found again.
    _, before = plain(docs, answer.split("Lyon port")[0])
    changed = [k for k in range(100) if before.citations[k].passage != expected.citations[k].passage]
    moved = [k for k in range(100) if before.citations[k].passage.excerpt != expected.citations[k].passage.excerpt]
    assert (len(changed), len(moved)) == (100, 50)


@settings(max_examples=100, deadline=None)
@given(case=cases(), passages=st.booleans())
def test_references_read_before_the_end_never_change(
    case: tuple[list[Document], str, list[str]], passages: bool
) -> None:
    """Every value the references handed out while the answer streamed is, after close, what it was then."""
    docs, _, chunks = case
    session = ReferenceSession(docs, source_key=STYLE.source_of, style=STYLE, passages=passages)
    read: list[tuple[AnswerReferences, dict[str, Any]]] = []
    for chunk in chunks:
        session.feed(chunk)
        references = session.references
        read.append((references, references.to_dict()))
    session.close()
    _ = session.references  # the final values made: the stale passages found again
    for references, as_read in read:
        assert references.to_dict() == as_read


def test_passages_are_found_as_the_answer_streams_each_once_and_the_end_finds_at_most_64(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Eight documents cited first (none found while they join), then 192 citations: found in the stream.

    Each passage is found once (every document joined before the first was found); what is left for the
    end is at most 64 (the citations still waiting), and the references are the plain path's.
    """
    if COMPILED:
        pytest.skip("the compiled build's PassageFinder is a native class: its calls cannot be counted")
    finds: list[str] = []
    find_one = PassageFinder.find_one

    def counted(self: PassageFinder, claim: str, text: str) -> tuple[int, int, str, float]:
        finds.append(claim)
        return find_one(self, claim, text)

    monkeypatch.setattr(PassageFinder, "find_one", counted)
    docs = [Document(f"{w} is old. The {w} river has silk. Birds fly over {w}.") for w in WORDS[:8]]
    ids = [*range(1, 9), *[(k * 5) % 8 + 1 for k in range(192)]]
    answer = "".join(f"{WORDS[k % len(WORDS)]} river old silk[{k + 1}](id={i}). " for k, i in enumerate(ids))
    session = ReferenceSession(docs, source_key=STYLE.source_of, style=STYLE)
    out = ""
    ninth = answer.index("[9](")
    for start in range(0, len(answer), 4):
        out += session.feed(answer[start : start + 4])
        if start + 4 <= ninth:
            assert finds == []  # the first eight citations (each of a new document) wait
    streamed_finds = len(finds)
    out += session.close()
    references = session.references
    assert len(finds) == 200
    assert 200 - streamed_finds <= 64
    expected_out, expected = plain(docs, answer)
    assert out == expected_out
    assert references.to_dict() == expected.to_dict()
