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
