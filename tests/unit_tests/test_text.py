"""The text layer: the lexical engine behind LexicalScorer, and the passage finder."""

from __future__ import annotations

import dataclasses
import inspect
import math
import unicodedata
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_refs import LexicalScorer
from langchain_refs.text import (
    LexicalSupport,
    PassageSpan,
    SentenceSplitter,
    Span,
    content_words,
    find_passages,
    fold,
    split_sentences,
    stem,
)
from langchain_refs.text._lexical_engine import _analyse, _evidence

LYON = "Lyon is big. Lyon has silk. It rains."


class Listed:
    """A scorer that answers fixed scores in turn and records each batch it was given."""

    def __init__(self, values: Sequence[float]) -> None:
        self.values = list(values)
        self.batches: list[list[tuple[str, str]]] = []

    def score(self, text_pairs: list[tuple[str, str]]) -> list[float]:
        self.batches.append(list(text_pairs))
        return [self.values[i % len(self.values)] for i in range(len(text_pairs))]


class CountingSplitter(SentenceSplitter):
    """The default splitter, counting the texts it splits."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def split(self, text: str) -> list[Span]:
        self.texts.append(text)
        return super().split(text)


def test_full_coverage_scores_one_and_no_words_zero() -> None:
    """Every claim word in the evidence, next to each other: 1.0; a claim without words: 0.0 (worked by hand)."""
    assert LexicalSupport().score([("Lyon silk", "Lyon is known for silk."), ("", "Anything.")]) == [1.0, 0.0]


def test_missing_number_costs_the_penalty() -> None:
    """A number of the claim missing from the evidence multiplies the score by number_penalty."""
    # "built 1889" against "It was built." covers "built" (weight 1.5) of 1.5 + 2.0, no phrase: 0.75 * 1.5/3.5.
    expected = 0.75 * 1.5 / 3.5 * 0.7
    assert LexicalSupport().score([("built 1889", "It was built.")]) == [pytest.approx(expected)]
    assert LexicalSupport(number_penalty=1.0).score([("built 1889", "It was built.")]) == [
        pytest.approx(0.75 * 1.5 / 3.5)
    ]


def test_lexical_scorer_delegates_to_the_engine_with_its_options() -> None:
    """LexicalScorer gives exactly the engine's scores, with the options it was built with or later set."""
    pairs = [
        ("Paris is the capital of France since 987.", "Paris has been the capital of France since 987. It is big."),
        ("Lyon silk", "Lyon is known for its food. Silk came later. Rome is old."),
        ("Rome 330", "Rome is old."),
    ] * 2
    scorer = LexicalScorer(window=1, number_penalty=0.5)
    assert scorer.score(pairs) == LexicalSupport(window=1, number_penalty=0.5).score(pairs)
    scorer.number_penalty = 1.0
    assert scorer.score(pairs) == LexicalSupport(window=1, number_penalty=1.0).score(pairs)


def test_the_lexical_settings_have_one_set_of_defaults() -> None:
    """LexicalScorer's keyword defaults are LexicalSupport's, and every setting reaches the engine by name."""
    defaults = LexicalSupport()
    signature = inspect.signature(LexicalScorer)
    settings = [f.name for f in dataclasses.fields(LexicalSupport)]
    assert settings == ["window", "phrase_weight", "whole_weight", "number_penalty", "rarity_weight",
                        "min_batch_for_rarity"]  # fmt: skip
    assert {name: signature.parameters[name].default for name in settings} == dataclasses.asdict(defaults)
    assert LexicalScorer().support == defaults
    changed = LexicalSupport(window=3, phrase_weight=0.5, whole_weight=0.25, number_penalty=0.5,
                             rarity_weight=0.5, min_batch_for_rarity=2)  # fmt: skip
    scoring = changed._scoring()
    assert {name: getattr(scoring, name) for name in settings} == dataclasses.asdict(changed)


def test_fold_lowers_and_strips_accents_ascii_or_not() -> None:
    """fold: lower case without accents; ASCII text (its fast path) and non-ASCII give what NFKD gives."""
    assert fold("Paris IS Big") == "paris is big"
    assert fold("Café Ünïcode") == "cafe unicode"
    assert fold("\u0130stanbul") == "i\u0307stanbul"[0] + "stanbul"  # the dot above is a combining mark


