"""The texts and runnables the benchmarks stream."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, message_chunk_to_message
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableGenerator

# The floor wrapper uses the middleware's own plumbing module, by its path.
from langchain_refs.streaming import _plumbing

WORDS = (
    "the model reads the numbered documents and answers with care while streaming each token to the "
    "user interface so that sources stay visible and checkable across long answers about science history"
).split()


def documents(count: int = 8) -> list[Document]:
    return [
        Document(f"document {i}", metadata={"source": f"https://docs.example.org/page{i % 5}", "title": f"Page {i}"})
        for i in range(1, count + 1)
    ]


def answer(length: int = 200_000, *, citation_every: int = 150, seed: int = 7, markers: bool = True) -> str:
    """Prose with a citation every ~150 characters, Markdown links and list[0]-style brackets.

    With ``markers=False`` each marker is replaced by as many letters: the same
    text and chunk boundaries with no citation, to measure what markers cost.
    """
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    since = 0
    while size < length:
        roll = rng.random()
        if since >= citation_every:
            marker = rng.choice(["[1](id=%d)", "[NUMBER](id=%d)", "[2](id=%d, 3)"]) % rng.randint(1, 8)
            piece = (marker if markers else "q" * len(marker)) + ". "
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
    """A generator Runnable yielding AIMessageChunks, like a chat model's stream (sync and async)."""

    def generate(_: Iterator[Any]) -> Iterator[AIMessageChunk]:
        for chunk in chunks:
            yield AIMessageChunk(content=chunk, id="run-bench")

    async def agenerate(_: AsyncIterator[Any]) -> AsyncIterator[AIMessageChunk]:
        for chunk in chunks:
            yield AIMessageChunk(content=chunk, id="run-bench")

    return RunnableGenerator(generate, agenerate)


def str_stream(chunks: list[str]) -> Runnable[Any, str]:
    """A generator Runnable yielding str chunks (sync and async)."""

    def generate(_: Iterator[Any]) -> Iterator[str]:
        yield from chunks

    async def agenerate(_: AsyncIterator[Any]) -> AsyncIterator[str]:
        for chunk in chunks:
            yield chunk

    return RunnableGenerator(generate, agenerate)


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


def zipf_prose(length: int) -> str:
    """Sentences over a vocabulary of 20,000 made-up words used as words are (a few often, most rarely: Zipf's law).

    `sentences` draws from a few dozen words: every pair of them recurs, which
    no real text does.
    """
    rng = random.Random(11)
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "te", "vi", "do", "pe", "ga", "zu", "shi", "ber", "tan", "or"]
    vocabulary = sorted({"".join(rng.choices(syllables, k=rng.randint(1, 4))) for _ in range(30_000)})[:20_000]
    rng.shuffle(vocabulary)
    weights = [1 / rank for rank in range(1, len(vocabulary) + 1)]
    out: list[str] = []
    size = 0
    while size < length:
        words = rng.choices(vocabulary, weights, k=rng.randint(6, 20))
        sentence = " ".join(words).capitalize() + ". "
        out.append(sentence)
        size += len(sentence)
    return "".join(out)[:length]


def range_markers(length: int) -> str:
    """``[1](id=1-32)`` repeated: each names the longest range the parser expands, mostly past the three documents."""
    unit = "[1](id=1-32)"
    return (unit * (length // len(unit) + 1))[:length]


class _NoOutput:
    """The floor's per-call state: it reports no output to tracers."""

    __slots__ = ()

    def traced_output(self) -> None:
        return None


class FloorWrapper(Runnable[Any, Any]):
    """The cheapest correct wrapper: langchain-refs' own run plumbing, every chunk passed on unchanged.

    It opens and closes a run as the middleware does (callbacks, tracing
    context, the astream_events tap) and rewrites nothing, so it shows what any
    wrapper built this way costs; the middleware can only add to it.
    """

    def __init__(self, bound: Runnable[Any, Any]) -> None:
        self.bound = bound

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        out = None
        for chunk in self.stream(input, config, **kwargs):
            out = chunk if out is None else out + chunk
        return out

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:
        return _plumbing.stream_run(
            self,
            input,
            config,
            start=lambda _run_manager: _NoOutput(),
            inner=lambda child_config: self.bound.stream(input, child_config, **kwargs),
        )

    def astream(self, input: Any, config: Any = None, **kwargs: Any) -> AsyncIterator[Any]:
        return _plumbing.astream_run(
            self,
            input,
            config,
            start=lambda _run_manager: _NoOutput(),
            inner=lambda child_config: self.bound.astream(input, child_config, **kwargs),
        )


def generator_wrapper(bound: Runnable[Any, Any]) -> Runnable[Any, Any]:
    """The identity wrapper written as a `RunnableGenerator` (LangChain adds its output up once more)."""

    def generate(inputs: Iterator[Any]) -> Iterator[Any]:
        for value in inputs:
            yield from bound.stream(value)

    async def agenerate(inputs: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for value in inputs:
            async for chunk in bound.astream(value):
                yield chunk

    return RunnableGenerator(generate, agenerate, name="identity")


class ChunkChatModel(BaseChatModel):
    """A chat model streaming exactly the given chunks (the agents wing wraps chat models, not runnables)."""

    chunks: list[str]

    @property
    def _llm_type(self) -> str:
        return "bench-chunks"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="".join(self.chunks), id="run-bench"))])

    def _stream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self.chunks:
            yield ChatGenerationChunk(message=AIMessageChunk(content=chunk, id="run-bench"))


def long_documents(count: int = 8, length: int = 2_000) -> list[Document]:
    """Documents of ~2,000 characters of sentences each, for work that reads what a citation cites."""
    text = sentences(count * length)
    return [
        Document(text[i * length : (i + 1) * length], metadata={"source": f"https://docs.example.org/long{i}"})
        for i in range(count)
    ]


class ToolRoundChatModel(BaseChatModel):
    """An agent's model for one tool round: odd calls ask the ``search`` tool, even calls stream the answer chunks."""

    chunks: list[str]
    calls: int = 0
    # Stream the answer as standard text blocks (list content, as the wrapper and Anthropic stream it), not str.
    blocks: bool = False

    @property
    def _llm_type(self) -> str:
        return "bench-tool-round"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolRoundChatModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        chunks = list(self._stream(messages))
        merged = chunks[0].message
        for chunk in chunks[1:]:
            merged = merged + chunk.message
        return ChatResult(generations=[ChatGeneration(message=message_chunk_to_message(merged))])

    def _stream(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        self.calls += 1
        if self.calls % 2:
            call = {"name": "search", "args": '{"query": "q"}', "id": f"call-{self.calls}", "index": 0}
            yield ChatGenerationChunk(message=AIMessageChunk(content="", id="run-tool", tool_call_chunks=[call]))
            return
        for chunk in self.chunks:
            content: Any = [{"type": "text", "text": chunk, "index": 0}] if self.blocks else chunk
            yield ChatGenerationChunk(message=AIMessageChunk(content=content, id="run-answer"))
