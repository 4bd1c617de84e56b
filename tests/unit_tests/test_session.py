"""Every case of the table, rendered by a session, under every chunking."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_refs import DEFAULT_MAX_HOLDBACK, ReferenceSession, TextReferenceStyle
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
