"""The lexical engine behind `LexicalSupport`: texts read into words, candidates indexed, claims scored.

`Scoring` holds a `LexicalSupport`'s settings and does its arithmetic (what
the score is: see `LexicalSupport`). Kept apart from the public class so that
the compiled build compiles the engine (mypyc) while `LexicalSupport` stays a
Python class users can subclass; a subclass is scored through its own
`score`, never this module's shortcuts.

What a text's words are (and each word's stem) is cached across calls
(`clear_caches` empties the caches, for benchmarks that measure a cold start).

`LexicalMatcher.best` finds a claim's best-scoring candidate among many (the
passage finder's question) with the score `Scoring.scores` gives, without
scoring every pair: each candidate list is indexed once (which candidates
hold each word, prefix and word pair, as bit fields of one integer), every
candidate's score is estimated at once by integer arithmetic with a known
error bound (what each word adds to a list's candidates is kept for the
batch: a claim costs a look-up per word), and only the candidates the
estimate cannot rule out are scored exactly.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import re
import struct
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from langchain_refs.text._sentences import DEFAULT_SPLITTER, default_sentences, surely_at_most
from langchain_refs.text._words import WORD, clear_word_caches, content_words, fold, is_number_word, stem

__all__ = ["CandidateIndex", "LexicalMatcher", "Scoring", "clear_caches", "stemmed_words"]

# Each pattern starts with a character class, so that a search skips straight to the next digit or
# capital in C (a pattern that starts with a repeat or a look-behind is tried whole at every position:
# on a claim of a sentence, names took four to six times as long, numbers one and a half); what must
# precede a name's capital follows it as look-behinds that include it: not a word character (``\b``),
# not the end of a sentence, not the start of the claim.
_CAPITALISED: Final = re.compile(r"[A-Z](?<!\w[A-Z])(?<![.!?]\s[A-Z])(?<!^[A-Z])[a-zA-Z]+")


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
    highs: int  # the highest bit of every field
    layout: struct.Struct  # the fields read as machine integers (written in the machine's byte order)
    # Per claim word met so far (filled by `masks`): the candidates holding it, and those holding only its prefix.
    word_masks: dict[str, tuple[int, int]]

    def masks(self, word: str) -> tuple[int, int]:
        """The candidates holding ``word``, and those holding only its first five letters (when it has five).

        Worked out once per word (claims share their words) and kept in ``word_masks``.

        Example:
            >>> from langchain_refs.text import LexicalSupport
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


# Bits per candidate in the estimate's integer (read back as machine integers).
_FIELD: Final = 64
_HIGH: Final = 1 << (_FIELD - 1)
_FIELD_CODE: Final = "Q"
# What a claim word adds to a candidate's field: ``_UNIT`` times its weight, rounded (the share of a
# prefix-only match as well). A power of two: the product of a float by it is exact.
_UNIT: Final = float(1 << 24)
# A claim's scale (what a score of 1 weighs in the fields) must stay below this: ``_TENS`` times
# (the number penalty's scale) the largest field, twice the scale at most, stays below ``_HIGH``.
_LARGEST_SCALE: Final = float(1 << 57)
_TENS: Final = 10
# The candidate lists whose contributions a matcher keeps (`LexicalMatcher`); then it starts again.
_INDEXES_KEPT: Final = 1024


class _Claim:
    """What one claim brings to every pair it is in (read once per claim, never changed).

    A plain class, not a frozen dataclass: one is made per citation, and
    compiled, a frozen dataclass's generated ``__init__`` runs as interpreted
    Python where this one stores straight into its fields.
    """

    __slots__ = ("numbers", "pairs", "total", "words")

    def __init__(
        self,
        words: tuple[tuple[str, float, str | None], ...],
        total: float,
        pairs: frozenset[tuple[str, str]],
        numbers: frozenset[str],
    ) -> None:
        self.words = words  # word, weight, its first five letters (5+ letters)
        self.total = total
        self.pairs = pairs
        self.numbers = numbers