def test_clear_caches_empties_the_caches() -> None:
    """LexicalSupport.clear_caches forgets the analysed texts and stems (a benchmark's cold start)."""
    LexicalSupport().score([("Lyon silk", "Lyon is known for silk.")])
    assert _analyse.cache_info().currsize > 0
    assert _evidence.cache_info().currsize > 0
    assert stem.cache_info().currsize > 0
    LexicalSupport.clear_caches()
    assert _analyse.cache_info().currsize == 0
    assert _evidence.cache_info().currsize == 0
    assert stem.cache_info().currsize == 0


def test_passage_is_the_best_sentence_with_exact_offsets() -> None:
    """The passage is the sentence that supports the claim; its offsets slice the document."""
    (found,) = find_passages([("silk from Lyon", LYON)])
    assert (found.start, found.end, found.excerpt) == (13, 27, "Lyon has silk.")
    assert LYON[found.start : found.end] == found.excerpt
    assert 0.0 < found.score <= 1.0


def test_ties_go_to_the_earlier_window() -> None:
    """Two windows with the same score: the earlier one is the passage."""
    text = "Lyon has silk. Lyon has silk too."  # "too" is a stop word: both sentences score the same
    (found,) = find_passages([("Lyon silk", text)])
    assert (found.start, found.excerpt) == (0, "Lyon has silk.")
    scorer = Listed([0.5])
    assert find_passages([("x", LYON)], scorer=scorer)[0].excerpt == "Lyon is big."


def test_windows_of_several_sentences() -> None:
    """size=2: windows of two sentences, advancing by one; the excerpt keeps the space between them."""
    scorer = Listed([0.1, 0.9])
    (found,) = find_passages([("x", LYON)], scorer=scorer, size=2)
    assert scorer.batches == [[("x", "Lyon is big. Lyon has silk."), ("x", "Lyon has silk. It rains.")]]
    assert found == PassageSpan(start=13, end=37, excerpt="Lyon has silk. It rains.", score=0.9)


def test_one_split_per_document_and_one_scoring_batch() -> None:
    """Each distinct document is split once; all pairs go to the scorer in one call, each pair once."""
    splitter = CountingSplitter()
    scorer = Listed([0.2, 0.8, 0.5])
    rome = "Rome is old. Rome has ruins."
    found = find_passages([("a", LYON), ("b", rome), ("a", LYON)], scorer=scorer, splitter=splitter)
    assert splitter.texts == [LYON, rome]
    assert scorer.batches == [
        [
            ("a", "Lyon is big."),
            ("a", "Lyon has silk."),
            ("a", "It rains."),
            ("b", "Rome is old."),
            ("b", "Rome has ruins."),
        ]
    ]
    # Scores in batch order 0.2, 0.8, 0.5 | 0.2, 0.8; the repeated pair reads the same scores.
    assert [(p.excerpt, p.score) for p in found] == [
        ("Lyon has silk.", 0.8),
        ("Rome has ruins.", 0.8),
        ("Lyon has silk.", 0.8),
    ]


def test_logit_scores_below_minus_one_still_pick_the_best() -> None:
    """A cross-encoder's negative logits: the highest wins and its own score is reported."""
    (found,) = find_passages([("x", LYON)], scorer=Listed([-3.0, -1.5, -2.0]))
    assert (found.excerpt, found.score) == ("Lyon has silk.", -1.5)


def test_nan_scores_lose_to_any_other() -> None:
    """A NaN score never wins over a real one, even when it comes first."""
    (found,) = find_passages([("x", LYON)], scorer=Listed([math.nan, 0.2, math.nan]))
    assert (found.excerpt, found.score) == ("Lyon has silk.", 0.2)


def test_blank_claim_and_blank_document() -> None:
    """A blank claim is not scored (first window, 0); a blank document gives the empty passage at 0."""
    scorer = Listed([0.9])
    found = find_passages([("  ", LYON), ("Lyon", "   \n")], scorer=scorer)
    assert found == [
        PassageSpan(start=0, end=12, excerpt="Lyon is big.", score=0.0),
        PassageSpan(start=0, end=0, excerpt="", score=0.9),
    ]
    assert scorer.batches == [[("Lyon", "")]]
    assert find_passages([]) == []


