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

`LexicalSupport.best_matches` finds, for each claim, its best-scoring
candidate among many (the passage finder's question) with the scores
`score` gives, without scoring every pair: each candidate list is indexed
once (which candidates hold each word, prefix and word pair, as bit fields
of one integer), every candidate's score is estimated at once by integer
arithmetic with a known error bound, and only the candidates the estimate
cannot rule out are scored exactly.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from langchain_refs.text._sentences import DEFAULT_SPLITTER
from langchain_refs.text._words import WORD, clear_word_caches, content_words, fold, stem

__all__ = ["CandidateIndex", "LexicalMatcher", "LexicalSupport", "stemmed_words"]

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
class CandidateIndex:
    """Which candidates of a list hold each word, prefix and near pair: one bit field per candidate.

    Candidate ``i`` is the ``_FIELD``-bit field starting at bit ``i * _FIELD``
    of each mask (its lowest bit set when the candidate holds the key), so
    adding ``q * mask`` adds ``q`` to the field of every candidate holding it.
    """

    evidence: tuple[_Evidence, ...]
    words: dict[str, int]
    prefixes: dict[str, int]
    near: dict[tuple[str, str], int]
    numbers: dict[str, int]  # whole fields set (a mask of candidates, not a count)
    windowed: tuple[int, ...]  # candidates read as windows too: always scored exactly
    plain: int  # every bit of every field but the windowed candidates'
    ones: int  # the lowest bit of every field
    # Per claim word met so far (filled by `masks`): the candidates holding it, and those holding only its prefix.
    word_masks: dict[str, tuple[int, int]]

    def masks(self, word: str) -> tuple[int, int]:
        """The candidates holding ``word``, and those holding only its first five letters (when it has five).

        Worked out once per word (claims share their words) and kept in ``word_masks``.

        Example:
            >>> index = LexicalSupport().matcher([]).index(["Lyon has silk.", "Silky cloth.", "Rome."])
            >>> held, partly = index.masks("silk")
            >>> held == index.words["silk"], partly
            (True, 0)
        """
        found = self.word_masks.get(word)
        if found is None:
            held = self.words.get(word, 0)
            partly = self.prefixes.get(word[:5], 0) & ~held if len(word) >= 5 else 0
            found = self.word_masks[word] = (held, partly)
        return found


# Bits per candidate in the estimate's integer; the scale keeps every field below 2**_FIELD.
_FIELD: Final = 32
_SCALE: Final = float(1 << 27)
_HIGH: Final = 1 << (_FIELD - 1)
_TENS: Final = 10  # the penalised estimate's scale: fields stay below 10 * 2**27 + slack < 2**32
_FIELD_CODE: Final = "I"
_FIELD_BYTES: Final = _FIELD // 8


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
        weights, named = self._word_weights(rarity, unseen)
        scores = []
        for claim, text in text_pairs:
            found = claims.get(claim)
            if found is None:
                found = claims[claim] = self._claim(claim, weights, named)
            scores.append(self._score(found, evidence[text]))
        return scores

    def best_matches(
        self, queries: Sequence[tuple[str, int]], candidates: Sequence[Sequence[str]]
    ) -> list[tuple[int, float]]:
        """For each ``(claim, k)``: the best candidate of ``candidates[k]`` for the claim, and its score.

        Exactly what scoring every ``(claim, candidate)`` pair of every query
        in one `score` call gives (the batch's rarity included), then keeping
        each query's highest score, the earliest candidate on a tie; but only
        the candidates an integer estimate cannot rule out are scored.

        Args:
            queries: (claim, index into ``candidates``) pairs.
            candidates: non-empty lists of evidence texts (a document's sentences).

        Example:
            >>> LexicalSupport().best_matches([("Lyon silk", 0)], [["Rome is old.", "Lyon has silk."]])
            [(1, 1.0)]
        """
        used = sorted({k for _, k in queries})
        matcher = self.matcher([candidates[k] for k in used])
        indexes = {k: matcher.index(candidates[k]) for k in used}
        return [matcher.best(claim, indexes[k]) for claim, k in queries]

    def matcher(self, candidates: Iterable[Sequence[str]]) -> LexicalMatcher:
        """A `LexicalMatcher` for one batch: ``candidates``, every list of evidence texts in it.

        Example:
            >>> matcher = LexicalSupport().matcher([["Rome is old.", "Lyon has silk."]])
            >>> matcher.best("Lyon silk", matcher.index(["Rome is old.", "Lyon has silk."]))
            (1, 1.0)
        """
        evidence: dict[str, _Evidence] = {}
        window = self.window
        for texts in candidates:
            for text in texts:
                if text not in evidence:
                    evidence[text] = _evidence(text, window)
        return LexicalMatcher(self, evidence)

    def _best(
        self,
        claim: _Claim,
        distinct: Sequence[tuple[str, float, str | None]],
        estimable: bool,
        index: CandidateIndex,
    ) -> tuple[int, float]:
        """The best candidate of ``index`` for ``claim`` and its score (the earliest on a tie).

        ``distinct`` is each word of the claim once, with its repeats' weights
        summed; ``estimable`` whether the claim's weights and the settings are
        ones the estimate holds (`LexicalMatcher.best` works both out once per claim).
        """
        evidence = index.evidence
        count = len(evidence)
        if count <= 2 or not estimable:
            # Few candidates, or weights the estimate cannot hold (none,
            # negative, NaN, infinite, a share outside [0, 1]): score them all.
            return self._best_of(claim, evidence, range(count))
        # The estimate, ``_SCALE`` times each candidate's score before the number
        # penalty (below) and the clamp (a no-op: the score is in [0, 1]):
        # each term is rounded once, so it is off by at most half a unit per term.
        unigram = 1.0 - self.phrase_weight if claim.pairs else 1.0
        per_weight = _SCALE * unigram / claim.total
        per_partial_weight = per_weight * 0.7
        # Which candidates hold each word (or only its prefix): worked out once per word and candidate list.
        word_masks = index.word_masks
        total = 0
        for word, weight, _ in distinct:
            masks = word_masks.get(word)
            held, partly = masks if masks is not None else index.masks(word)
            if held:
                total += round(per_weight * weight) * held
            if partly:
                total += round(per_partial_weight * weight) * partly
        terms = 2 * len(distinct)
        if claim.pairs:
            # How many of the claim's pairs each candidate holds, then their share.
            near = index.near
            total += round(_SCALE * self.phrase_weight / len(claim.pairs)) * sum(
                [near.get(pair, 0) for pair in claim.pairs]
            )
            terms += len(claim.pairs)
        # The windowed candidates' scores blend in their windows: no estimate, scored exactly.
        total &= index.plain
        if claim.numbers:
            # A candidate missing a number of the claim scores ``penalty`` times
            # as much: the others' fields are scaled by ``_TENS``, these by the
            # integer nearest ``penalty * _TENS`` (its distance adds to the slack).
            penalty = self.number_penalty
            complete = -1
            for number in claim.numbers:
                complete &= index.numbers.get(number, 0)
            scaled = round(penalty * _TENS)
            total = _TENS * (total & complete) + scaled * (total & ~complete)
            terms = _TENS * terms + math.ceil(abs(penalty * _TENS - scaled) * _SCALE * 2) + 2
        # A term is off by at most 1/2 when rounded and by the float error of its
        # product (well under 1/2 unit at this scale): ``slack`` bounds how far
        # two candidates' estimates can stray from their scores in opposite directions.
        slack = 2 * terms + 4
        # The fields read as machine integers: written in the machine's byte order (the maximum needs no order).
        top = max(memoryview(total.to_bytes(count * _FIELD_BYTES, sys.byteorder)).cast(_FIELD_CODE))
        if top <= slack:
            return self._best_of(claim, evidence, range(count))
        # Every field at least ``top - slack``: adding ``_HIGH - (top - slack)`` to
        # each sets its high bit exactly then (fields stay below 2**(_FIELD - 1)).
        high = ((total + (_HIGH - top + slack) * index.ones) & (_HIGH * index.ones)) >> (_FIELD - 1)
        if not high & (high - 1) and not index.windowed:
            # One candidate only: no need to score it against others, but its score is exact.
            only = (high.bit_length() - 1) // _FIELD
            return only, self._score(claim, evidence[only])
        chosen = set(index.windowed)
        while high:
            low = high & -high
            chosen.add((low.bit_length() - 1) // _FIELD)
            high ^= low
        return self._best_of(claim, evidence, sorted(chosen))

    def _best_of(self, claim: _Claim, evidence: Sequence[_Evidence], chosen: Sequence[int]) -> tuple[int, float]:
        best, best_score, best_rank = -1, 0.0, -math.inf
        for i in chosen:
            score = self._score(claim, evidence[i])
            rank = -math.inf if math.isnan(score) else score
            if best < 0 or rank > best_rank:
                best, best_score, best_rank = i, score, rank
        return best, best_score

    @staticmethod
    def clear_caches() -> None:
        """Forget every text analysed so far (the caches are shared by all instances).

        Example:
            >>> LexicalSupport.clear_caches()
        """
        _evidence.cache_clear()
        _analyse.cache_clear()
        clear_word_caches()

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

    def _word_weights(self, rarity: dict[str, float], unseen: float) -> tuple[_WordWeights, _WordWeights]:
        """What each claim word weighs in a batch: as a common word, and as (part of) a name."""
        return _WordWeights(self, rarity, unseen, named=False), _WordWeights(self, rarity, unseen, named=True)

    def _claim(self, claim: str, weights: _WordWeights, named: _WordWeights) -> _Claim:
        """What a claim brings to every pair it is in (worked out once per claim per batch).

        ``weights`` and ``named`` (`_word_weights`) keep each word's weight for the batch's other claims.
        """
        words = content_words(claim)
        names = _names(claim)
        if names:
            weighted = [named[word] if word in names else weights[word] for word in words]
        else:
            weighted = [weights[word] for word in words]
        return _Claim(
            words=tuple(weighted),
            total=sum([weight for _, weight, _ in weighted]),
            pairs=frozenset(itertools.pairwise(words)),
            numbers=_numbers(claim),
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


class _WordWeights(dict[str, tuple[str, float, str | None]]):
    """Each claim word's weight in one batch, worked out as the word is first met.

    A word weighs more the longer it is, a number 2, part of a name 0.5 more
    (``named``); in a batch large enough for rarity, it is scaled by how rare
    the word is there (``unseen``: the rarity of a word no evidence has, the
    batch's highest). Each entry is ``(word, weight, its first five letters
    when it has five)``; ``nonpositive`` says whether a weight not above 0
    (or NaN) was ever met.
    """

    __slots__ = ("_common", "_named", "_rarity", "_rarity_weight", "_unseen", "nonpositive")

    def __init__(self, support: LexicalSupport, rarity: dict[str, float], unseen: float, *, named: bool) -> None:
        super().__init__()
        self._rarity = rarity
        self._unseen = unseen
        self._rarity_weight = support.rarity_weight
        self._common = 1 - support.rarity_weight
        self._named = named
        self.nonpositive = False

    def __missing__(self, word: str) -> tuple[str, float, str | None]:
        weight = 1.0 + min(len(word), 10) / 10
        if word.isdigit():
            weight = 2.0
        elif self._named:
            weight += 0.5
        if self._rarity:
            weight *= self._rarity_weight * self._rarity.get(word, self._unseen) + self._common
        if not weight > 0:
            self.nonpositive = True
        # A word of five letters or more also counts, in part, by its first five.
        entry = self[word] = (word, weight, word[:5] if len(word) >= 5 else None)
        return entry


def _names(claim: str) -> set[str]:
    """The stems of the words of a claim's capitalised names (none when it has no upper-case letter)."""
    if claim.islower():
        return set()
    capitalised = _CAPITALISED.findall(claim)
    return {stem(w) for w in WORD.findall(fold(" ".join(capitalised)))} if capitalised else set()


def _numbers(text: str) -> frozenset[str]:
    """The numbers written in ``text``."""
    # An ASCII text without an ASCII digit has none: ten substring tests cost less than the search.
    if text.isascii() and not any(map(text.__contains__, "0123456789")):
        return frozenset()
    return frozenset(_NUMBER.findall(text))


class LexicalMatcher:
    """Claims matched against lists of candidates, as one `LexicalSupport.score` batch of them all would.

    The batch is fixed when the matcher is made (`LexicalSupport.matcher`):
    the rarity of words comes from its evidence texts; each claim is read
    once. `index` reads a list of candidates (of the batch, or scored as if
    they were); `best` gives a claim's best candidate in it and its score.
    """

    __slots__ = ("_claim", "_named", "_settings_estimable", "_support", "_weights")

    def __init__(self, support: LexicalSupport, evidence: dict[str, _Evidence]) -> None:
        self._support = support
        rarity = support._rarity([e.whole for e in evidence.values()])
        self._weights, self._named = support._word_weights(rarity, max(rarity.values()) if rarity else 0.0)
        # Shares outside [0, 1] (or NaN) are beyond what the estimate holds.
        self._settings_estimable = 0 <= support.phrase_weight <= 1 and 0 <= support.number_penalty <= 1
        # The last claim read (a citation of several documents asks for it again at once):
        # one, not all, so that a matcher kept through a long stream stays small.
        self._claim: tuple[str, _Claim, list[tuple[str, float, str | None]], bool] | None = None

    def index(self, texts: Sequence[str]) -> CandidateIndex:
        """The candidates ``texts`` read and indexed for `best` (the same for every batch)."""
        window = self._support.window
        return _index([_evidence(text, window) for text in texts])

    def best(self, claim: str, index: CandidateIndex) -> tuple[int, float]:
        """The earliest best-scoring candidate of ``index`` for ``claim``, and its score."""
        last = self._claim
        if last is None or last[0] != claim:
            weights, named = self._weights, self._named
            analysed = self._support._claim(claim, weights, named)
            # Each word once, with the weights of its repeats summed (for the estimate only).
            summed: dict[str, tuple[str, float, str | None]] = {}
            for entry in analysed.words:
                word = entry[0]
                repeat = summed.get(word)
                summed[word] = entry if repeat is None else (word, repeat[1] + entry[1], entry[2])
            # Weights the estimate holds: some, all above 0, a finite sum (a weight not above 0 is rare:
            # only then are the claim's own looked at).
            estimable = (
                self._settings_estimable
                and bool(analysed.words)
                and math.isfinite(analysed.total)
                and (
                    not (weights.nonpositive or named.nonpositive) or all(weight > 0 for _, weight, _ in analysed.words)
                )
            )
            last = self._claim = (claim, analysed, list(summed.values()), estimable)
        return self._support._best(last[1], last[2], last[3], index)


@functools.lru_cache(maxsize=4096)
def _evidence(text: str, window: int) -> _Evidence:
    """A text read whole and as windows of ``window`` sentences (cached: evidence repeats)."""
    windows: tuple[_Words, ...] = ()
    spans = DEFAULT_SPLITTER.split(text)
    if len(spans) > window:
        # Each sentence is read once: no word crosses a sentence's edge, so the words of a window
        # (its sentences joined by spaces) are those of its sentences in turn.
        sentences = [content_words(s.text) for s in spans]
        windows = tuple(
            _words_of(list(itertools.chain.from_iterable(sentences[i : i + window])))
            for i in range(len(sentences) - window + 1)
        )
    # The whole text through `_analyse`'s cache: the meaning guards read the same evidence again.
    return _Evidence(whole=_analyse(text), windows=windows, numbers=frozenset(_NUMBER.findall(text)))


@functools.lru_cache(maxsize=16_384)
def _analyse(text: str) -> _Words:
    """The content words of a text and what coverage needs of them (cached: evidence repeats)."""
    return _words_of(content_words(text))


def _words_of(found: list[str]) -> _Words:
    """What coverage needs of a text's content words, in order."""
    return _Words(
        present=frozenset(found),
        prefixes=frozenset([w[:5] for w in found if len(w) >= 5]),
        near=frozenset(itertools.chain(itertools.pairwise(found), zip(found, found[2:], strict=False))),
    )


def _index(evidence: list[_Evidence]) -> CandidateIndex:
    """The bit-field index of a list of candidates (see `CandidateIndex`)."""
    words: dict[str, int] = {}
    prefixes: dict[str, int] = {}
    near: dict[tuple[str, str], int] = {}
    numbers: dict[str, int] = {}
    windowed = []
    full = (1 << _FIELD) - 1
    for i, found in enumerate(evidence):
        bit = 1 << (i * _FIELD)
        whole = found.whole
        for word in whole.present:
            words[word] = words.get(word, 0) | bit
        for prefix in whole.prefixes:
            prefixes[prefix] = prefixes.get(prefix, 0) | bit
        for pair in whole.near:
            near[pair] = near.get(pair, 0) | bit
        for number in found.numbers:
            numbers[number] = numbers.get(number, 0) | (full << (i * _FIELD))
        if found.windows:
            windowed.append(i)
    plain = (1 << (len(evidence) * _FIELD)) - 1
    ones = plain // full
    for i in windowed:
        plain &= ~(full << (i * _FIELD))
    return CandidateIndex(
        evidence=tuple(evidence),
        words=words,
        prefixes=prefixes,
        near=near,
        numbers=numbers,
        windowed=tuple(windowed),
        plain=plain,
        ones=ones,
        word_masks={},
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
