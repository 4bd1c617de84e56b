"""The lexical passage finder's fast path against the plain scoring of every window (the oracle)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_refs import COMPILED
from langchain_refs.text import (
    PASSAGE_SUPPORT,
    LexicalSupport,
    PassageFinder,
    PassageSpan,
    SentenceSplitter,
    find_passages,
    sentence_windows,
)
from langchain_refs.text._lexical_engine import Scoring


def oracle(pairs: Sequence[tuple[str, str]], scorer: LexicalSupport, size: int = 1) -> list[PassageSpan]:
    """Every window of every (claim, text) scored in one `score` call; the earliest best of each pair kept."""
    splitter = SentenceSplitter()
    spans = {}
    for _, text in pairs:
        offsets = sentence_windows(splitter.split(text), size, 1) or [(0, 0)]
        spans[text] = [(start, end, text[start:end]) for start, end in offsets]
    asked = list(dict.fromkeys(pair for pair in pairs if pair[0].strip()))
    batch = [(claim, excerpt) for claim, text in asked for _, _, excerpt in spans[text]]
    scores = iter(scorer.score(batch) if batch else [])
    best = {}
    for claim, text in asked:
        ranked = [next(scores) for _ in spans[text]]
        top = max(range(len(ranked)), key=lambda i: (-math.inf if math.isnan(ranked[i]) else ranked[i], -i))
        best[claim, text] = (top, ranked[top])
    out = []
    for claim, text in pairs:
        i, score = best.get((claim, text), (0, 0.0))
        start, end, excerpt = spans[text][i]
        out.append(PassageSpan(start=start, end=end, excerpt=excerpt, score=score))
    return out


PARIS = (
    "Paris is the capital of France. Paris has a population of 2.1 million. The Seine runs through Paris. "
    "Lyon is known for silk. Lyon has 500,000 people. Marseille is a port on the sea. "
    "The capital of France is Paris. Paris hosted the Olympics in 1924 and 2024."
)
ROME = "Rome is old. Rome has ruins. Rome was founded in 753 BC. The Tiber runs through Rome. Romans built roads."
TIES = "Lyon has silk. Lyon has silk too. Lyon has silk. Silk comes from Lyon."
PREFIXES = "Migration of birds. Migrating birds fly south. The migrants rest. Nothing here. Birds sing."

CASES = [
    pytest.param([("Paris is the capital of France", PARIS)], id="best sentence"),
    pytest.param([("Paris has 2.1 million people", PARIS)], id="number present"),
    pytest.param([("Paris has 3 million people", PARIS)], id="number missing everywhere"),
    pytest.param([("the Olympics came to Paris in 2024", PARIS)], id="number in one sentence"),
    pytest.param([("Lyon silk", TIES)], id="ties go to the earlier"),
    pytest.param([("silk from Lyon", TIES), ("Lyon silk", TIES)], id="two claims, same text"),
    pytest.param([("migrations", PREFIXES)], id="prefix"),
    pytest.param([("transportation cat", "Transports are fast. The cat sleeps. Dogs bark.")], id="prefix only wins"),
    pytest.param([("the of and", PARIS)], id="no content word"),
    pytest.param([("zebras gallop", PARIS)], id="no word in common"),
    pytest.param([("", PARIS), ("   ", ROME)], id="blank claims"),
    pytest.param([("Rome is old", "")], id="blank text"),
    pytest.param([("Rome is old", "Rome.")], id="one sentence"),
    pytest.param(
        [("Rome founded 753 BC", ROME), ("Paris capital", PARIS), ("Rome founded 753 BC", ROME), ("Tiber", ROME)],
        id="repeated pair, rarity over two texts",
    ),
    pytest.param(
        [("Marseille is a port", PARIS), ("Romans built roads", ROME), ("Lyon silk", TIES), ("birds", PREFIXES)],
        id="four texts",
    ),
    pytest.param(
        [("Dr. Smith met J. R. R. Tolkien in the U.S. in 1950", "Dr. Smith met J. R. R. Tolkien. " * 5)], id="names"
    ),
]


@pytest.mark.parametrize("pairs", CASES)
@pytest.mark.parametrize("size", [1, 2, 3])
def test_same_passages_as_scoring_every_window(pairs: list[tuple[str, str]], size: int) -> None:
    """Offsets, excerpt and score are exactly those of the plain scoring of every window."""
    scorer = LexicalSupport()
    assert find_passages(pairs, scorer=scorer, size=size) == oracle(pairs, scorer, size)


@pytest.mark.parametrize(
    "settings_",
    [
        {"phrase_weight": 0.0},
        {"phrase_weight": 1.0},
        {"number_penalty": 0.5},
        {"number_penalty": 0.0},
        {"rarity_weight": 0.0},
        {"rarity_weight": 2.0},  # weights can turn negative: the estimate steps aside
        {"rarity_weight": 1e308},  # ... or infinite
        {"min_batch_for_rarity": 1},
        {"window": 1, "whole_weight": 0.2},
    ],
    ids=repr,
)
def test_same_passages_with_other_settings(settings_: dict[str, float]) -> None:
    """Any `LexicalSupport` setting: still exactly the plain scoring's passages."""
    scorer = LexicalSupport(**settings_)  # type: ignore[arg-type]
    pairs = [
        ("the Olympics came to Paris in 2024", PARIS),
        ("Lyon has 500,000 people", PARIS),
        ("Rome founded 753 BC", ROME),
        ("migrating birds", PREFIXES),
        ("Lyon silk", TIES),
    ]
    for size in (1, 2):
        assert find_passages(pairs, scorer=scorer, size=size) == oracle(pairs, scorer, size)


