"""The citation marker parser: a pure, incremental state machine.

Theory of operation
-------------------
A model streams its answer as text chunks cut at arbitrary characters. The
parser turns that stream into events: `Text` (characters to pass on as they
are) and `Marker` (a recognised citation such as ``[1](id=3, 5)``). It never
does I/O and imports neither LangChain nor Jinja2; the caller pushes text with
`feed(text)` and says the stream is over with `close()`.

The parser is in exactly one of three modes:

``PROSE``
    Ordinary text. Only an *opener* character (``[`` by default, ``【`` for
    the dagger syntax) can begin a marker, and only a backtick or tilde can
    change the mode. Everything else is released in the same `feed` call it
    arrived in. At an opener the parser tries every enabled syntax with a
    partial regular-expression match:

    * a full match becomes a `Marker` event;
    * a match that runs into the end of the buffered text *could* still become
      a marker, so that tail is held back -- but never more than
      ``max_holdback`` characters; past the bound the opener is released as
      text and scanning resumes one character later. A marker longer than the
      bound is therefore text even when it arrives whole, so the result never
      depends on the chunking;
    * no match: the opener is plain text.

``INLINE_CODE``
    Entered at a run of *n* backticks that does not open a fence; left at the
    next run of exactly *n* backticks, or at a blank line (a code span cannot
    cross a paragraph). Nothing inside is rewritten.

``FENCE``
    Entered at a line that starts (after at most three spaces) with three or
    more backticks or tildes; left at a line that starts with a run of the
    same character at least as long. Nothing inside is rewritten.

Backtick and tilde runs are released at once. When a run touches the end of
a chunk its *meaning* (how long it is) is settled when the next chunk arrives,
so a fence split as ``"``" + "`python"`` is still seen as a fence.

End of input is explicit: `close()` settles whatever is held. A held tail that
never completed a marker is released verbatim, so every character fed in comes
out exactly once, in order, whatever the chunking.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Final

import regex

__all__ = [
    "BRACKET_SYNTAX",
    "DAGGER_SYNTAX",
    "DEFAULT_MAX_HOLDBACK",
    "ID_SYNTAX",
    "CitationParser",
    "Event",
    "Marker",
    "MarkerSyntax",
    "Text",
]

DEFAULT_MAX_HOLDBACK: Final = 64
"""Characters a partial marker may hold back before it is given up as text."""

# A marker may list up to this many ids once ranges are expanded; a longer
# range is reported as malformed instead of allocating a huge tuple.
_MAX_RANGE_LENGTH: Final = 256


@dataclass(frozen=True, slots=True, kw_only=True)
class Text:
    """Characters to pass on unchanged.

    Example:
        >>> Text(text="Paris is in France")
        Text(text='Paris is in France')
    """

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Marker:
    """A recognised citation marker.

    ``ids`` are the document ids it names (1-based, ranges expanded, in the
    order written, not yet checked against the documents); ``malformed`` holds
    the items of the id list that are not ids at all (an empty ``id=``, a
    reversed or huge range).

    Example:
        >>> Marker(raw="[1](id=3-4)", ids=(3, 4), syntax="id")
        Marker(raw='[1](id=3-4)', ids=(3, 4), malformed=(), syntax='id')
    """

    raw: str
    ids: tuple[int, ...]
    malformed: tuple[str, ...] = ()
    syntax: str = "id"


Event = Text | Marker


@dataclass(frozen=True, slots=True, kw_only=True)
class MarkerSyntax:
    """One way of writing a citation marker.

    ``pattern`` must match a whole marker at the opener and capture the id list
    in a group named ``ids`` (items separated by commas, ``a-b`` for a range).
    ``needs_next_char`` says the marker is only complete once the character
    after it is known (used by the bare ``[k]`` syntax, which must not be the
    start of a Markdown link ``[k](...)``). ``after_word_char`` says the
    marker may follow a letter or digit (``False`` keeps ``list[0]`` as text).

    Example:
        >>> ID_SYNTAX.name, ID_SYNTAX.opener
        ('id', '[')
    """

    name: str
    opener: str
    pattern: regex.Pattern[str] = field(repr=False)
    needs_next_char: bool = False
    after_word_char: bool = True


_SP = r"[ \t]*"
ID_SYNTAX: Final = MarkerSyntax(
    name="id",
    opener="[",
    pattern=regex.compile(rf"\[{_SP}(?:[-+]?\d+|NUMBER){_SP}\]\({_SP}id{_SP}={_SP}(?P<ids>[-\d, \t]*)\)"),
)
"""``[n](id=k)``: the default, as asked for by `FORMAT_REFERENCES`."""

BRACKET_SYNTAX: Final = MarkerSyntax(
    name="bracket",
    opener="[",
    pattern=regex.compile(rf"\[{_SP}(?P<ids>\d+(?:{_SP}[-,]{_SP}\d+)*){_SP}\](?!\()"),
    needs_next_char=True,
    after_word_char=False,
)
"""Bare ``[k]`` or ``[k, m]`` (not a Markdown link, not ``list[0]``)."""

DAGGER_SYNTAX: Final = MarkerSyntax(
    name="dagger",
    opener="【",
    pattern=regex.compile(r"【(?P<ids>\d+)(?::\d+)?†[^】\n]{0,40}】"),
)
"""``【k†source】`` and ``【k:m†source】`` as some assistants write them."""


class _Mode(enum.Enum):
    PROSE = "prose"
    INLINE_CODE = "inline code"
    FENCE = "fence"


class _MayComplete(enum.Enum):
    MAY_COMPLETE = "may complete"


_MAY_COMPLETE: Final = _MayComplete.MAY_COMPLETE

_ID_ITEM = regex.compile(rf"{_SP}(?P<a>-?\d+)(?:{_SP}-{_SP}(?P<b>-?\d+))?{_SP}")


def parse_ids(id_list: str) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Split a marker's id list into ids and malformed items.

    Example:
        >>> parse_ids("3, 5-6,, x")
        ((3, 5, 6), ('', 'x'))
    """
    if id_list.isdigit():
        return (int(id_list),), ()
    items = id_list.split(",")
    if all(item.strip(" \t").isdigit() for item in items):
        return tuple(int(item) for item in items), ()
    ids: list[int] = []
    malformed: list[str] = []
    for item in items:
        match = _ID_ITEM.fullmatch(item)
        if match is None:
            malformed.append(item.strip())
            continue
        first = int(match["a"])
        last = first if match["b"] is None else int(match["b"])
        if not 0 <= last - first < _MAX_RANGE_LENGTH:
            malformed.append(item.strip())
            continue
        ids.extend(range(first, last + 1))
    return tuple(ids), tuple(malformed)


