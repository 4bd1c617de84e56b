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

The arithmetic lives in the engine (`text/_lexical_engine.py`), which the
compiled build compiles; this class, which users may subclass, stays Python.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Final

from langchain_refs.text._lexical_engine import LexicalMatcher, Scoring, clear_caches

__all__ = ["LexicalSupport"]


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

    def __post_init__(self) -> None:
        # A window of no sentence would read every text as empty windows: refused when the settings are given.
        # (Any finite weight is taken: the engine scores odd ones exactly, without its estimate; NaN or an
        # infinity would score every text 0 or nothing, without a word.)
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window < 1:
            msg = f"window must be a whole number of sentences, at least 1, got {self.window!r}"
            raise ValueError(msg)
        for name in ("phrase_weight", "whole_weight", "number_penalty", "rarity_weight"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                msg = f"{name} must be a number, got {type(value).__name__} {value!r}"
                raise TypeError(msg)
            if not math.isfinite(value):  # NaN would score every text 0, without a word
                msg = f"{name} must be a finite number, got {value!r}"
                raise ValueError(msg)
        rarity = self.min_batch_for_rarity
        if isinstance(rarity, bool) or not isinstance(rarity, int):
            msg = f"min_batch_for_rarity must be a whole number of pairs, got {type(rarity).__name__} {rarity!r}"
            raise TypeError(msg)

    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        """One score in [0, 1] per ``(claim, evidence)`` pair, in order.

        Example:
            >>> LexicalSupport().score([("Lyon silk", "Lyon is known for silk."), ("", "Anything.")])
            [1.0, 0.0]
        """
        if isinstance(text_pairs, str) or not hasattr(text_pairs, "__iter__"):
            msg = (
                f"score: text_pairs must be a list of (claim, evidence) pairs of texts, got {type(text_pairs).__name__}"
            )
            raise TypeError(msg)
        pairs: list[tuple[str, str]] = []
        for position, pair in enumerate(text_pairs):
            # Any pair of two texts: a tuple, a list, a NumPy row (read as the tuple the engine takes).
            parts = () if isinstance(pair, str) else tuple(pair) if hasattr(pair, "__iter__") else (pair,)
            if len(parts) != 2 or not all(isinstance(part, str) for part in parts):
                got = ", ".join(type(part).__name__ for part in parts) if parts else type(pair).__name__
                msg = f"score: text_pairs[{position}] must be a (claim, evidence) pair of texts, got ({got})"
                raise TypeError(msg)
            pairs.append((parts[0], parts[1]))
        return self._scoring().scores(pairs)

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

        It scores as `score` scores a batch of these texts, with this class's
        own arithmetic (a subclass's overrides are not seen by it).

        Example:
            >>> matcher = LexicalSupport().matcher([["Rome is old.", "Lyon has silk."]])
            >>> matcher.best("Lyon silk", matcher.index(["Rome is old.", "Lyon has silk."]))
            (1, 1.0)
        """
        return self._scoring().matcher(candidates)

    @staticmethod
    def clear_caches() -> None:
        """Forget every text analysed so far (the caches are shared by all instances).

        Example:
            >>> LexicalSupport.clear_caches()
        """
        clear_caches()

    def _scoring(self) -> Scoring:
        """The engine's arithmetic with these settings (the engine's fields are this class's)."""
        return Scoring(**{name: getattr(self, name) for name in _SETTINGS})


# The settings' names, read from the class that holds their defaults.
_SETTINGS: Final = tuple(f.name for f in fields(LexicalSupport))
