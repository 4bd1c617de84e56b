"""Sentence splitting with character offsets: pure Python, offline, no data.

Every `Span` slices its source exactly: ``text[span.start:span.end] ==
span.text``. Spans never include the whitespace between sentences.

A sentence ends at ``.``, ``!``, ``?`` or ``…`` (or the Devanagari danda and
the Arabic question mark and full stop; closing quotes, brackets and citation markers such as
``[1]`` or ``[1](id=2)`` stay with it) when whitespace and a plausible
sentence start (no lower-case letter, in any script) follow, unless the word before the
period is a known abbreviation (``Dr.``, ``e.g.``, ``U.S.``, ``No. 5``), a
single initial, or an ellipsis runs into lower case. Chinese and Japanese
full-width stops (U+3002, U+FF01, U+FF1F) end a sentence with nothing after
them. A blank line always ends
a sentence; so does a line break before a Markdown bullet or heading, and a
heading line is a sentence of its own. ``strict=True`` also ends sentences at
every line break and at semicolons.

The work is linear in the length of the text (the verifier, the predictor and
the claim checker split whole documents): no search restarts from the
beginning, and no run of periods, closers or markers is read more than a
bounded number of times.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "DEFAULT_ABBREVIATIONS",
    "DEFAULT_SPLITTER",
    "EXTENDED_ABBREVIATIONS",
    "SentenceSplitter",
    "Span",
    "sentence_windows",
    "split_sentences",
    "window_indices",
]

DEFAULT_ABBREVIATIONS: Final = frozenset(
    """mr mrs ms dr prof sr jr st mt ft vs etc e.g i.e cf al fig figs no nos vol vols pp p ed eds approx dept
    est inc ltd co corp jan feb mar apr jun jul aug sep sept oct nov dec u.s u.k u.n a.m p.m ph.d b.a m.a
    gen col lt sgt capt rev hon""".split()
)
"""Lower-case abbreviations (without their final period) that do not end a sentence."""

EXTENDED_ABBREVIATIONS: Final = DEFAULT_ABBREVIATIONS | frozenset(
    """art sec ch eq eqs ref refs min max avg dist govt intl natl univ assn bros mfg misc op cit ibid viz
    ca c fl r d b m a.d b.c e.u u.s.a ave blvd rd hwy no.s tel ext esp incl excl""".split()
)
"""A longer list for legal, scientific and address-heavy text."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Span:
    """A piece of a text with its character offsets.

    Example:
        >>> text = "Hi. Bye."
        >>> span = Span(start=4, end=8, text="Bye.")
        >>> text[span.start:span.end] == span.text
        True
    """

    start: int
    end: int
    text: str


_CLOSERS = "\"'\u201d\u2019)\\]\u00bb*_"
# A sentence end is a run of stop characters, then closers, citation markers and
# closers again, then whitespace. It is read by hand (`_sentence_ends`) rather than
# by one regular expression: backtracking over long runs of closers or periods, and
# re-reading a chain of markers from every period inside it, made that quadratic.
_STOP_RUN = re.compile(r"[.!?\u2026\u0964\u0965\u061f\u06d4]+")  # and the danda, Arabic question mark and full stop
# The full-width stops of Chinese and Japanese (U+3002, U+FF01, U+FF1F) end a sentence with no whitespace after
# them; not one before a closing bracket or quote, which ends the quoted words only (Japanese "'Yes.' he said." is
# one sentence).
_WIDE_END = re.compile(r"[\u3002\uff01\uff1f]+(?![\u3002\uff01\uff1f\u300d\u300f\uff09\u201d\u2019\u3011\u3015])")
_CLOSER_RUN = re.compile(rf"[{_CLOSERS}]*")
_CITATION = re.compile(r"\[[^\[\]\n]{1,20}\](?:\([^()\n]{0,40}\))?")
_GAP = re.compile(r"\s+")
_NEXT_START = re.compile(r"[\"'\u201c\u2018(\[\u00ab*_#>-]*[A-Z0-9\u00c0-\u024f\u0370-\u1fff\u3000-\uffff]")
_BLOCK_BREAK = re.compile(r"\n[ \t]*\n\s*|\n(?=[ \t]*(?:[-*+]\s|\d{1,3}[.)]\s|#{1,6}\s|>\s))")
_HEADING_LINE = re.compile(r"^[ \t]*#{1,6}\s.*$", re.MULTILINE)
# Only at the start of a word: searching for the last word must not retry inside it.
_WORD_BEFORE = re.compile(r"(?<![\w.\-])([\w.\-]+)$")

# Where a sentence can end inside a text: whitespace, then a plausible sentence start.
_SPACE_THEN_START = re.compile(r"\s" + _NEXT_START.pattern)


