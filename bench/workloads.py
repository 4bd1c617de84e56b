"""The texts and runnables the benchmarks stream."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from langchain_core.documents import Document
from langchain_core.messages import AIMessageChunk
from langchain_core.runnables import Runnable, RunnableGenerator

WORDS = (
    "the model reads the numbered documents and answers with care while streaming each token to the "
    "user interface so that sources stay visible and checkable across long answers about science history"
).split()


def documents(count: int = 8) -> list[Document]:
    return [
        Document(f"document {i}", metadata={"source": f"https://docs.example.org/page{i % 5}", "title": f"Page {i}"})
        for i in range(1, count + 1)
    ]


def answer(length: int = 200_000, *, citation_every: int = 150, seed: int = 7) -> str:
    """Prose with a citation every ~150 characters, Markdown links and list[0]-style brackets."""
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    since = 0
    while size < length:
        roll = rng.random()
        if since >= citation_every:
            piece = rng.choice(["[1](id=%d)", "[NUMBER](id=%d)", "[2](id=%d, 3)"]) % rng.randint(1, 8) + ". "
            since = 0
        elif roll < 0.01:
            piece = "see [the guide](https://docs.example.org/guide) "
        elif roll < 0.02:
            piece = "items[0] "
        else:
            piece = rng.choice(WORDS) + " "
        parts.append(piece)
        size += len(piece)
        since += len(piece)
    return "".join(parts)[:length]


def prose(length: int) -> str:
    """Text with no bracket or backtick at all."""
    rng = random.Random(3)
    out: list[str] = []
    size = 0
    while size < length:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:length]


def citation_dense(length: int) -> str:
    return answer(length, citation_every=30, seed=11)


def bracket_storm(length: int) -> str:
    """Worst case: '[' everywhere, almost completing a marker, never one."""
    unit = "[1](id=x [2](id [ [[ a[0] "
    return (unit * (length // len(unit) + 1))[:length]


def chunked(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def message_stream(chunks: list[str]) -> Runnable[Any, AIMessageChunk]:
    """A generator Runnable yielding AIMessageChunks, like a chat model's stream."""

    def generate(_: Iterator[Any]) -> Iterator[AIMessageChunk]:
        for chunk in chunks:
            yield AIMessageChunk(content=chunk, id="run-bench")

    return RunnableGenerator(generate)


def str_stream(chunks: list[str]) -> Runnable[Any, str]:
    def generate(_: Iterator[Any]) -> Iterator[str]:
        yield from chunks

    return RunnableGenerator(generate)


def inline_code_line(length: int) -> str:
    """One line that opens a ``double-backtick`` code span and never closes it: single backticks, brackets, markers.

    No line break until the end, so a scanner that searches for the line end
    from every backtick reads the rest of the line each time.
    """
    unit = "x`y`z`[i]`[1](id=2) "
    head, tail = "Run ``", "\ndone[1](id=3).\n"
    body = (unit * (length // len(unit) + 1))[: max(length - len(head) - len(tail), 0)]
    return (head + body + tail)[:length]


def sentences(length: int) -> str:
    """Prose in sentences, with abbreviations, decimals, initials, quotes, markers and list items."""
    rng = random.Random(5)
    openings = ["The model", "Dr. Smith", "J. R. R. Tolkien", "The U.S. team", "Version 2.5", '"Quoted', "It"]
    endings = [".", ".", ".", "!", "?", "...", "[1](id=2).", '."', ". [2]"]
    out: list[str] = []
    size = 0
    while size < length:
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 14)))
        piece = f"{rng.choice(openings)} {words}, e.g. {rng.choice(WORDS)}{rng.choice(endings)} "
        if rng.random() < 0.05:
            piece += "\n\n- "
        out.append(piece)
        size += len(piece)
    return "".join(out)[:length]


def range_markers(length: int) -> str:
    """``[1](id=1-32)`` repeated: the longest range the parser expands, mostly past the three documents."""
    unit = "[1](id=1-32)"
    return (unit * (length // len(unit) + 1))[:length]
