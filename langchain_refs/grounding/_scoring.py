"""Scorers: how well a piece of evidence supports a claim, in [0, 1].

Every scorer is a ``langchain_core.cross_encoders.BaseCrossEncoder``: a batch of
``(claim, evidence)`` pairs in, one score per pair out. So any cross-encoder a
user already has plugs in here (wrap it in `CrossEncoderScorer` to squash its
logits into [0, 1]), and ours plug into LangChain's rerankers
(``CrossEncoderReranker(model=LexicalScorer())``).

Offline there is no entailment model: no PyPI package ships a cross-encoder or
an NLI model. `LexicalScorer` (the default) measures how much of the claim the
evidence covers; `EmbeddingScorer` measures semantic closeness with any
LangChain ``Embeddings``. Neither understands negation or contradiction; for
that, use `LLMJudgeScorer` with a chat model or a real cross-encoder.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import math
import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.cross_encoders import BaseCrossEncoder
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field
from typing_extensions import override

from langchain_refs.grounding._sentences import split_sentences
from langchain_refs.grounding._text import WORD, content_words, fold, stem
from langchain_refs.grounding._verifier import SupportScorer

__all__ = [
    "CrossEncoderScorer",
    "EmbeddingScorer",
    "HybridScorer",
    "LLMJudgeScorer",
    "LexicalScorer",
]

logger = logging.getLogger("langchain_refs")

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z]+")


class LexicalScorer(SupportScorer):
    """Weighted coverage of the claim's content words and phrases by the evidence.

    A claim word counts fully when the evidence has it (after light stemming),
    partly when the evidence has a word sharing its first five letters; numbers
    and names weigh more than common words, and pairs of adjacent claim words
    found together in the evidence add a phrase bonus. Long evidence is read as
    windows of ``window`` sentences: the score is the best window's, blended
    with the whole evidence's. Numbers in the claim missing from the evidence
    pull the score down. No model, no download.

    Example:
        >>> scorer = LexicalScorer()
        >>> supported, unsupported = scorer.score([
        ...     ("Paris is the capital of France.", "Paris has been the capital of France since 987."),
        ...     ("Paris is the capital of France.", "Lyon is known for its food."),
        ... ])
        >>> supported > 0.8 > 0.2 > unsupported
        True
    """

    def __init__(
        self,
        *,
        window: int = 2,
        phrase_weight: float = 0.25,
        whole_weight: float = 0.5,
        number_penalty: float = 0.7,
        rarity_weight: float = 1.0,
        min_batch_for_rarity: int = 5,
    ) -> None:
        self.rarity_weight = rarity_weight
        self.min_batch_for_rarity = min_batch_for_rarity
        self.window = window
        self.phrase_weight = phrase_weight
        self.whole_weight = whole_weight
        self.number_penalty = number_penalty

    @override
    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        evidence = {text: self._evidence(text) for _, text in text_pairs}
        rarity = self._rarity([e.whole for e in evidence.values()])
        claims: dict[str, tuple[list[str], list[float], frozenset[str]]] = {}
        scores = []
        for claim, text in text_pairs:
            if claim not in claims:
                claims[claim] = (*self._claim_weights(claim, rarity), frozenset(_NUMBER.findall(claim)))
            scores.append(self._score(claims[claim], evidence[text]))
        return scores

    def _evidence(self, text: str) -> _Evidence:
        return _evidence(text, self.window)

    def _rarity(self, evidence: list[_Words]) -> dict[str, float]:
        """Inverse document frequency over the batch's evidence, when it is large enough.

        Scoring many candidates at once (as a reranker does) lets words that
        every candidate shares count for less than the ones that tell them apart.
        """
        if len(evidence) < self.min_batch_for_rarity:
            return {}
        frequency: dict[str, int] = {}
        for words in evidence:
            for word in words.present:
                frequency[word] = frequency.get(word, 0) + 1
        count = len(evidence)
        return {word: math.log((count + 1) / (n + 0.5)) for word, n in frequency.items()}

    def _claim_weights(self, claim: str, rarity: dict[str, float] | None = None) -> tuple[list[str], list[float]]:
        names = {stem(w) for w in WORD.findall(fold(" ".join(_CAPITALISED.findall(claim))))}
        words = content_words(claim)
        unseen = max(rarity.values()) if rarity else 0.0
        weights = []
        for word in words:
            weight = 1.0 + min(len(word), 10) / 10
            if word.isdigit():
                weight = 2.0
            elif word in names:
                weight += 0.5
            if rarity:
                weight *= self.rarity_weight * rarity.get(word, unseen) + (1 - self.rarity_weight)
            weights.append(weight)
        return words, weights

    def _coverage(self, words: list[str], weights: list[float], evidence: _Words) -> float:
        if not words:
            return 0.0
        present, prefixes = evidence.present, evidence.prefixes
        total = sum(weights)
        covered = 0.0
        for word, weight in zip(words, weights, strict=True):
            if word in present:
                covered += weight
            elif len(word) >= 5 and word[:5] in prefixes:
                covered += 0.7 * weight
        unigram = covered / total
        claim_pairs = set(itertools.pairwise(words))
        if claim_pairs:
            phrase = len(claim_pairs & evidence.near) / len(claim_pairs)
            unigram = (1 - self.phrase_weight) * unigram + self.phrase_weight * phrase
        return unigram

    def _score(self, claim: tuple[list[str], list[float], frozenset[str]], evidence: _Evidence) -> float:
        words, weights, numbers = claim
        score = self._coverage(words, weights, evidence.whole)
        if evidence.windows:
            best = max(self._coverage(words, weights, w) for w in evidence.windows)
            score = self.whole_weight * score + (1 - self.whole_weight) * best
        if numbers - evidence.numbers:
            score *= self.number_penalty
        return max(0.0, min(1.0, score))


@dataclass(frozen=True, slots=True)
class _Words:
    present: frozenset[str]
    prefixes: frozenset[str]
    near: frozenset[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class _Evidence:
    whole: _Words
    windows: tuple[_Words, ...]
    numbers: frozenset[str]


@functools.lru_cache(maxsize=4096)
def _evidence(text: str, window: int) -> _Evidence:
    """A text read whole and as windows of ``window`` sentences (cached: evidence repeats)."""
    sentences = [s.text for s in split_sentences(text)]
    windows: tuple[_Words, ...] = ()
    if len(sentences) > window:
        windows = tuple(_analyse(" ".join(sentences[i : i + window])) for i in range(len(sentences) - window + 1))
    return _Evidence(whole=_analyse(text), windows=windows, numbers=frozenset(_NUMBER.findall(text)))


@functools.lru_cache(maxsize=16_384)
def _analyse(text: str) -> _Words:
    """The content words of a text and what coverage needs of them (cached: evidence repeats)."""
    found = content_words(text)
    return _Words(
        present=frozenset(found),
        prefixes=frozenset(w[:5] for w in found if len(w) >= 5),
        near=frozenset(itertools.pairwise(found)) | frozenset(zip(found, found[2:], strict=False)),
    )


class EmbeddingScorer(SupportScorer):
    """Cosine similarity of claim and evidence embeddings, mapped to [0, 1].

    Works with any LangChain ``Embeddings``. ``floor`` and ``ceiling`` are the
    cosine values mapped to 0 and 1 (unrelated sentences rarely fall below
    0.1 with sentence-transformer models).

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> scorer = EmbeddingScorer(DeterministicFakeEmbedding(size=8))
        >>> scorer.score([("same text", "same text")])
        [1.0]
    """

    def __init__(
        self, embeddings: Embeddings, *, floor: float = 0.1, ceiling: float = 0.9, cache_size: int = 200_000
    ) -> None:
        self.embeddings = embeddings
        self.floor = floor
        self.ceiling = ceiling
        # Evidence is scored again and again against new claims: embed each text once.
        self.cache_size = cache_size
        self._vectors: dict[str, array[float]] = {}

    @override
    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        missing = sorted({t for pair in text_pairs for t in pair} - self._vectors.keys())
        if missing:
            if len(self._vectors) + len(missing) > self.cache_size:
                self._vectors.clear()
            embedded = self.embeddings.embed_documents(missing)
            # Compact doubles: a cache of lists of floats would take eight times the memory.
            self._vectors.update((t, array("d", v)) for t, v in zip(missing, embedded, strict=True))
        vectors = self._vectors
        scores = []
        for claim, evidence in text_pairs:
            a, b = vectors[claim], vectors[evidence]
            norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
            cosine = sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0
            scores.append(max(0.0, min(1.0, (cosine - self.floor) / (self.ceiling - self.floor))))
        return scores


class CrossEncoderScorer(SupportScorer):
    """Any LangChain cross-encoder, its scores squashed into [0, 1].

    For a local model, e.g. ``HuggingFaceCrossEncoder(model_name="/path/to/model")``
    from langchain-community. Scores already in [0, 1] pass unchanged; others
    (logits) go through a logistic function.

    Example:
        >>> class Logits(BaseCrossEncoder):
        ...     def score(self, text_pairs): return [4.0 for _ in text_pairs]
        >>> round(CrossEncoderScorer(Logits()).score([("a", "b")])[0], 3)
        0.982
    """

    def __init__(self, cross_encoder: BaseCrossEncoder) -> None:
        self.cross_encoder = cross_encoder

    @override
    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        raw = [float(s) for s in self.cross_encoder.score(list(text_pairs))]
        if all(0.0 <= s <= 1.0 for s in raw):
            return raw
        return [1.0 / (1.0 + math.exp(-s)) for s in raw]


class _Judgement(BaseModel):
    """How well the evidence supports the claim."""

    score: float = Field(description="0 = not supported at all, 1 = fully supported by the evidence alone")


_JUDGE_PROMPT = (
    "You check citations. Given a CLAIM and EVIDENCE, answer how well the evidence alone supports the "
    'claim, as JSON {"score": x} with x from 0 (not supported or contradicted) to 1 (fully supported).'
)


class LLMJudgeScorer(SupportScorer):
    """A chat model judges each pair; structured output where the model has it.

    A reply that cannot be read as a score counts as ``default`` (and is
    logged), so one bad reply never stops a batch.

    Example:
        >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
        >>> judge = LLMJudgeScorer(FakeListChatModel(responses=['{"score": 0.9}', 'no idea']))
        >>> judge.score([("a", "b"), ("c", "d")])
        [0.9, 0.0]
    """

    def __init__(self, model: BaseChatModel, *, default: float = 0.0, max_concurrency: int = 4) -> None:
        self.model = model
        self.default = default
        self.max_concurrency = max_concurrency

    def _runnable(self) -> Any:
        try:
            return self.model.with_structured_output(_Judgement)
        except (NotImplementedError, AttributeError):
            return self.model

    @override
    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        runnable = self._runnable()
        prompts = [
            [SystemMessage(_JUDGE_PROMPT), HumanMessage(f"CLAIM: {claim}\n\nEVIDENCE: {evidence}")]
            for claim, evidence in text_pairs
        ]
        replies = runnable.batch(prompts, {"max_concurrency": self.max_concurrency}, return_exceptions=True)
        return [self._read(reply) for reply in replies]

    def _read(self, reply: Any) -> float:
        value: Any = None
        if isinstance(reply, _Judgement):
            value = reply.score
        elif isinstance(reply, dict):
            value = reply.get("score")
        elif hasattr(reply, "content"):
            text = str(reply.content)
            match = re.search(r"\{.*\}", text, re.DOTALL)
            try:
                value = json.loads(match[0]).get("score") if match else float(text.strip())
            except (ValueError, AttributeError):
                value = None
        try:
            return max(0.0, min(1.0, float(value)))
        except (TypeError, ValueError):
            logger.warning("unreadable judge reply %r; scored %s", reply, self.default)
            return self.default


class HybridScorer(SupportScorer):
    """A weighted mean of several scorers.

    Example:
        >>> class Const(BaseCrossEncoder):
        ...     def __init__(self, v): self.v = v
        ...     def score(self, text_pairs): return [self.v] * len(text_pairs)
        >>> HybridScorer([(Const(1.0), 0.5), (Const(0.0), 0.5)]).score([("a", "b")])
        [0.5]
    """

    def __init__(self, scorers: Sequence[tuple[BaseCrossEncoder, float]]) -> None:
        if not scorers or any(weight < 0 for _, weight in scorers):
            msg = "HybridScorer needs at least one (scorer, weight) pair with a non-negative weight"
            raise ValueError(msg)
        self.scorers = list(scorers)

    @override
    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        pairs = list(text_pairs)
        total = sum(weight for _, weight in self.scorers)
        combined = [0.0] * len(pairs)
        for scorer, weight in self.scorers:
            for i, value in enumerate(scorer.score(pairs)):
                combined[i] += weight * value / total
        return combined