def _skip(pattern: re.Pattern[str], text: str, position: int) -> int:
    """Where ``pattern``'s match at ``position`` ends (``position`` when it does not match)."""
    match = pattern.match(text, position)
    return match.end() if match else position


class SentenceSplitter:
    """Splits text into sentence `Span`s with exact character offsets.

    Args:
        abbreviations: lower-case words (no final period) that do not end a
            sentence; `EXTENDED_ABBREVIATIONS` is a longer list.
        strict: also split at every line break and at semicolons.

    Example:
        >>> [s.text for s in SentenceSplitter().split("Dr. Who won No. 5 in the U.S. in 2.5 s. Then he left.")]
        ['Dr. Who won No. 5 in the U.S. in 2.5 s.', 'Then he left.']
    """

    # Read-only once built: one splitter (`DEFAULT_SPLITTER`) serves every caller.
    __slots__ = ("_abbreviations", "_strict")

    def __init__(self, *, abbreviations: Iterable[str] = DEFAULT_ABBREVIATIONS, strict: bool = False) -> None:
        self._abbreviations = frozenset(a.lower().rstrip(".") for a in abbreviations)
        self._strict = strict

    @property
    def abbreviations(self) -> frozenset[str]:
        """The lower-case words (no final period) that do not end a sentence."""
        return self._abbreviations

    @property
    def strict(self) -> bool:
        """Whether every line break and semicolon also ends a sentence."""
        return self._strict

    def split(self, text: str) -> list[Span]:
        """The sentences of ``text``, in order, with offsets.

        Example:
            >>> [(s.start, s.text) for s in SentenceSplitter().split("# Title\\n\\nA b[1](id=2). C d!")]
            [(0, '# Title'), (9, 'A b[1](id=2).'), (23, 'C d!')]
        """
        cuts = {0, len(text)}
        # Block breaks start at a line break, headings hold a "#": most sentences have neither.
        if "\n" in text:
            for block in _BLOCK_BREAK.finditer(text):
                cuts.update((block.start(), block.end()))
        if "#" in text:
            for heading in _HEADING_LINE.finditer(text):
                cuts.update((heading.start(), heading.end()))
        if self.strict:
            cuts.update(m.end() for m in re.finditer(r"\n|;", text))
        cuts.update(self._sentence_ends(text))
        if not text.isascii():
            for wide in _WIDE_END.finditer(text):
                end = wide.end()
                # Citation markers after the stop stay with its sentence ("\u3002[1] ..."), as after a period.
                while (citation := _CITATION.match(text, end)) is not None:
                    end = citation.end()
                cuts.add(end)
        spans = []
        ordered = sorted(cuts)
        for start, stop in itertools.pairwise(ordered):
            while start < stop and text[start].isspace():
                start += 1
            while stop > start and text[stop - 1].isspace():
                stop -= 1
            if start < stop:
                spans.append(Span(start=start, end=stop, text=text[start:stop]))
        return spans

    def _sentence_ends(self, text: str) -> Iterator[int]:
        """Where the whitespace after each sentence-ending punctuation begins.

        Each candidate is a run of stop characters; its tail (closers, markers,
        closers) must reach whitespace. Candidates are read left to right and
        never overlap, so each character is read a bounded number of times: a
        chain of markers is followed once (``chains`` remembers where it ends),
        and the word before a period is searched for only back to the previous
        candidate, whose whitespace no word crosses.
        """
        chains: dict[int, int] = {}
        tails: dict[int, int | None] = {}
        position = previous = 0
        # Only a whole run of stop characters can end a sentence: a shorter one is followed by a stop character.
        while (found := _STOP_RUN.search(text, position)) is not None:
            stop_start, stop_end = found.span()
            gap = self._tail_end(text, stop_end, chains, tails)
            if gap is None:
                position = stop_end
                continue
            after = _skip(_GAP, text, gap)
            if self._ends_sentence(text, text[stop_start:stop_end], stop_start, after, previous):
                yield gap
            position = previous = after

    @staticmethod
    def _tail_end(text: str, start: int, chains: dict[int, int], tails: dict[int, int | None]) -> int | None:
        """Where whitespace follows the closers and markers from ``start`` (None if it does not)."""
        if start >= len(text):
            return None
        # What follows a period is most often a letter or digit (no tail: "U.S.") or whitespace (an empty one).
        following = text[start]
        if following.isalnum():
            return None
        if following.isspace():
            return start
        position = _skip(_CLOSER_RUN, text, start)
        path = []
        while position not in chains and (citation := _CITATION.match(text, position)) is not None:
            path.append(position)
            position = citation.end()
        position = chains.get(position, position)
        for step in path:
            chains[step] = position
        if position not in tails:
            closed = _skip(_CLOSER_RUN, text, position)
            tails[position] = closed if _GAP.match(text, closed) else None
        return tails[position]

    def _ends_sentence(self, text: str, stop: str, stop_start: int, after: int, floor: int) -> bool:
        if after >= len(text):
            return True
        start = _NEXT_START.match(text, after)
        # A letter that starts a sentence is no lower-case one, in any script (Russian "t. e." and Greek "p.ch." too).
        if start is None or text[start.end() - 1].islower():
            return False
        if stop in ("...", "\u2026") and text[after].islower():
            return False
        if stop != ".":
            return True
        word = _WORD_BEFORE.search(text, floor, stop_start)
        if word is None:
            return True
        token = word[1].lower().rstrip(".")
        if token in self.abbreviations or token.split("-")[-1] in self.abbreviations:
            return False
        # A single capital is an initial (J. R. R. Tolkien).
        return not (len(token) == 1 and word[1][0].isupper())


