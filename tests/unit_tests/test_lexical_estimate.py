"""The lexical estimate's error bound against the exact scores `LexicalSupport.score` gives (the oracle).

`LexicalSupport.best_matches` rules a candidate out when its estimate is more
than the slack below the best one's: that is safe only if every estimate is
within half the slack of the candidate's exact score, scaled. Checked here in
exact rational arithmetic, field by field, for random texts, claims and settings.
"""

from __future__ import annotations

import re
import struct
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_refs.text import LexicalSupport, split_sentences
from langchain_refs.text._lexical_engine import (
    _FIELD,
    _HIGH,
    _TENS,
    _UNIT,
    CandidateIndex,
    LexicalMatcher,
    _Contributions,
    _estimated_fields,
    _evidence,
    _numbers_of,
    _read_claim,
)
from langchain_refs.text._words import content_words

WORDS = [
    "Paris",
    "paris",
    "Lyon",
    "silk",
    "silky",
    "capital",
    "capitals",
    "capitalism",
    "France",
    "river",
    "rivers",
    "1924",
    "2.5",
    "the",
    "migrating",
    "migrants",
]


@st.composite
def texts(draw: st.DrawFn) -> str:
    sentences = draw(
        st.lists(
            st.tuples(st.lists(st.sampled_from(WORDS), min_size=0, max_size=9), st.sampled_from([".", "!", ". "])),
            min_size=1,
            max_size=10,
        )
    )
    return " ".join(" ".join(words).capitalize() + end for words, end in sentences)


SETTINGS = st.fixed_dictionaries(
    {},
    optional={
        "phrase_weight": st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0]),
        "number_penalty": st.sampled_from([0.0, 0.3, 0.65, 0.7, 1.0]),
        "rarity_weight": st.sampled_from([0.0, 0.5, 1.0, 1.5]),
        "min_batch_for_rarity": st.integers(1, 6),
        "window": st.integers(1, 3),
    },
)


def fields_and_bound(
    matcher: LexicalMatcher, index: CandidateIndex, claim: str, support: LexicalSupport
) -> tuple[list[int], int, Fraction] | None:
    """The claim's estimated fields, its slack, and its scale (a score of 1's weight, by the documented formula)."""
    # Read as the matcher reads it: without its word pairs when they weigh nothing.
    analysed, words, names = _read_claim(claim, matcher._weights, matcher._named, pairs=support.phrase_weight != 0)
    estimate = matcher._estimate(analysed, words, names)
    if estimate is None:
        return None
    contributions = (_Contributions(index, matcher._weights), _Contributions(index, matcher._named))
    total = _estimated_fields(analysed, estimate, index, contributions, support.number_penalty)
    mask = (1 << _FIELD) - 1
    fields = [(total >> (i * _FIELD)) & mask for i in range(len(index.evidence))]
    unigram = Fraction(1 - support.phrase_weight) if analysed.pairs else Fraction(1)
    scale = Fraction(_UNIT) * Fraction(analysed.total) / unigram
    if analysed.numbers:
        scale *= _TENS
    return fields, estimate.slack, scale


@settings(max_examples=300, deadline=None)
@given(
    documents=st.lists(texts(), min_size=1, max_size=4),
    claims=st.lists(st.lists(st.sampled_from([*WORDS, "3", "Silk"]), min_size=1, max_size=12), min_size=1, max_size=6),
    settings_=SETTINGS,
)
def test_every_estimate_is_within_half_the_slack_of_its_scaled_score(
    documents: list[str], claims: list[list[str]], settings_: dict[str, float]
) -> None:
    """Field by field: |estimate - scale * score| <= slack / 2, and fields stay clear of the high bit."""
    support = LexicalSupport(**settings_)  # type: ignore[arg-type]
    lists = [[s.text for s in split_sentences(document)] for document in documents]
    everything = [text for texts_ in lists for text in texts_]
    matcher = support.matcher(lists)
    for words in claims:
        claim = " ".join(words)
        # The oracle: one `score` call over every candidate of the batch (the same rarity as the matcher's).
        exact = dict(zip(everything, support.score([(claim, text) for text in everything]), strict=True))
        for texts_ in lists:
            index = matcher.index(texts_)
            found = fields_and_bound(matcher, index, claim, support)
            if found is None:
                continue
            fields, slack, scale = found
            for i, text in enumerate(texts_):
                assert fields[i] < _HIGH // 2
                if i in index.windowed:
                    assert fields[i] == 0
                    continue
                assert abs(fields[i] - scale * Fraction(exact[text])) <= Fraction(slack, 2), (claim, text)


