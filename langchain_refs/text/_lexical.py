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

What a text's words are (and each word's stem) is cached across calls
(`LexicalSupport.clear_caches` empties the caches, for benchmarks that
measure a cold start).
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

__all__ = ["LexicalSupport", "stemmed_words"]

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


@dataclass(frozen=True, slots=True)
class _Claim:
    """What one claim brings to every pair it is in."""

    words: tuple[tuple[str, float, str | None], ...]  # word, weight, its first five letters (5+ letters)
    total: float
    pairs: frozenset[tuple[str, str]]
    numbers: frozenset[str]


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
        evidence: dict[str, _Evidence] = {}
        window = self.window
        for _, text in text_pairs:
            if text not in evidence:
                evidence[text] = _evidence(text, window)
        rarity = self._rarity([e.whole for e in evidence.values()])
        unseen = max(rarity.values()) if rarity else 0.0
        claims: dict[str, _Claim] = {}
        scores = []
        for claim, text in text_pairs:
            found = claims.get(claim)
            if found is None:
                found = claims[claim] = self._claim(claim, rarity, unseen)
            scores.append(self._score(found, evidence[text]))
        return scores

    @staticmethod
    def clear_caches() -> None:
        """Forget every text analysed so far (the caches are shared by all instances).

        Example:
            >>> LexicalSupport.clear_caches()
        """
        _evidence.cache_clear()
        _analyse.cache_clear()
        stem.cache_clear()

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

    def _claim(self, claim: str, rarity: dict[str, float], unseen: float) -> _Claim:
        """What a claim brings to every pair it is in (worked out once per claim per batch).

        ``unseen`` is the rarity of a word no evidence has: the batch's highest.
        """
        names = {stem(w) for w in WORD.findall(fold(" ".join(_CAPITALISED.findall(claim))))}
        words = content_words(claim)
        rarity_weight = self.rarity_weight
        common = 1 - rarity_weight
        weighted = []
        for word in words:
            weight = 1.0 + min(len(word), 10) / 10
            if word.isdigit():
                weight = 2.0
            elif word in names:
                weight += 0.5
            if rarity:
                weight *= rarity_weight * rarity.get(word, unseen) + common
            # A word of five letters or more also counts, in part, by its first five.
            weighted.append((word, weight, word[:5] if len(word) >= 5 else None))
        return _Claim(
            words=tuple(weighted),
            total=sum(weight for _, weight, _ in weighted),
            pairs=frozenset(itertools.pairwise(words)),
            numbers=frozenset(_NUMBER.findall(claim)),
        )

    def _coverage(self, claim: _Claim, evidence: _Words) -> float:
        if not claim.words:
            return 0.0
        present, prefixes = evidence.present, evidence.prefixes
        covered = 0.0
        for word, weight, prefix in claim.words:
            if word in present:
                covered += weight
            elif prefix is not None and prefix in prefixes:
                covered += 0.7 * weight
        unigram = covered / claim.total
        if claim.pairs:
            phrase = len(claim.pairs & evidence.near) / len(claim.pairs)
            unigram = (1 - self.phrase_weight) * unigram + self.phrase_weight * phrase
        return unigram

    def _score(self, claim: _Claim, evidence: _Evidence) -> float:
        score = self._coverage(claim, evidence.whole)
        if evidence.windows:
            best = max(self._coverage(claim, w) for w in evidence.windows)
            score = self.whole_weight * score + (1 - self.whole_weight) * best
        if claim.numbers - evidence.numbers:
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


def stemmed_words(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The stems of a text's content words, and their first five letters (of stems of five letters or more).

    The same reading `LexicalSupport` makes of a text, from the same cache:
    evidence already scored is not read again.

    Example:
        >>> words, prefixes = stemmed_words("The Parisians' bridges")
        >>> sorted(words), sorted(prefixes)
        (['bridg', 'parisian'], ['bridg', 'paris'])
    """
    found = _analyse(text)
    return found.present, found.prefixes
