"""The text layer's shortcuts against the plain reading they stand for."""

from __future__ import annotations

import itertools
import re
import string
import unicodedata

from hypothesis import example, given, settings
from hypothesis import strategies as st

from langchain_refs.text import STOP_WORDS, WORD, content_words, fold, stem, words
from langchain_refs.text._lexical_engine import _CAPITALISED, _NUMBER, _names
from langchain_refs.text._words import clear_word_caches


def _kind(character: str) -> str | None:
    """What a character of a folded text is to a reader of words, as `words` documents it."""
    code = ord(character)
    if 0x3040 <= code <= 0x30FF or 0x3400 <= code <= 0x4DBF or 0x4E00 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF:
        return "alone"  # Han and kana: a word each
    if character.isascii():
        return "word" if character in string.ascii_lowercase + string.digits else None
    return "word" if unicodedata.category(character)[0] in "LMN" else None


def plain_words(folded: str) -> list[str]:
    """`words` written another way: runs of word characters, and each Han or kana character alone."""
    found: list[str] = []
    for kind, run in itertools.groupby(folded, key=_kind):
        if kind == "word":
            found.append("".join(run))
        elif kind == "alone":
            found.extend(run)
    return found


def plain_content_words(text: str) -> list[str]:
    """The reading `content_words` stands for: every word of the folded text, stop words left out, stemmed."""
    return [stem(w) for w in plain_words(fold(text)) if w not in STOP_WORDS]


@settings(max_examples=500, deadline=None)
@given(text=st.text(max_size=80))
def test_words_is_its_plain_reading(text: str) -> None:
    """`words` of any folded text are those of the reading written another way (`plain_words`)."""
    assert words(fold(text)) == plain_words(fold(text))


# Whitespace of every kind, letters that fold or decompose (ligatures, accents, dotted I, final sigma,
# full-width and superscript digits), combining marks, punctuation and markers.
TRICKY = (
    " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2007\u200a\u2028\u2029\u202f\u205f\u3000"
    "aAeEsSzZ09\u0130\u0131\u03a3\u03c3\u03c2\u00df\ufb01\ufb02\u00bd\u00b2\u00b3\u2460\uff21\uff19"
    "\u00e9\u00c9\u00f1\u00d1\u0301\u0308\u0327\u01c5\u338f\u2103\u2122.,;:!?'\"()[]-_/"
)
TEXTS = st.one_of(
    st.text(alphabet=TRICKY, max_size=80),
    st.text(max_size=80),
    st.lists(st.sampled_from([*sorted(STOP_WORDS)[:20], "Paris", "migrating", "2.5", "U.S.", "é", "\u0301"])).map(
        " ".join
    ),
)


@settings(max_examples=500, deadline=None)
@given(text=TEXTS, cold=st.booleans())
@example(text="\u03a3 \u03a3\u0391 \ufb01sh\u00a0caf\u00e9 \u00bd x\u0301y", cold=True)
def test_content_words_is_the_plain_reading(text: str, cold: bool) -> None:
    """Read piece by piece through the cache, the content words of any text are those of the plain reading."""
    if cold:
        clear_word_caches()
    assert content_words(text) == plain_content_words(text)
    assert content_words(text) == plain_content_words(text)  # once more, from the cache


def test_no_whitespace_folds_into_a_word() -> None:
    """What the piece-by-piece reading rests on: no whitespace character folds into a letter or digit."""
    for code in range(0x110000):
        char = chr(code)
        if char.isspace():
            assert not words(fold(char)), hex(code)
            assert not words(unicodedata.normalize("NFKD", char.lower())), hex(code)


def test_long_pieces_are_read_but_not_kept() -> None:
    """A piece longer than the cache keeps is read all the same."""
    text = "migrating" * 20 + " Paris"
    assert content_words(text) == plain_content_words(text)


def test_a_citation_with_its_passage_is_replace_s() -> None:
    """`attach_passages` copies a citation field by field: the same as `dataclasses.replace`, every field known."""
    from dataclasses import fields, replace

    from langchain_refs.streaming._passages import _CITATION_FIELDS, with_passage
    from langchain_refs.streaming._references import Citation, Passage

    assert tuple(f.name for f in fields(Citation)) == _CITATION_FIELDS
    citation = Citation(
        number=3,
        document_positions=(2, 5),
        start=10,
        end=13,
        text_start=1,
        text_end=10,
        text="Paris is",
        marker="[3](id=2, 5)",
        support=0.5,
        supported=True,
        unsupported_reason="x",
        native={"a": 1},
    )
    passage = Passage(document_position=2, document_start=0, document_end=4, excerpt="Bye.", score=0.25)
    copied = with_passage(citation, passage)
    assert copied == replace(citation, passage=passage)
    assert all(getattr(copied, f.name) is getattr(replace(citation, passage=passage), f.name) for f in fields(Citation))


@settings(max_examples=300, deadline=None)
@given(text=TEXTS)
def test_numbers_are_the_plain_search(text: str) -> None:
    """A claim's numbers: those the plain search finds, with or without the ASCII shortcut."""
    from langchain_refs.text._lexical_engine import _NUMBER, _numbers

    assert _numbers(text) == frozenset(_NUMBER.findall(text))
    assert _numbers(text + " 2.5 and 1,000") == frozenset(_NUMBER.findall(text + " 2.5 and 1,000"))


# The claim patterns as first written: each tried at every position of a claim.
PLAIN_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
PLAIN_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z]+")
# Capitals after every kind of character that decides whether they start a name: word characters
# (letters of any script, digits, "_"), sentence ends, whitespace of every kind, the claim's start.
CLAIMS = st.one_of(
    TEXTS,
    st.text(alphabet="AMZamz09_.!?,;'-\u00e9\u00c9\u01c5\u0663\u2163 \t\n\xa0\u2003", max_size=40),
)


@settings(max_examples=1000, deadline=None)
@given(text=CLAIMS)
@example(text="Paris. Lyon!\tRome_Milan \u00e9Nice \u00a0Oslo 1.5,2 3..4")
def test_the_claim_patterns_find_what_their_plain_forms_find(text: str) -> None:
    """Names and numbers: the patterns that skip to the next capital or digit find what the plain ones find."""
    assert _NUMBER.findall(text) == PLAIN_NUMBER.findall(text)
    assert _CAPITALISED.findall(text) == PLAIN_CAPITALISED.findall(text)
    names = PLAIN_CAPITALISED.findall(text)
    assert _names(text) == {stem(w) for w in WORD.findall(fold(" ".join(names)))}
