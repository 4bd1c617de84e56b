"""The last chunk's data, made in one go for every citation: the same as the plain per-citation code.

`AnswerReferences.standard_citations` copies each number's head (type, url, title) and writes a passage's
extras at once; `ChunkRewriter._last_blocks` places every citation of a one-block text without a `locate`
call each. The expected values come from the plain code (below, as it was), key order included.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from langchain_core.messages import AIMessageChunk

from langchain_refs import (
    AnswerReferences,
    Citation,
    Passage,
    Reference,
    ReferenceSession,
    TextReferenceStyle,
    safe_url,
)
from langchain_refs.streaming._chunks import ChunkRewriter, _OwnBlock, _Segments
from langchain_refs.streaming._references import data_and_standard_citations


def plain_standard_citations(references: AnswerReferences, documents: Sequence[Any] | None) -> list[dict[str, Any]]:
    """The annotations written field by field, citation by citation."""
    by_number = {r.number: r for r in references.references}
    annotations: list[dict[str, Any]] = []
    for citation in references.citations:
        annotation: dict[str, Any]
        if citation.native is not None:
            annotation = {**citation.native, "type": "citation"}
            extras = dict(annotation.get("extras") or {})
        else:
            annotation = {"type": "citation"}
            reference = by_number.get(citation.number)
            if reference is not None:
                if safe_url(reference.source) is not None:  # a source that may become a link (tested on its own)
                    annotation["url"] = safe_url(reference.source)
                if reference.title:
                    annotation["title"] = reference.title
            extras = {}
            cited: str | None = None
            if citation.passage is not None:
                cited = citation.passage.excerpt
            elif documents is not None and citation.document_positions:
                position = citation.document_positions[0]
                if 1 <= position <= len(documents):
                    text = getattr(documents[position - 1], "page_content", None)
                    cited = text[:300] if isinstance(text, str) else None
            if cited is not None:
                annotation["cited_text"] = cited
        annotation["start_index"] = citation.text_start
        annotation["end_index"] = citation.text_end
        extras["number"] = citation.number
        extras["document_positions"] = list(citation.document_positions)
        if citation.passage is not None:
            extras["document_position"] = citation.passage.document_position
            extras["document_start"] = citation.passage.document_start
            extras["document_end"] = citation.passage.document_end
            extras["score"] = citation.passage.score
        annotation["extras"] = extras
        annotations.append(annotation)
    return annotations


passages = st.builds(
    Passage,
    document_position=st.integers(1, 4),
    document_start=st.integers(0, 50),
    document_end=st.integers(0, 80),
    excerpt=st.text(max_size=8),
    score=st.floats(allow_nan=False),
)
natives = st.none() | st.fixed_dictionaries(
    {"type": st.just("citation"), "url": st.just("https://a.org")},
    optional={"cited_text": st.text(max_size=5), "extras": st.fixed_dictionaries({"page": st.integers(1, 9)})},
)
citations = st.builds(
    Citation,
    number=st.integers(1, 5),
    document_positions=st.lists(st.integers(0, 5), max_size=3).map(tuple),
    start=st.integers(0, 99),
    end=st.integers(0, 99),
    text_start=st.integers(0, 99),
    text_end=st.integers(0, 99),
    text=st.text(max_size=8),
    marker=st.just("[1](id=1)"),
    passage=st.none() | passages,
    native=natives,
)
references = st.builds(
    AnswerReferences,
    references=st.lists(
        st.builds(
            Reference,
            number=st.integers(1, 4),
            source=st.none() | st.sampled_from(["https://a.org", "b.pdf", ""]),
            title=st.none() | st.sampled_from(["", "A title"]),
            document_positions=st.just((1,)),
        ),
        max_size=4,
    ).map(tuple),
    citations=st.lists(citations, max_size=8).map(tuple),
)
DOCUMENTS = [Document("Paris is big. " * 30), Document(""), Document("Lyon.")]


@settings(max_examples=400, deadline=None)
@given(refs=references, with_documents=st.booleans())
def test_standard_citations_are_the_plain_ones_in_the_same_order(refs: AnswerReferences, with_documents: bool) -> None:
    """Every kind of citation (native, with or without a passage, unlisted number): the same dicts, same key order."""
    documents = DOCUMENTS if with_documents else None
    expected = plain_standard_citations(refs, documents)
    found = refs.standard_citations(documents)
    assert found == expected
    assert json.dumps(found) == json.dumps(expected)
    # Each annotation a dict of its own: none shares a head with another.
    assert len({id(annotation) for annotation in found}) == len(found)


def segments_as_they_were(pieces: Sequence[tuple[Any, str]]) -> list[tuple[int, Any, int, int]]:
    """The segments as `_Segments.add` worked them out before its last segment was kept open (commit fb1e109).

    Each piece looks its block's text so far up, then lengthens the last
    segment when that is its block's and ends where its text does, else
    starts a segment: (offset, block, offset in the block, length).
    """
    found: list[tuple[int, Any, int, int]] = []
    ends: dict[Any, int] = {}
    offset = 0
    for block, text in pieces:
        if not text:
            continue
        local = ends.get(block, 0)
        if found and found[-1][1] == block and found[-1][2] + found[-1][3] == local:
            start, _, last_local, length = found[-1]
            found[-1] = (start, block, last_local, length + len(text))
        else:
            found.append((offset, block, local, len(text)))
        ends[block] = local + len(text)
        offset += len(text)
    return found


# Block keys: indices, and blocks without one (each its own key, as `_OwnBlock` is).
OWN_BLOCKS = [_OwnBlock() for _ in range(3)]


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(
        st.tuples(st.sampled_from([0, 1, 2, *OWN_BLOCKS]), st.text(alphabet="ab", max_size=3)), max_size=12
    ),
    probes=st.lists(st.tuples(st.integers(-1, 30), st.integers(-1, 30)), max_size=4),
)
def test_segments_are_those_of_the_code_before(pieces: list[tuple[Any, str]], probes: list[tuple[int, int]]) -> None:
    """After each piece: the segments (the open last one included) as before, and `locate` reads them alike."""
    segments = _Segments()
    for k, (block, text) in enumerate(pieces):
        segments.add(block, text)
        expected = segments_as_they_were(pieces[: k + 1])
        assert segments.segments() == expected
        for start, end in probes:
            where = next(
                (
                    (b, local + max(start, offset) - offset, local + end - offset)
                    for offset, b, local, length in expected
                    if offset < end <= offset + length or offset == start == end
                ),
                None,
            )
            assert segments.locate(start, end) == where


@settings(max_examples=200, deadline=None)
@given(
    pieces=st.lists(st.text(alphabet="ab ", max_size=12), max_size=4),
    spans=st.lists(st.tuples(st.integers(-2, 50), st.integers(-2, 50)), max_size=8),
    two_blocks=st.booleans(),
)
def test_annotations_go_where_locate_puts_them(
    pieces: list[str], spans: list[tuple[int, int]], two_blocks: bool
) -> None:
    """One text block (str chunks) or pieces of two: each annotation goes where `_Segments.locate` puts it."""
    style = TextReferenceStyle()
    rewriter = ChunkRewriter(ReferenceSession([], source_key=style.source_of, style=style))
    for k, piece in enumerate(pieces):
        content: Any = [{"type": "text", "text": piece, "index": k % 2}] if two_blocks else piece
        rewriter.on_chunk_v1(AIMessageChunk(content=content))
    annotations = [{"type": "citation", "start_index": start, "end_index": end, "extras": {}} for start, end in spans]
    expected: dict[Any, list[dict[str, Any]]] = {}
    for annotation in annotations:
        where = rewriter._segments.locate(annotation["start_index"], annotation["end_index"])
        if where is not None:
            key, start, end = where
            expected.setdefault(key, []).append({**annotation, "start_index": start, "end_index": end})
    content = rewriter._last_blocks(annotations, {"type": "text", "index": 0}, "", None, "")
    found = {item["index"]: item.get("annotations", []) for item in content if item.get("annotations")}
    assert found == expected


@settings(max_examples=300, deadline=None)
@given(refs=references, with_documents=st.booleans())
def test_one_pass_gives_to_dict_and_standard_citations(refs: AnswerReferences, with_documents: bool) -> None:
    """What the last chunk carries, in one pass over the citations: the two methods' values, key order included."""
    documents = DOCUMENTS if with_documents else None
    data, annotations = data_and_standard_citations(refs, documents)
    assert json.dumps(data) == json.dumps(refs.to_dict())
    assert data == refs.to_dict()
    assert annotations == refs.standard_citations(documents) == plain_standard_citations(refs, documents)
    assert json.dumps(annotations) == json.dumps(plain_standard_citations(refs, documents))