@dataclass(frozen=True, slots=True, kw_only=True)
class Scoring:
    """How `LexicalSupport` scores, with its settings: the arithmetic of coverage, rarity and the best candidate.

    A native class in the compiled build, made from a `LexicalSupport`'s
    settings for each batch it scores (`LexicalSupport` says what each
    means, and holds their defaults: this class has none).

    Example:
        >>> from langchain_refs.text import LexicalSupport
        >>> LexicalSupport()._scoring().scores([("Lyon silk", "Lyon is known for silk."), ("", "Anything.")])
        [1.0, 0.0]
    """

    window: int
    phrase_weight: float
    whole_weight: float
    number_penalty: float
    rarity_weight: float
    min_batch_for_rarity: int

    def scores(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        """One score in [0, 1] per ``(claim, evidence)`` pair, in order (`LexicalSupport.score`).

        Example:
            >>> from langchain_refs.text import LexicalSupport
            >>> LexicalSupport()._scoring().scores([("Lyon silk", "Lyon has silk.")])
            [1.0]
        """
        evidence: dict[str, _Evidence] = {}
        window = self.window
        for _, text in text_pairs:
            if text not in evidence:
                evidence[text] = _evidence(text, window)
        rarity = self.rarity([e.whole for e in evidence.values()])
        unseen = max(rarity.values()) if rarity else 0.0
        claims: dict[str, _Claim] = {}
        weights, named = self.word_weights(rarity, unseen)
        scores = []
        for claim, text in text_pairs:
            found = claims.get(claim)
            if found is None:
                found = claims[claim] = _read_claim(claim, weights, named, pairs=self.phrase_weight != 0)[0]
            scores.append(self.evidence_score(found, evidence[text]))
        return scores

    def matcher(self, candidates: Iterable[Sequence[str]]) -> LexicalMatcher:
        """A `LexicalMatcher` for one batch: ``candidates``, every list of evidence texts in it.

        Example:
            >>> from langchain_refs.text import LexicalSupport
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

    def best(
        self,
        claim: _Claim,
        estimate: _Estimate | None,
        index: CandidateIndex,
        contributions: tuple[_Contributions, _Contributions],
    ) -> tuple[int, float]:
        """The best candidate of ``index`` for ``claim`` and its score (the earliest on a tie).

        ``estimate`` says how the claim's estimate is made (None: its weights or
        the settings are beyond what the estimate holds); ``contributions``, what
        each word adds to the candidates of ``index``, with common and with name
        weights (`LexicalMatcher.best` works both out).
        """
        evidence = index.evidence
        count = len(evidence)
        if count <= 2 or estimate is None:
            # Few candidates, or weights the estimate cannot hold (none, negative,
            # NaN, infinite, a share outside [0, 1]): score them all.
            return self.best_of(claim, evidence, range(count))
        total = _estimated_fields(claim, estimate, index, contributions, self.number_penalty)
        slack = estimate.slack
        # The fields read as machine integers: written in the machine's byte order (the maximum needs no order).
        layout = index.layout
        top = max(layout.unpack(total.to_bytes(layout.size, sys.byteorder)))
        if top <= slack:
            return self.best_of(claim, evidence, range(count))
        # Every field at least ``top - slack``: adding ``_HIGH - (top - slack)`` to
        # each sets its high bit exactly then (fields stay below 2**(_FIELD - 2): see `_LARGEST_SCALE`).
        high = ((total + (_HIGH - top + slack) * index.ones) & index.highs) >> (_FIELD - 1)
        if not high & (high - 1) and not index.windowed:
            # One candidate only: no need to score it against others, but its score is exact.
            only = (high.bit_length() - 1) // _FIELD
            return only, self.evidence_score(claim, evidence[only])
        chosen = set(index.windowed)
        while high:
            low = high & -high
            chosen.add((low.bit_length() - 1) // _FIELD)
            high ^= low
        return self.best_of(claim, evidence, sorted(chosen))

    def best_of(self, claim: _Claim, evidence: Sequence[_Evidence], chosen: Sequence[int]) -> tuple[int, float]:
        """The earliest best-scoring of the ``chosen`` candidates of ``evidence``, and its score (NaN ranks last)."""
        best, best_score, best_rank = -1, 0.0, -math.inf
        for i in chosen:
            score = self.evidence_score(claim, evidence[i])
            rank = -math.inf if math.isnan(score) else score
            if best < 0 or rank > best_rank:
                best, best_score, best_rank = i, score, rank
        return best, best_score

    def rarity(self, evidence: list[_Words]) -> dict[str, float]:
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

    def word_weights(self, rarity: dict[str, float], unseen: float) -> tuple[_WordWeights, _WordWeights]:
        """What each claim word weighs in a batch: as a common word, and as (part of) a name."""
        return _WordWeights(self, rarity, unseen, named=False), _WordWeights(self, rarity, unseen, named=True)

    def coverage(self, claim: _Claim, evidence: _Words) -> float:
        """How much of ``claim``'s weighted words (and pairs) ``evidence`` holds."""
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

    def evidence_score(self, claim: _Claim, evidence: _Evidence) -> float:
        """``claim``'s score against one evidence text: whole and best window blended, the number penalty applied."""
        score = self.coverage(claim, evidence.whole)
        if evidence.windows:
            best = max(self.coverage(claim, w) for w in evidence.windows)
            score = self.whole_weight * score + (1 - self.whole_weight) * best
        if claim.numbers and not claim.numbers <= evidence.numbers:
            score *= self.number_penalty
        return _unit(score)