class CitationParser:
    """Turns a stream of text chunks into `Text` and `Marker` events.

    Args:
        syntaxes: the marker syntaxes to recognise (default: ``[n](id=k)``).
        max_holdback: the most characters a partial marker may hold back.

    Example:
        >>> parser = CitationParser()
        >>> parser.feed("Paris[1](id")
        [Text(text='Paris')]
        >>> parser.feed("=2).")
        [Marker(raw='[1](id=2)', ids=(2,), malformed=(), syntax='id'), Text(text='.')]
        >>> parser.close()
        []
    """

    __slots__ = (
        "_closed",
        "_code_delimiter",
        "_full_patterns",
        "_held",
        "_idle",
        "_last_char",
        "_line_spaces",
        "_max_holdback",
        "_mode",
        "_openers",
        "_run_at_line_start",
        "_run_char",
        "_run_length",
        "_special",
        "_syntaxes",
    )

    def __init__(
        self,
        syntaxes: tuple[MarkerSyntax, ...] = (ID_SYNTAX,),
        *,
        max_holdback: int = DEFAULT_MAX_HOLDBACK,
    ) -> None:
        if not syntaxes:
            msg = "syntaxes must name at least one MarkerSyntax"
            raise ValueError(msg)
        if max_holdback < 1:
            msg = f"max_holdback must be a positive number of characters, got {max_holdback!r}"
            raise ValueError(msg)
        self._syntaxes = syntaxes
        # The stdlib engine settles full matches fastest; the `regex` engine is
        # asked only whether a tail at the end of the text may still complete.
        self._full_patterns = tuple(re.compile(s.pattern.pattern) for s in syntaxes)
        self._openers = frozenset(s.opener for s in syntaxes)
        specials = "".join(sorted(self._openers | {"`", "~"}))
        # The stdlib engine is the faster one for a plain character class.
        self._special = re.compile("[" + re.escape(specials) + "]")
        self._max_holdback = max_holdback
        self._mode = _Mode.PROSE
        self._held = ""
        self._closed = False
        # Spaces since the last newline while the line holds nothing else, or
        # None once it has other content: a fence may open only where this is
        # 0..3, and a newline seen while it is not None ends a blank line.
        self._line_spaces: int | None = 0
        self._last_char = ""
        self._code_delimiter = ""
        # A backtick/tilde run that touched the end of the last chunk and may
        # continue in the next one.
        self._run_char = ""
        self._run_length = 0
        self._run_at_line_start = False
        # True while no text is held, no run is open and the mode is prose:
        # then text without a special character passes straight through.
        self._idle = True

    @property
    def held(self) -> str:
        """The text held back because it may still become a marker.

        Example:
            >>> parser = CitationParser()
            >>> _ = parser.feed("See [1](id=")
            >>> parser.held
            '[1](id='
        """
        return self._held

    @property
    def mode(self) -> str:
        """``"prose"``, ``"inline code"`` or ``"fence"``.

        Example:
            >>> parser = CitationParser()
            >>> _ = parser.feed("```python\\n")
            >>> parser.mode
            'fence'
        """
        return self._mode.value

    def feed(self, text: str) -> list[Event]:
        """Push the next chunk of the answer and return the events it completes.

        Example:
            >>> CitationParser().feed("no markers here")
            [Text(text='no markers here')]
        """
        if self._closed:
            msg = "feed() called after close(): the parser has already seen the end of the stream"
            raise RuntimeError(msg)
        if self.pass_through(text):
            return [Text(text=text)] if text else []
        events: list[Event] = []
        buf, self._held = self._held + text, ""
        self._process(buf, events, final=False)
        return events

    def pass_through(self, text: str) -> bool:
        """Take ``text`` as plain text if none of it can matter; say whether it did.

        The fast path for callers that want no event objects: when it returns
        True the text counts as released, unchanged; when False nothing was
        taken and the text must go to `feed`.

        Example:
            >>> parser = CitationParser()
            >>> parser.pass_through("plain words"), parser.pass_through("a [1](id=2)")
            (True, False)
        """
        if not self._idle or self._closed or self._special.search(text) is not None:
            return False
        if text:
            self._note_text(text)
        return True

    def close(self) -> list[Event]:
        """Say the stream is over; release or complete whatever is held.

        Example:
            >>> parser = CitationParser()
            >>> parser.feed("an unclosed [1](id=")
            [Text(text='an unclosed ')]
            >>> parser.close()
            [Text(text='[1](id=')]
        """
        if self._closed:
            return []
        events: list[Event] = []
        held, self._held = self._held, ""
        if held:
            self._process(held, events, final=True)
        self._closed = True
        self._run_char = ""
        self._idle = False
        return events

    # -- internals ---------------------------------------------------------

    def _note_text(self, text: str) -> None:
        """Track line starts (for fences) and the last character released."""
        newline = text.rfind("\n")
        if newline == -1:
            if self._line_spaces is not None:
                self._line_spaces = None if text.strip(" \t") else self._line_spaces + len(text)
        else:
            tail = text[newline + 1 :]
            self._line_spaces = None if tail.strip(" \t") else len(tail)
        self._last_char = text[-1]

    def _process(self, buf: str, events: list[Event], *, final: bool) -> None:
        pieces: list[str] = []
        pos = 0
        end = len(buf)
        if self._run_char:
            pos = self._continue_run(buf, pieces)
        while pos < end:
            if self._mode is _Mode.PROSE:
                pos = self._scan_prose(buf, pos, pieces, events, final=final)
            elif self._mode is _Mode.INLINE_CODE:
                pos = self._scan_inline_code(buf, pos, pieces)
            else:
                pos = self._scan_fence(buf, pos, pieces)
        if pieces:
            events.append(Text(text="".join(pieces)))
        self._idle = not self._held and not self._run_char and self._mode is _Mode.PROSE

    def _release(self, text: str, pieces: list[str]) -> None:
        if text:
            pieces.append(text)
            self._note_text(text)

    def _run_length_at(self, buf: str, pos: int) -> int:
        char = buf[pos]
        end = pos
        while end < len(buf) and buf[end] == char:
            end += 1
        return end - pos

    def _start_run(self, buf: str, pos: int, pieces: list[str]) -> int:
        """Release the backtick/tilde run at ``pos``; settle it unless it may go on."""
        at_line_start = self._line_spaces is not None and self._line_spaces <= 3
        length = self._run_length_at(buf, pos)
        self._release(buf[pos : pos + length], pieces)
        if pos + length == len(buf):
            self._run_char = buf[pos]
            self._run_length = length
            self._run_at_line_start = at_line_start
        else:
            self._settle_run(buf[pos], length, at_line_start=at_line_start)
        return pos + length

    def _continue_run(self, buf: str, pieces: list[str]) -> int:
        """Extend the run left open by the previous chunk, then settle it."""
        length = 0
        while length < len(buf) and buf[length] == self._run_char:
            length += 1
        self._release(buf[:length], pieces)
        self._run_length += length
        if length == len(buf):
            return length
        char, total, at_line_start = self._run_char, self._run_length, self._run_at_line_start
        self._run_char = ""
        self._settle_run(char, total, at_line_start=at_line_start)
        return length

    def _settle_run(self, char: str, length: int, *, at_line_start: bool) -> None:
        """Apply the meaning of a complete backtick/tilde run to the mode."""
        if self._mode is _Mode.PROSE:
            if at_line_start and length >= 3:
                self._mode = _Mode.FENCE
                self._code_delimiter = char * length
            elif char == "`":
                self._mode = _Mode.INLINE_CODE
                self._code_delimiter = char * length
        elif self._mode is _Mode.INLINE_CODE:
            if char == "`" and length == len(self._code_delimiter):
                self._mode = _Mode.PROSE
        elif at_line_start and char == self._code_delimiter[0] and length >= len(self._code_delimiter):
            self._mode = _Mode.PROSE

    def _scan_prose(self, buf: str, pos: int, pieces: list[str], events: list[Event], *, final: bool) -> int:
        found = self._special.search(buf, pos)
        if found is None:
            self._release(buf[pos:], pieces)
            return len(buf)
        start = found.start()
        char = buf[start]
        if char not in self._openers:
            self._release(buf[pos:start], pieces)
            if char == "`" or (self._line_spaces is not None and self._line_spaces <= 3):
                return self._start_run(buf, start, pieces)
            self._release(char, pieces)
            return start + 1
        if start > pos:
            # Text before an opener: whatever the opener becomes, the line
            # then has content, so the line state needs no update here.
            pieces.append(buf[pos:start])
            self._last_char = buf[start - 1]
        marker = self._match_marker(buf, start, final=final)
        if marker is _MAY_COMPLETE:
            if start > pos:
                self._note_text(pieces[-1])
            self._held = buf[start:]
            return len(buf)
        if marker is None:
            pieces.append(char)
            self._line_spaces = None
            self._last_char = char
            return start + 1
        if pieces:
            events.append(Text(text="".join(pieces)))
            pieces.clear()
        events.append(marker)
        self._line_spaces = None
        self._last_char = marker.raw[-1]
        return start + len(marker.raw)

    def _match_marker(self, buf: str, start: int, *, final: bool) -> Marker | _MayComplete | None:
        """The `Marker` at ``start``; `_MAY_COMPLETE` if one may still complete."""
        may_complete = False
        near_end = not final and len(buf) - start <= self._max_holdback
        for syntax, full_pattern in zip(self._syntaxes, self._full_patterns, strict=True):
            if buf[start] != syntax.opener:
                continue
            if not syntax.after_word_char and self._last_char.isalnum():
                continue
            match = full_pattern.match(buf, start)
            if match is not None:
                end = match.end()
                if syntax.needs_next_char and end == len(buf) and not final:
                    may_complete = may_complete or near_end
                    continue
                if end - start > self._max_holdback:
                    # Longer than could ever be held: text, whatever the chunking.
                    continue
                ids, malformed = parse_ids(match["ids"])
                return Marker(raw=match[0], ids=ids, malformed=malformed, syntax=syntax.name)
            if near_end and not may_complete:
                partial = syntax.pattern.match(buf, start, partial=True)
                may_complete = partial is not None and partial.partial
        return _MAY_COMPLETE if may_complete else None

    def _scan_inline_code(self, buf: str, pos: int, pieces: list[str]) -> int:
        end = len(buf)
        while pos < end:
            backtick = buf.find("`", pos)
            newline = buf.find("\n", pos)
            if newline != -1 and (backtick == -1 or newline < backtick):
                blank_line = self._line_spaces is not None
                self._release(buf[pos : newline + 1], pieces)
                pos = newline + 1
                if blank_line:
                    # A code span cannot cross a paragraph: the opening
                    # backticks were literal after all.
                    self._mode = _Mode.PROSE
                    return pos
                continue
            if backtick == -1:
                self._release(buf[pos:], pieces)
                return end
            self._release(buf[pos:backtick], pieces)
            return self._start_run(buf, backtick, pieces)
        return pos

    def _scan_fence(self, buf: str, pos: int, pieces: list[str]) -> int:
        delimiter = self._code_delimiter[0]
        end = len(buf)
        while pos < end:
            if self._line_spaces is not None and self._line_spaces <= 3:
                char = buf[pos]
                if char in " \t":
                    self._release(char, pieces)
                    pos += 1
                    continue
                if char == delimiter:
                    return self._start_run(buf, pos, pieces)
            newline = buf.find("\n", pos)
            if newline == -1:
                self._release(buf[pos:], pieces)
                return end
            self._release(buf[pos : newline + 1], pieces)
            pos = newline + 1
        return pos
