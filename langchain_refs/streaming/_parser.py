"""The citation marker parser: a pure, incremental state machine.

Theory of operation
-------------------
A model streams its answer as text chunks cut at arbitrary characters. The
parser turns that stream into events: `Text` (characters to pass on as they
are) and `Marker` (a recognised citation such as ``[1](id=3, 5)``). It never
does I/O and imports neither LangChain nor Jinja2; the caller pushes text with
`feed(text)` and says the stream is over with `close()`.

The rules below are stated on the whole answer. The parser applies them as
the text arrives and gives the same events however the answer is chunked; it
holds text back only where a rule needs to see characters that have not
arrived yet, and never more than ``max_holdback`` characters (*L* below,
default 64). A line ends at ``\\n``, ``\\r\\n`` or ``\\r``.

States
    The parser is in one of four states (``_Mode``): ``prose``, ordinary
    text, where markers are found, and only there; ``open span``, after a
    run of backticks whose meaning is not settled yet; ``code span``, a span
    settled as code; ``fence``, a fenced code block. Nothing in code is
    rewritten. (`CitationParser.mode` names three: both span states are
    ``inline code``.) The state changes only through ``_TRANSITIONS``, this
    table, by `_take`; the rules below say when each event happens
    (tests/unit_tests/test_parser.py checks that the case table takes every
    row and no other)::

        state       event          next state   the event
        ----------  -------------  -----------  --------------------------------------------
        prose       FENCE_OPENER   fence        3+ backticks or tildes at a line start
        prose       BACKTICK_RUN   open span    any other run of backticks
        open span   CLOSING_RUN    prose        a run as long as the opening one, within L
        open span   STRAY          prose        the line or the answer ends within L: the
                                                opening run was text, read on after it
        open span   LONG_LINE      code span    the line goes on past L
        code span   CLOSING_RUN    prose        a run as long as the opening one
        code span   LINE_END       prose        the line ends (the line end is prose)
        fence       FENCE_CLOSER   prose        a run of the fence's character at a line
                                                start, at least as long as the opening one

    A second, smaller machine spans chunk ends: a run of backticks or
    tildes that reaches the end of a chunk may go on in the next, so it is
    only counted (``_run_char``, ``_run_length``; none open: ``_run_char``
    is empty), with where it stands (``_RunPlace``). The next chunk ends it,
    and its place and full length pick the event::

        place              a chunk ended in a run ...     the run, once it ends, is
        -----------------  -----------------------------  ----------------------------------
        LINE_START         in prose, at a line start      FENCE_OPENER if 3+ long, else
                                                          BACKTICK_RUN (backticks) or text
        MID_LINE           in prose, elsewhere            BACKTICK_RUN
        CODE_SPAN          in a code span                 CLOSING_RUN if as long as the
                                                          opening run, else code
        FENCE_LINE_START   at a line start in a fence     FENCE_CLOSER if long enough,
                                                          else fence content

    The rest of the state: ``_pending`` (held text, a possible marker or an
    open span's content), ``_line_spaces`` (fences open and close only at a
    line start), the open span's and fence's opening runs, ``_closed``.

Fences
    A line that starts (after any spaces, tabs and blockquote marks ``>``: a
    fence inside a list item or a quotation is one too) with three or more
    backticks or tildes opens a fence; the rest of that line is in the fence.
    The fence closes at a line that starts (same rule) with a run of the same
    character at least as long; the rest of that line is prose.

Inline code: where a code span ends
    In prose, a run of *n* backticks that opens no fence opens a code span,
    which ends at the next run of exactly *n* backticks **on the same line**:
    in a streamed chat answer a code span never crosses a line end. With no
    such run before the line ends:

    * if the line (or the answer) ends within *L* characters of the span's
      first backtick, the backticks were an ordinary character after all,
      and the text after them is read as prose again -- a stray backtick
      costs nothing;
    * otherwise the span is code up to the end of the line.

    Why not wait for the whole line: a streaming parser cannot look ahead, so
    a marker after an unclosed backtick is held back (from its ``[``) until
    the span is settled, and that wait must stay within *L*. Past it the
    parser sides with code: a real code span longer than *L* (a long command,
    a URL) is then read right, and a stray backtick costs at most the rest of
    its own line. The next line starts in prose, so a fence there is seen.

Markers
    At an opener (``[``, or ``【`` for the dagger syntax) every enabled syntax
    is tried. A complete match of at most *L* characters is a `Marker`; a
    longer one is text, whether or not it arrived in one chunk. A match cut
    off by the end of the text received so far is held back (at most *L*
    characters); ``close()`` releases it verbatim if it never completes.

Malformed markers: the model's words are never deleted
    An id list holds only ASCII digits, ``-``, ``,``, spaces and tabs (else
    the marker does not match at all). It is items separated by commas; an
    item is an id (``3``, ``-1``), a range (``3-5``) or empty. An id has at most 9 digits (leading zeros
    aside) and a range names at most 32 ids (``_MAX_RANGE_IDS``), so no marker
    costs more than a few ids per character. Anything else -- ``1 2``,
    ``1-2-3``, ``-``, ``9-7``, ``1-300``, a 5,000-digit number -- is a
    malformed item. A marker with at least one id cites its ids and reports
    its malformed items; one with no id and a non-empty malformed item is not
    a marker at all and stays text. An empty list (``id=``) is a marker with
    no id, which the session drops and reports, like an id that names no
    document (0, negative, past the end).

Holdback and cost
    Held text always starts at an opener and is at most *L* characters. The
    text since the last settled point (a possible marker, or the content of
    an unsettled span: at most *L* characters) is read again when the next
    chunk arrives, so a `feed` costs O(len(chunk) + L); a backtick or tilde
    run is counted as it arrives, never re-read. Over the whole answer the
    work is linear in its length: every search runs forward from where the
    last one stopped, and a match attempt looks at no more than *L* + 1
    characters. A run of backticks settled as ordinary has the rest of its
    line (under *L* characters) read again; such runs on one line all differ
    in length, so no character is read more than about sqrt(2 *L*) times.

End of input is explicit: `close()` settles whatever is held, so every
character fed in comes out exactly once, in order, whatever the chunking.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from types import FunctionType
from typing import Final, Literal

import regex

from langchain_refs.streaming._protocols import checked_whole_number
from langchain_refs.streaming._slots import slot_setters

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
    "built_in_syntax",
    "checked_max_holdback",
    "marker_syntaxes",
]

DEFAULT_MAX_HOLDBACK: Final = 64
"""Characters a partial marker may hold back before it is given up as text."""

# A range names at most this many ids: a marker's cost stays a small multiple
# of its length, and no realistic prompt lists more documents for one claim.
_MAX_RANGE_IDS: Final = 32

# No prompt holds a billion documents; a longer number is malformed, which
# also keeps int() far from Python's 4,300-digit conversion limit.
_MAX_ID_DIGITS: Final = 9


def _native() -> bool:
    """Whether this module runs compiled (mypyc): its functions are then native, not Python functions."""
    return not isinstance(_native, FunctionType)


# The events' own __init__ (below): compiled, it stores each field straight into its slot, past the frozen
# __setattr__ that Python callers meet (mypyc would otherwise run dataclasses' generated __init__, which
# sets each field through object.__setattr__ in the interpreter: 20 times slower); in pure Python it sets
# them through each slot's own setter (`slot_setters`), past the frozen __setattr__ as that generated __init__
# sets them, for half the cost. Either way the instances are frozen (tests/unit_tests/test_compiled.py).
_NATIVE: Final = _native()


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Text:
    """Characters to pass on unchanged.

    Example:
        >>> Text(text="Paris is in France")
        Text(text='Paris is in France')
    """

    text: str

    def __init__(self, *, text: str) -> None:
        if _NATIVE:
            self.text = text  # type: ignore[misc]
        else:
            # The slot's own setter: past the frozen __setattr__, as object.__setattr__, for half its cost.
            _TEXT_SETTER[0](self, text)


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Marker:
    """A recognised citation marker.

    ``ids`` are the document ids it names (ranges expanded, in the order
    written, not yet checked against the documents); ``malformed`` holds the
    items of the id list that name no id: an empty item, or one that is no id
    or range of at most 32 ids (see the module's theory of operation). A
    marker whose ``ids`` are empty has only empty items.

    Example:
        >>> Marker(raw="[1](id=3-4)", ids=(3, 4), syntax="id")
        Marker(raw='[1](id=3-4)', ids=(3, 4), malformed=(), syntax='id')
    """

    raw: str
    ids: tuple[int, ...]
    malformed: tuple[str, ...] = ()
    syntax: str = "id"

    def __init__(self, *, raw: str, ids: tuple[int, ...], malformed: tuple[str, ...] = (), syntax: str = "id") -> None:
        if _NATIVE:
            self.raw = raw  # type: ignore[misc]
            self.ids = ids  # type: ignore[misc]
            self.malformed = malformed  # type: ignore[misc]
            self.syntax = syntax  # type: ignore[misc]
        else:
            set_raw, set_ids, set_malformed, set_syntax = _MARKER_SETTERS
            set_raw(self, raw)
            set_ids(self, ids)
            set_malformed(self, malformed)
            set_syntax(self, syntax)


_TEXT_SETTER: Final = () if _NATIVE else slot_setters(Text)
_MARKER_SETTERS: Final = () if _NATIVE else slot_setters(Marker)


Event = Text | Marker


@dataclass(frozen=True, slots=True, kw_only=True)
class MarkerSyntax:
    """One way of writing a citation marker.

    ``pattern`` must match a whole marker at the opener and capture the id list
    in a group named ``ids`` (items separated by commas, ``a-b`` for a range).
    ``needs_next_char`` says the marker is only complete once the character
    after it is known (used by the bare ``[k]`` syntax, which must not be the
    start of a Markdown link ``[k](...)``); a pattern whose match could go
    on (one ending in ``\\d+``) needs it too, or a marker arriving in pieces
    is read shorter than whole. ``pattern`` is compiled with the `regex`
    module (which can tell a marker still arriving) and must also compile
    with `re`; ``opener`` is one character. ``after_word_char`` says the
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
# The id list is matched loosely (one character class, so a failed match costs
# one pass) and judged item by item in `parse_ids`.
ID_SYNTAX: Final = MarkerSyntax(
    name="id",
    opener="[",
    pattern=regex.compile(rf"\[{_SP}(?:[-+]?[0-9]+|NUMBER){_SP}\]\({_SP}id{_SP}=(?P<ids>[-0-9, \t]*)\)"),
)
"""``[n](id=k)``: the default, as asked for by `FORMAT_REFERENCES`."""

# Whether held text may still become an ``[n](id=k)`` marker, asked of the
# stdlib engine (faster than a `regex` partial match, and asked for every
# chunk while a marker is held; bench/ measures it): the proper prefixes of ID_SYNTAX's
# pattern, written out. tests/unit_tests/test_hot_path.py checks it against the
# `regex` partial match. An optional group is written ``(?:x|)``, not ``(?:x)?``: the same
# language, but the stdlib engine allocates a context for each group repeat it enters, and none for a branch.
_ID_REST = r"[ \t]*(?:\](?:\((?:[ \t]*(?:i(?:d(?:[ \t]*(?:=[-0-9, \t]*|)|)|)|)|)|)|)"
_ID_PREFIX: Final = re.compile(
    r"\[[ \t]*(?:[-+]?[0-9]+" + _ID_REST + r"|[-+]|N(?:U(?:M(?:B(?:E(?:R" + _ID_REST + r"|)|)|)|)|)|)\Z"
)
_DIGITS: Final = "0123456789"
_ID_LIST_CHARS: Final = "-0123456789, \t"


def _split_id_head(rest: str) -> tuple[str, str]:
    """``rest`` (what follows a marker's "[") without its leading digits, and what is due next.

    After an id that is ``](id=``; with no digits, ``NUMBER](id=``.
    """
    body = rest.lstrip(_DIGITS)
    return body, ("NUMBER](id=" if len(body) == len(rest) else "](id=")


def _reaches_id_list(body: str, head: str) -> bool:
    """Whether ``body`` is ``head`` followed by id-list characters only."""
    return body.startswith(head) and not body[len(head) :].strip(_ID_LIST_CHARS)


def _id_list_start(buf: str, start: int, end: int, *, by_str: bool = _NATIVE) -> int:
    """Where the id list starts if ``buf[start:end]`` is ``[``, an id or ``NUMBER``, ``](id=`` and id-list characters.

    That is the usual form of an ``[n](id=k)`` marker up to its ")" (no sign, no spaces before the id
    list), read with str methods; -1 if it is not (or, unless ``by_str``, without looking: -1 always).
    Compiled, this is cheaper than a regex call; in pure Python the regex alone is the cheaper.
    """
    if not by_str or not buf.startswith("[", start, end):
        return -1
    body, head = _split_id_head(buf[start + 1 : end])
    return end - len(body) + len(head) if _reaches_id_list(body, head) else -1


def _is_id_prefix(text: str, *, by_str: bool = _NATIVE) -> bool:
    """Whether ``text`` is a proper prefix of an ``[n](id=k)`` marker (`_ID_PREFIX` matches it whole).

    ``by_str`` (compiled, the default): its usual forms (``[``, ``[12](i``, ``[NUMBER](id=3, 4``) are read
    with str methods, as `_id_list_start` reads them; the rest is asked of `_ID_PREFIX`.
    """
    if by_str and text.startswith("["):
        body, head = _split_id_head(text[1:])
        if head.startswith(body) or _reaches_id_list(body, head):
            return True
    return _ID_PREFIX.match(text) is not None


# Both questions in one call: a whole marker (ID_SYNTAX's pattern, tried first), else a proper prefix of one
# cut off by the end of the text (the group ``more``). Asked once per chunk while a marker is held.
_ID_MARKER_OR_PREFIX: Final = re.compile(f"(?:{ID_SYNTAX.pattern.pattern})|(?P<more>{_ID_PREFIX.pattern})")

BRACKET_SYNTAX: Final = MarkerSyntax(
    name="bracket",
    opener="[",
    pattern=regex.compile(rf"\[{_SP}(?P<ids>[0-9]+(?:{_SP}[-,]{_SP}[0-9]+)*){_SP}\](?!\()"),
    needs_next_char=True,
    after_word_char=False,
)
"""Bare ``[k]`` or ``[k, m]``: not an inline Markdown link, not right after a letter or digit (``list[0]``).

A reference-style link's ``[k]`` (``[the guide][1]``, and its definition
``[1]: https://...``) is read as a citation: a marker is read from its
opener on, without the text before it. Use this syntax for answers that
write no reference-style links.
"""

DAGGER_SYNTAX: Final = MarkerSyntax(
    name="dagger",
    opener="【",
    pattern=regex.compile(r"【(?P<ids>[0-9]+)(?::[0-9]+)?†[^】\r\n]{0,40}】"),
)
"""``【k†source】`` and ``【k:m†source】`` as some assistants write them."""


_SYNTAXES: Final = {s.name: s for s in (ID_SYNTAX, BRACKET_SYNTAX, DAGGER_SYNTAX)}
"""The built-in syntaxes by name."""

SyntaxName = Literal["id", "bracket", "dagger"]
"""The name of a built-in marker syntax, as the ``syntaxes`` option of every entry point takes it."""


def built_in_syntax(syntax: MarkerSyntax) -> str | None:
    """Which built-in syntax ``syntax`` reads as (``"id"``, ``"bracket"``, ``"dagger"``), by its pattern; else None.

    A copy of a built-in one under another name reads the same markers.

    Example:
        >>> import dataclasses
        >>> built_in_syntax(dataclasses.replace(ID_SYNTAX, name="mine")), built_in_syntax(DAGGER_SYNTAX)
        ('id', 'dagger')
    """
    for built_in in (ID_SYNTAX, BRACKET_SYNTAX, DAGGER_SYNTAX):
        if syntax.pattern.pattern == built_in.pattern.pattern and syntax.pattern.flags == built_in.pattern.flags:
            return built_in.name
    return None


def marker_syntaxes(syntaxes: str | MarkerSyntax | Sequence[str | MarkerSyntax]) -> tuple[MarkerSyntax, ...]:
    """Marker syntaxes from their names (``"id"``, ``"bracket"``, ``"dagger"``) or as given; one alone is one.

    Example:
        >>> [s.name for s in marker_syntaxes(["id", "dagger"])]
        ['id', 'dagger']
        >>> [s.name for s in marker_syntaxes("bracket")]
        ['bracket']
    """
    if isinstance(syntaxes, (str, MarkerSyntax)):
        syntaxes = (syntaxes,)
    if not isinstance(syntaxes, Iterable):
        msg = (
            f"syntaxes must be a marker syntax's name, a MarkerSyntax or a list of them, got {type(syntaxes).__name__}"
        )
        raise TypeError(msg)
    syntaxes = tuple(syntaxes)  # a set or a generator too, read once
    if not syntaxes:
        msg = f"syntaxes must name at least one marker syntax: {sorted(_SYNTAXES)} or a MarkerSyntax"
        raise ValueError(msg)
    resolved = []
    for syntax in syntaxes:
        if isinstance(syntax, MarkerSyntax):
            resolved.append(_checked_syntax(syntax))
        elif syntax in _SYNTAXES:
            resolved.append(_SYNTAXES[syntax])
        else:
            msg = f"unknown marker syntax {syntax!r}; choose from {sorted(_SYNTAXES)} or pass a MarkerSyntax"
            raise ValueError(msg)
    return tuple(resolved)


def _checked_syntax(syntax: MarkerSyntax) -> MarkerSyntax:
    """``syntax``, when the parser can read markers with it (else a ValueError or TypeError naming what is wrong).

    Example:
        >>> _checked_syntax(MarkerSyntax(name="c", opener="{", pattern=regex.compile(r"\\{c:(\\d+)\\}")))
        Traceback (most recent call last):
        ...
        ValueError: MarkerSyntax 'c': the pattern must capture the id list in a group named ids, as (?P<ids>...)
    """
    if _SYNTAXES.get(syntax.name) is syntax:
        # A built-in syntax passes the checks below (a test runs a copy of each through them): taken as it is.
        return syntax
    what = f"MarkerSyntax {syntax.name!r}"
    if not isinstance(syntax.opener, str) or len(syntax.opener) != 1:
        msg = f"{what}: the opener must be the one character a marker starts with, got {syntax.opener!r}"
        raise ValueError(msg)
    pattern: object = syntax.pattern
    if not isinstance(pattern, regex.Pattern):
        msg = (
            f"{what}: the pattern must be compiled with the regex module, which can tell a marker still "
            f"arriving (regex.compile(...)), got {type(pattern).__name__}"
        )
        raise TypeError(msg)
    if "ids" not in syntax.pattern.groupindex:
        msg = f"{what}: the pattern must capture the id list in a group named ids, as (?P<ids>...)"
        raise ValueError(msg)
    own = [name for name, flag in _REGEX_ONLY_FLAGS if syntax.pattern.flags & flag]
    if own:
        msg = f"{what}: the pattern's flags must be ones Python's re module has too, not {', '.join(own)}"
        raise ValueError(msg)
    try:
        # Whole markers are matched by the stdlib engine (the faster one here).
        _stdlib_pattern(syntax.pattern)
    except re.error as error:
        msg = f"{what}: the pattern must also compile with Python's re module ({error})"
        raise ValueError(msg) from None
    return syntax


@functools.lru_cache(maxsize=64)
def _stdlib_pattern(pattern: regex.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` compiled by Python's re module, with the same flags (kept: each session's parser asks for it).

    Example:
        >>> _stdlib_pattern(ID_SYNTAX.pattern).match("[1](id=2)") is not None
        True
    """
    return re.compile(pattern.pattern, _stdlib_flags(pattern))


def _stdlib_flags(pattern: regex.Pattern[str]) -> int:
    """The stdlib flags of a `regex` pattern's flags (the two modules number some of them differently).

    Example:
        >>> _stdlib_flags(regex.compile("a", regex.I | regex.A)) == re.IGNORECASE | re.ASCII
        True
    """
    flags = 0
    for shared in _SHARED_FLAGS:
        if pattern.flags & getattr(regex, shared):
            flags |= getattr(re, shared)
    return flags


# The flags both modules have (by name: ASCII is 0x80 in regex, 0x100 in re), and those only regex has.
_SHARED_FLAGS: Final = ("IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE", "ASCII")
_REGEX_ONLY_FLAGS: Final = tuple(
    (name, getattr(regex, name)) for name in ("V1", "FULLCASE", "BESTMATCH", "ENHANCEMATCH", "WORD", "POSIX", "REVERSE")
)


class _Mode(enum.Enum):
    PROSE = "prose"
    # A backtick run read as an opener, not yet settled as code or as literal.
    OPEN_SPAN = "open span"
    # A span settled as code (its line went on past the holdback bound).
    CODE_SPAN = "code span"
    FENCE = "fence"


class _Event(enum.Enum):
    """What moves the parser from one state to another (the header's table)."""

    FENCE_OPENER = "fence opener"
    BACKTICK_RUN = "backtick run"
    CLOSING_RUN = "closing run"
    STRAY = "stray backticks"
    LONG_LINE = "long line"
    LINE_END = "line end"
    FENCE_CLOSER = "fence closer"


_TRANSITIONS: Final[dict[tuple[_Mode, _Event], _Mode]] = {
    (_Mode.PROSE, _Event.FENCE_OPENER): _Mode.FENCE,
    (_Mode.PROSE, _Event.BACKTICK_RUN): _Mode.OPEN_SPAN,
    (_Mode.OPEN_SPAN, _Event.CLOSING_RUN): _Mode.PROSE,
    (_Mode.OPEN_SPAN, _Event.STRAY): _Mode.PROSE,
    (_Mode.OPEN_SPAN, _Event.LONG_LINE): _Mode.CODE_SPAN,
    (_Mode.CODE_SPAN, _Event.CLOSING_RUN): _Mode.PROSE,
    (_Mode.CODE_SPAN, _Event.LINE_END): _Mode.PROSE,
    (_Mode.FENCE, _Event.FENCE_CLOSER): _Mode.PROSE,
}
"""Every state change of the parser: (state, event) -> next state. See the module's header."""


class _RunPlace(enum.Enum):
    """Where a backtick/tilde run that reached the end of a chunk stands."""

    LINE_START = "line start"
    MID_LINE = "mid line"
    CODE_SPAN = "code span"
    FENCE_LINE_START = "fence line start"


class _MayComplete(enum.Enum):
    MAY_COMPLETE = "may complete"


_MAY_COMPLETE: Final = _MayComplete.MAY_COMPLETE


class _Unmatched(enum.Enum):
    UNMATCHED = "unmatched"


_UNMATCHED: Final = _Unmatched.UNMATCHED
"""No marker asked for yet at a scan's first special character."""
_DONE: Final = -1
"""Returned by a scan step that has used up the buffer."""

# A list of plain ids only (the common case), each of at most 9 digits.
_PLAIN_IDS = re.compile(r"[ \t]*[0-9]{1,9}(?:[ \t]*,[ \t]*[0-9]{1,9})*[ \t]*")
_ID_ITEM = re.compile(r"(?P<first>[0-9]+)[ \t]*-[ \t]*(?P<last>[0-9]+)|(?P<id>-?[0-9]+)")
# What may stand before a fence's run on its line: indentation (a list item's, however deep) and blockquote marks.
_BLANKS = re.compile(r"[ \t>]*")
_LINE_END = re.compile(r"[\r\n]")
_CODE_SPAN_STOP = re.compile(r"[`\r\n]")
_RUNS = {"`": re.compile(r"`*"), "~": re.compile(r"~*")}
_MODE_NAMES: Final = {
    _Mode.PROSE: "prose",
    _Mode.OPEN_SPAN: "inline code",
    _Mode.CODE_SPAN: "inline code",
    _Mode.FENCE: "fence",
}


def checked_max_holdback(max_holdback: object) -> int:
    """``max_holdback`` itself, or an error when it is not a whole number of characters, 1 or more.

    Every option that takes it checks it here, when it is given.

    Example:
        >>> checked_max_holdback(64)
        64
        >>> checked_max_holdback(0)
        Traceback (most recent call last):
        ...
        ValueError: max_holdback must be 1 or more characters, got 0
        >>> checked_max_holdback(2.5)
        Traceback (most recent call last):
        ...
        TypeError: max_holdback must be a whole number of characters, got float 2.5
    """
    return checked_whole_number(max_holdback, "max_holdback", "characters")


def _partial_match(pattern: regex.Pattern[str], buf: str, start: int) -> regex.Match[str] | None:
    """The match of ``pattern`` cut off by the end of ``buf`` (it may still complete), or None."""
    partial = pattern.match(buf, start, partial=True)
    return partial if partial is not None and partial.partial else None


def _run_end(buf: str, start: int, char: str) -> int:
    """Where the run of ``char`` starting at ``start`` ends (``start`` if there is none)."""
    found = _RUNS[char].match(buf, start)
    return start if found is None else found.end()


def _blanks_end(buf: str, start: int, end: int) -> int:
    """Where the spaces, tabs and ``>`` starting at ``start`` end (looking no further than ``end``)."""
    found = _BLANKS.match(buf, start, end)
    return start if found is None else found.end()


def _too_many_digits(number: str) -> bool:
    return len(number.lstrip("-0")) > _MAX_ID_DIGITS


def parse_ids(id_list: str) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Split a marker's id list into ids and malformed items.

    Example:
        >>> parse_ids("3, 5-6,, x, 1-300")
        ((3, 5, 6), ('', 'x', '1-300'))
    """
    if id_list.isascii() and id_list.isdigit() and len(id_list) <= _MAX_ID_DIGITS:
        return (int(id_list),), ()
    pieces = id_list.split(",")
    items = [piece.strip(" \t") for piece in pieces]
    # The common case: plain ids only, each of 1 to 9 ASCII digits (`_PLAIN_IDS`, read without a regex).
    plain: list[int] = []
    for item in items:
        if not (0 < len(item) <= _MAX_ID_DIGITS and item.isdigit() and item.isascii()):
            break
        plain.append(int(item))
    else:
        return tuple(plain), ()
    ids: list[int] = []
    malformed: list[str] = []
    for item in items:
        found = _ID_ITEM.fullmatch(item)
        if found is None or any(_too_many_digits(number) for number in found.groups() if number is not None):
            malformed.append(item)
        elif found["id"] is not None:
            ids.append(int(found["id"]))
        elif 0 <= int(found["last"]) - int(found["first"]) < _MAX_RANGE_IDS:
            ids.extend(range(int(found["first"]), int(found["last"]) + 1))
        else:
            malformed.append(item)
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

    # What the parser is in the middle of (the header's two machines and the rest of its state).
    _STATE_SLOTS = (
        "_before",
        "_closed",
        "_fence_char",
        "_fence_length",
        "_held_from",
        "_line_spaces",
        "_mode",
        "_pending",
        "_pending_out",
        "_run_char",
        "_run_length",
        "_run_place",
        "_span_length",
        "_span_start",
    )
    # Fixed at construction: the syntaxes, compiled, and the bound.
    _CONFIGURATION_SLOTS = (
        "_id_only",
        "_matchers",
        "_max_holdback",
        "_openers",
        "_plain",
        "_reads_before",
        "_span_special",
        "_special",
    )
    # One scan's output, reset by each `_process`.
    _SCAN_SLOTS = ("_events", "_out", "_pieces")
    # Speed only: derived from the state, so that plain text skips the scan. They change no event.
    _CACHE_SLOTS = ("_declined", "_declined_at", "_idle", "_skips_plain")
    __slots__ = (*_STATE_SLOTS, *_CONFIGURATION_SLOTS, *_SCAN_SLOTS, *_CACHE_SLOTS)

    def __init__(
        self,
        syntaxes: tuple[MarkerSyntax, ...] = (ID_SYNTAX,),
        *,
        max_holdback: int = DEFAULT_MAX_HOLDBACK,
    ) -> None:
        if not syntaxes:
            msg = "syntaxes must name at least one MarkerSyntax"
            raise ValueError(msg)
        checked_max_holdback(max_holdback)
        # Per syntax: the stdlib engine settles full matches fastest; whether a
        # tail at the end of the text may still complete is asked of the
        # `regex` engine's partial match (of a stdlib pattern for ``[n](id=k)``).
        self._matchers = tuple(
            (
                s,
                s.opener,
                _stdlib_pattern(s.pattern).match,
                functools.partial(_partial_match, s.pattern),
                # ``[n](id=k)``: a whole marker or a prefix of one, in one call.
                _ID_MARKER_OR_PREFIX.match if built_in_syntax(s) == "id" else None,
            )
            for s in syntaxes
        )
        # The default: ``[n](id=k)`` alone.
        self._id_only = len(self._matchers) == 1 and self._matchers[0][4] is not None
        self._openers = frozenset(s.opener for s in syntaxes)
        openers = "".join(sorted(self._openers))
        # The stdlib engine is the faster one for a plain character class.
        self._special = re.compile("[" + re.escape(openers + "`~") + "]")
        # Text with none of these changes nothing the parser reads while `_skips_plain`.
        self._plain = re.compile("[" + re.escape(openers + "`~") + "\r\n]")
        # Only a syntax that refuses to follow a letter reads the character before an opener.
        self._reads_before = not all(s.after_word_char for s in syntaxes)
        self._span_special = re.compile("[" + re.escape(openers + "`") + "\r\n]")
        self._max_holdback = max_holdback
        self._mode = _Mode.PROSE
        self._closed = False
        # Spaces and tabs since the last line end while the line holds nothing
        # else, or None once it has other content: a fence opens or closes
        # only where this is 0..3.
        self._line_spaces: int | None = 0
        # The character before the text scanned next (for `after_word_char`).
        self._before = ""
        # Text to scan again with the next chunk (a partial marker, or the
        # content of an open span) and how much of it is already released.
        self._pending = ""
        self._pending_out = 0
        # A backtick/tilde run that reached the end of the last chunk and may
        # go on in the next one: it is released, and only counted.
        self._run_char = ""
        self._run_length = 0
        self._run_place = _RunPlace.MID_LINE
        self._fence_char = ""
        self._fence_length = 0
        # The open or settled code span: where its opening run starts (in the
        # coordinates of the buffer being scanned) and how long that run is.
        self._span_start = 0
        self._span_length = 0
        # In an open span, where the first possible marker starts (-1: none):
        # text from there on waits until the span is settled.
        self._held_from = -1
        # Per-scan output: how far the buffer has been released, and events.
        self._out = 0
        self._pieces: list[str] = []
        self._events: list[Event] = []
        # True while nothing is held or open and the mode is prose: then text
        # without a special character passes straight through.
        self._idle = True
        # True while, besides, the line already has content (so a line with
        # no line end in it cannot change the line state) and no syntax reads
        # `_before`: then plain text changes nothing at all (`pass_through`).
        self._skips_plain = False
        # The text `pass_through` last declined: `feed` need not ask again.
        self._declined: str | None = None
        # Where its first special character is, when `pass_through` found it idle (else -1): the scan starts there.
        self._declined_at = -1

    @property
    def held(self) -> str:
        """The text held back: a possible marker, and in an unsettled code span what follows it.

        Example:
            >>> parser = CitationParser()
            >>> _ = parser.feed("See [1](id=")
            >>> parser.held
            '[1](id='
        """
        return self._pending[self._pending_out :]

    @property
    def mode(self) -> str:
        """``"prose"``, ``"inline code"`` or ``"fence"``.

        Example:
            >>> parser = CitationParser()
            >>> _ = parser.feed("```python\\n")
            >>> parser.mode
            'fence'
        """
        return _MODE_NAMES[self._mode]

    def feed(self, text: str) -> list[Event]:
        """Push the next chunk of the answer and return the events it completes.

        Example:
            >>> CitationParser().feed("no markers here")
            [Text(text='no markers here')]
        """
        if self._closed:
            msg = "feed() called after close(): the parser has already seen the end of the stream"
            raise RuntimeError(msg)
        if text is self._declined:
            # Declined a moment ago, in this same state (the usual caller
            # asks `pass_through` first): no need to ask again.
            self._declined = None
        elif self.pass_through(text):
            return [Text(text=text)] if text else []
        special = self._declined_at
        if special >= 0:
            # Idle when declined: the buffer is the chunk alone, scanned in prose from its first special character.
            self._declined_at = -1
            if self._id_only and text[special] == "[":
                # The usual marker chunk: an ``[n](id=k)`` whole in it, nothing special after it. Settled as
                # `_process` settles it (the opener's line has content; nothing after it changes the line state),
                # without the scan; else the scan goes on from the match (not asked again).
                marker = self._match_marker(text, special, final=False)
                if marker is not None and marker is not _MAY_COMPLETE:
                    after = special + len(marker.raw)
                    if self._plain.search(text, after) is None:
                        self._line_spaces = None
                        self._before = text[-1]
                        self._skips_plain = not self._reads_before
                        events: list[Event] = [Text(text=text[:special]), marker] if special else [marker]
                        if after < len(text):
                            events.append(Text(text=text[after:]))
                        return events
                return self._process(text, final=False, special=special, matched=marker)
            return self._process(text, final=False, special=special)
        if self._mode is _Mode.PROSE and self._pending:
            # In prose, held text is a possible marker from its opener on,
            # none of it released: try it straight away (what `_process`
            # would do first), as each chunk of a marker arrives.
            buf = self._pending + text
            if self._id_only and ")" not in buf:
                # No ``[n](id=k)`` is whole before its ")": the one question left is whether it may still be.
                if len(buf) <= self._max_holdback and _is_id_prefix(buf):
                    self._pending = buf
                    return []
                return self._process(buf, final=False)
            marker = self._match_marker(buf, 0, final=False)
            if marker is _MAY_COMPLETE:
                self._pending = buf
                return []
            if marker is not None:
                after = len(marker.raw)
                if self._plain.search(buf, after) is None:
                    # Nothing after the marker can matter: settle as `_process` would, without the scan.
                    self._pending = ""
                    self._line_spaces = None
                    self._before = buf[-1]
                    self._idle = True
                    self._skips_plain = not self._reads_before
                    return [marker, Text(text=buf[after:])] if after < len(buf) else [marker]
                return self._process(buf, final=False, marker=marker)
            return self._process(buf, final=False)
        return self._process(self._pending + text, final=False)

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
        # The hot path of every stream: one search, nothing to update.
        if self._skips_plain:
            found = self._plain.search(text)
            if found is None:
                return True
            at = found.start()
            if text[at] not in "\r\n":
                # The first special character (they are all in `_plain`); `_skips_plain` means idle.
                self._declined = text
                self._declined_at = at
                return False
        if not self._idle or self._closed:
            self._declined = text
            self._declined_at = -1
            return False
        found = self._special.search(text)
        if found is not None:
            self._declined = text
            self._declined_at = found.start()
            return False
        if text:
            if self._line_spaces is not None or "\n" in text or "\r" in text:
                self._advance(text, 0, len(text))
            self._before = text[-1]
            self._skips_plain = self._line_spaces is None and not self._reads_before
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
        if self._pending or self._run_char or self._mode is _Mode.OPEN_SPAN:
            events = self._process(self._pending, final=True)
        self._closed = True
        self._idle = False
        self._skips_plain = False
        return events

    # -- the scan ----------------------------------------------------------

    def _process(
        self,
        buf: str,
        *,
        final: bool,
        marker: Marker | None = None,
        special: int = -1,
        matched: Marker | _MayComplete | _Unmatched | None = _UNMATCHED,
    ) -> list[Event]:
        """Scan ``buf`` (held text + new chunk) as far as it can be settled.

        ``marker``: the marker already matched at the start of ``buf``. ``special`` (when idle, else -1):
        where the first special character of ``buf`` is, already found; ``matched``, with it, what
        `_match_marker` gave for an opener there (`_UNMATCHED`: not asked yet).
        """
        self._out = self._pending_out
        self._pending = ""
        self._pending_out = 0
        self._pieces.clear()
        if marker is not None:
            # As `_scan_prose` would, finding it: the opener's line has content.
            self._line_spaces = None
            self._events = [marker]
            pos = self._out = len(marker.raw)
        else:
            self._events = []
            pos = self._continue_run(buf, final=final) if self._run_char else 0
        if special >= 0:
            pos = self._scan_prose(buf, 0, final=final, special=special, matched=matched)
        while pos != _DONE:
            mode = self._mode
            if mode is _Mode.PROSE:
                pos = self._scan_prose(buf, pos, final=final)
            elif mode is _Mode.OPEN_SPAN:
                pos = self._scan_open_span(buf, pos, final=final)
            elif mode is _Mode.CODE_SPAN:
                pos = self._scan_code_span(buf, pos, final=final)
            else:
                pos = self._scan_fence(buf, pos, final=final)
        if not self._pending and buf:
            self._before = buf[-1]
        self._flush()
        events = self._events
        self._idle = self._mode is _Mode.PROSE and not self._pending and not self._run_char
        self._skips_plain = self._idle and self._line_spaces is None and not self._reads_before
        return events

    def _scan_prose(
        self,
        buf: str,
        pos: int,
        *,
        final: bool,
        special: int = -1,
        matched: Marker | _MayComplete | _Unmatched | None = _UNMATCHED,
    ) -> int:
        """Scan prose from ``pos``; ``special``: where the next special character is, if already found (else -1).

        ``matched``: what `_match_marker` gave for an opener at ``special`` (`_UNMATCHED`: not asked yet).
        """
        if special >= 0:
            start = special
        else:
            found = self._special.search(buf, pos)
            if found is None:
                self._advance(buf, pos, len(buf))
                self._release(buf, len(buf))
                return _DONE
            start = found.start()
        char = buf[start]
        if char in self._openers:
            # Whatever the opener turns out to be, its line then has content,
            # so the text before it cannot change the line state.
            self._line_spaces = None
            marker = self._match_marker(buf, start, final=final) if matched is _UNMATCHED else matched
            if marker is _MAY_COMPLETE:
                self._release(buf, start)
                self._keep_pending(buf, start)
                return _DONE
            if marker is None:
                return start + 1
            self._release(buf, start)
            self._flush()
            self._events.append(marker)
            self._out = start + len(marker.raw)
            return self._out
        self._advance(buf, pos, start)
        at_line_start = self._line_spaces is not None
        self._line_spaces = None
        if char == "~" and not at_line_start:
            return start + 1
        end = _run_end(buf, start, char)
        if end == len(buf) and not final:
            self._release(buf, end)
            self._open_run(char, end - start, _RunPlace.LINE_START if at_line_start else _RunPlace.MID_LINE)
            return _DONE
        return self._settle_prose_run(char, start, end, at_line_start=at_line_start)

    def _settle_prose_run(self, char: str, start: int, end: int, *, at_line_start: bool) -> int:
        """Give a complete backtick/tilde run in prose its meaning; ``start`` may be < 0."""
        length = end - start
        if at_line_start and length >= 3:
            self._take(_Event.FENCE_OPENER)
            self._fence_char = char
            self._fence_length = length
        elif char == "`":
            self._take(_Event.BACKTICK_RUN)
            self._span_start = start
            self._span_length = length
            self._held_from = -1
        return end

    def _scan_open_span(self, buf: str, pos: int, *, final: bool) -> int:
        """Look for the span's closing run or line end within the holdback window."""
        start, length, bound = self._span_start, self._span_length, self._max_holdback
        # The first position past the window: a character there that is not a
        # line end means the line goes on too long to wait; the span is code.
        window_end = start + bound
        size = len(buf)
        while True:
            found = self._span_special.search(buf, pos)
            if found is None:
                if size > window_end:
                    return self._settle_span_as_code(pos)
                if final:
                    return self._settle_span_as_literal()
                return self._keep_span_open(buf)
            at = found.start()
            char = buf[at]
            if char in "\r\n":
                if at - start <= bound:
                    return self._settle_span_as_literal()
                return self._settle_span_as_code(pos)
            if at >= window_end:
                return self._settle_span_as_code(pos)
            if char == "`":
                end = _run_end(buf, at, "`")
                if end == size and not final:
                    if size > window_end:
                        return self._settle_span_as_code(pos)
                    return self._keep_span_open(buf)
                if end - at == length:
                    self._take(_Event.CLOSING_RUN)
                    return end
                pos = end
                continue
            if self._held_from < 0 and self._match_marker(buf, at, final=final) is not None:
                self._held_from = at
            pos = at + 1

    def _settle_span_as_code(self, pos: int) -> int:
        self._take(_Event.LONG_LINE)
        self._held_from = -1
        return pos

    def _settle_span_as_literal(self) -> int:
        """The opening backticks were ordinary: read what follows them as prose."""
        self._take(_Event.STRAY)
        self._held_from = -1
        self._line_spaces = None
        return self._span_start + self._span_length

    def _keep_span_open(self, buf: str) -> int:
        content = self._span_start + self._span_length
        self._release(buf, self._held_from if self._held_from >= 0 else len(buf))
        self._keep_pending(buf, content)
        # The next buffer starts with the span's content.
        self._span_start = -self._span_length
        self._held_from = -1
        return _DONE

    def _scan_code_span(self, buf: str, pos: int, *, final: bool) -> int:
        found = _CODE_SPAN_STOP.search(buf, pos)
        if found is None:
            self._release(buf, len(buf))
            return _DONE
        at = found.start()
        if buf[at] != "`":
            # The line ends the span; the line end itself is prose.
            self._take(_Event.LINE_END)
            return at
        end = _run_end(buf, at, "`")
        if end == len(buf) and not final:
            self._release(buf, end)
            self._open_run("`", end - at, _RunPlace.CODE_SPAN)
            return _DONE
        if end - at == self._span_length:
            self._take(_Event.CLOSING_RUN)
        return end

    def _scan_fence(self, buf: str, pos: int, *, final: bool) -> int:
        size = len(buf)
        while pos < size:
            if self._line_spaces is not None:
                blank_end = _blanks_end(buf, pos, size)
                self._line_spaces += blank_end - pos
                pos = blank_end
                if pos == size:
                    break
                if buf[pos] == self._fence_char:
                    end = _run_end(buf, pos, self._fence_char)
                    self._line_spaces = None
                    if end == size and not final:
                        self._release(buf, end)
                        self._open_run(self._fence_char, end - pos, _RunPlace.FENCE_LINE_START)
                        return _DONE
                    if end - pos >= self._fence_length:
                        self._take(_Event.FENCE_CLOSER)
                        return end
                    pos = end
            found = _LINE_END.search(buf, pos)
            if found is None:
                self._advance(buf, pos, size)
                break
            self._advance(buf, pos, found.end())
            pos = found.end()
        self._release(buf, size)
        return _DONE

    def _take(self, event: _Event) -> None:
        """Move to the state the transition table gives for ``event`` (a KeyError: a row is missing)."""
        self._mode = _TRANSITIONS[self._mode, event]

    def _open_run(self, char: str, length: int, place: _RunPlace) -> None:
        self._run_char = char
        self._run_length = length
        self._run_place = place

    def _continue_run(self, buf: str, *, final: bool) -> int:
        """Extend the run left open by the previous chunk; settle it once it ends."""
        char = self._run_char
        end = _run_end(buf, 0, char)
        self._run_length += end
        if end == len(buf) and not final:
            self._release(buf, end)
            return _DONE
        self._run_char = ""
        length, place = self._run_length, self._run_place
        if place is _RunPlace.CODE_SPAN:
            if length == self._span_length:
                self._take(_Event.CLOSING_RUN)
            return end
        if place is _RunPlace.FENCE_LINE_START:
            if length >= self._fence_length:
                self._take(_Event.FENCE_CLOSER)
            return end
        return self._settle_prose_run(char, end - length, end, at_line_start=place is _RunPlace.LINE_START)

    def _match_marker(self, buf: str, start: int, *, final: bool) -> Marker | _MayComplete | None:
        """The `Marker` at ``start``; `_MAY_COMPLETE` if one may still complete."""
        bound = self._max_holdback
        size = len(buf)
        near_end = not final and size - start <= bound
        may_complete = False
        opener = buf[start]
        for syntax, syntax_opener, full_match, may_go_on, either in self._matchers:
            if opener != syntax_opener:
                continue
            if not syntax.after_word_char and (buf[start - 1] if start > 0 else self._before).isalnum():
                continue
            # A marker longer than the bound is text: no match needs to look further.
            if either is not None:
                close = buf.find(")", start, start + bound + 1)
                if close < 0:
                    # No whole marker without its ")"; near the end, a prefix of one (the ``more`` group) may complete.
                    if near_end and not may_complete:
                        may_complete = _is_id_prefix(buf[start:])
                    continue
                # (Compiled only: in pure Python even the call costs more than the regex saves.)
                ids_start = _id_list_start(buf, start, close) if _NATIVE else -1
                if ids_start >= 0:
                    # The usual whole marker, read with str methods: what the pattern's whole branch matches.
                    end = close + 1
                    id_list = buf[ids_start:close]
                else:
                    match = either(buf, start, start + bound + 1)
                    if match is None:
                        continue
                    if match.lastgroup == "more":
                        # No whole marker; a prefix of one (within the bound, so only near the end it counts).
                        may_complete = may_complete or near_end
                        continue
                    end = match.end()
                    id_list = match["ids"]
            else:
                match = full_match(buf, start, start + bound + 1)
                if match is None:
                    if near_end and not may_complete:
                        may_complete = may_go_on(buf, start) is not None
                    continue
                end = match.end()
                id_list = match["ids"]
            if syntax.needs_next_char and end == size and not final:
                may_complete = may_complete or near_end
                continue
            if end - start > bound:
                continue
            ids, malformed = parse_ids(id_list)
            if not ids and any(malformed):
                # Names no document and holds something that is no id:
                # the model's words stay as they are.
                continue
            # The match starts at ``start``: its text is that slice (no call on the match object).
            return Marker(raw=buf[start:end], ids=ids, malformed=malformed, syntax=syntax.name)
        return _MAY_COMPLETE if may_complete else None

    # -- output and line state -----------------------------------------------

    def _release(self, buf: str, end: int) -> None:
        """Release the buffer up to ``end`` (what was released before is not repeated)."""
        if end > self._out:
            self._pieces.append(buf[self._out : end])
            self._out = end

    def _flush(self) -> None:
        if self._pieces:
            self._events.append(Text(text="".join(self._pieces)))
            self._pieces.clear()

    def _keep_pending(self, buf: str, start: int) -> None:
        self._pending = buf[start:]
        self._pending_out = self._out - start
        if start > 0:
            self._before = buf[start - 1]

    def _advance(self, buf: str, start: int, end: int) -> None:
        """Track line starts (for fences) over ``buf[start:end]``."""
        line_end = buf.rfind("\n", start, end)
        # The last line end: a CR before the last LF cannot be it.
        cr = buf.rfind("\r", line_end + 1 if line_end >= 0 else start, end)
        if cr > line_end:
            line_end = cr
        if line_end < 0:
            if self._line_spaces is not None:
                blank = _blanks_end(buf, start, end) == end
                self._line_spaces = self._line_spaces + end - start if blank else None
        else:
            blank = _blanks_end(buf, line_end + 1, end) == end
            self._line_spaces = end - line_end - 1 if blank else None
