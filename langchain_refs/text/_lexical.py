"""Lexical support: how much of a claim's wording a piece of evidence covers, in [0, 1].

The engine behind the grounding wing's ``LexicalScorer`` and the default
scorer of the passage finder. Pure Python, no model, no download.

A claim word counts fully when the evidence has it (after light stemming),
partly when the evidence has a word sharing its first five letters; numbers
and names weigh more than common words, and pairs of adjacent claim words
found together in the evidence add a phrase bonus. Long evidence is read as
windows of ``window`` sentences: the score is the best window's, blended with
the whole evidence's. Numbers in the claim missing from the evidence pull the
score down. In a batch of at least ``min_batch_for_rarity`` evidence texts,
words that every text shares count for less than the ones that tell them
apart (inverse document frequency over the batch).

What a text's words are is cached across calls (`LexicalSupport.clear_caches`
empties the caches, for benchmarks that measure a cold start).
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from langchain_refs.text._sentences import split_sentences
from langchain_refs.text._words import WORD, content_words, fold, stem

__all__ = ["LexicalSupport"]

_NUMBER: Final = re.compile(r"\d+(?:[.,]\d+)*")
_CAPITALISED: Final = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z]+")


def _unit(value: float) -> float:
    """``value`` clamped into [0, 1]; NaN counts as 0 (no evidence of support)."""
    return 0.0 if math.isnan(value) else max(0.0, min(1.0, value))


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


# What one claim brings to every pair it is in: its words, their weights, its numbers.
_Claim = tuple[list[str], list[float], frozenset[str]]


@dataclass(frozen=True, slots=True, kw_only=True)
class LexicalSupport:
    """Scores ``(claim, evidence)`` pairs by weighted coverage of the claim's words.

    Args:
        window: evidence longer than this many sentences is also read as
            windows of this many sentences.
        phrase_weight: the share of the score that adjacent claim-word pairs
            found in the evidence make up.
        whole_weight: the share of the whole evidence's coverage in the score
            of windowed evidence (the best window's makes up the rest).
        number_penalty: the factor applied when a number of the claim is
            missing from the evidence.
        rarity_weight: how much rarity over the batch weighs a word (0: not).
        min_batch_for_rarity: the fewest distinct evidence texts a batch
            needs for rarity to count.

    Example:
        >>> support = LexicalSupport()
        >>> supported, unsupported = support.score([
        ...     ("Paris is the capital of France.", "Paris has been the capital of France since 987."),
        ...     ("Paris is the capital of France.", "Lyon is known for its food."),
        ... ])
        >>> supported > 0.8 > 0.2 > unsupported
        True
    """

    window: int = 2
    phrase_weight: float = 0.25
    whole_weight: float = 0.5
    number_penalty: float = 0.7
    rarity_weight: float = 1.0
    min_batch_for_rarity: int = 5

    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        """One score in [0, 1] per ``(claim, evidence)`` pair, in order.

        Example:
            >>> LexicalSupport().score([("Lyon silk", "Lyon is known for silk."), ("", "Anything.")])
            [1.0, 0.0]
        """
        evidence = {text: _evidence(text, self.window) for _, text in text_pairs}
        rarity = self._rarity([e.whole for e in evidence.values()])
        claims: dict[str, _Claim] = {}
        scores = []
        for claim, text in text_pairs:
            if claim not in claims:
                claims[claim] = (*self._claim_weights(claim, rarity), frozenset(_NUMBER.findall(claim)))
            scores.append(self._score(claims[claim], evidence[text]))
        return scores

    @staticmethod
    def clear_caches() -> None:
        """Forget every text analysed so far (the caches are shared by all instances).

        Example:
            >>> LexicalSupport.clear_caches()
        """
        _evidence.cache_clear()
        _analyse.cache_clear()

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

    def _claim_weights(self, claim: str, rarity: dict[str, float]) -> tuple[list[str], list[float]]:
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

    def _score(self, claim: _Claim, evidence: _Evidence) -> float:
        words, weights, numbers = claim
        score = self._coverage(words, weights, evidence.whole)
        if evidence.windows:
            best = max(self._coverage(words, weights, w) for w in evidence.windows)
            score = self.whole_weight * score + (1 - self.whole_weight) * best
        if numbers - evidence.numbers:
            score *= self.number_penalty
        return _unit(score)


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