@pytest.mark.skipif(
    COMPILED, reason="counts exact scores by patching Scoring.evidence_score: a compiled class cannot be"
)
def test_only_the_candidates_the_estimate_keeps_are_scored(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clear winner among many sentences: far fewer exact scores than sentences."""
    text = " ".join(f"Sentence {word} talks about item {word}." for word in "abcdefghijklmnopqrst")
    text += " Paris is the capital of France."
    scored = []
    score = Scoring.evidence_score

    def counting(self: Scoring, claim: object, evidence: object) -> float:
        scored.append(evidence)
        return score(self, claim, evidence)  # type: ignore[arg-type]

    monkeypatch.setattr(Scoring, "evidence_score", counting)
    (found,) = find_passages([("Paris is the capital of France", text)])
    assert found.excerpt == "Paris is the capital of France."
    assert len(scored) == 1  # of 21 sentences


def test_best_matches_is_the_earliest_highest_score() -> None:
    """`best_matches` against `score` on the same batch, candidate lists shared by several claims."""
    support = LexicalSupport()
    lists = [["Rome is old.", "Rome has ruins.", "Rome is old."], ["Lyon has silk.", "Paris is big.", "x"]]
    queries = [("Rome is old", 0), ("ruins of Rome", 0), ("Paris", 1), ("nothing", 1)]
    scores = support.score([(claim, text) for claim, k in queries for text in lists[k]])
    expected = []
    for q in range(len(queries)):
        row = scores[3 * q : 3 * q + 3]
        best = row.index(max(row))
        expected.append((best, row[best]))
    assert support.best_matches(queries, lists) == expected
    assert expected[0][0] == 0  # "Rome is old." twice: the earlier


WORDS = ["Paris", "paris", "Lyon", "silk", "capital", "capitals", "France", "river", "rivers", "1924", "2.5", "the"]


@st.composite
def texts(draw: st.DrawFn) -> str:
    sentences = draw(
        st.lists(
            st.tuples(st.lists(st.sampled_from(WORDS), min_size=0, max_size=7), st.sampled_from([".", "!", "?", ". "])),
            min_size=0,
            max_size=12,
        )
    )
    return " ".join(" ".join(words).capitalize() + end for words, end in sentences)


@settings(max_examples=200, deadline=None)
@given(
    documents=st.lists(texts(), min_size=1, max_size=6),
    claims=st.lists(st.tuples(st.lists(st.sampled_from(WORDS), max_size=8), st.integers(0, 5)), max_size=8),
    size=st.integers(1, 3),
)
def test_random_texts_match_the_oracle(documents: list[str], claims: list[tuple[list[str], int]], size: int) -> None:
    """Hypothesis-random documents and claims: the fast path gives the oracle's passages."""
    LexicalSupport.clear_caches()
    pairs = [(" ".join(words), documents[k % len(documents)]) for words, k in claims]
    scorer = LexicalSupport()
    assert find_passages(pairs, scorer=scorer, size=size) == oracle(pairs, scorer, size)


def oracle_best(
    queries: list[tuple[str, int]], lists: list[list[str]], support: LexicalSupport
) -> list[tuple[int, float]]:
    """One `score` call over every (claim, candidate) pair; each query's earliest highest score."""
    scores = iter(support.score([(claim, text) for claim, k in queries for text in lists[k]]))
    out = []
    for _, k in queries:
        row = [next(scores) for _ in lists[k]]
        best = max(range(len(row)), key=lambda i: (row[i], -i))
        out.append((best, row[best]))
    return out


@settings(max_examples=200, deadline=None)
@given(
    lists=st.lists(st.lists(texts(), min_size=1, max_size=8), min_size=1, max_size=4),
    claims=st.lists(st.tuples(st.lists(st.sampled_from(WORDS), max_size=8), st.integers(0, 3)), max_size=6),
    window=st.integers(1, 3),
)
def test_best_matches_with_candidates_of_several_sentences(
    lists: list[list[str]], claims: list[tuple[list[str], int]], window: int
) -> None:
    """Candidates of one to many sentences mixed (some read as windows too): the oracle's choice and score."""
    queries = [(" ".join(words), k % len(lists)) for words, k in claims]
    support = LexicalSupport(window=window)
    assert support.best_matches(queries, lists) == oracle_best(queries, lists, support)


@pytest.mark.skipif(COMPILED, reason="counts the claims matched by patching Scoring.best: a compiled class cannot be")
def test_finder_reuses_what_it_found_within_the_same_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pairs added as they close are found then; `find` finds again only the one added before the last text."""
    finder = PassageFinder()
    pairs = [("Rome founded 753 BC", ROME), ("Paris capital", PARIS), ("Tiber", ROME)]
    for claim, text in pairs:
        finder.add(claim, text)
    scored = []
    best = Scoring.best
    monkeypatch.setattr(Scoring, "best", lambda self, *a: scored.append(a) or best(self, *a))
    assert finder.find(pairs) == oracle(pairs, PASSAGE_SUPPORT)
    # The first pair was found with Rome's text alone in the batch; the others with both texts.
    assert len(scored) == 1


def test_finder_finds_again_what_a_later_text_changes() -> None:
    """A text cited after a pair was added changes the batch's rarity: that pair is found again, exactly."""
    texts = [PARIS, ROME, TIES, PREFIXES, "Rome is old. Paris is big. Lyon has silk. Birds fly. Tiber runs."]
    finder = PassageFinder()
    pairs = [("Paris is old", texts[4]), *[("Paris capital Rome Lyon silk birds", t) for t in texts]]
    for claim, text in pairs:
        finder.add(claim, text)  # the first pair alone, then with 2, 3... texts in the batch
    assert finder.find(pairs) == oracle(pairs, PASSAGE_SUPPORT)
    assert finder.find(pairs[:2]) == oracle(pairs[:2], PASSAGE_SUPPORT)  # fewer texts: found again
    assert finder.find(pairs[::-1]) == oracle(pairs[::-1], PASSAGE_SUPPORT)  # another order: matched by place


@settings(max_examples=150, deadline=None)
@given(
    documents=st.lists(texts(), min_size=1, max_size=6),
    added=st.lists(st.tuples(st.lists(st.sampled_from(WORDS), max_size=8), st.integers(0, 5)), max_size=8),
    extra=st.lists(st.tuples(st.lists(st.sampled_from(WORDS), max_size=8), st.integers(0, 5)), max_size=3),
    keep=st.integers(0, 8),
    replace_first=st.booleans(),
)
def test_finder_after_random_adds_matches_the_oracle(
    documents: list[str],
    added: list[tuple[list[str], int]],
    extra: list[tuple[list[str], int]],
    keep: int,
    replace_first: bool,
) -> None:
    """Pairs added one by one, then asked with some dropped, one replaced or others new: the oracle's passages."""
    finder = PassageFinder()
    first = [(" ".join(words), documents[k % len(documents)]) for words, k in added]
    for claim, text in first:
        finder.add(claim, text)
    others = [(" ".join(words), documents[k % len(documents)]) for words, k in extra]
    # Replaced: the added pairs in their places but the first (a batch of the same size may hold other texts).
    asked = [others[0], *first[1:], *others[1:]] if replace_first and first and others else first[:keep] + others
    assert finder.find(asked) == oracle(asked, PASSAGE_SUPPORT)


def test_finder_reuses_nothing_from_another_batch_of_the_same_size() -> None:
    """Two texts added, then a batch of two other texts asked: the pair left in its place is found again."""
    finder = PassageFinder()
    finder.add("Paris capital", PARIS)
    finder.add("silk Lyon Paris", TIES)
    asked = [("Paris capital", ROME), ("silk Lyon Paris", TIES)]  # {ROME, TIES}: another rarity than {PARIS, TIES}
    assert finder.find(asked) == oracle(asked, PASSAGE_SUPPORT)


SETTINGS = st.fixed_dictionaries(
    {},
    optional={
        "phrase_weight": st.sampled_from([0.0, 0.25, 1.0, 1.5, -0.5]),
        "number_penalty": st.sampled_from([0.0, 0.5, 0.7, 1.0, 1.2]),
        "rarity_weight": st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0, 1e308]),
        "min_batch_for_rarity": st.integers(1, 6),
        "window": st.integers(1, 3),
        "whole_weight": st.sampled_from([0.2, 0.5]),
    },
)


