"""The offline agent demo: ``create_agent`` with the built-in corpus behind a retriever tool.

`AgentDemoChatModel` is the extractive demo model taught to use a tool: asked
a question, it first calls the ``search_docs`` tool with it; given the tool's
results (which `ReferencesMiddleware` shows it as ``<document id=k>`` blocks
with thread ids), it answers with cited sentences from them. Building the
agent needs the ``agents`` extra (langchain and langgraph); the model itself
needs only langchain-core.

Example:
    >>> from langchain_core.messages import HumanMessage, ToolMessage
    >>> model = AgentDemoChatModel()
    >>> model.invoke([HumanMessage("Where is Paris?")]).tool_calls[0]["args"]
    {'query': 'Where is Paris?'}
    >>> call = ToolMessage("<document id=3>\\nParis is in France.\\n</document>", tool_call_id="search-1")
    >>> model.invoke([HumanMessage("Where is Paris?"), call]).content
    'Paris is in France[1](id=3).'
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import BaseTool, create_retriever_tool
from pydantic import PrivateAttr
from typing_extensions import override

from langchain_refs.apps.demo import CorpusRetriever, ExtractiveChatModel, load_corpus
from langchain_refs.streaming import ReferenceStyle, TextReferenceStyle

__all__ = ["SEARCH_TOOL", "AgentDemoChatModel", "build_demo_agent", "demo_search_tool"]

# Tokens as the demo model streams them: words, runs of spaces, single marks (markers get cut apart).
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")

SEARCH_TOOL = "search_docs"
"""The name of the demo agent's retriever tool."""


class AgentDemoChatModel(ExtractiveChatModel):
    """The offline extractive model as a tool-calling agent model: search first, then answer.

    When the conversation's last message is not a tool result, it calls
    `SEARCH_TOOL` with the last question; otherwise it answers that question
    from the documents of the tool results since then (see
    `ExtractiveChatModel`), streaming token by token.

    Example:
        >>> AgentDemoChatModel().bind_tools([])._llm_type
        'extractive-agent-demo'
    """

    _stopped: threading.Event = PrivateAttr(default_factory=threading.Event)

    @property
    @override
    def _llm_type(self) -> str:
        return "extractive-agent-demo"

    def stop(self) -> None:
        """End the answer being streamed (and any later one) at the next token.

        The agent streams from a worker thread that LangGraph waits for when
        the reader stops: the command line calls this on Ctrl-C so that it
        need not wait for the whole answer.

        Example:
            >>> model = AgentDemoChatModel()
            >>> model.stop()
            >>> list(model._stream([HumanMessage("Hi?"), ToolMessage("x", tool_call_id="a")]))
            []
        """
        self._stopped.set()

    @override
    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> AgentDemoChatModel:
        # It knows its one tool by name; nothing to bind.
        return self

    def reply(self, messages: Sequence[BaseMessage]) -> AIMessage:
        """The whole reply to ``messages``: a tool call, or a cited answer.

        Example:
            >>> AgentDemoChatModel().reply([HumanMessage("Hi?")]).tool_calls[0]["name"]
            'search_docs'
        """
        asked = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
        question = messages[asked[-1]].text if asked else ""
        if not messages or not isinstance(messages[-1], ToolMessage):
            call = {"name": SEARCH_TOOL, "args": {"query": question}, "id": f"search-{len(messages)}"}
            return AIMessage("", tool_calls=[{**call, "type": "tool_call"}])
        results = [m.text for m in messages[asked[-1] + 1 if asked else 0 :] if isinstance(m, ToolMessage)]
        return AIMessage(self.answer("\n".join(results) + f"\nQuestion: {question}"))

    @override
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.reply(messages))])

    @override
    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        reply = self.reply(messages)
        for index, call in enumerate(reply.tool_calls):
            chunk = {"name": call["name"], "args": json.dumps(call["args"]), "id": call["id"], "index": index}
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[chunk]))  # type: ignore[list-item]
        for token in _TOKEN.findall(reply.text):
            if self._stopped.is_set():
                return
            if self.delay:
                time.sleep(self.delay)
            yield ChatGenerationChunk(message=AIMessageChunk(content=token))


def demo_search_tool(documents: Sequence[Document] | None = None, *, k: int = 4) -> BaseTool:
    """The demo's retriever tool: BM25 over the corpus, documents handed over as the artifact.

    Example:
        >>> demo_search_tool(k=2).name
        'search_docs'
    """
    return create_retriever_tool(
        CorpusRetriever(documents=list(documents or load_corpus()), k=k),
        SEARCH_TOOL,
        "Search the langchain-refs documentation. Give the user's question as the query.",
        response_format="content_and_artifact",
    )


def build_demo_agent(
    *,
    style: ReferenceStyle | None = None,
    model: Any = None,
    documents: Sequence[Document] | None = None,
    k: int = 4,
    checkpointer: Any = None,
) -> Any:
    """``create_agent`` with the corpus behind `demo_search_tool` and `ReferencesMiddleware`, offline by default.

    Needs the ``agents`` extra (an ImportError without it). A LangGraph
    ``checkpointer`` keeps each thread (``thread_id`` in the config), so that
    a conversation's earlier turns go back to the model (the chat page uses
    one).

    Example:
        >>> agent = build_demo_agent()
        >>> state = agent.invoke({"messages": [{"role": "user", "content": "How do I run the tests?"}]})
        >>> print(state["messages"][-1].text)  # doctest: +ELLIPSIS
        The test suite runs offline with python -m pytest after installing the test extra[1]...
    """
    from langchain.agents import create_agent

    from langchain_refs.agents import ReferencesMiddleware

    return create_agent(
        model if model is not None else AgentDemoChatModel(),
        tools=[demo_search_tool(documents, k=k)],
        system_prompt="Answer from the documentation only: search it first.",
        middleware=[ReferencesMiddleware(style=style or TextReferenceStyle())],
        checkpointer=checkpointer,
    )
