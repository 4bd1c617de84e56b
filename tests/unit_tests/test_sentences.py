"""Sentence splitting: the hard cases, and offsets that always slice exactly."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_refs import EXTENDED_ABBREVIATIONS, SentenceSplitter, split_sentences


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Dr. Smith arrived. He sat down.", ["Dr. Smith arrived.", "He sat down."]),
        ("Use e.g. apples or i.e. pears. Then eat.", ["Use e.g. apples or i.e. pears.", "Then eat."]),
        ("The U.S. Army won. Peace came.", ["The U.S. Army won.", "Peace came."]),
        ("See No. 5 in the list. It is red.", ["See No. 5 in the list.", "It is red."]),
        ("Pi is 3.14 or so. Tau is 6.28.", ["Pi is 3.14 or so.", "Tau is 6.28."]),
        ("Wait... it moved. Then... Nothing.", ["Wait... it moved.", "Then...", "Nothing."]),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ("Is it? Yes! Sure.", ["Is it?", "Yes!", "Sure."]),
        ("J. R. R. Tolkien wrote it. Fine.", ["J. R. R. Tolkien wrote it.", "Fine."]),
        ("Paris is big[1](id=2). Lyon too[2].", ["Paris is big[1](id=2).", "Lyon too[2]."]),
        ("Paris is big.[1] Lyon too.", ["Paris is big.[1]", "Lyon too."]),
        ("# Title\nBody text here.", ["# Title", "Body text here."]),
        ("Intro:\n- first item\n- second item", ["Intro:", "- first item", "- second item"]),
        ("One\n\nTwo", ["One", "Two"]),
        ("  padded.   ", ["padded."]),
        ("", []),
        ("no final stop", ["no final stop"]),
    ],
)
def test_hard_cases(text: str, sentences: list[str]) -> None:
    """Abbreviations, decimals, ellipses, quotes, markers, Markdown: split as a reader would."""
    assert [s.text for s in split_sentences(text)] == sentences


def test_strict_mode_splits_lines_and_semicolons() -> None:
    """strict=True also ends sentences at line breaks and semicolons."""
    text = "first part; second part\nthird line"
    assert [s.text for s in split_sentences(text)] == ["first part; second part\nthird line"]
    assert [s.text for s in split_sentences(text, strict=True)] == ["first part;", "second part", "third line"]


def test_extended_abbreviations() -> None:
    """The extended list knows more abbreviations (e.g. 'Art.')."""
    text = "See Art. Five of the law. Done."
    assert len(SentenceSplitter().split(text)) == 3
    assert [s.text for s in SentenceSplitter(abbreviations=EXTENDED_ABBREVIATIONS).split(text)] == [
        "See Art. Five of the law.",
        "Done.",
    ]


TEXT = st.text(
    alphabet=st.sampled_from(list("abc XYZ.!?…\n\"'()[]#-*1234éß日本🎉\t;:")) | st.characters(), max_size=200
)


@settings(max_examples=500, deadline=None)
@given(text=TEXT, strict=st.booleans())
def test_offsets_slice_exactly(text: str, strict: bool) -> None:
    """Every span slices its text exactly; spans are ordered, disjoint and trimmed."""
    spans = split_sentences(text, strict=strict)
    previous_end = 0
    for span in spans:
        assert text[span.start : span.end] == span.text
        assert span.start >= previous_end
        assert span.text == span.text.strip()
        assert span.text
        previous_end = span.end
    # Nothing but whitespace is left out.
    covered = "".join(text[a.end : b.start] for a, b in itertools.pairwise(spans))
    assert not covered.strip()