def test_the_slack_is_a_tiny_share_of_the_scale() -> None:
    """Default settings: candidates within a few parts in ten million of the best are all that is scored."""
    support = LexicalSupport()
    texts_ = [
        "Paris is the capital of France.",
        "Lyon is known for silk.",
        "The Seine runs through Paris.",
        "Paris hosted the Olympics in 1924.",
    ]
    matcher = support.matcher([texts_])
    index = matcher.index(texts_)
    for claim in ["Paris is the capital of France", "Paris hosted the Olympics in 1924", "silk from Lyon"]:
        found = fields_and_bound(matcher, index, claim, support)
        assert found is not None
        _, slack, scale = found
        assert 0 < slack < scale / 1_000_000


@settings(max_examples=3000, deadline=None)
@given(
    pieces=st.lists(
        st.sampled_from(
            [
                "a",
                "Tes",
                "ies",
                "2",
                "10",
                "3.5",
                "1,000",
                "x9",
                "\u0663",
                "\u00b2",
                "\u00e9",
                " ",
                ".",
                "one",
                "twelve",
                "2nd",
                " million",
                "2019",
                "1st",
            ]
        ),
        max_size=10,
    )
)
def test_numbers_read_from_the_words_are_the_texts(pieces: list[str]) -> None:
    """A claim's numbers, the shortcut for an ASCII claim of letters taken or not: its content words in digits."""
    text = "".join(pieces)
    words = content_words(text)
    digits = {w for w in words if w.isascii() and w.replace(".", "", 1).isdigit()}
    # A one-digit number counts where the claim writes that digit as a number ("1", "1st"), not within "2019".
    alone = {m.group(1) for m in re.finditer(r"(?<![\w.,])(\d)(?:st|nd|rd|th)?(?!\w|[.,]\d)", text)}
    assert _numbers_of(text, words) == {w for w in digits if len(w) > 1 or w in alone}


@settings(max_examples=300, deadline=None)
@given(
    documents=st.lists(texts(), min_size=1, max_size=4),
    claims=st.lists(st.lists(st.sampled_from([*WORDS, "3", "Silk"]), min_size=1, max_size=12), min_size=1, max_size=6),
    settings_=SETTINGS,
    odd=st.sampled_from([{}, {"number_penalty": 1.5}, {"whole_weight": -1.0}, {"rarity_weight": 1e6}]),
)
def test_a_claim_read_without_its_pairs_scores_the_same_when_they_weigh_nothing(
    documents: list[str], claims: list[list[str]], settings_: dict[str, float], odd: dict[str, float]
) -> None:
    """phrase_weight 0: with the claim's pairs read or skipped, every score is the same bit for bit, so is the best.

    Rarity over the documents' sentences as a batch of them gives it, odd settings (NaN, negative, infinite) too.
    """
    support = LexicalSupport(**{**settings_, **odd, "phrase_weight": 0.0})  # type: ignore[arg-type]
    scoring = support._scoring()
    sentences = [s.text for document in documents for s in split_sentences(document)] or [""]
    rarity = scoring.rarity([_evidence(text, support.window).whole for text in sentences])
    weights, named = scoring.word_weights(rarity, max(rarity.values()) if rarity else 0.0)
    read = [_evidence(text, support.window) for text in sentences]
    for words in claims:
        claim = " ".join(words)
        with_pairs = _read_claim(claim, weights, named, pairs=True)[0]
        without = _read_claim(claim, weights, named, pairs=False)[0]
        assert not without.pairs
        for evidence in read:
            bits = [struct.pack("d", scoring.evidence_score(c, evidence)) for c in (with_pairs, without)]
            assert bits[0] == bits[1]
        chosen = range(len(read))
        assert repr(scoring.best_of(with_pairs, read, chosen)) == repr(scoring.best_of(without, read, chosen))


def test_phrase_weight_zero_counts_words_alone() -> None:
    """Hand-worked: 'Lyon silk' against 'silk from Lyon' holds both words but not their pair in order."""
    pair = [("Lyon silk", "Silk from Lyon.")]
    assert LexicalSupport(phrase_weight=0.0).score(pair) == [1.0]
    assert LexicalSupport().score(pair) == [0.75]  # words 3/4 of the score, the pair (absent) 1/4
