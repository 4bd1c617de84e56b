"""LangChain's model cache beside the references: answers served again are rewritten, and rewritten as asked.

A chat model's cache (``cache=`` on the model, or ``set_llm_cache``) keys a
call by the model's parameters and the messages. Around `ReferencesChatModel`
(and so in an agent with `ReferencesMiddleware`), a cached answer must still
be rewritten, never served as another call's rewriting (another style,
other sources), and a model that must not be cached stays uncached.
Expected texts are written by hand.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("langchain.agents", reason="the agent tests need the agents extra: pip install -e '.[agents]'")

from langchain.agents import create_agent
from langchain_core.caches import InMemoryCache
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.globals import get_llm_cache, set_llm_cache
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, Generation

from langchain_refs import MarkdownReferenceStyle, ReferencesChatModel, ReferencesMiddleware, TextReferenceStyle
from tests.unit_tests.agent_fakes import CITY_DOCUMENTS, StatelessToolModel, retriever_tool

RAW_MARKER = re.compile(r"\]\(\s*id\s*=")
QUESTION = {"messages": [{"role": "user", "content": "What is the capital of France?"}]}
# The answer as TextReferenceStyle writes it (by hand): Paris is document 1 of the search for "Paris".
ANSWER = "Paris is the capital[1].\n\n- [1] Paris (https://example.org/paris)\n"


@pytest.fixture
def global_cache() -> Iterator[InMemoryCache]:
    """LangChain's process-wide cache, set for one test and put back after it."""
    before = get_llm_cache()
    cache = InMemoryCache()
    set_llm_cache(cache)
    yield cache
    set_llm_cache(before)


def agent_with(model: StatelessToolModel) -> Any:
    return create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        middleware=[ReferencesMiddleware(style=TextReferenceStyle())],
    )


# The model calls made by the end of each of three runs of the same question (by hand). Invoked: the
# first run calls twice (search, answer); the second finds the search call cached, but LangChain
# marks an answer its cache served (usage ``{"total_cost": 0}``), so the answer call sees another
# history and is made once more; the third finds both. Streamed: a served answer streams as chunks,
# which cannot carry that mark, so the second run's history is the first's and both calls are served.
CALLS_BY_RUN = {"invoke": [2, 3, 3], "messages": [2, 2, 2]}
# Without the middleware, the same cache serves the same agent (by hand): the mark, streamed or not.
BARE_CALLS_BY_RUN = [2, 3, 3]


def run_agent(agent: Any, mode: str) -> dict[str, Any]:
    """One run of the question: invoked, or streamed (the text checked for raw markers) and its state read."""
    if mode == "invoke":
        return agent.invoke(QUESTION)  # type: ignore[no-any-return]
    text = ""
    for stream_mode, part in agent.stream(QUESTION, stream_mode=["messages", "values"]):
        if stream_mode == "messages":
            chunk, metadata = part
            if metadata.get("langgraph_node") == "model":
                text += chunk.text
        else:
            state = part
    assert not RAW_MARKER.search(text)
    return state  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ["invoke", "messages"])
def test_an_agent_asked_again_is_answered_from_the_models_cache(mode: str) -> None:
    """The model's own cache serves the agent as it serves it alone (or better), each answer it serves rewritten."""
    bare = StatelessToolModel(answer="Paris is the capital.", cache=InMemoryCache())
    bare_agent = create_agent(bare, tools=[retriever_tool(CITY_DOCUMENTS)])
    model = StatelessToolModel(answer="Paris is the capital[1](id=1).", cache=InMemoryCache())
    agent = agent_with(model)
    for calls, bare_calls in zip(CALLS_BY_RUN[mode], BARE_CALLS_BY_RUN, strict=True):
        run_agent(bare_agent, mode)
        state = run_agent(agent, mode)
        assert (bare.calls, model.calls) == (bare_calls, calls)
        answer = state["messages"][-1]
        assert answer.text == ANSWER
        (block,) = [b for b in answer.content_blocks if b["type"] == "text"]
        assert [a["url"] for a in block["annotations"]] == ["https://example.org/paris"]
        assert [r["source"] for r in state["references"][-1]["references"]] == ["https://example.org/paris"]