def clear_caches() -> None:
    """Forget every text analysed so far (`LexicalSupport.clear_caches`).

    Example:
        >>> clear_caches()
    """
    _indexed.cache_clear()
    default_sentences.cache_clear()
    _evidence.cache_clear()
    _analyse.cache_clear()
    clear_word_caches()


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

    def __init__(self, scoring: Scoring, rarity: dict[str, float], unseen: float, *, named: bool) -> None:
        super().__init__()
        self._rarity = rarity
        self._unseen = unseen
        self._rarity_weight = scoring.rarity_weight
        self._common = 1 - scoring.rarity_weight
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
    if claim.lower() == claim:
        # No capital A-Z, so no name: one pass in C over an ASCII claim (``islower`` looks each character up).
        return set()
    capitalised = _CAPITALISED.findall(claim)
    return {stem(w) for w in WORD.findall(fold(" ".join(capitalised)))} if capitalised else set()


def _read_claim(
    claim: str, weights: _WordWeights, named: _WordWeights, *, pairs: bool = True
) -> tuple[_Claim, list[str], set[str]]:
    """A claim read (once per claim per batch), with its content words in order and those of its names.

    ``pairs=False`` (a scorer whose ``phrase_weight`` is 0) leaves the adjacent word pairs out: they
    would weigh nothing (``coverage`` adds 0 times their share, which changes no score).
    """
    words = content_words(claim)
    names = _names(claim)
    if names:
        weighted = tuple([named[word] if word in names else weights[word] for word in words])
    else:
        weighted = tuple(map(weights.__getitem__, words))
    total = sum(map(_WEIGHT, weighted))
    near = frozenset(itertools.pairwise(words)) if pairs else _NO_PAIRS
    # Positional: a frozen dataclass's keyword arguments cost more (a claim is read per citation).
    analysed = _Claim(weighted, total, near, _numbers_of(claim, words))
    return analysed, words, names


_WEIGHT: Final = operator.itemgetter(1)
_NO_NUMBERS: Final[frozenset[str]] = frozenset()
_NO_PAIRS: Final[frozenset[tuple[str, str]]] = frozenset()


def _numbers_of(text: str, words: list[str]) -> frozenset[str]:
    """The numbers a claim (``text``, whose content words are ``words``) holds its evidence to.

    Its content words that are numbers (`is_number_word`: "3.5 million" and
    "3,500,000" alike, "twelve" as "12"), but a number in words below ten
    ("one of the largest") only when the claim also writes it in digits:
    too often a paraphrase to hold to. An ASCII claim whose words are all
    letters has none: one test of their concatenation tells.
    """
    if text.isascii() and "".join(words).isalpha():
        return _NO_NUMBERS
    numbers = [word for word in words if is_number_word(word)]
    if any(len(number) == 1 for number in numbers):
        # A number below ten counts when the claim writes its digit as a number ("1", "1st"), not in "2019".
        written = frozenset(_DIGIT_ALONE.findall(text))
        numbers = [number for number in numbers if len(number) > 1 or number in written]
    return frozenset(numbers)


