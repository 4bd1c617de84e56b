"""ReferencesMiddleware in a deep agent (``deepagents.create_deep_agent``), with its own middleware stack.

A deep agent adds planning, a filesystem, subagents, summarization and its own
system prompt around the user's middleware; the references must come through
all of it. Expected values are written by hand.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest

if sys.version_info < (3, 11):  # deepagents itself needs Python 3.11
    pytest.skip("deepagents needs Python >= 3.11", allow_module_level=True)
pytest.importorskip("deepagents", reason="the deep agent tests need deepagents: pip install -e '.[test]'")

from deepagents import create_deep_agent
from langchain_core.messages import AIMessageChunk, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_refs import ReferencesMiddleware, TextReferenceStyle
from tests.unit_tests.agent_fakes import CITY_DOCUMENTS, ScriptedToolModel, Step, retriever_tool, say, search

PARIS, LYON, ROME = CITY_DOCUMENTS
RAW_MARKER = re.compile(r"\]\(\s*id\s*=")
ANSWER = "Paris is the capital[1](id=1). Rome is old[2](id=2)."
SYSTEM = "You answer questions about cities from the search results."
REWRITTEN = (
    "Paris is the capital[1]. Rome is old[2].\n\n"
    "- [1] Paris (https://example.org/paris)\n"
    "- [2] Rome (https://example.org/rome)\n"
)


def deep_agent(model: ScriptedToolModel) -> Any:
    return create_deep_agent(
        model=model,
        tools=[retriever_tool([PARIS, ROME])],
        middleware=[ReferencesMiddleware(style=TextReferenceStyle())],
        system_prompt=SYSTEM,
    )


def question() -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": "Which of these cities are capitals?"}]}


def test_a_deep_agent_reads_tagged_documents_and_answers_with_numbers() -> None:
    """The deep agent's model reads each document with its id; the final answer is numbered and annotated."""
    model = ScriptedToolModel(script=[search("*"), say(ANSWER)])
    state = deep_agent(model).invoke(question())
    last_call = model.seen[-1]
    shown = [m.text for m in last_call if isinstance(m, ToolMessage)]
    assert shown == [
        f"<document id=1>\n{PARIS.page_content}\n</document>\n<document id=2>\n{ROME.page_content}\n</document>"
    ]
    # The agent's own system prompt is kept, and the citation instructions are added to it.
    (system,) = [m for m in last_call if isinstance(m, SystemMessage)]
    assert system.text.startswith(SYSTEM)
    assert "[NUMBER](id=ID_NUMBER)" in system.text
    answer = state["messages"][-1]
    assert answer.text == REWRITTEN
    annotations = [a for b in answer.content_blocks if b["type"] == "text" for a in b.get("annotations", [])]
    assert [(a["url"], a["cited_text"]) for a in annotations] == [
        ("https://example.org/paris", "Paris is the capital of France."),
        ("https://example.org/rome", "Rome is the capital of Italy."),
    ]


def test_a_deep_agent_streams_rewritten_text_in_messages_mode() -> None:
    """stream_mode='messages' through the deep agent's stack: no raw marker, the same text as the final answer."""
    model = ScriptedToolModel(script=[search("*"), say(ANSWER)])
    streamed = ""
    for message, _metadata in deep_agent(model).stream(question(), stream_mode="messages"):
        if isinstance(message, AIMessageChunk):
            streamed += message.text
    assert not RAW_MARKER.search(streamed)
    assert streamed == REWRITTEN


async def test_a_deep_agent_streams_rewritten_text_async() -> None:
    """The same through astream, with the final state in values mode."""
    model = ScriptedToolModel(script=[search("*"), say(ANSWER)])
    streamed = ""
    final: dict[str, Any] = {}
    async for mode, payload in deep_agent(model).astream(question(), stream_mode=["messages", "values"]):
        if mode == "messages" and isinstance(payload[0], AIMessageChunk):
            streamed += payload[0].text
        elif mode == "values":
            final = payload
    assert streamed == REWRITTEN
    assert final["messages"][-1].text == REWRITTEN


class Researcher(ScriptedToolModel):
    """The subagent's model: searches for what its task asks, then cites what it read; its answers' ids are its own.

    It chooses by what it reads, not by a script's turn: two tasks may run it at once.
    """

    def _next(self, messages: list[Any]) -> tuple[Step, str]:
        self.seen.append(list(messages))
        self.step += 1
        task = next(m.text for m in messages if isinstance(m, HumanMessage))
        city = "rome" if "Rome" in task else "paris"
        if not any(isinstance(m, ToolMessage) for m in messages):
            return search(city), f"research-{self.step}"
        sentence = "Rome is old" if city == "rome" else "Paris is the capital"
        return say(f"{sentence}[1](id=1)."), f"research-{self.step}"