async def answered(model: ReferencesChatModel, asked: Any, call: str) -> AIMessage:
    """``model``'s answer to ``asked``: invoked, or streamed and its chunks added up, sync or async."""
    if call == "invoke":
        return model.invoke(asked)
    if call == "ainvoke":
        return await model.ainvoke(asked)
    chunks = list(model.stream(asked)) if call == "stream" else [chunk async for chunk in model.astream(asked)]
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total  # type: ignore[return-value]


CALLS = ["invoke", "ainvoke", "stream", "astream"]


PARIS_ONLY = [Document("Paris is the capital of France.", metadata={"source": "https://example.org/paris"})]


@pytest.mark.parametrize("kept", ["chat", "text"])
@pytest.mark.parametrize("call", CALLS)
async def test_an_answer_the_inner_models_cache_keeps_is_served_rewritten(call: str, kept: str) -> None:
    """The inner model's cache holds an answer to the question: it is served, rewritten, with no call to the model.

    ``kept``: a chat generation, or a text one (what an older LangChain kept, which its chat models serve as text).
    """
    inner = StatelessToolModel(answer="unused", cache=InMemoryCache())
    text = "Paris is the capital[1](id=1)."
    generation = ChatGeneration(message=AIMessage(text)) if kept == "chat" else Generation(text=text)
    # The inner model's cache holds an answer for this question already (under LangChain's own key for it).
    inner.cache.update(*_key(inner, "capital?"), [generation])  # type: ignore[union-attr]
    wrapper = ReferencesChatModel(inner=inner, documents=PARIS_ONLY, style=TextReferenceStyle())
    answer = await answered(wrapper, "capital?", call)
    assert inner.calls == 0
    assert answer.text == "Paris is the capital[1].\n\n- [1] https://example.org/paris\n"
    if call.endswith("invoke") and kept == "chat":
        # LangChain's mark of an answer its cache served (set unchecked: a stream's chunks cannot carry it).
        assert answer.usage_metadata == {"total_cost": 0}


class ThreadNoting:
    """A passage scorer (`PairScorer`) that notes whether each call ran on the event loop's thread."""

    def __init__(self) -> None:
        self.on_loop: list[bool] = []

    def score(self, pairs: list[tuple[str, str]]) -> list[float]:
        try:
            asyncio.get_running_loop()
            self.on_loop.append(True)
        except RuntimeError:
            self.on_loop.append(False)
        return [0.5 for _ in pairs]


@pytest.mark.parametrize("call", ["ainvoke", "astream"])
async def test_a_served_answers_passages_are_found_off_the_event_loop(call: str) -> None:
    """A caller's passage scorer may call a model: for a served answer too, it runs off the event loop."""
    scorer = ThreadNoting()
    inner = StatelessToolModel(answer="unused", cache=InMemoryCache())
    inner.cache.update(*_key(inner, "capital?"), [ChatGeneration(message=AIMessage("Paris[1](id=1)."))])  # type: ignore[union-attr]
    wrapper = ReferencesChatModel(inner=inner, documents=PARIS_ONLY, style=TextReferenceStyle(), passages=scorer)
    await answered(wrapper, "capital?", call)
    assert (inner.calls, scorer.on_loop) == (0, [False])


class Noting(BaseCallbackHandler):
    """A callback handler of the model's own: the wrapper then reads the model's ``stream``, not its ``_stream``."""


@pytest.mark.parametrize("route", ["_stream", "stream"])
@pytest.mark.parametrize("call", CALLS)
async def test_the_inner_model_keeps_its_own_answer_not_the_rewritten_one(call: str, route: str) -> None:
    """A call the cache had not seen is made, and its answer kept as the model wrote it, under its own key."""
    cache = InMemoryCache()
    callbacks = [Noting()] if route == "stream" else None
    inner = StatelessToolModel(answer="unused", cache=cache, callbacks=callbacks)
    wrapper = ReferencesChatModel(inner=inner, documents=PARIS_ONLY, style=TextReferenceStyle())
    await answered(wrapper, "capital?", call)
    assert inner.calls == 1
    (kept,) = cache.lookup(*_key(inner, "capital?"))  # type: ignore[misc]
    # The model's answer to a question with no tool result: its search call, as it made it.
    assert (kept.message.text, [c["name"] for c in kept.message.tool_calls]) == ("", ["search"])
    assert [key for key in kept.message.response_metadata if key.startswith("langchain_refs")] == []