def test_scorer_answering_the_wrong_count_and_bad_size_are_errors() -> None:
    """A scorer giving too few scores, or a window of no sentence, is a clear ValueError."""

    class Short:
        def score(self, text_pairs: list[tuple[str, str]]) -> list[float]:
            return [0.5]

    with pytest.raises(ValueError, match="gave 1 scores for 3 pairs"):
        find_passages([("x", LYON)], scorer=Short())
    with pytest.raises(ValueError, match="size must be at least one sentence"):
        find_passages([("x", LYON)], size=0)


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_fold_is_lower_case_nfkd_without_combining_marks(text: str) -> None:
    """fold drops exactly the characters unicodedata calls combining, whatever it has folded before."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    assert fold(text) == "".join(c for c in decomposed if not unicodedata.combining(c))


_PROSE = st.text(alphabet=st.sampled_from(list("ab Zé1.!?;\n\u00a8\u0301\u2019\"'()[]#-")), max_size=80)


@given(_PROSE, st.integers(min_value=1, max_value=3))
def test_evidence_read_sentence_by_sentence_is_the_text_read_whole_and_by_window(text: str, window: int) -> None:
    """The words of the evidence are those of the whole text, and of each window's sentences joined by spaces."""
    sentences = [s.text for s in SentenceSplitter().split(text)]
    found = _evidence(text, window)
    assert found.whole == _analyse(text)
    expected = [_analyse(" ".join(sentences[i : i + window])) for i in range(len(sentences) - window + 1)]
    assert list(found.windows) == (expected if len(sentences) > window else [])


SENTENCE_PIECES = ["a", "Dr", "J", "2", "e.g", "U.S", "x", ".", "...", "!", "?", "\u2026", " ", "  ", "\n", "\n\n", "#"]
SENTENCE_PIECES += ['"', ")", "[1]", "[1](id=2)", "(", "-", "*", "\u00e9", "\u00c9", ";", "\t"]


@settings(max_examples=3000, deadline=None)
@given(pieces=st.lists(st.sampled_from(SENTENCE_PIECES), max_size=16), sentences=st.integers(0, 3))
def test_surely_at_most_is_never_wrong(pieces: list[str], sentences: int) -> None:
    """When the shortcut says at most n sentences, the default splitter finds at most n (the oracle: splitting)."""
    from langchain_refs.text._sentences import surely_at_most

    text = "".join(pieces)
    if surely_at_most(text, sentences):
        assert len(split_sentences(text)) <= sentences, text


@given(st.text(alphabet="ab .!?\nJRe.g", max_size=60))
@settings(max_examples=200, deadline=None)
def test_the_kept_sentences_are_the_default_splitters(text: str) -> None:
    from langchain_refs.text._sentences import default_sentences

    assert list(default_sentences(text)) == split_sentences(text)


def test_the_kept_sentences_are_forgotten_with_the_lexical_caches() -> None:
    from langchain_refs.text._sentences import default_sentences

    first = default_sentences("Rome is old. Lyon has silk.")
    assert default_sentences("Rome is old. Lyon has silk.") is first
    LexicalSupport.clear_caches()
    assert default_sentences("Rome is old. Lyon has silk.") is not first


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Москва — столица России.", ["москва", "столица", "россии"]),
        ("η γέφυρα άνοιξε το 1932.", ["η", "γεφυρα", "ανοιξε", "το", "1932"]),
        # Folded as every text is: combining marks dropped (the voicing mark of "で", the virama of "ल्ल").
        ("東京は首都です", ["東", "京", "は", "首", "都", "て", "す"]),
        ("नई दिल्ली", ["नई", "दिलली"]),
        ("Paris, 2nd city", ["pari", "2", "city"]),  # a number with an ordinal's ending is the number
    ],
)
def test_content_words_of_every_script(text: str, expected: list[str]) -> None:
    """Words of any script are read (Han and kana one character each), not only a to z."""
    assert content_words(text) == expected


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Эйфелева башня находится в Париже.", "Эйфелева башня находится в Париже."),
        ("東京は日本の首都です。", "東京は日本の首都です。"),
    ],
)
def test_a_claim_in_another_script_is_supported_by_its_own_words(claim: str, evidence: str) -> None:
    """A claim its evidence states word for word scores 1 in any script (it scored 0 outside a to z)."""
    same, other_city = LexicalSupport().score([(claim, evidence), ("大阪は日本の首都です。", "東京は日本の首都です。")])
    assert same == 1.0
    assert 0 < other_city < 1


