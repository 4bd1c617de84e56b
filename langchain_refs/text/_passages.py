"""The passage of a document that best supports a claim: sentence windows, scored in one batch.

For each ``(claim, document text)`` pair, `find_passages` splits the text
into sentences (each distinct text once), forms windows of ``size``
consecutive sentences, scores every (claim, window) pair in one call of the
scorer, and keeps the best window of each pair, the earlier one on a tie.
Offsets are into the document text: ``text[start:end] == excerpt``.

The scorer is anything with ``score(pairs) -> scores`` (a
``langchain_core`` cross-encoder, the grounding wing's scorers); by default
the lexical engine (`LexicalSupport`), which needs no model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from langchain_refs.text._lexical import LexicalSupport
from langchain_refs.text._sentences import SentenceSplitter, sentence_windows

__all__ = ["PairScorer", "PassageSpan", "find_passages"]


class PairScorer(Protocol):
    """Scores ``(claim, evidence)`` pairs: higher means better support.

    LangChain's ``BaseCrossEncoder`` (and every grounding scorer) has this shape.
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

    Args:
        pairs: (claim, document text) pairs.
        scorer: scores (claim, window) pairs (default: `LexicalSupport`).
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
    splitter = splitter or SentenceSplitter()
    windows: dict[str, list[tuple[int, int, str]]] = {}
    for _, text in pairs:
        if text not in windows:
            offsets = sentence_windows(splitter.split(text), size, 1) or [(0, 0)]
            windows[text] = [(start, end, text[start:end]) for start, end in offsets]
    scoring = _scorer(scorer)
    if type(scoring) is LexicalSupport:
        return _lexical_passages(pairs, windows, scoring)
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


def _lexical_passages(
    pairs: Sequence[tuple[str, str]], windows: dict[str, list[tuple[int, int, str]]], scorer: LexicalSupport
) -> list[PassageSpan]:
    """`find_passages` with the lexical engine: the same spans, without scoring every window.

    `LexicalSupport.best_matches` gives what one `score` call over every
    (claim, window) pair and the earliest best of each would: the batch's
    rarity comes from the same windows (each text's once), and only the
    windows an estimate cannot rule out are scored.
    """
    texts = {text: k for k, text in enumerate(windows)}
    lists = [[excerpt for _, _, excerpt in spans] for spans in windows.values()]
    queries: dict[tuple[str, str], int] = {}
    for pair in pairs:
        if pair[0].strip() and pair not in queries:
            queries[pair] = len(queries)
    best = scorer.best_matches([(claim, texts[text]) for claim, text in queries], lists)
    found = []
    for pair in pairs:
        claim, text = pair
        spans = windows[text]
        if not claim.strip():
            found.append(_first_window(spans))
            continue
        i, score = best[queries[pair]]
        start, end, excerpt = spans[i]
        found.append(PassageSpan(start=start, end=end, excerpt=excerpt, score=score))
    return found


def _first_window(spans: list[tuple[int, int, str]]) -> PassageSpan:
    # A blank claim is not scored: the first window, at 0.
    start, end, excerpt = spans[0]
    return PassageSpan(start=start, end=end, excerpt=excerpt, score=0.0)


def _scorer(scorer: PairScorer | None) -> PairScorer:
    return scorer if scorer is not None else LexicalSupport()


def _rank(score: float) -> float:
    # NaN compares false with everything: rank it below every real score.
    return -math.inf if math.isnan(score) else score
