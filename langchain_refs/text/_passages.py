"""The passage of a document that best supports a claim: sentence windows, scored in one batch.

For each ``(claim, document text)`` pair, `find_passages` splits the text
into sentences (each distinct text once), forms windows of ``size``
consecutive sentences, scores every (claim, window) pair in one call of the
scorer, and keeps the best window of each pair, the earlier one on a tie.
Offsets are into the document text: ``text[start:end] == excerpt``.

The scorer is anything with ``score(pairs) -> scores`` (a
``langchain_core`` cross-encoder, the grounding wing's scorers); by default
`PASSAGE_SUPPORT`, the lexical engine (`LexicalSupport`) counting words
alone, which needs no model.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from langchain_refs.text._lexical import LexicalSupport
from langchain_refs.text._lexical_engine import CandidateIndex, LexicalMatcher
from langchain_refs.text._sentences import DEFAULT_SPLITTER, SentenceSplitter, default_sentences, sentence_windows

__all__ = ["PASSAGE_SUPPORT", "PairScorer", "PassageFinder", "PassageSpan", "find_passages"]

PASSAGE_SUPPORT: Final = LexicalSupport(phrase_weight=0.0)
"""The scorer passages are found with unless another is given: `LexicalSupport` without the phrase bonus.

Choosing a sentence of one document, the adjacent-word pairs that
`LexicalSupport` adds by default (``phrase_weight=0.25``) found a
supporting sentence less often on WiCE (`python bench/eval_grounding.py
--passages`, whose table is in the docs' "References as data"), and
leaving them out makes each passage cheaper to find (the passage row of
`bench/run.py`).

Example:
    >>> PASSAGE_SUPPORT.phrase_weight
    0.0
"""


class PairScorer(Protocol):
    """Scores ``(claim, evidence)`` pairs: higher means better support.

    LangChain's ``BaseCrossEncoder`` (and every grounding scorer) has this shape.

    Example:
        A scorer of one's own: the share of the claim's words the evidence holds.

        >>> class Overlap:
        ...     def score(self, text_pairs):
        ...         return [len(set(c.split()) & set(e.split())) / len(c.split()) for c, e in text_pairs]
        >>> find_passages([("Lyon silk", "Rome is old. Lyon silk is fine.")], scorer=Overlap())[0].excerpt
        'Lyon silk is fine.'
    """

    def score(self, text_pairs: list[tuple[str, str]]) -> Sequence[float]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class PassageSpan:
    """A window of a text, with how well it supports a claim.

    ``text[start:end] == excerpt`` for the text it was found in.

    Example:
        >>> PassageSpan(start=4, end=8, excerpt="Bye.", score=0.5).excerpt
        'Bye.'
    """

    start: int
    end: int
    excerpt: str
    score: float


def find_passages(
    pairs: Sequence[tuple[str, str]],
    *,
    scorer: PairScorer | None = None,
    size: int = 1,
    splitter: SentenceSplitter | None = None,
) -> list[PassageSpan]:
    """For each ``(claim, text)``, the window of ``size`` sentences of ``text`` that best supports ``claim``.

    Each distinct text is split once and all windows of all pairs are scored
    in one call of ``scorer`` (a (claim, text) pair given twice, once). Ties go to
    the earlier window; a NaN score loses to any other. A blank claim is
    not scored: its passage is the text's first window, score 0. A blank
    text gives the empty passage at 0 (score 0 too when the claim is blank).

    With the lexical engine itself (a `LexicalSupport`, not a subclass) the
    result is the same but not every window is scored (`PassageFinder`,
    `LexicalSupport.best_matches`): an estimate of every window's score rules
    most of them out.

    Args:
        pairs: (claim, document text) pairs.
        scorer: scores (claim, window) pairs (default: `PASSAGE_SUPPORT`).
        size: sentences per window (windows advance one sentence at a time).
        splitter: how texts are split into sentences (default: the default
            `SentenceSplitter`).

    Example:
        >>> text = "Lyon is big. Lyon has silk. It rains."
        >>> found = find_passages([("silk from Lyon", text)])[0]
        >>> found.excerpt, text[found.start:found.end]
        ('Lyon has silk.', 'Lyon has silk.')
    """
    if size < 1:
        msg = f"size must be at least one sentence, got {size!r}"
        raise ValueError(msg)
    scoring = _scorer(scorer)
    if type(scoring) is LexicalSupport:
        return PassageFinder(scorer=scoring, size=size, splitter=splitter).find(pairs)
    splitter = splitter or DEFAULT_SPLITTER
    windows: dict[str, list[tuple[int, int, str]]] = {}
    for _, text in pairs:
        if text not in windows:
            windows[text] = _windows(splitter, text, size)
    # Every (claim, window) pair to score, in one batch; a (claim, text) pair
    # asked twice is scored once: `first` holds where its windows start.
    batch: list[tuple[str, str]] = []
    first: dict[tuple[str, str], int] = {}
    for pair in pairs:
        claim, text = pair
        if claim.strip() and pair not in first:
            first[pair] = len(batch)
            batch.extend([(claim, excerpt) for _, _, excerpt in windows[text]])
    scores = [float(s) for s in scoring.score(batch)] if batch else []
    if len(scores) != len(batch):
        msg = f"the scorer gave {len(scores)} scores for {len(batch)} pairs"
        raise ValueError(msg)
    found = []
    for pair in pairs:
        claim, text = pair
        spans = windows[text]
        if not claim.strip():
            found.append(_first_window(spans))
            continue
        offset = first[pair]
        best = 0
        best_rank = _rank(scores[offset])
        for i in range(1, len(spans)):
            rank = _rank(scores[offset + i])
            if rank > best_rank:
                best, best_rank = i, rank
        start, end, excerpt = spans[best]
        found.append(PassageSpan(start=start, end=end, excerpt=excerpt, score=scores[offset + best]))
    return found


class PassageFinder:
    """`find_passages` with the lexical engine, its work done as the pairs become known.

    `add` finds a pair's passage at once, within the batch of the texts
    added so far, and returns it; `find` gives exactly what `find_passages`
    gives for its pairs, reusing the result of the pair added in the same
    place (the ``k``-th pair asked, the ``k``-th added) when it was found
    within the same batch of texts (the rarity of words depends on the
    batch), and finding the others. What is kept per pair added is small:
    a reference to its claim and four numbers.

    `find_one` finds a pair's passage the same way (its text joins the
    batch) and keeps nothing: for a caller that keeps what it found, as a
    stream's session does with its citations as they close, so that the end
    of the answer carries no burst of scoring. `join` lets such a caller
    add a pair's text to the batch as soon as the pair is known and find it
    later, with others. It can tell when what it keeps went stale:
    `generation` goes up whenever the batch changes, and the pair is then
    found again with `find_one`, within the batch as it now stands.

    Example:
        >>> finder = PassageFinder()
        >>> finder.add("Lyon silk", "Rome is old. Lyon has silk.")
        (13, 27, 'Lyon has silk.', 1.0)
        >>> finder.find([("Lyon silk", "Rome is old. Lyon has silk.")])[0].excerpt
        'Lyon has silk.'
    """

    __slots__ = (
        "_batch",
        "_claims",
        "_generation",
        "_indexes",
        "_matcher",
        "_scorer",
        "_scores",
        "_size",
        "_splitter",
        "_text_of",
        "_texts",
        "_versions",
        "_windows",
        "_windows_found",
    )

    def __init__(
        self, *, scorer: LexicalSupport | None = None, size: int = 1, splitter: SentenceSplitter | None = None
    ) -> None:
        if size < 1:
            msg = f"size must be at least one sentence, got {size!r}"
            raise ValueError(msg)
        self._scorer = scorer if scorer is not None else PASSAGE_SUPPORT
        self._size = size
        self._splitter = splitter or DEFAULT_SPLITTER
        # Each distinct text: its windows, its index (made when first needed), its number.
        self._windows: dict[str, list[tuple[int, int, str]]] = {}
        self._indexes: dict[str, CandidateIndex] = {}
        self._texts: dict[str, int] = {}
        # The texts of the batch so far (those with a claim) and its matcher (made when first needed).
        self._batch: dict[str, None] = {}
        self._matcher: LexicalMatcher | None = None
        # Goes up each time the batch changes (a text joins it, or `find` asks another one): a pair's
        # result is reused only by a `find` whose batch is the very one it was found in.
        self._generation = 0
        # Per pair added: its claim, its text's number, the window found, its score, and
        # the batch's generation then (-1: a blank claim, nothing found).
        self._claims: list[str] = []
        self._text_of = array("i")
        self._windows_found = array("i")
        self._scores = array("d")
        self._versions = array("i")

    def add(self, claim: str, text: str) -> tuple[int, int, str, float]:
        """Find the passage of ``text`` for ``claim`` now, within the texts added so far (``text`` joins them).

        Returns it as ``(start, end, excerpt, score)``, and keeps it for `find`.
        A blank claim is not scored: the first window, at 0.

        Example:
            >>> PassageFinder().add("Lyon", "Lyon is big.")
            (0, 12, 'Lyon is big.', 1.0)
        """
        spans = self._spans(text)
        number = self._texts.setdefault(text, len(self._texts))
        i, score, version = 0, 0.0, -1
        if claim.strip():
            i, score = self._joined(claim, text)
            version = self._generation
        self._claims.append(claim)
        self._text_of.append(number)
        self._windows_found.append(i)
        self._scores.append(score)
        self._versions.append(version)
        start, end, excerpt = spans[i]
        return start, end, excerpt, score

    def find_one(self, claim: str, text: str) -> tuple[int, int, str, float]:
        """What `add` would return for the pair now, not kept: for a caller that keeps it (its text joins the batch).

        Example:
            >>> finder = PassageFinder()
            >>> _ = finder.add("Lyon silk", "Lyon is big. Lyon has silk.")
            >>> finder.find_one("Lyon silk", "Lyon is big. Lyon has silk.")
            (13, 27, 'Lyon has silk.', 1.0)
        """
        spans = self._spans(text)
        i, score = self._joined(claim, text) if claim.strip() else (0, 0.0)
        start, end, excerpt = spans[i]
        return start, end, excerpt, score

    def join(self, text: str) -> None:
        """``text`` joins the batch now, with nothing found yet (the generation goes up if it was not in it).

        For a caller that finds its pairs later, a few at a time (`find_one`):
        the texts its pairs will ask for join as they become known, so that
        it can tell from `generation` whether the batch changed since.

        Example:
            >>> finder = PassageFinder()
            >>> before = finder.generation
            >>> finder.join("Lyon is big.")
            >>> finder.join("Lyon is big.")  # already in the batch
            >>> finder.generation - before
            1
        """
        self._spans(text)
        if text not in self._batch:
            self._batch[text] = None
            self._matcher = None
            self._generation += 1

    @property
    def generation(self) -> int:
        """Which batch of texts the finder finds within: it goes up each time the batch changes.

        What `add` returned stays what `find` (and `find_passages`) would
        give for its pair as long as the generation it was found in is the
        current one.

        Example:
            >>> finder = PassageFinder()
            >>> before = finder.generation
            >>> _ = finder.add("Lyon", "Lyon is big.")
            >>> _ = finder.add("Lyon", "Lyon is big.")  # the same text: the same batch
            >>> finder.generation - before
            1
        """
        return self._generation

    def find(self, pairs: Sequence[tuple[str, str]]) -> list[PassageSpan]:
        """For each ``(claim, text)``, what ``find_passages(pairs)`` gives (see `find_passages`)."""
        return [
            PassageSpan(start=start, end=end, excerpt=excerpt, score=score)
            for start, end, excerpt, score in self.find_windows(pairs)
        ]

    def find_windows(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[int, int, str, float]]:
        """`find` as plain ``(start, end, excerpt, score)`` tuples: for callers that build their own values.

        Example:
            >>> PassageFinder().find_windows([("Lyon silk", "Rome is old. Lyon has silk.")])
            [(13, 27, 'Lyon has silk.', 1.0)]
        """
        for text in dict.fromkeys([text for _, text in pairs]):
            self._spans(text)
        batch = dict.fromkeys([text for claim, text in pairs if claim.strip()])
        if batch.keys() != self._batch.keys():
            # Another batch than the one added: its own rarity, nothing added reused.
            self._batch = batch
            self._matcher = None
            self._generation += 1
        generation = self._generation
        added = len(self._claims)
        claims, texts, text_of, versions = self._claims, self._texts, self._text_of, self._versions
        windows_found, scores, windows = self._windows_found, self._scores, self._windows
        again: dict[tuple[str, str], tuple[int, float]] = {}
        out = []
        for k, pair in enumerate(pairs):
            claim, text = pair
            spans = windows[text]
            if not claim.strip():
                # A blank claim is not scored: the first window, at 0.
                out.append((*spans[0], 0.0))
                continue
            if k < added and versions[k] == generation and claims[k] == claim and texts.get(text, -1) == text_of[k]:
                out.append((*spans[windows_found[k]], scores[k]))
                continue
            found = again.get(pair)
            if found is None:
                found = again[pair] = self._best(claim, text)
            out.append((*spans[found[0]], found[1]))
        return out

    def _spans(self, text: str) -> list[tuple[int, int, str]]:
        spans = self._windows.get(text)
        if spans is None:
            spans = self._windows[text] = _windows(self._splitter, text, self._size)
        return spans

    def _joined(self, claim: str, text: str) -> tuple[int, float]:
        """`_best` within the batch with ``text`` in it: a text not in it yet joins it (another generation)."""
        self.join(text)
        return self._best(claim, text)

    def _best(self, claim: str, text: str) -> tuple[int, float]:
        matcher = self._matcher
        if matcher is None:
            windows = self._windows
            matcher = self._matcher = self._scorer.matcher(
                [[excerpt for _, _, excerpt in windows[t]] for t in self._batch]
            )
        index = self._indexes.get(text)
        if index is None:
            index = self._indexes[text] = matcher.index([excerpt for _, _, excerpt in self._windows[text]])
        return matcher.best(claim, index)


def _windows(splitter: SentenceSplitter, text: str, size: int) -> list[tuple[int, int, str]]:
    # The default splitter's sentences are kept across answers; another splitter's are not (it may change).
    spans = default_sentences(text) if splitter is DEFAULT_SPLITTER else splitter.split(text)
    offsets = sentence_windows(spans, size, 1) or [(0, 0)]
    return [(start, end, text[start:end]) for start, end in offsets]


def _first_window(spans: list[tuple[int, int, str]]) -> PassageSpan:
    # A blank claim is not scored: the first window, at 0.
    start, end, excerpt = spans[0]
    return PassageSpan(start=start, end=end, excerpt=excerpt, score=0.0)


def _scorer(scorer: PairScorer | None) -> PairScorer:
    return scorer if scorer is not None else PASSAGE_SUPPORT


def _rank(score: float) -> float:
    # NaN compares false with everything: rank it below every real score.
    return -math.inf if math.isnan(score) else score
