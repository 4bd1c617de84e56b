"""Offsets of a rewritten answer moved onto the text another middleware edited (hand-written cases)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain.agents", reason="the agent tests need the agents extra: pip install -e '.[agents]'")

from langchain_core.messages import AIMessage

from langchain_refs.agents import MODEL_TEXT_KEY
from langchain_refs.agents._edited import TEXT_CHECK_KEY, OffsetMap, realigned, text_check, was_edited

OLD = "Mail a@b.org: Paris is big."
PARIS = "Paris is in France[1]."
SOURCES = "\n\n- [1] Paris (https://example.org/paris)"
NEW = "Mail [REDACTED]: Paris is big."

# (old text, new text, span in the old text, the same span in the new text), worked out by hand.
SPANS = [
    (OLD, NEW, (14, 26), (17, 29)),  # after the edit: shifted by the length change
    (OLD, NEW, (0, 4), (0, 4)),  # before the edit: unchanged
    (OLD, NEW, (0, 26), (0, 29)),  # over the edit: holds the replacement
    (OLD, NEW, (5, 12), (5, 15)),  # exactly the edited run: its replacement
    ("Paris is big.", "Paris is big.", (0, 13), (0, 13)),  # no edit
    ("Paris is very big.", "Paris is big.", (9, 17), (9, 12)),  # a span losing a word keeps the rest
    ("Paris is big.", "Today Paris is big.", (0, 5), (6, 11)),  # text put before the span
    ("ab", "", (0, 2), (0, 0)),  # all text removed
    # A sentence taken out where the same characters stand on either side: the claim before it keeps its last letter
    # (difflib alone takes out "e[1]. It has 9 people" and gives the claim "Paris is in Franc").
    (f"{PARIS} It has 9 people[1].{SOURCES}", f"{PARIS}{SOURCES}", (0, 18), (0, 18)),
    (f"{PARIS} It has 9 people[1].{SOURCES}", f"{PARIS}{SOURCES}", (18, 21), (18, 21)),  # its marker
    (f"{PARIS} It has 9 people[1].{SOURCES}", f"{PARIS}{SOURCES}", (23, 38), (22, 22)),  # the claim taken out
    # A sentence put in: the spans either side keep their text.
    (f"{PARIS}{SOURCES}", f"{PARIS} It has 9 people[1].{SOURCES}", (0, 18), (0, 18)),
    (f"{PARIS}{SOURCES}", f"{PARIS} It has 9 people[1].{SOURCES}", (24, 29), (44, 49)),  # the list's "- [1]"
]


@pytest.mark.parametrize(("old", "new", "span", "expected"), SPANS)
def test_a_span_moves_onto_the_edited_text(
    old: str, new: str, span: tuple[int, int], expected: tuple[int, int]
) -> None:
    """A span's start and end in the edited text, for each kind of edit."""
    offsets = OffsetMap.between(old, new)
    assert (offsets.start(span[0]), offsets.end(span[1])) == expected


def stamped(message: AIMessage) -> AIMessage:
    metadata = {**message.response_metadata, TEXT_CHECK_KEY: text_check(message), MODEL_TEXT_KEY: "raw"}
    return message.model_copy(update={"response_metadata": metadata})


def test_the_stamp_holds_no_text_and_tells_an_edit() -> None:
    """The stamp is a digest and block lengths; an edited text, or a changed block split, no longer matches it."""
    message = stamped(AIMessage([{"type": "text", "text": "Ab"}, {"type": "text", "text": "c."}]))
    assert message.response_metadata[TEXT_CHECK_KEY]["blocks"] == [2, 2]
    assert "Ab" not in repr(message.response_metadata[TEXT_CHECK_KEY])
    assert not was_edited(message)
    assert was_edited(message.model_copy(update={"content": [{"type": "text", "text": "Ab c."}]}))
    assert was_edited(
        message.model_copy(update={"content": [{"type": "text", "text": "A"}, {"type": "text", "text": "bc."}]})
    )


def test_annotations_of_each_block_move_with_their_block() -> None:
    """List content: each text block's annotations move within it; other blocks pass through."""
    annotation = {"type": "citation", "url": "u", "start_index": 14, "end_index": 26}
    rendered = AIMessage(
        [{"type": "reasoning", "reasoning": "..."}, {"type": "text", "text": OLD, "annotations": [annotation]}]
    )
    edited = stamped(rendered).model_copy(
        update={
            "content": [
                {"type": "reasoning", "reasoning": "..."},
                {"type": "text", "text": NEW, "annotations": [annotation]},
            ]
        }
    )
    fixed = realigned(edited, rendered)
    assert fixed.content[0] == {"type": "reasoning", "reasoning": "..."}
    (moved,) = fixed.content[1]["annotations"]  # type: ignore[index]
    assert NEW[moved["start_index"] : moved["end_index"]] == "Paris is big"
    assert MODEL_TEXT_KEY not in fixed.response_metadata
    assert TEXT_CHECK_KEY not in fixed.response_metadata