# A digit written as a number of its own (an ordinal's ending allowed): not a digit of a longer number.
_DIGIT_ALONE: Final = re.compile(r"(?<![\w.,])(\d)(?:st|nd|rd|th)?(?!\w|[.,]\d)")


def _estimated_fields(
    claim: _Claim,
    estimate: _Estimate,
    index: CandidateIndex,
    contributions: tuple[_Contributions, _Contributions],
    penalty: float,
) -> int:
    """Every candidate's estimated score (see `_Estimate`), one ``_FIELD``-bit field each; 0 for the windowed ones.

    A candidate holding every number of the claim has its field scaled by
    ``_TENS``, the others by ``round(penalty * _TENS)``.
    """
    # Each candidate's field: its words' contributions summed, plus ``pair_factor``
    # per pair of the claim it holds (see `_Estimate`).
    common, named = contributions
    names = estimate.names
    if names:
        total = sum([named[word] if word in names else common[word] for word in estimate.words])
    else:
        total = sum(map(common.__getitem__, estimate.words))
    if estimate.pair_factor:
        # The pairs no candidate holds (most) add nothing: left out before the sum.
        total += estimate.pair_factor * sum(filter(None, map(index.near.get, claim.pairs)))
    if index.windowed:
        # The windowed candidates' scores blend in their windows: no estimate, scored exactly.
        total &= index.plain
    if claim.numbers:
        # A candidate missing a number of the claim scores ``penalty`` times as much: the others'
        # fields are scaled by ``_TENS``, these by the integer nearest ``penalty * _TENS``
        # (the slack holds the difference).
        complete = -1
        for number in claim.numbers:
            complete &= index.numbers.get(number, 0)
        total = _TENS * (total & complete) + round(penalty * _TENS) * (total & ~complete)
    return total


class _Estimate:
    """How a claim's estimate of every candidate's score is made, the same for every candidate list.

    A candidate's field is the sum, over the claim's ``words`` (repeats
    included), of ``round(_UNIT * weight)`` when it holds the word and
    ``round(_UNIT * (0.7 * weight))`` when it holds only its first five
    letters (name weights for the words of ``names``), plus ``pair_factor``
    times how many of the claim's pairs it holds: the candidate's score
    (before the number penalty) times the claim's scale, give or take
    ``slack / 2`` (see `LexicalMatcher._estimate`). One per claim (a plain
    class, as `_Claim` is), never changed.
    """

    __slots__ = ("names", "pair_factor", "slack", "words")

    def __init__(self, words: list[str], names: set[str], pair_factor: int, slack: int) -> None:
        self.words = words
        self.names = names
        self.pair_factor = pair_factor
        self.slack = slack


class _Contributions(dict[str, int]):
    """What each claim word adds to the candidates of one list, worked out as the word is first met.

    ``round(_UNIT * weight)`` in the field of every candidate holding the
    word, ``round(_UNIT * (0.7 * weight))`` in those holding only its prefix:
    a word's weight is fixed for the matcher's batch, so a word met again in
    another claim costs one look-up. Kept per matcher and candidate list, one
    for common and one for name weights.
    """

    __slots__ = ("_index", "_weights")

    def __init__(self, index: CandidateIndex, weights: _WordWeights) -> None:
        super().__init__()
        self._index = index
        self._weights = weights

    def __missing__(self, word: str) -> int:
        held, partly = self._index.masks(word)
        weight = self._weights[word][1]
        found = 0
        if held:
            found = round(_UNIT * weight) * held
        if partly:
            found += round(_UNIT * (0.7 * weight)) * partly
        self[word] = found
        return found


