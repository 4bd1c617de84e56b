"""Fakes for the agent tests: a scripted tool-calling chat model, a keyword retriever, its tool."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage, message_chunk_to_message
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import BaseTool, create_retriever_tool
from pydantic import Field, PrivateAttr


class Step:
    """One scripted answer: text chunks as streamed, then tool calls."""

    def __init__(self, chunks: Sequence[str] = (), tool_calls: Sequence[tuple[str, str, dict[str, Any]]] = ()) -> None:
        self.chunks = list(chunks)
        # (call id, tool name, arguments)
        self.tool_calls = list(tool_calls)

    def generations(self, message_id: str) -> Iterator[ChatGenerationChunk]:
        """The step as a model streams it: its text chunks, then a chunk per tool call."""
        for text in self.chunks:
            yield ChatGenerationChunk(message=AIMessageChunk(content=text, id=message_id))
        for index, (call_id, name, args) in enumerate(self.tool_calls):
            chunk = {"name": name, "args": json.dumps(args), "id": call_id, "index": index}
            yield ChatGenerationChunk(
                message=AIMessageChunk(content="", id=message_id, tool_call_chunks=[chunk])  # type: ignore[list-item]
            )

    def message(self, message_id: str) -> AIMessage:
        return AIMessage(
            content="".join(self.chunks),
            id=message_id,
            tool_calls=[
                {"name": name, "args": args, "id": call_id, "type": "tool_call"}
                for call_id, name, args in self.tool_calls
            ],
        )


def say(text: str, size: int = 4) -> Step:
    """An answer streamed in chunks of ``size`` characters."""
    return Step([text[i : i + size] for i in range(0, len(text), size)])


def search(*queries: str, tool: str = "search", first_id: int = 1) -> Step:
    """A step that calls the search tool once per query (parallel tool calls)."""
    return Step(tool_calls=[(f"call_{first_id + i}", tool, {"query": q}) for i, q in enumerate(queries)])


class ScriptedToolModel(BaseChatModel):
    """Replays its script, one step per call; streams text chunks as given, tool calls as chunks.

    ``seen`` records the messages each call was given (what the model read).
    langchain-core's GenericFakeChatModel drops tool calls when it streams,
    so the agent tests need this one.
    """

    script: list[Step]
    step: int = 0
    seen: list[list[BaseMessage]] = Field(default_factory=list, repr=False)

    @property
    def _llm_type(self) -> str:
        return "scripted-tool-model"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedToolModel:  # type: ignore[override]
        return self

    def _next(self, messages: list[BaseMessage]) -> tuple[Step, str]:
        self.seen.append(list(messages))
        step = self.script[self.step % len(self.script)]
        self.step += 1
        return step, f"answer-{self.step}"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        step, message_id = self._next(messages)
        return ChatResult(generations=[ChatGeneration(message=step.message(message_id))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        step, message_id = self._next(messages)
        yield from step.generations(message_id)
        yield ChatGenerationChunk(message=AIMessageChunk(content="", id=message_id, chunk_position="last"))

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


class KeywordRetriever(BaseRetriever):
    """Returns the documents whose text holds a word of the query (all of them for ``*``)."""

    documents: list[Document]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        if query == "*":
            return list(self.documents)
        words = query.lower().split()
        return [d for d in self.documents if any(w in d.page_content.lower() for w in words)]


def retriever_tool(documents: Sequence[Document], name: str = "search") -> BaseTool:
    """A retriever tool that hands its documents over as the ToolMessage artifact."""
    return create_retriever_tool(
        KeywordRetriever(documents=list(documents)),
        name,
        "Search the documents.",
        response_format="content_and_artifact",
    )


CITY_DOCUMENTS = [
    Document(
        "Paris is the capital of France. It has about two million inhabitants.",
        id="paris",
        metadata={"source": "https://example.org/paris", "title": "Paris"},
    ),
    Document(
        "Lyon is a city in France. Lyon is known for its silk and its food.",
        id="lyon",
        metadata={"source": "https://example.org/lyon", "title": "Lyon"},
    ),
    Document(
        "Rome is the capital of Italy. Rome was founded, legend says, in 753 BC.",
        metadata={"source": "https://example.org/rome", "title": "Rome"},
    ),
]


class BlockStreamer(BaseChatModel):
    """Streams a fixed list of chunks per call (any content shape: a provider's blocks and indices), in turn.

    Invoked, it returns the chunks of its next script summed, as LangChain sums a stream.
    """

    script: list[list[AIMessageChunk]]
    step: int = 0

    @property
    def _llm_type(self) -> str:
        return "block-streamer"

    def bind_tools(self, tools: Any, **kwargs: Any) -> BlockStreamer:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        chunks = [c.message for c in self._stream(messages)]
        merged = chunks[0]
        for chunk in chunks[1:]:
            merged = merged + chunk
        return ChatResult(generations=[ChatGeneration(message=message_chunk_to_message(merged))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: Any = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        chunks = self.script[self.step % len(self.script)]
        self.step += 1
        for chunk in chunks:
            yield ChatGenerationChunk(message=chunk)


class StatelessToolModel(BaseChatModel):
    """Answers from the messages alone: a search call, then ``answer`` once a tool result came.

    Its fields never change, so LangChain's cache can key its calls (the
    scripted models count their steps in a field, which is in the key).
    ``calls`` counts the calls that reached the model (a private attribute:
    not in the key).
    """

    answer: str
    query: str = "Paris"
    _calls: int = PrivateAttr(default=0)

    @property
    def calls(self) -> int:
        return self._calls

    @property
    def _llm_type(self) -> str:
        return "stateless-tool-model"

    def bind_tools(self, tools: Any, **kwargs: Any) -> StatelessToolModel:  # type: ignore[override]
        return self

    def _reply(self, messages: list[BaseMessage]) -> Step:
        self._calls += 1
        if messages and isinstance(messages[-1], ToolMessage):
            return say(self.answer)
        return search(self.query)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        step = self._reply(messages)
        return ChatResult(generations=[ChatGeneration(message=step.message(_stateless_id(step)))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: Any = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        step = self._reply(messages)
        yield from step.generations(_stateless_id(step))


def _stateless_id(step: Step) -> str:
    # One id per kind of reply: the search call and the answer are two messages of the state.
    return "stateless-search" if step.tool_calls else "stateless-answer"
