"""manage_references(prompt | model) inside a LangGraph node: the "messages" stream shows rewritten text only."""

from __future__ import annotations

import asyncio
import re
from typing import Any, ClassVar

import pytest

pytest.importorskip("langgraph.graph", reason="the graph-node tests need the agents extra: pip install -e '.[agents]'")

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.prompts import ChatPromptTemplate
from langgraph.graph import END, START, MessagesState, StateGraph

from langchain_refs import TextReferenceStyle, manage_references

DOCUMENTS = [
    Document("Paris is the capital of France.", metadata={"source": "https://w.org/Paris", "title": "Paris"}),
    Document("France is in western Europe.", metadata={"source": "https://w.org/France", "title": "France"}),
]
ANSWER = "Paris[1](id=1) is in Europe[2](id=2)."
# Written by hand.
EXPECTED = "Paris[1] is in Europe[2].\n\n- [1] Paris (https://w.org/Paris)\n- [2] France (https://w.org/France)\n"
RAW_MARKER = re.compile(r"\]\(\s*id\s*=")


def chain() -> Any:
    prompt = ChatPromptTemplate.from_template("{question}")
    model = GenericFakeChatModel(messages=iter([AIMessage(ANSWER)]))
    return manage_references(prompt | model, style=TextReferenceStyle())


def graph(call: str) -> Any:
    references = chain()

    def answer(state: MessagesState) -> dict[str, Any]:
        question = {"question": state["messages"][-1].text, "documents": DOCUMENTS}
        if call == "invoke":
            return {"messages": [references.invoke(question)]}
        merged = None
        for chunk in references.stream(question):
            merged = chunk if merged is None else merged + chunk
        return {"messages": [merged]}

    async def aanswer(state: MessagesState) -> dict[str, Any]:
        question = {"question": state["messages"][-1].text, "documents": DOCUMENTS}
        return {"messages": [await references.ainvoke(question)]}

    builder = StateGraph(MessagesState)
    builder.add_node("answer", aanswer if call == "ainvoke" else answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile()


QUESTION = {"messages": [{"role": "user", "content": "Where is Paris?"}]}


@pytest.mark.parametrize("call", ["invoke", "stream"])
def test_messages_stream_of_a_node_shows_rewritten_text(call: str) -> None:
    """stream_mode="messages": the node's chunks add up to the rewritten answer, with no raw marker anywhere."""
    texts = [chunk.text for chunk, meta in graph(call).stream(QUESTION, stream_mode="messages")]
    assert not any(RAW_MARKER.search(t) for t in texts)
    assert "".join(texts) == EXPECTED
    assert len(texts) > 2  # streamed, not one final message


def test_astream_messages_of_a_node_shows_rewritten_text() -> None:
    """The async graph stream, ainvoke in the node: the same rewritten text."""

    async def run() -> list[str]:
        return [c.text async for c, _ in graph("ainvoke").astream(QUESTION, stream_mode="messages")]

    texts = asyncio.run(run())
    assert not any(RAW_MARKER.search(t) for t in texts)
    assert "".join(texts) == EXPECTED


def test_node_state_is_rewritten_and_the_answer_reported_once() -> None:
    """The final state holds the rewritten answer; one LLM run reports an answer (the rewritten stream's has none)."""

    class Ends(BaseCallbackHandler):
        answers: ClassVar[list[Any]] = []

        def on_llm_end(self, response: Any, **kwargs: Any) -> None:
            Ends.answers.extend(g.message for generations in response.generations for g in generations)

    state = None
    for mode, data in graph("invoke").stream(QUESTION, {"callbacks": [Ends()]}, stream_mode=["messages", "values"]):
        if mode == "values":
            state = data
    assert state is not None
    assert state["messages"][-1].text == EXPECTED
    assert [m.text for m in Ends.answers] == [ANSWER]