DEFAULT_SPLITTER: Final = SentenceSplitter()
"""The splitter `split_sentences` uses: one for every caller (building one reads its abbreviations)."""
_STRICT_SPLITTER: Final = SentenceSplitter(strict=True)


def split_sentences(text: str, *, strict: bool = False) -> list[Span]:
    """The sentences of ``text`` with the default splitter (`DEFAULT_SPLITTER`; with ``strict``, its strict twin).

    Example:
        >>> [s.text for s in split_sentences("It costs $3.50, e.g. at noon... or later. Fine.")]
        ['It costs $3.50, e.g. at noon... or later.', 'Fine.']
    """
    return (_STRICT_SPLITTER if strict else DEFAULT_SPLITTER).split(text)


@functools.lru_cache(maxsize=256)
def default_sentences(text: str) -> tuple[Span, ...]:
    """`split_sentences` of ``text``, kept: the documents a thread's answers cite are split once, not per answer.

    Read-only (a tuple of frozen spans); 256 texts, forgotten with the lexical
    scorer's caches (`LexicalSupport.clear_caches`).

    Example:
        >>> [s.text for s in default_sentences("Rome is old. Lyon has silk.")]
        ['Rome is old.', 'Lyon has silk.']
    """
    return tuple(DEFAULT_SPLITTER.split(text))


def surely_at_most(text: str, sentences: int) -> bool:
    """Whether a splitter that is not strict makes at most ``sentences`` sentences of ``text`` (without splitting it).

    A cheap test that may answer no when it does. Such a splitter cuts only
    at a block break or a heading (both need a line break or a "#"), or
    where the tail of a run of stop characters reaches whitespace followed
    by a plausible sentence start: each such cut is the start of its own
    match of that whitespace and start, after the first stop character
    (the matches of two cuts cannot overlap, as no whitespace is a start
    or an opening mark). Fewer such matches than ``sentences``: at most
    that many sentences. One linear search.

    Example:
        >>> surely_at_most("Paris has been the capital since 987.", 1), surely_at_most("Hi. Bye.", 1)
        (True, False)
        >>> surely_at_most("Hi. Bye.", 2), surely_at_most("Hi. Bye. Now.", 2)
        (True, False)
    """
    if sentences < 1 or "\n" in text or "#" in text or (not text.isascii() and _WIDE_END.search(text)):
        return False
    stop = _STOP_RUN.search(text)
    if stop is None:
        return True
    # Fewer matches than ``sentences``: none left once the first ``sentences - 1`` are skipped.
    matches = _SPACE_THEN_START.finditer(text, stop.end())
    return next(itertools.islice(matches, sentences - 1, None), None) is None


def window_indices(count: int, size: int, stride: int) -> list[tuple[int, int]]:
    """(first, last) indices of windows of ``size`` of ``count`` spans, a new one every ``stride``.

    The last window always ends at the last span; fewer spans than ``size``
    make one window of them all. A ``stride`` larger than ``size`` leaves
    the spans between windows out.

    Raises:
        ValueError: ``size`` or ``stride`` below 1.

    Example:
        >>> window_indices(5, 2, 2), window_indices(2, 3, 1)
        ([(0, 1), (2, 3), (3, 4)], [(0, 1)])
    """
    if size < 1 or stride < 1:
        msg = f"window size and stride must be at least 1, got size={size!r} and stride={stride!r}"
        raise ValueError(msg)
    if count < 1:
        return []
    last_start = max(count - size, 0)
    starts = list(range(0, last_start + 1, stride))
    if starts[-1] != last_start:
        starts.append(last_start)
    return [(i, min(i + size, count) - 1) for i in starts]


def sentence_windows(spans: Sequence[Span], size: int, stride: int) -> list[tuple[int, int]]:
    """(start, end) character offsets of windows of ``size`` spans every ``stride``.

    Example:
        >>> sentence_windows(split_sentences("A b. C d. E f."), 2, 1)
        [(0, 9), (5, 14)]
    """
    return [(spans[first].start, spans[last].end) for first, last in window_indices(len(spans), size, stride)]