class LexicalMatcher:
    """Claims matched against lists of candidates, as one `LexicalSupport.score` batch of them all would.

    The batch is fixed when the matcher is made (`Scoring.matcher`):
    the rarity of words comes from its evidence texts; each claim is read
    once. `index` reads a list of candidates (of the batch, or scored as if
    they were); `best` gives a claim's best candidate in it and its score.

    Example:
        >>> from langchain_refs.text import LexicalSupport
        >>> matcher = LexicalSupport().matcher([["Rome is old.", "Lyon has silk.", "Silk is soft."]])
        >>> matcher.best("Lyon silk", matcher.index(["Rome is old.", "Lyon has silk.", "Silk is soft."]))
        (1, 1.0)
    """

    __slots__ = (
        "_claim",
        "_contributions",
        "_estimated",
        "_named",
        "_penalty_stray",
        "_scoring",
        "_settings_estimable",
        "_weights",
    )

    def __init__(self, scoring: Scoring, evidence: dict[str, _Evidence]) -> None:
        self._scoring = scoring
        rarity = scoring.rarity([e.whole for e in evidence.values()])
        self._weights, self._named = scoring.word_weights(rarity, max(rarity.values()) if rarity else 0.0)
        # Shares outside [0, 1] (or NaN) are beyond what the estimate holds.
        self._settings_estimable = 0 <= scoring.phrase_weight <= 1 and 0 <= scoring.number_penalty <= 1
        # How far the penalty's integer scale (`Scoring.best`) strays from ``penalty * _TENS``
        # (worked out exactly: the penalty is any float, then rounded to a float).
        penalty = scoring.number_penalty
        stray = abs(Fraction(round(penalty * _TENS)) - _TENS * Fraction(penalty)) if self._settings_estimable else 0
        self._penalty_stray = float(stray)
        # The last claim read (a citation of several documents asks for it again at once):
        # one, not all, so that a matcher kept through a long stream stays small.
        self._claim: tuple[str, _Claim, list[str], set[str]] | None = None
        # Its estimate, once a list of more than two candidates asked for it (a list of two or fewer is
        # scored whole: a passage finder's one-sentence documents never need it); the tuple holds None when
        # the claim is beyond what the estimate holds.
        self._estimated: tuple[_Estimate | None] | None = None
        # Per candidate list met (by identity, the list kept with them): its contributions.
        self._contributions: dict[int, tuple[CandidateIndex, tuple[_Contributions, _Contributions]]] = {}

    def index(self, texts: Sequence[str]) -> CandidateIndex:
        """The candidates ``texts`` read and indexed for `best` (the same for every batch).

        Example:
            >>> from langchain_refs.text import LexicalSupport
            >>> index = LexicalSupport().matcher([]).index(["Rome is old.", "Lyon has silk."])
            >>> len(index.evidence), sorted(index.words)
            (2, ['lyon', 'old', 'rom', 'silk'])
        """
        return _indexed(tuple(texts), self._scoring.window)

    def best(self, claim: str, index: CandidateIndex) -> tuple[int, float]:
        """The earliest best-scoring candidate of ``index`` for ``claim``, and its score.

        Example:
            >>> from langchain_refs.text import LexicalSupport
            >>> matcher = LexicalSupport().matcher([["Rome is old.", "Lyon has silk."]])
            >>> matcher.best("Rome old", matcher.index(["Rome is old.", "Lyon has silk."]))
            (0, 1.0)
        """
        last = self._claim
        if last is None or last[0] != claim:
            analysed, words, names = _read_claim(
                claim, self._weights, self._named, pairs=self._scoring.phrase_weight != 0
            )
            last = self._claim = (claim, analysed, words, names)
            self._estimated = None
        evidence = index.evidence
        if len(evidence) <= 2:
            # Few candidates: every one scored, no estimate to make.
            return self._scoring.best_of(last[1], evidence, range(len(evidence)))
        estimated = self._estimated
        if estimated is None:
            estimated = self._estimated = (self._estimate(last[1], last[2], last[3]),)
        found = self._contributions.get(id(index))
        if found is None:
            if len(self._contributions) >= _INDEXES_KEPT:
                self._contributions.clear()
            found = self._contributions[id(index)] = (
                index,
                (_Contributions(index, self._weights), _Contributions(index, self._named)),
            )
        return self._scoring.best(last[1], estimated[0], index, found[1])

    def _estimate(self, claim: _Claim, words: list[str], names: set[str]) -> _Estimate | None:
        """How ``claim``'s estimate is made, and its error bound (None: beyond what the estimate holds).

        The claim's ``scale`` is ``_UNIT * total / unigram`` (``unigram``: the
        words' share of the score, 1 without pairs). A candidate's score before
        the penalty, in real numbers from the same float weights and shares, is
        ``(_UNIT * covered + x * held_pairs) / scale`` with ``x = phrase_weight
        * scale / len(pairs)``. Its field differs from ``scale`` times that by
        at most: 1/2 per word (each word's contribution is rounded once, and a
        candidate gets the word's or its prefix's, never both); ``1/2 + 2**-51
        * x`` per pair held (``x`` is worked out in three float operations, then
        rounded to ``pair_factor``), at most ``len(pairs) / 2 + 2**-51 *
        scale`` in all. The score as `score` works it out in floats strays from
        the real one by at most ``len(words) + 6`` unit round-offs (``2**-53``:
        a sum of positive terms, then a few products and a sum of values up to
        1). The penalty multiplies the bound by ``_TENS`` and adds how far its
        integer scale strays, and its product's round-off. Two candidates'
        fields can stray in opposite directions: the slack is twice the bound.
        """
        if not self._settings_estimable or not words:
            return None
        total = claim.total
        # Weights the estimate holds: all above 0, a finite sum (a weight not above 0 is rare:
        # only then are the claim's own looked at).
        if not math.isfinite(total) or (
            (self._weights.nonpositive or self._named.nonpositive) and not all(w > 0 for _, w, _ in claim.words)
        ):
            return None
        phrase = self._scoring.phrase_weight
        pairs = claim.pairs
        if pairs:
            # The same float as `Scoring.coverage`'s share of the words.
            unigram = 1 - phrase
            if not unigram > 0:
                # Only the pairs count (phrase_weight 1): a setting too rare to estimate.
                return None
            scale = _UNIT * total / unigram
        else:
            scale = _UNIT * total
        count = len(words)
        if not scale + count < _LARGEST_SCALE:
            # Weights too large for the fields (or infinite ones): scored exactly.
            return None
        # The bounds in floats, rounded up: each is at least twice what it bounds before rounding.
        error = count // 2 + 2 + int(scale * (count + 6) * 2**-52)
        pair_factor = 0
        if pairs and phrase:
            pair_factor = round(phrase * scale / len(pairs))
            error += len(pairs) // 2 + 2 + int(scale * 2**-50)
        if claim.numbers:
            error = _TENS * error + math.ceil(self._penalty_stray * scale * 2) + int(scale * 2**-48) + 2
        return _Estimate(words, names, pair_factor, 2 * error)