def test_without_the_rendered_answer_offsets_are_cleared_not_guessed() -> None:
    """No rendering to align with: annotations dropped, claims and offsets None, the edited text kept."""
    data = {"citations": [{"start": 26, "end": 29, "text_start": 14, "text_end": 26, "text": "Paris is big"}]}
    rendered = AIMessage(
        [{"type": "text", "text": OLD, "annotations": [{"type": "citation", "start_index": 14, "end_index": 26}]}],
        response_metadata={"references": data},
    )
    edited = stamped(rendered).model_copy(
        update={"content": [{"type": "text", "text": NEW, "annotations": rendered.content[0]["annotations"]}]}  # type: ignore[index]
    )
    fixed = realigned(edited, None)
    assert fixed.content == [{"type": "text", "text": NEW}]
    assert fixed.response_metadata["references"]["citations"] == [
        {"start": None, "end": None, "text_start": None, "text_end": None, "text": None}
    ]
    # The input message is left as it was.
    assert rendered.response_metadata["references"]["citations"][0]["text"] == "Paris is big"


def realigned_by_hand(old: str, new: str, claims: list[tuple[Any, ...]]) -> AIMessage:
    """`realigned` of an answer rendered as ``old`` and edited into ``new``, one text block with its annotations.

    ``claims``: (claim start, end, marker start, end[, raw marker]) of each citation in ``old``, worked out by
    hand; the annotations (in the block and in the metadata) are the claims'.
    """
    data = {
        "citations": [
            {"start": m, "end": e, "text_start": a, "text_end": b, "text": old[a:b]}
            | ({"marker": rest[0]} if rest else {})
            for a, b, m, e, *rest in claims
        ]
    }
    annotations = [{"type": "citation", "start_index": a, "end_index": b} for a, b, *_ in claims]
    rendered = AIMessage(
        [{"type": "text", "text": old, "annotations": annotations}],
        response_metadata={"references": data, "citations": annotations},
    )
    edited = stamped(rendered).model_copy(
        update={"content": [{"type": "text", "text": new, "annotations": annotations}]}
    )
    return realigned(edited, rendered)


def annotated(message: AIMessage, text: str) -> list[list[str]]:
    """The text each annotation spans, in the block and in the metadata."""
    places = (message.content[0]["annotations"], message.response_metadata["citations"])  # type: ignore[index]
    return [[text[a["start_index"] : a["end_index"]] for a in kept] for kept in places]


def test_a_citation_the_edit_took_out_is_dropped_from_the_data_and_the_annotations() -> None:
    """A guardrail deletes a cited sentence: its citation and annotation go; the others keep their text."""
    old = "Paris is in France[1]. It has 9 people[1]."
    new = "Paris is in France[1]."
    fixed = realigned_by_hand(old, new, [(0, 18, 18, 21), (23, 38, 38, 41)])
    assert [c["text"] for c in fixed.response_metadata["references"]["citations"]] == ["Paris is in France"]
    assert annotated(fixed, new) == [["Paris is in France"], ["Paris is in France"]]


def test_a_citation_whose_marker_the_edit_changed_leaves_no_annotation_behind() -> None:
    """An edit writes "[1]" as "(1)": the citation goes from the data, and its annotation with it (both places)."""
    old = "Paris is in France[1]. Lyon has silk[2]."
    new = "Paris is in France(1). Lyon has silk[2]."
    fixed = realigned_by_hand(old, new, [(0, 18, 18, 21), (23, 36, 36, 39)])
    assert [c["text"] for c in fixed.response_metadata["references"]["citations"]] == ["Lyon has silk"]
    assert annotated(fixed, new) == [["Lyon has silk"], ["Lyon has silk"]]


def test_two_citations_alike_one_taken_out_the_one_the_reader_sees_is_kept() -> None:
    """Two "[2]" markers, the edit keeps "Paris is big[2]." only: the kept citation's claim is that sentence."""
    old = f"Paris is big[1]. Paris is big[2]. It has 9 people[2].{SOURCES}"
    new = f"Paris is big[2].{SOURCES}"
    claims = [(0, 12, 12, 15, "[1](id=1)"), (17, 29, 29, 32, "[2](id=2)"), (34, 49, 49, 52, "[2](id=2)")]
    fixed = realigned_by_hand(old, new, claims)
    (citation,) = fixed.response_metadata["references"]["citations"]
    assert (citation["text"], new[citation["start"] : citation["end"]]) == ("Paris is big", "[2]")
    assert annotated(fixed, new) == [["Paris is big"], ["Paris is big"]]