@settings(max_examples=200, deadline=None)
@given(
    documents=st.lists(texts(), min_size=1, max_size=5),
    claims=st.lists(
        st.tuples(
            st.lists(st.sampled_from([*WORDS, "Silky", "capitalism", "Rivers", "3"]), max_size=9), st.integers(0, 4)
        ),
        max_size=12,
    ),
    settings_=SETTINGS,
)
def test_one_finder_many_claims_any_settings_match_the_oracle(
    documents: list[str], claims: list[tuple[list[str], int]], settings_: dict[str, float]
) -> None:
    """Claims sharing words (the per-word caches reused), names, numbers, any settings: the oracle's passages."""
    pairs = [(" ".join(words), documents[k % len(documents)]) for words, k in claims]
    scorer = LexicalSupport(**settings_)  # type: ignore[arg-type]
    finder = PassageFinder(scorer=scorer)
    for claim, text in pairs:
        finder.add(claim, text)
    assert finder.find(pairs) == oracle(pairs, scorer)
    assert find_passages(pairs, scorer=scorer) == oracle(pairs, scorer)


def test_an_index_is_kept_across_matchers_until_the_caches_are_cleared() -> None:
    # A thread's answers cite the same documents: each answer's matcher reuses their index.
    texts = ["Rome is old.", "Lyon has silk."]
    first = LexicalSupport().matcher([texts]).index(texts)
    assert LexicalSupport().matcher([["Another batch."]]).index(texts) is first
    assert LexicalSupport().matcher([]).index(list(texts)) is first
    LexicalSupport.clear_caches()
    again = LexicalSupport().matcher([]).index(texts)
    assert again is not first
    assert again.words == first.words