@functools.lru_cache(maxsize=4096)
def _evidence(text: str, window: int) -> _Evidence:
    """A text read whole and as windows of ``window`` sentences (cached: evidence repeats)."""
    windows: tuple[_Words, ...] = ()
    # Most candidates are too short to be read as windows (a passage finder's are one sentence):
    # no need to split them to know.
    spans = [] if window >= 1 and surely_at_most(text, window) else DEFAULT_SPLITTER.split(text)
    if len(spans) > window:
        # Each sentence is read once: no word crosses a sentence's edge, so the words of a window
        # (its sentences joined by spaces) are those of its sentences in turn.
        sentences = [content_words(s.text) for s in spans]
        windows = tuple(
            _words_of(list(itertools.chain.from_iterable(sentences[i : i + window])))
            for i in range(len(sentences) - window + 1)
        )
    # The whole text through `_analyse`'s cache: the meaning guards read the same evidence again.
    # The evidence's numbers, in digits or in words: a claim's "12" is the "twelve" of its evidence.
    whole = _analyse(text)
    return _Evidence(whole=whole, windows=windows, numbers=frozenset(filter(is_number_word, whole.present)))


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


@functools.lru_cache(maxsize=64)
def _indexed(texts: tuple[str, ...], window: int) -> CandidateIndex:
    """The index of a list of candidates (cached: a thread's answers cite the same documents again).

    The index depends on the texts alone, not on the batch; each answer's
    session would otherwise read and index each document it cites anew.
    Sixty-four lists: a thread's documents, not a corpus.
    """
    return _index([_evidence(text, window) for text in texts])


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
        highs=ones << (_FIELD - 1),
        layout=struct.Struct(f"={len(evidence)}{_FIELD_CODE}"),
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
