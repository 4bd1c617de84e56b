"""What the streaming wing asks of a verifier: the protocol grounding's scorers implement.

It lives in a module of its own, apart from `ReferenceSession`, so that the
session holds no runtime-checkable protocol (mypyc compiles the session and
refuses ``@runtime_checkable`` on a compiled class) and so that the grounding
wing reads the contract from one small place.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, overload, runtime_checkable

if TYPE_CHECKING:
    from langchain_refs.streaming._references import AnswerReferences

__all__ = [
    "CitationVerifier",
    "check_style",
    "checked_flag",
    "checked_support_threshold",
    "checked_whole_number",
    "scorer_lock",
    "support_threshold_of",
]

# One lock per scorer object, by its id while it lives (a scorer need be neither hashable nor comparable).
_SCORER_LOCKS: dict[int, threading.Lock] = {}
_SCORER_LOCKS_GUARD: Final = threading.Lock()
# For a scorer that cannot be weakly referenced (its lock could not be let go with it): one lock for all such.
_SHARED_LOCK: Final = threading.Lock()


def scorer_lock(scorer: object) -> threading.Lock:
    """The lock a scorer of the user's is called under: answers that end together in threads call it in turn.

    A scorer is called when an answer ends; async answers end in worker
    threads (so that a model's call does not block the event loop), and one
    scorer is shared by all of them: a scorer that keeps a cache (an
    embedding scorer) need not be safe to call from several threads at once.

    Example:
        >>> class Scorer:
        ...     def score(self, pairs): return [0.0] * len(pairs)
        >>> scorer = Scorer()
        >>> scorer_lock(scorer) is scorer_lock(scorer), scorer_lock(scorer) is scorer_lock(Scorer())
        (True, False)
    """
    key = id(scorer)
    with _SCORER_LOCKS_GUARD:
        lock = _SCORER_LOCKS.get(key)
        if lock is None:
            try:
                weakref.finalize(scorer, _SCORER_LOCKS.pop, key, None)
            except TypeError:
                return _SHARED_LOCK
            lock = _SCORER_LOCKS[key] = threading.Lock()
        return lock


@runtime_checkable
class CitationVerifier(Protocol):
    """What ``manage_references(verifier=...)`` needs: a way to score citations.

    The streaming wing knows only this protocol; the grounding wing's scorers
    (`LexicalScorer` and the rest) implement it, and `CrossEncoderScorer`
    wraps any other LangChain ``BaseCrossEncoder`` so that it does too.
    ``manage_references`` passes the verifier's own ``support_threshold``
    (an attribute, when it has one) unless it was given another; else 0.5.

    Example:
        >>> class EverythingSupported:
        ...     def verify_citations(self, references, documents, *, threshold):
        ...         return references
        >>> isinstance(EverythingSupported(), CitationVerifier)
        True
    """

    def verify_citations(
        self, references: AnswerReferences, documents: Sequence[Any], *, threshold: float
    ) -> AnswerReferences: ...


def support_threshold_of(verifier: object) -> float:
    """The score from which ``verifier`` calls a citation supported: its ``support_threshold``, else 0.5.

    An attribute that is missing or None counts as 0.5.

    Example:
        >>> class Strict:
        ...     support_threshold = 0.8
        >>> support_threshold_of(Strict()), support_threshold_of(object())
        (0.8, 0.5)
    """
    value = getattr(verifier, "support_threshold", None)
    return 0.5 if value is None else float(value)


@overload
def checked_support_threshold(threshold: object, *, option: str = ..., none_means: None) -> float: ...


@overload
def checked_support_threshold(threshold: object, *, option: str = ..., none_means: str = ...) -> float | None: ...


def checked_support_threshold(
    threshold: object, *, option: str = "support_threshold", none_means: str | None = "the verifier's own"
) -> float | None:
    """``threshold`` itself when it is a number from 0 to 1 (scores' scale), else an error naming ``option``.

    None is taken when ``none_means`` says what it stands for, refused when
    ``none_means`` is None. The thresholds of ``manage_references``, of the
    grounding wing's scorers, checkers, filters and predictor are checked
    here, when they are given.

    Example:
        >>> checked_support_threshold(0.7), checked_support_threshold(None)
        (0.7, None)
        >>> checked_support_threshold("high")
        Traceback (most recent call last):
        ...
        TypeError: support_threshold must be a number from 0 to 1 (None: the verifier's own), got str 'high'
        >>> checked_support_threshold(5, option="threshold", none_means=None)
        Traceback (most recent call last):
        ...
        ValueError: threshold must be a number from 0 to 1 (scores' scale), got 5
    """
    if threshold is None and none_means is not None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        allowed = f" (None: {none_means})" if none_means is not None else ""
        msg = f"{option} must be a number from 0 to 1{allowed}, got {type(threshold).__name__} {threshold!r}"
        raise TypeError(msg)
    if math.isnan(threshold) or not 0 <= threshold <= 1:
        msg = f"{option} must be a number from 0 to 1 (scores' scale), got {threshold!r}"
        raise ValueError(msg)
    return float(threshold)


def checked_flag(value: object, option: str) -> bool:
    """``value`` itself when it is True or False, else a TypeError naming ``option``.

    A truthy word would do the opposite of what it says: ``escape_text="false"`` would escape.

    Example:
        >>> checked_flag(True, "show_passages")
        True
        >>> checked_flag("false", "escape_text")
        Traceback (most recent call last):
        ...
        TypeError: escape_text must be True or False, got str 'false'
    """
    if not isinstance(value, bool):
        msg = f"{option} must be True or False, got {type(value).__name__} {value!r}"
        raise TypeError(msg)
    return value


def checked_whole_number(value: object, option: str, unit: str, *, at_least: int = 1) -> int:
    """``value`` itself, or an error naming ``option`` when it is not a whole number of ``unit``, ``at_least`` or more.

    The one check of every option that counts something (characters, documents, sentences).

    Example:
        >>> checked_whole_number(3, "window", "sentences")
        3
        >>> checked_whole_number(2.5, "window", "sentences")
        Traceback (most recent call last):
        ...
        TypeError: window must be a whole number of sentences, got float 2.5
        >>> checked_whole_number(-1, "max_document_texts", "documents", at_least=0)
        Traceback (most recent call last):
        ...
        ValueError: max_document_texts must be 0 or more documents, got -1
    """
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"{option} must be a whole number of {unit}, got {type(value).__name__} {value!r}"
        raise TypeError(msg)
    if value < at_least:
        msg = f"{option} must be {at_least} or more {unit}, got {value!r}"
        raise ValueError(msg)
    return value


def check_style(style: object, methods: Sequence[str] = ("format_reference", "format_all_references")) -> None:
    """A TypeError naming what ``style`` is when it lacks one of ``methods`` (a class, a style's name, anything else).

    Example:
        >>> check_style("markdown")
        Traceback (most recent call last):
        ...
        TypeError: style must be a style such as MarkdownReferenceStyle(), got the str 'markdown'
    """
    if isinstance(style, type):
        msg = f"style must be a style, not the class {style.__name__}: write {style.__name__}()"
        raise TypeError(msg)
    if not all(callable(getattr(style, name, None)) for name in methods):
        shown = f"the str {style!r}" if isinstance(style, str) else type(style).__name__
        msg = f"style must be a style such as MarkdownReferenceStyle(), got {shown}"
        raise TypeError(msg)