@pytest.mark.parametrize("call", CALLS)
async def test_the_tools_bound_are_in_the_key_as_the_model_alone_keys_them(call: str) -> None:
    """Tools bound through the wrapper reach the inner model's key: the entry its own call with them makes."""
    cache = InMemoryCache()
    inner = ToolBinding(answer="Paris is the capital[1](id=1).", cache=cache)
    wrapper = ReferencesChatModel(inner=inner, documents=PARIS_ONLY, style=TextReferenceStyle())
    await answered(wrapper.bind_tools([retriever_tool(CITY_DOCUMENTS)]), "capital?", call)  # type: ignore[arg-type]
    alone = inner.bind_tools([retriever_tool(CITY_DOCUMENTS)])
    assert alone.invoke("capital?").tool_calls[0]["name"] == "search"  # served: the call above kept it
    assert inner.calls == 1
    (key,) = cache._cache
    assert "'name': 'search'" in key[1]  # the bound tool is part of the model's key


def test_the_wrappers_own_cache_option_is_the_inner_models() -> None:
    """``cache=`` given to the wrapper is taken as the other model parameters are: ignored, with a warning."""
    with pytest.warns(UserWarning, match="ignores cache: the inner model's parameters"):
        wrapper = ReferencesChatModel(inner=StatelessToolModel(answer="x"), cache=InMemoryCache())
    assert wrapper.cache is False


def test_a_model_that_must_not_be_cached_is_not(global_cache: InMemoryCache) -> None:
    """``cache=False`` on the model holds around it too, with a process-wide cache set."""
    model = StatelessToolModel(answer="Paris is the capital[1](id=1).", cache=False)
    agent = agent_with(model)
    agent.invoke(QUESTION)
    agent.invoke(QUESTION)
    assert model.calls == 4
    assert not global_cache._cache


@pytest.mark.parametrize("call", CALLS)
async def test_a_cached_answer_is_never_another_calls_rewriting(global_cache: InMemoryCache, call: str) -> None:
    """The same model and question, rewritten in another style or with other sources: each gets its own."""
    inner = StatelessToolModel(answer="Paris is the capital[1](id=1).")
    text = "Paris is the capital of France."
    official = [Document(text, metadata={"source": "https://example.org/paris", "title": "Paris"})]
    mirror = [Document(text, metadata={"source": "https://mirror.example.net/paris", "title": "Paris"})]
    # After a tool result the model answers; the messages are the same for every wrapper below.
    asked = [("user", "capital?"), AIMessage("", tool_calls=[_call()]), _tool_result()]
    answers = [
        (await answered(ReferencesChatModel(inner=inner, documents=documents, style=style), asked, call)).text
        for documents, style in [
            (official, TextReferenceStyle()),
            (official, MarkdownReferenceStyle()),
            (mirror, TextReferenceStyle()),
            (official, TextReferenceStyle()),
        ]
    ]
    assert answers == [
        "Paris is the capital[1].\n\n- [1] Paris (https://example.org/paris)\n",
        "Paris is the capital<sup>[[1](https://example.org/paris)]</sup>.\n\n- **1** [Paris](https://example.org/paris)\n",
        "Paris is the capital[1].\n\n- [1] Paris (https://mirror.example.net/paris)\n",
        "Paris is the capital[1].\n\n- [1] Paris (https://example.org/paris)\n",
    ]
    # The model answered once: its own cache served the other three calls, each rewritten its own way.
    assert inner.calls == 1


def _key(model: StatelessToolModel, question: str) -> tuple[str, str]:
    """The cache key LangChain makes for ``model`` asked ``question`` alone (prompt, llm string)."""
    from langchain_core.load import dumps
    from langchain_core.messages import HumanMessage

    return dumps([HumanMessage(question)]), model._get_llm_string()


class ToolBinding(StatelessToolModel):
    """`StatelessToolModel` whose ``bind_tools`` binds them, as a provider's model does (into its calls' options)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        from langchain_core.utils.function_calling import convert_to_openai_tool

        return self.bind(tools=[convert_to_openai_tool(tool) for tool in tools], **kwargs)


def _call() -> dict[str, Any]:
    return {"name": "search", "args": {"query": "Paris"}, "id": "call_1", "type": "tool_call"}


def _tool_result() -> Any:
    from langchain_core.messages import ToolMessage

    return ToolMessage("<document id=1>\nParis is the capital of France.\n</document>", tool_call_id="call_1")