def task(question: str, call_id: str = "call_task") -> tuple[str, str, dict[str, Any]]:
    return (call_id, "task", {"description": question, "subagent_type": "researcher"})


def researched(parent: ScriptedToolModel, researcher: ScriptedToolModel, *, parent_cites: bool, **options: Any) -> Any:
    """A deep agent whose ``researcher`` subagent searches with its own ReferencesMiddleware."""
    subagent = {
        "name": "researcher",
        "description": "Finds facts about cities.",
        "system_prompt": "You research cities.",
        "tools": [retriever_tool(CITY_DOCUMENTS)],
        "model": researcher,
        "middleware": [ReferencesMiddleware(style=TextReferenceStyle())],
    }
    return create_deep_agent(
        model=parent,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        subagents=[subagent],  # type: ignore[list-item]
        middleware=[ReferencesMiddleware(style=TextReferenceStyle())] if parent_cites else [],
        **options,
    )


RESEARCHED = "Paris is the capital[1].\n\n- [1] Paris (https://example.org/paris)\n"
# The passage the researcher's citation quotes (its first sentence of the Paris document).
PARIS_CAPITAL = "Paris is the capital of France."


@pytest.mark.parametrize("parent_cites", [True, False], ids=["parent cites too", "subagent only"])
def test_a_subagent_with_its_own_middleware_hands_its_parent_a_rewritten_answer(parent_cites: bool) -> None:
    """The subagent reads tagged documents and answers with numbers; the parent reads that answer as the task's result.

    The subagent's record of its answer joins the parent's ``references``
    (deepagents copies a subagent's state keys up), under the subagent's
    message id; the parent's answer, which cites nothing, adds none.
    """
    parent = ScriptedToolModel(script=[Step(tool_calls=[task("Which city is the capital?")]), say("Paris.")])
    researcher = Researcher(script=[])
    state = researched(parent, researcher, parent_cites=parent_cites).invoke(question())
    shown = [m.text for m in researcher.seen[-1] if isinstance(m, ToolMessage)]
    assert shown == [f"<document id=1>\n{PARIS.page_content}\n</document>"]
    # deepagents hands the parent the subagent's last message, stripped of its trailing newline; a parent that
    # cites reads the source it cites after it, with an id of the parent's thread.
    handed = RESEARCHED.rstrip() + (f"\n\n<document id=1>\n{PARIS_CAPITAL}\n</document>" if parent_cites else "")
    assert [m.text for m in parent.seen[-1] if isinstance(m, ToolMessage)] == [handed]
    assert state["messages"][-1].text == "Paris."
    if parent_cites:
        (record,) = state["references"]
        assert record["message_id"] == "research-2"
        assert [r["source"] for r in record["references"]] == ["https://example.org/paris"]
    else:
        assert "references" not in state


def test_the_parent_cites_the_sources_its_subagent_cited() -> None:
    """The parent reads the researcher's answer followed by the source it cites (tagged with an id of the
    parent's thread, the passage the researcher cited as its text), and its own answer cites it: numbered, listed
    with the source's title and URL, annotated, recorded with that passage."""
    parent = ScriptedToolModel(
        script=[Step(tool_calls=[task("Which city is the capital?")]), say("France's capital is Paris[1](id=1).")]
    )
    state = researched(parent, Researcher(script=[]), parent_cites=True).invoke(question())
    answer = state["messages"][-1]
    assert answer.text == "France's capital is Paris[1].\n\n- [1] Paris (https://example.org/paris)\n"
    (annotation,) = answer.content[0]["annotations"]
    assert (annotation["url"], annotation["title"], annotation["cited_text"]) == (
        "https://example.org/paris",
        "Paris",
        PARIS_CAPITAL,
    )
    own = [r for r in state["references"] if r["message_id"] == answer.id]
    assert [c["passage"]["excerpt"] for c in own[0]["citations"]] == [PARIS_CAPITAL]


