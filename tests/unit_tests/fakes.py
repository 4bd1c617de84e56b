"""Fakes for the tests: chunk-exact, str-producing, async-only, whole-message runnables; a constant scorer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.cross_encoders import BaseCrossEncoder
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig, RunnableGenerator, RunnableLambda

CLASSIC_SOURCES = ("a.html#chap1", "a.html#chap2", "b.pdf", "b.pdf", "c.pdf", "d.csv")
CLASSIC_ANSWER = "Yes[1](id=3), certainly[2](id=2), no[3](id=4), yes[4](id=1), yes[5](id=5)"


def classic_documents() -> list[Document]:
    """The six documents of the langchain-references README."""
    return [
        Document(page_content=f"fragment {i}", metadata={"source": source})
        for i, source in enumerate(CLASSIC_SOURCES, start=1)
    ]


def sample_documents() -> list[Document]:
    """The classic six, one without a source, one with a title and https URL."""
    return [
        *classic_documents(),
        Document(page_content="no source here", metadata={}),
        Document(page_content="titled", metadata={"source": "https://e.org/x", "title": "E & co"}),
    ]


class ChunkExactChatModel(BaseChatModel):
    """A chat model that streams exactly the given chunks, then usage metadata."""

    chunks: list[str]
    message_id: str = "run-fake-1"

    @property
    def _llm_type(self) -> str:
        return "chunk-exact-fake"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = AIMessage(
            content="".join(self.chunks),
            id=self.message_id,
            response_metadata={"model_name": "fake"},
            usage_metadata={"input_tokens": 3, "output_tokens": len(self.chunks), "total_tokens": 3 + len(self.chunks)},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for index, text in enumerate(self.chunks):
            usage = {"input_tokens": 3 if index == 0 else 0, "output_tokens": 1, "total_tokens": 4 if index == 0 else 1}
            yield ChatGenerationChunk(
                message=AIMessageChunk(
                    content=text,
                    id=self.message_id,
                    usage_metadata=usage,  # type: ignore[arg-type]
                    response_metadata={"model_name": "fake"} if index == 0 else {},
                )
            )

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._stream(messages, stop, **kwargs):
            await asyncio.sleep(0)
            yield chunk


def str_chunks(chunks: Sequence[str]) -> Runnable[Any, str]:
    """A runnable streaming ``str`` chunks exactly as given."""

    def generate(_: Iterator[Any]) -> Iterator[str]:
        yield from chunks

    async def agenerate(inputs: AsyncIterator[Any]) -> AsyncIterator[str]:
        async for _ in inputs:
            pass
        for chunk in chunks:
            await asyncio.sleep(0)
            yield chunk

    return RunnableGenerator(generate, agenerate)


def message_chunks(chunks: Sequence[Any]) -> Runnable[Any, AIMessageChunk]:
    """A runnable streaming the given message chunks (or contents) as they are."""
    messages = [c if isinstance(c, AIMessageChunk) else AIMessageChunk(content=c) for c in chunks]

    def generate(_: Iterator[Any]) -> Iterator[AIMessageChunk]:
        yield from messages

    async def agenerate(inputs: AsyncIterator[Any]) -> AsyncIterator[AIMessageChunk]:
        async for _ in inputs:
            pass
        for message in messages:
            yield message

    return RunnableGenerator(generate, agenerate)


def whole_message(message: AIMessage) -> Runnable[Any, AIMessage]:
    """A runnable that does not stream: it returns one whole AIMessage."""
    return RunnableLambda(lambda _: message)


class AsyncOnlyRunnable(Runnable[Any, str]):
    """A runnable with only an async path (its sync calls fail)."""

    def __init__(self, chunks: Sequence[str]) -> None:
        self.chunks = list(chunks)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> str:
        msg = "this runnable is async-only"
        raise NotImplementedError(msg)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> str:
        return "".join(self.chunks)

    async def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[str]:
        for chunk in self.chunks:
            await asyncio.sleep(0)
            yield chunk


def streaming_model(chunks: list[Any]) -> RunnableGenerator[Any, Any]:
    """A chat model stand-in that streams exactly these message contents, whatever it is asked."""

    def stream(inputs: Iterator[Any]) -> Iterator[AIMessageChunk]:
        for _ in inputs:
            pass
        for content in chunks:
            yield AIMessageChunk(content=content)

    async def astream(inputs: AsyncIterator[Any]) -> AsyncIterator[AIMessageChunk]:
        async for _ in inputs:
            pass
        for content in chunks:
            yield AIMessageChunk(content=content)

    return RunnableGenerator(stream, astream)


class BlockChunksChatModel(BaseChatModel):
    """A chat model that streams exactly the given message chunks (list content, annotations and all).

    Not streamed (``invoke`` on the model itself), it answers the chunks added up.
    """

    chunks: list[AIMessageChunk]

    @property
    def _llm_type(self) -> str:
        return "block-chunks-fake"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        merged = self.chunks[0]
        for chunk in self.chunks[1:]:
            merged = merged + chunk
        message = AIMessage(**merged.model_dump(exclude={"type", "tool_call_chunks", "chunk_position"}))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self.chunks:
            yield ChatGenerationChunk(message=chunk)


class ConstantCrossEncoder(BaseCrossEncoder):
    """A plain LangChain cross-encoder (no ``support_threshold``) scoring every pair ``value``."""

    def __init__(self, value: float) -> None:
        self.value = value

    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        return [self.value] * len(text_pairs)
