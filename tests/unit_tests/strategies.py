"""Hypothesis strategies and deterministic chunkings, kept in one place."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from hypothesis import strategies as st


def whole(text: str) -> list[str]:
    return [text]


def per_char(text: str) -> list[str]:
    return list(text)


def every_split(text: str) -> Iterator[list[str]]:
    """Every way to cut the text in two (empty halves included)."""
    for i in range(len(text) + 1):
        yield [text[:i], text[i:]]


def per_word(text: str) -> list[str]:
    import re

    return [piece for piece in re.split(r"(\s+)", text) if piece]


@st.composite
def random_splits(draw: st.DrawFn, text: str) -> list[str]:
    """The text cut at random points (chunks may be empty)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=max(1, len(text)))))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


# Text built from the pieces that make markers and the things that look like them.
MARKERISH = st.lists(
    st.sampled_from(
        [
            "[1](id=3)",
            "[NUMBER](id=2, 5)",
            "[2](id=1-2)",
            "[3](id = 4)",
            "[1](id=9)",
            "[1](id=)",
            "[",
            "]",
            "(",
            ")",
            "id=",
            "[x](https://a.org)",
            "[ ] ",
            "list[0]",
            "`",
            "```",
            "~~~",
            "\n",
            " ",
            "word",
            "é",
            "🎉",
            "【1†source】",
            "[1]",
            "3",
            ",",
            "-",
        ]
    ),
    max_size=30,
).map("".join)

ANY_TEXT = st.one_of(MARKERISH, st.text(max_size=60))


# Pieces for the differential tests against the oracle: dense in what decides
# modes (backticks, tildes, every line end), markers, near-markers and the
# malformed id lists the parser must leave as text.
ORACLE_PIECES = [
    "`",
    "``",
    "```",
    "`x`",
    "``a ` b``",
    "`a longer code span of 35 chars`",
    "~",
    "~~~",
    "\n",
    "\r\n",
    "\r",
    " ",
    "   ",
    "    ",
    "\t",
    "\n```\n",
    "\n ~~~~",
    "\n   ```",
    "\n    ```",
    "\n\t~~~",
    "[",
    "]",
    "(",
    ")",
    "[1](id=",
    "[1](id=3)",
    "[NUMBER](id=2, 5)",
    "[2](id=1-3)",
    "[3](id = 4)",
    "[1](id=9)",
    "[1](id=0)",
    "[x](id=1)",
    "[](id=)",
    "[1](id=)",
    "(id=1-2-3)",
    "[1](id=1-2-3)",
    "[1](id=1 2)",
    "[1](id=-)",
    "[1](id=1-300)",
    "[1](id=2, 1-40)",
    "[1](id=1-32)",
    "[1](id=2-34)",
    "[1](id=7, )",
    "id=",
    "0000000003",
    "[x](https://a.org)",
    "list[0]",
    "word",
    "a long run of ordinary words",
    "é",
    "🎉",
    ",",
    "-",
    "3",
]


def _oracle_answer(data: bytes) -> str:
    """Each byte picks a piece, a run of digits or a marker with a long id (1 to 28 digits)."""
    out = []
    for byte in data:
        if byte < 200:
            out.append(ORACLE_PIECES[byte % len(ORACLE_PIECES)])
        elif byte < 228:
            out.append("9" * (byte - 199))
        else:
            out.append("[1](id=" + "8" * (byte - 227) + ")")
    return "".join(out)


# Drawn as bytes: one draw per answer keeps thousands of examples within seconds.
ORACLE_TEXT = st.binary(max_size=40).map(_oracle_answer)
"""Answers for the oracle: markers, near-markers, code and line ends, densely mixed."""

HOLDBACK_BOUNDS = st.sampled_from([1, 4, 9, 16, 64])
"""Holdback bounds that make markers, spans and lines cross the bound often."""


@st.composite
def cheap_splits(draw: st.DrawFn, text: str) -> list[str]:
    """The text per character, in chunks of one size (1 to 12), or cut at up to 8 random points.

    Drawn as a few bytes, so cheaper than `random_splits` for tests that run thousands of examples.
    """
    code = draw(st.binary(min_size=1, max_size=9))
    if code[0] % 3 == 0:
        return list(text)
    if code[0] % 3 == 1:
        size = code[0] // 3 % 12 + 1
        return [text[i : i + size] for i in range(0, len(text), size)]
    cuts = sorted(byte * (len(text) + 1) // 256 for byte in code[1:])
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]