def test_two_subagents_sources_get_ids_of_their_own() -> None:
    """Two tasks at once: each result is followed by the source its researcher cited, each with its own id (in
    the order of the calls); the parent cites both."""
    parent = ScriptedToolModel(
        script=[
            Step(tool_calls=[task("Paris?", "call_1"), task("Rome?", "call_2")]),
            say("Paris is the capital[1](id=1). Rome is the capital of Italy[2](id=2)."),
        ]
    )
    state = researched(parent, Researcher(script=[]), parent_cites=True).invoke(question())
    shown = [m.text for m in parent.seen[-1] if isinstance(m, ToolMessage)]
    tagged = [re.findall(r"<document id=(\d+)>\n([^\n]*)", text) for text in shown]
    assert tagged == [[("1", PARIS_CAPITAL)], [("2", "Rome is the capital of Italy.")]]
    assert state["messages"][-1].text == (
        "Paris is the capital[1]. Rome is the capital of Italy[2].\n\n"
        "- [1] Paris (https://example.org/paris)\n- [2] Rome (https://example.org/rome)\n"
    )


class TwoCities(Researcher):
    """A researcher whose answer to a task about both cities cites Paris and Rome, to any other Paris alone."""

    def _next(self, messages: list[Any]) -> tuple[Step, str]:
        self.seen.append(list(messages))
        self.step += 1
        task = next(m.text for m in messages if isinstance(m, HumanMessage))
        if not any(isinstance(m, ToolMessage) for m in messages):
            return search("*"), f"research-{self.step}"
        both = "Paris is the capital[1](id=1). Rome is old[2](id=3)."
        return say(both if "both" in task else "Paris is the capital[1](id=1)."), f"research-{self.step}"


def test_a_result_citing_more_is_matched_with_its_own_record_not_a_smaller_one() -> None:
    """Two tasks at once, one answer's claims part of the other's: each result is followed by its own answer's
    sources (the longer one's Rome source is not lost to the shorter answer's record)."""
    parent = ScriptedToolModel(
        script=[Step(tool_calls=[task("both cities", "call_1"), task("only Paris", "call_2")]), say("Both.")]
    )
    researched(parent, TwoCities(script=[]), parent_cites=True).invoke(question())
    shown = [m.text for m in parent.seen[-1] if isinstance(m, ToolMessage)]
    tagged = [re.findall(r"<document id=(\d+)>\n([^\n]*)", text) for text in shown]
    assert tagged == [[("1", PARIS_CAPITAL), ("2", "Rome is the capital of Italy.")], [("1", PARIS_CAPITAL)]]


def test_a_subagents_record_joins_the_parents_earlier_ones() -> None:
    """Second turn: the researcher's record is added to the parent's own of the first turn, which stays."""
    parent = ScriptedToolModel(
        script=[search("rome"), say("Rome is old[1](id=1)."), Step(tool_calls=[task("Capital?")]), say("Paris.")]
    )
    agent = researched(parent, Researcher(script=[]), parent_cites=True, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "two turns"}}
    agent.invoke({"messages": [{"role": "user", "content": "Rome?"}]}, config)
    state = agent.invoke({"messages": [{"role": "user", "content": "Capital?"}]}, config)
    assert [(r["message_id"], r["references"][0]["source"]) for r in state["references"]] == [
        ("answer-2", "https://example.org/rome"),
        ("research-2", "https://example.org/paris"),
    ]


def test_two_subagents_at_once_each_add_their_record() -> None:
    """Two tasks in one step: both records reach the parent (before, two updates of one key in a step failed)."""
    parent = ScriptedToolModel(
        script=[Step(tool_calls=[task("Paris?", "call_1"), task("Rome?", "call_2")]), say("Both.")]
    )
    state = researched(parent, Researcher(script=[]), parent_cites=True).invoke(question())
    sources = sorted(r["references"][0]["source"] for r in state["references"])
    assert sources == ["https://example.org/paris", "https://example.org/rome"]
    assert all(r["message_id"].startswith("research-") for r in state["references"])


def test_a_subagent_streams_rewritten_text_in_its_namespace() -> None:
    """stream_mode='messages', subgraphs=True: the researcher's tokens stream rewritten, no raw marker anywhere."""
    parent = ScriptedToolModel(script=[Step(tool_calls=[task("Which city is the capital?")]), say("Paris.")])
    researcher = Researcher(script=[])
    by_namespace: dict[tuple[str, ...], str] = {}
    agent = researched(parent, researcher, parent_cites=True)
    for namespace, (message, _metadata) in agent.stream(question(), stream_mode="messages", subgraphs=True):
        if isinstance(message, AIMessageChunk):
            key = tuple(n.split(":")[0] for n in namespace)
            by_namespace[key] = by_namespace.get(key, "") + message.text
    assert by_namespace == {(): "Paris.", ("tools",): RESEARCHED}