def test_score_takes_any_pair_of_texts_and_names_a_wrong_one() -> None:
    """Pairs as tuples, lists or NumPy rows score alike; a pair that is not two texts is named."""
    numpy = pytest.importorskip("numpy")
    pairs = [("Lyon silk", "Lyon has silk."), ("Rome", "Paris.")]
    expected = LexicalSupport().score(pairs)
    assert LexicalSupport().score([list(p) for p in pairs]) == expected
    assert LexicalSupport().score(numpy.array(pairs)) == expected
    wrong = r"^score: text_pairs\[1\] must be a \(claim, evidence\) pair of texts, got \(str\)$"
    with pytest.raises(TypeError, match=wrong):
        LexicalSupport().score([pairs[0], "Rome"])


# Numbers as content words (written by hand): one spelling for each number, whatever way it is written.
NUMBER_READINGS = [
    ("3.5 million people", ["3500000", "peopl"]),
    ("3,500,000 people", ["3500000", "peopl"]),
    ("$2.5bn and 100k", ["2500000000", "100000"]),
    ("three hundred and thirty metres", ["330", "metr"]),
    ("twenty-one guns", ["21", "gun"]),
    # A scale in the plural is a word: "thousands" is no thousand times the year before it.
    ("In 2019 thousands of people marched", ["2019", "thousand", "peopl", "march"]),
    ("founded in 1990. Thousands attended", ["found", "1990", "thousand", "attend"]),
    ("a million thanks", ["million", "thank"]),
    # The digits after a point are as written: a version, a time.
    ("Python 3.10 at 10.30", ["python", "3.10", "10.30"]),
    ("version 1.2.3", ["version", "1", "2", "3"]),
    # A unit written onto a number is a word apart; a scale in capitals, or after a currency sign, applies.
    ("200mg, 2.0L", ["200", "mg", "2.0", "l"]),
    (
        "$3.5M, \u20ac7B and $3m but 1.2m, Room 4B and Article 1a",
        ["3500000", "7000000000", "3000000", "1.2", "m", "room", "4000000000", "articl", "1a"],
    ),
    # Thousands set apart by no-break or thin spaces; a plain space sets none apart (a count, then an amount).
    (
        "25\u00a0000 members of 1\u202f000\u202f000 and 3 000 took 2 250 mg",
        ["25000", "member", "1000000", "3000", "took", "2", "250", "mg"],
    ),
    # Shares of a scale, and smaller numbers after a scale.
    ("half a million, two and a half million", ["500000", "2500000"]),
    ("three quarters of a billion", ["750000000"]),
    ("two thousand five hundred people, 1 million 200 thousand", ["2500", "peopl", "1200000"]),
    ("two thousand and five", ["2005"]),
    # Ranks in words ("first" and "second" are as often no rank).
    ("the third and twenty-first but at first a second", ["3", "21", "first", "second"]),
    ("a thirty-second advert", ["30", "second", "advert"]),
]


@pytest.mark.parametrize(("text", "expected"), NUMBER_READINGS)
def test_numbers_read_as_content_words(text: str, expected: list[str]) -> None:
    """A number is one content word of its digits: decimals whole, scales in the singular applied."""
    assert content_words(text) == expected


def test_scales_stop_at_forty_characters() -> None:
    """A run of scale words ("million million ...") or a very long number stays linear: past forty characters, no
    scale is applied, and no digit string is ever read as an int (Python refuses one of over 4,300 digits)."""
    assert content_words("1" + " million" * 1000) == ["1" + "0" * 36] + ["million"] * 994
    long = "1" * 5000
    assert content_words(f"{long} hundred 5") == [long, "hundr", "5"]
