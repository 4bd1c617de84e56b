"""Every scorer answers one finite score in [0, 1] per pair, whatever the input."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.cross_encoders import BaseCrossEncoder
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langchain_refs import CrossEncoderScorer, EmbeddingScorer, HybridScorer, LexicalScorer, LLMJudgeScorer

TEXT = st.text(
    alphabet=st.sampled_from(list("Paris is 330 m tall. NOT not é日🎉 \n-,'")) | st.characters(codec="utf-8"),
    max_size=60,
)
PAIRS = st.lists(st.tuples(TEXT, TEXT), max_size=8)
ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True)


def in_unit_interval(scores: Sequence[float], count: int) -> bool:
    return len(scores) == count and all(math.isfinite(s) and 0.0 <= s <= 1.0 for s in scores)


class Fixed(BaseCrossEncoder):
    """A cross-encoder that answers the given raw scores, in turn."""

    def __init__(self, values: Sequence[float]) -> None:
        self.values = list(values)

    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        return [self.values[i % len(self.values)] for i in range(len(text_pairs))]


class FixedVectors(Embeddings):
    """Embeddings that give every text the same (possibly degenerate) vector."""

    def __init__(self, vector: list[float]) -> None:
        self.vector = vector

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [list(self.vector) for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return list(self.vector)


@settings(max_examples=150, deadline=None)
@given(pairs=PAIRS, rarity_weight=st.floats(0, 1), window=st.integers(1, 3))
def test_lexical_scores_in_range(pairs: list[tuple[str, str]], rarity_weight: float, window: int) -> None:
    """LexicalScorer: any texts, small batches and large (rarity on), any window."""
    scorer = LexicalScorer(rarity_weight=rarity_weight, window=window, min_batch_for_rarity=3)
    assert in_unit_interval(scorer.score(pairs), len(pairs))


@settings(max_examples=100, deadline=None)
@given(pairs=PAIRS)
def test_embedding_scores_in_range(pairs: list[tuple[str, str]]) -> None:
    """EmbeddingScorer over a deterministic fake embedding: any texts."""
    scorer = EmbeddingScorer(DeterministicFakeEmbedding(size=8))
    assert in_unit_interval(scorer.score(pairs), len(pairs))


@pytest.mark.parametrize(
    ("vector", "expected"),
    [
        ([0.0, 0.0, 0.0], 0.0),  # no direction: no similarity
        ([math.nan, 1.0, 0.0], 0.0),  # a broken model: no evidence of support
        ([math.inf, 1.0, 0.0], 0.0),
        ([1.0, 2.0, 3.0], 1.0),  # the same vector: full similarity
    ],
)
def test_embedding_scores_of_degenerate_vectors(vector: list[float], expected: float) -> None:
    """Zero, NaN and infinite vectors score 0, never NaN or 1; identical vectors score 1."""
    assert EmbeddingScorer(FixedVectors(vector)).score([("a", "b")]) == [expected]


def test_embedding_floor_must_be_below_ceiling() -> None:
    """A floor at or above the ceiling is refused when the scorer is made."""
    with pytest.raises(ValueError, match="floor must be below ceiling"):
        EmbeddingScorer(DeterministicFakeEmbedding(size=4), floor=0.5, ceiling=0.5)


@settings(max_examples=200, deadline=None)
@given(raw=st.lists(ANY_FLOAT, min_size=1, max_size=6), logits=st.sampled_from([None, True, False]))
def test_cross_encoder_scores_in_range(raw: list[float], logits: bool | None) -> None:
    """CrossEncoderScorer: any raw score (huge, NaN, infinite) maps into [0, 1], in order within a batch."""
    scores = CrossEncoderScorer(Fixed(raw), logits=logits).score([("c", "e")] * len(raw))
    assert in_unit_interval(scores, len(raw))
    ordered = sorted((r, s) for r, s in zip(raw, scores, strict=True) if not math.isnan(r))
    assert [s for _, s in ordered] == sorted(s for _, s in ordered)


@pytest.mark.parametrize(
    ("raw", "logits", "expected"),
    [
        ([0.2, 0.9], None, [0.2, 0.9]),  # all in [0, 1]: probabilities, unchanged
        ([0.0, 2.0], None, [0.5, 1 / (1 + math.exp(-2.0))]),  # a logit in the batch: logistic for all
        ([1000.0, -1000.0], None, [1.0, 0.0]),  # no overflow at either end
        ([math.nan, math.inf, -math.inf], None, [0.0, 1.0, 0.0]),
        ([0.2], True, [1 / (1 + math.exp(-0.2))]),  # said to be logits
        ([3.0, -2.0, math.nan], False, [1.0, 0.0, 0.0]),  # said to be probabilities: clamped
    ],
)
def test_cross_encoder_mapping(raw: list[float], logits: bool | None, expected: list[float]) -> None:
    """Probabilities pass, logits go through the logistic function, NaN is 0, nothing overflows."""
    scores = CrossEncoderScorer(Fixed(raw), logits=logits).score([("c", "e")] * len(raw))
    assert scores == pytest.approx(expected)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"score": 0.4}', 0.4),
        ("0.7", 0.7),
        ('```json\n{"score": "0.3"}\n```', 0.3),
        ('{"score": 7}', 1.0),
        ('{"score": -3}', 0.0),
        ("1e400", 1.0),
        ("-inf", 0.0),
        ("NaN", 0.25),
        ('{"score": NaN}', 0.25),
        ('{"score": null}', 0.25),
        ('{"score": [1]}', 0.25),
        ("[0.5]", 0.25),
        ("", 0.25),
        ("I cannot judge this.", 0.25),
    ],
)
def test_llm_judge_reads_or_defaults(reply: str, expected: float) -> None:
    """The judge clamps numbers into [0, 1]; NaN and unreadable replies give the default."""
    judge = LLMJudgeScorer(FakeListChatModel(responses=[reply]), default=0.25)
    assert judge.score([("claim", "evidence")]) == [expected]


@settings(max_examples=100, deadline=None)
@given(replies=st.lists(TEXT | ANY_FLOAT.map(lambda f: f'{{"score": {f}}}'), min_size=1, max_size=4))
def test_llm_judge_scores_in_range(replies: list[str]) -> None:
    """LLMJudgeScorer: whatever the model says, each score is finite and in [0, 1]."""
    judge = LLMJudgeScorer(FakeListChatModel(responses=replies), max_concurrency=1)
    assert in_unit_interval(judge.score([("c", "e")] * len(replies)), len(replies))


@pytest.mark.parametrize("default", [-0.1, 1.5, math.nan])
def test_llm_judge_default_must_be_a_score(default: float) -> None:
    """A default outside [0, 1] is refused when the judge is made."""
    with pytest.raises(ValueError, match=r"default must be a score in \[0, 1\]"):
        LLMJudgeScorer(FakeListChatModel(responses=["x"]), default=default)


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(
        st.tuples(st.lists(ANY_FLOAT, min_size=1, max_size=4), st.floats(0, 10)),
        min_size=1,
        max_size=3,
    ).filter(lambda parts: sum(weight for _, weight in parts) > 0),
    count=st.integers(0, 5),
)
def test_hybrid_scores_in_range(parts: list[tuple[list[float], float]], count: int) -> None:
    """HybridScorer: any weights and any sub-scores (even out of range or NaN) give finite scores in [0, 1]."""
    scorer = HybridScorer([(Fixed(values), weight) for values, weight in parts])
    assert in_unit_interval(scorer.score([("c", "e")] * count), count)


def test_hybrid_of_real_scorers_in_range() -> None:
    """A hybrid of the lexical and embedding scorers stays in [0, 1]."""
    scorer = HybridScorer([(LexicalScorer(), 0.7), (EmbeddingScorer(DeterministicFakeEmbedding(size=8)), 0.3)])
    pairs = [("Paris is in France.", "Paris is a city in France."), ("x", ""), ("", "")]
    assert in_unit_interval(scorer.score(pairs), 3)


@pytest.mark.parametrize("weights", [[0.0], [0.0, 0.0], [math.nan], [math.inf, 1.0], [-1.0, 2.0], []])
def test_hybrid_refuses_weights_that_average_nothing(weights: list[float]) -> None:
    """All-zero, NaN, infinite or negative weights (or none) are refused when the hybrid is made."""
    with pytest.raises(ValueError, match="non-negative"):
        HybridScorer([(Fixed([0.5]), weight) for weight in weights])
