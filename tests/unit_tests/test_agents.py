"""ReferencesMiddleware in create_agent: every stream mode rewritten, thread-stable ids, standard citations."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import re
import threading
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import regex

pytest.importorskip("langchain.agents", reason="the agent tests need the agents extra: pip install -e '.[agents]'")

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.tools import ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from langchain_refs import (
    ID_SYNTAX,
    CitationLeakWarning,
    MarkerSyntax,
    ReferencesChatModel,
    ReferencesMiddleware,
    TextReferenceStyle,
    citation_instructions,
    documents_tool_output,
)
from langchain_refs.agents import MODEL_TEXT_KEY, ThreadDocuments
from tests.unit_tests.agent_fakes import (
    CITY_DOCUMENTS,
    ScriptedToolModel,
    Step,
    retriever_tool,
    say,
    search,
)
from tests.unit_tests.fakes import ChunkExactChatModel

PARIS, LYON, ROME = CITY_DOCUMENTS
QUESTION = {"messages": [{"role": "user", "content": "Tell me about French and Italian cities."}]}
# Written by hand: round 1 searches Paris and Lyon in parallel (ids 1, 2), round 2 Rome (id 3).
ANSWER = "Paris is the capital of France[1](id=1). Lyon is known for silk[2](id=2)[3](id=1). Rome is old[4](id=3)."
EXPECTED = (
    "Paris is the capital of France[1]. Lyon is known for silk[2][1]. Rome is old[3].\n\n"
    "- [1] Paris (https://example.org/paris)\n"
    "- [2] Lyon (https://example.org/lyon)\n"
    "- [3] Rome (https://example.org/rome)\n"
)
RAW_MARKER = re.compile(r"\]\(\s*id\s*=")


def two_rounds(size: int = 5) -> list[Step]:
    return [search("paris", "lyon"), search("rome", first_id=3), say(ANSWER, size)]


def build(script: list[Step], **options: Any) -> tuple[Any, ScriptedToolModel]:
    model = ScriptedToolModel(script=script)
    middleware = ReferencesMiddleware(style=options.pop("style", TextReferenceStyle()), **options)
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[middleware])
    return agent, model


def model_texts(stream: Iterator[tuple[Any, dict[str, Any]]]) -> list[str]:
    """The text of every message chunk the model node streamed, in order."""
    return [chunk.text for chunk, metadata in stream if metadata.get("langgraph_node") == "model"]


def text_block(message: BaseMessage) -> dict[str, Any]:
    blocks = [b for b in message.content_blocks if b["type"] == "text"]
    assert len(blocks) == 1
    return blocks[0]


def check_citations(message: BaseMessage) -> list[dict[str, Any]]:
    """Every Citation annotation slices the text block exactly and quotes its cited document."""
    block = text_block(message)
    annotations = block["annotations"]
    by_url = {d.metadata["source"]: d for d in CITY_DOCUMENTS}
    for annotation in annotations:
        assert annotation["type"] == "citation"
        cited = block["text"][annotation["start_index"] : annotation["end_index"]]
        assert cited == message.response_metadata["references"]["citations"][annotations.index(annotation)]["text"]
        document = by_url[annotation["url"]]
        assert annotation["cited_text"] in document.page_content
        extras = annotation["extras"]
        assert document.page_content[extras["document_start"] : extras["document_end"]] == annotation["cited_text"]
    return annotations


def test_invoke_rewrites_the_answer_after_two_tool_rounds() -> None:
    """invoke returns the rewritten answer: numbered by source, listed, no raw markers."""
    agent, _ = build(two_rounds())
    answer = agent.invoke(QUESTION)["messages"][-1]
    assert answer.text == EXPECTED


def test_final_message_carries_standard_citations() -> None:
    """The text block has Citation annotations: exact slices, url/title, cited_text from the cited document."""
    agent, _ = build(two_rounds())
    answer = agent.invoke(QUESTION)["messages"][-1]
    annotations = check_citations(answer)
    assert [(a["title"], answer.text[a["start_index"] : a["end_index"]]) for a in annotations] == [
        ("Paris", "Paris is the capital of France"),
        ("Lyon", "Lyon is known for silk"),
        ("Paris", "Lyon is known for silk"),
        ("Rome", "Rome is old"),
    ]
    # The best supporting sentence of each cited document, chosen by hand.
    assert annotations[0]["cited_text"] == "Paris is the capital of France."
    assert annotations[1]["cited_text"] == "Lyon is known for its silk and its food."


def test_references_data_on_the_message_and_in_the_state() -> None:
    """response_metadata["references"] and the state's references name the thread's documents by id."""
    agent, _ = build(two_rounds())
    state = agent.invoke(QUESTION)
    answer = state["messages"][-1]
    references = answer.response_metadata["references"]["references"]
    assert [(r["number"], r["title"], r["document_positions"]) for r in references] == [
        (1, "Paris", [1]),
        (2, "Lyon", [2]),
        (3, "Rome", [3]),
    ]
    assert answer.response_metadata[MODEL_TEXT_KEY] == ANSWER
    assert state["references"] == [{"message_id": answer.id, **answer.response_metadata["references"]}]


def test_stream_messages_mode_shows_only_rewritten_text() -> None:
    """stream(stream_mode="messages"): no chunk holds a raw marker; the chunks add up to the answer."""
    agent, _ = build(two_rounds(size=3))
    texts = model_texts(agent.stream(QUESTION, stream_mode="messages"))
    assert not [t for t in texts if RAW_MARKER.search(t) or "(id=" in t]
    assert "".join(texts) == EXPECTED


def test_stream_messages_chunks_merge_into_one_annotated_block() -> None:
    """The streamed chunks of the answer share one id and merge into one text block with the citations."""
    agent, _ = build(two_rounds())
    chunks = [c for c, meta in agent.stream(QUESTION, stream_mode="messages") if meta["langgraph_node"] == "model"]
    answer_chunks = [c for c in chunks if c.id == chunks[-1].id]
    merged = answer_chunks[0]
    for chunk in answer_chunks[1:]:
        merged = merged + chunk
    assert merged.text == EXPECTED
    assert len(check_citations(merged)) == 4


def test_astream_messages_mode_shows_only_rewritten_text() -> None:
    """astream(stream_mode="messages"): the same rewritten text, async."""
    agent, _ = build(two_rounds(size=2))

    async def collect() -> list[str]:
        return [
            chunk.text
            async for chunk, meta in agent.astream(QUESTION, stream_mode="messages")
            if meta["langgraph_node"] == "model"
        ]

    texts = asyncio.run(collect())
    assert not [t for t in texts if "(id=" in t]
    assert "".join(texts) == EXPECTED


def test_ainvoke_rewrites_the_answer() -> None:
    """ainvoke gives the same rewritten, annotated answer as invoke."""
    agent, _ = build(two_rounds())
    answer = asyncio.run(agent.ainvoke(QUESTION))["messages"][-1]
    assert answer.text == EXPECTED
    assert len(check_citations(answer)) == 4


def test_updates_and_values_modes_are_rewritten() -> None:
    """stream_mode="updates" and "values" carry the state: rewritten."""
    agent, _ = build(two_rounds())
    updates = list(agent.stream(QUESTION, stream_mode="updates"))
    model_updates = [u["model"]["messages"][-1] for u in updates if "model" in u]
    assert model_updates[-1].text == EXPECTED
    agent, _ = build(two_rounds())
    values = list(agent.stream(QUESTION, stream_mode="values"))
    assert values[-1]["messages"][-1].text == EXPECTED


def v3_or_skip(agent: Any) -> None:
    # langgraph < 1.2 has no v3 protocol (its graphs inherit a stream_events that refuses v3).
    if importlib.util.find_spec("langgraph.stream") is None or not hasattr(agent, "stream_events"):
        pytest.skip("SKIPPED LOUDLY: this langgraph has no stream_events(version='v3') (needs langgraph>=1.2)")


def test_stream_events_v3_raw_events_are_rewritten() -> None:
    """stream_events(version="v3"): text deltas have no raw marker; the finish event holds the answer and citations."""
    agent, _ = build(two_rounds(size=3))
    v3_or_skip(agent)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LangChainBetaWarning: v3 is experimental
        run = agent.stream_events(QUESTION, version="v3")
        deltas: list[str] = []
        finished: list[dict[str, Any]] = []
        for event in run:
            if event["method"] != "messages":
                continue
            payload, _ = event["params"]["data"]
            if payload.get("event") == "content-block-delta" and payload["delta"]["type"] == "text-delta":
                deltas.append(payload["delta"]["text"])
            elif payload.get("event") == "content-block-finish" and payload["content"]["type"] == "text":
                finished.append(payload["content"])
    assert not [d for d in deltas if "(id=" in d]
    assert "".join(deltas) == EXPECTED
    assert [f["text"] for f in finished] == [EXPECTED]
    assert [a["title"] for a in finished[0]["annotations"]] == ["Paris", "Lyon", "Paris", "Rome"]


def test_stream_events_v3_message_streams_and_output_are_rewritten() -> None:
    """stream_events(version="v3"): run.messages text and the final state are rewritten."""
    agent, _ = build(two_rounds(size=3))
    v3_or_skip(agent)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = agent.stream_events(QUESTION, version="v3")
        texts = ["".join(stream.text) for stream in run.messages]
        output = run.output
    assert texts[-1] == EXPECTED
    assert not [t for t in texts if "(id=" in t]
    assert output["messages"][-1].text == EXPECTED
    check_citations(output["messages"][-1])


def test_astream_events_v3_is_rewritten() -> None:
    """astream_events(version="v3"): the async lane shows the same rewritten text."""
    agent, _ = build(two_rounds(size=3))
    v3_or_skip(agent)

    async def collect() -> tuple[list[str], Any]:
        run = await agent.astream_events(QUESTION, version="v3")
        texts = []
        async for stream in run.messages:
            texts.append("".join([t async for t in stream.text]))
        return texts, await run.output()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        texts, output = asyncio.run(collect())
    assert texts[-1] == EXPECTED
    assert output["messages"][-1].text == EXPECTED


def test_astream_events_v2_shows_only_the_rewritten_run() -> None:
    """astream_events(version="v2"): on_chat_model_stream events carry no raw marker."""
    agent, _ = build(two_rounds(size=3))

    async def collect() -> list[str]:
        return [
            event["data"]["chunk"].text
            async for event in agent.astream_events(QUESTION, version="v2")
            if event["event"] == "on_chat_model_stream"
        ]

    texts = asyncio.run(collect())
    assert not [t for t in texts if "(id=" in t]
    assert "".join(texts) == EXPECTED


def test_tool_calls_survive_the_wrapper() -> None:
    """Parallel tool calls streamed through the wrapper reach the tools node intact."""
    agent, model = build(two_rounds())
    state = agent.invoke(QUESTION)
    calls = [c for m in state["messages"] if isinstance(m, AIMessage) for c in m.tool_calls]
    assert [(c["id"], c["args"]) for c in calls] == [
        ("call_1", {"query": "paris"}),
        ("call_2", {"query": "lyon"}),
        ("call_3", {"query": "rome"}),
    ]
    assert len(model.seen) == 3


def test_model_sees_documents_with_thread_ids_and_the_instruction() -> None:
    """Tool results reach the model as <document id=k> blocks; FORMAT_REFERENCES joins the system prompt."""
    agent, model = build(two_rounds())
    agent.invoke(QUESTION)
    first, _, last = model.seen
    assert not any(isinstance(m, SystemMessage) for m in first)  # no documents yet: nothing to cite
    system = last[0]
    assert isinstance(system, SystemMessage)
    assert "[NUMBER](id=ID_NUMBER)" in system.text
    tools = [m.text for m in last if isinstance(m, ToolMessage)]
    assert tools == [
        f"<document id=1>\n{PARIS.page_content}\n</document>",
        f"<document id=2>\n{LYON.page_content}\n</document>",
        f"<document id=3>\n{ROME.page_content}\n</document>",
    ]


def test_user_system_prompt_is_kept_and_own_rule_respected() -> None:
    """The user's system prompt is kept; a prompt that already asks for (id=...) markers gets no second rule."""
    model = ScriptedToolModel(script=two_rounds())
    agent = create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        system_prompt="Be brief. Cite as [n](id=k).",
        middleware=[ReferencesMiddleware(style=TextReferenceStyle())],
    )
    agent.invoke(QUESTION)
    assert model.seen[-1][0].text == "Be brief. Cite as [n](id=k)."
    model = ScriptedToolModel(script=two_rounds())
    agent = create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        system_prompt="Be brief.",
        middleware=[ReferencesMiddleware(style=TextReferenceStyle())],
    )
    agent.invoke(QUESTION)
    assert model.seen[-1][0].text.startswith("Be brief.\n\nWhen referencing the documents")


def test_same_document_keeps_its_id_across_turns() -> None:
    """With a checkpointer, a document retrieved again next turn keeps its id; new ones get new ids."""
    script = [
        search("rome"),
        say("Rome is old[1](id=1)."),
        search("lyon rome", first_id=2),
        say("Lyon has silk[1](id=2). Rome is old[2](id=1)."),
    ]
    model = ScriptedToolModel(script=script)
    agent = create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        middleware=[ReferencesMiddleware(style=TextReferenceStyle())],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "one"}}
    first = agent.invoke({"messages": [{"role": "user", "content": "Rome?"}]}, config)
    second = agent.invoke({"messages": [{"role": "user", "content": "Lyon?"}]}, config)
    # Turn 2's artifacts come back from the checkpointer as dicts: still read.
    assert isinstance(second["messages"][2].artifact[0], dict)
    shown = [m.text for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert shown == [
        f"<document id=1>\n{ROME.page_content}\n</document>",
        f"<document id=2>\n{LYON.page_content}\n</document>\n<document id=1>\n{ROME.page_content}\n</document>",
    ]
    assert first["messages"][-1].text == "Rome is old[1].\n\n- [1] Rome (https://example.org/rome)\n"
    assert second["messages"][-1].text == (
        "Lyon has silk[1]. Rome is old[2].\n\n- [1] Lyon (https://example.org/lyon)\n"
        "- [2] Rome (https://example.org/rome)\n"
    )
    assert [len(e["references"]) for e in second["references"]] == [1, 2]


def test_ids_of_two_tool_calls_never_collide() -> None:
    """Documents of two parallel tool calls get distinct ids; a document in both gets one."""
    messages = [
        ToolMessage("", tool_call_id="a", artifact=[PARIS, ROME]),
        ToolMessage("", tool_call_id="b", artifact=[LYON, {"page_content": ROME.page_content, **_dict(ROME)}]),
    ]
    thread = ThreadDocuments.from_messages(messages)
    assert [thread.id_of(d) for d in (PARIS, ROME, LYON)] == [1, 2, 3]
    assert len(thread.documents) == 3


def _dict(document: Document) -> dict[str, Any]:
    return {"metadata": dict(document.metadata), "id": document.id, "type": "Document"}


def test_document_without_id_is_known_by_its_content() -> None:
    """A document with no id keeps its id by text and metadata; another source's same text does not share it."""
    twin = Document(ROME.page_content, metadata={"source": "https://mirror.org/rome"})
    messages = [
        ToolMessage("", tool_call_id="a", artifact=[ROME]),
        ToolMessage("", tool_call_id="b", artifact=[Document(ROME.page_content, metadata=dict(ROME.metadata)), twin]),
    ]
    thread = ThreadDocuments.from_messages(messages)
    assert [thread.id_of(d) for d in (ROME, twin)] == [1, 2]


def test_model_sees_its_earlier_answer_raw_by_default() -> None:
    """Next turn, the model reads its own earlier answer with raw markers, never the rendered list."""
    script = [search("rome"), say("Rome is old[1](id=1)."), say("Yes, old[1](id=1).")]
    model = ScriptedToolModel(script=script)
    agent = create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        middleware=[ReferencesMiddleware(style=TextReferenceStyle())],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [{"role": "user", "content": "Rome?"}]}, config)
    state = agent.invoke({"messages": [{"role": "user", "content": "Old?"}]}, config)
    earlier = [m for m in model.seen[-1] if isinstance(m, AIMessage) and m.text]
    assert [m.text for m in earlier] == ["Rome is old[1](id=1)."]
    # The user's copy (the state) stays rendered.
    assert state["messages"][3].text == "Rome is old[1].\n\n- [1] Rome (https://example.org/rome)\n"
    assert state["messages"][-1].text == "Yes, old[1].\n\n- [1] Rome (https://example.org/rome)\n"


def test_plain_history_takes_the_citations_out() -> None:
    """history="plain": the model reads its earlier answer without markers or list."""
    script = [search("rome"), say("Rome is old[1](id=1)."), say("Yes.")]
    model = ScriptedToolModel(script=script)
    agent = create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        middleware=[ReferencesMiddleware(style=TextReferenceStyle(), history="plain")],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [{"role": "user", "content": "Rome?"}]}, config)
    agent.invoke({"messages": [{"role": "user", "content": "Old?"}]}, config)
    assert [m.text for m in model.seen[-1] if isinstance(m, AIMessage) and m.text] == ["Rome is old."]


# Another syntax read: what the model is asked for, and how it reads its earlier answer (hand-written).
OTHER_SYNTAXES = [
    ("bracket", "Rome is old [1].", '"[ID_NUMBER]"', "Rome is old [1]."),
    ("bracket", "Rome is old[1](id=1) [1].", '"[ID_NUMBER]"', "Rome is old[1](id=1) [1]."),
    ("dagger", "Rome is old【1†rome】.", '"【ID_NUMBER†source】"', "Rome is old【1†source】."),
    (["bracket", "id"], "Rome is old [1].", '"[ID_NUMBER]"', "Rome is old [1]."),
    (["id", "bracket"], "Rome is old [1].", '"[NUMBER](id=ID_NUMBER)"', "Rome is old [1](id=1)."),
]


@pytest.mark.parametrize(("syntaxes", "answer", "asked", "read_next_turn"), OTHER_SYNTAXES)
def test_another_syntax_is_asked_for_and_read_back_in_it(
    syntaxes: Any, answer: str, asked: str, read_next_turn: str
) -> None:
    """The default rule and the raw history follow ``syntaxes``: the model is never taught a syntax not read."""
    model = ScriptedToolModel(script=[search("rome"), say(answer), say("Yes.")])
    agent = create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        middleware=[ReferencesMiddleware(style=TextReferenceStyle(), syntaxes=syntaxes)],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t"}}
    first = agent.invoke({"messages": [{"role": "user", "content": "Rome?"}]}, config)
    assert first["messages"][-1].text.endswith("- [1] Rome (https://example.org/rome)\n")
    system = model.seen[-1][0]
    assert isinstance(system, SystemMessage)
    assert f"Use {asked} for the citation" in system.text
    agent.invoke({"messages": [{"role": "user", "content": "Old?"}]}, config)
    assert [m.text for m in model.seen[-1] if isinstance(m, AIMessage) and m.text] == [read_next_turn]
    system = model.seen[-1][0]
    assert system.text.count("When referencing the documents") == 1


def test_a_rule_for_a_syntax_not_read_is_an_error() -> None:
    """Asking for [n](id=k) while only [k] is read would leave every citation raw: refused when built."""
    with pytest.raises(ValueError, match=r"instructions ask for \[n\]\(id=k\) markers, which syntaxes 'bracket'"):
        ReferencesMiddleware(syntaxes="bracket", instructions="Cite as [n](id=k).")
    own = MarkerSyntax(name="caret", opener="^", pattern=regex.compile(r"\^(?P<ids>[0-9]+)\^"))
    with pytest.raises(ValueError, match=r"no citation rule for the syntaxes 'caret': pass instructions="):
        ReferencesMiddleware(syntaxes=own)
    # With a rule of one's own (or none), a syntax of one's own is taken; its history is read plain.
    assert ReferencesMiddleware(syntaxes=own, instructions="Cite as ^k^.").instructions == "Cite as ^k^."
    assert ReferencesMiddleware(syntaxes=own, instructions=None).instructions is None
    assert ReferencesMiddleware(syntaxes="bracket").instructions == citation_instructions("bracket")
    # A copy of a built-in syntax under another name reads the same markers: the same rule, no error.
    copy = dataclasses.replace(ID_SYNTAX, name="mine")
    assert ReferencesMiddleware(syntaxes=copy, instructions="Cite as [n](id=k).").instructions == "Cite as [n](id=k)."
    assert ReferencesMiddleware(syntaxes=copy).instructions == citation_instructions("id")


def test_bare_number_is_never_a_citation() -> None:
    """A bare [n] the model writes gets no number, no list entry and no citation data."""
    agent, _ = build([search("rome"), say("As said before [1], Rome is old[2](id=1).")])
    answer = agent.invoke(QUESTION)["messages"][-1]
    assert answer.text == "As said before [1], Rome is old[1].\n\n- [1] Rome (https://example.org/rome)\n"
    citations = answer.response_metadata["references"]["citations"]
    assert [(c["marker"], c["start"]) for c in citations] == [("[2](id=1)", 31)]
    assert len(text_block(answer)["annotations"]) == 1


class SwapModel(AgentMiddleware):
    """A middleware that replaces the model (as a fallback or router would)."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model

    def wrap_model_call(self, request: ModelRequest, handler: Any) -> ModelResponse:
        return handler(request.override(model=self.model))

    async def awrap_model_call(self, request: ModelRequest, handler: Any) -> ModelResponse:
        return await handler(request.override(model=self.model))


def test_a_model_swapped_inside_warns_and_the_state_is_rewritten() -> None:
    """A middleware after ours that swaps the model: a CitationLeakWarning, and the state copy rewritten."""
    script = [search("rome"), say("Rome is old[1](id=1).")]
    model = ScriptedToolModel(script=script)
    agent = create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        middleware=[ReferencesMiddleware(style=TextReferenceStyle()), SwapModel(model)],
    )
    with pytest.warns(CitationLeakWarning, match="without ReferencesMiddleware's rewriting"):
        state = agent.invoke(QUESTION)
    assert state["messages"][-1].text == "Rome is old[1].\n\n- [1] Rome (https://example.org/rome)\n"


def test_structured_output_calls_are_left_alone_with_a_warning() -> None:
    """A call with response_format is not rewritten (it would corrupt the JSON); the middleware says so."""
    from langchain_core.language_models import GenericFakeChatModel

    request = ModelRequest(model=GenericFakeChatModel(messages=iter([])), messages=[], response_format=dict)
    middleware = ReferencesMiddleware()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prepared = middleware.prepare(request)
        again = middleware.prepare(request)
    assert prepared is request
    assert again is request
    # Said once, and not as a leak: a suite that makes leaks errors still runs structured-output agents.
    assert [(w.category, "structured-output" in str(w.message)) for w in caught] == [(UserWarning, True)]


def test_documents_from_any_tool() -> None:
    """A tool returning documents_tool_output(...) hands its documents over like a retriever tool."""

    @tool(response_format="content_and_artifact")
    def lookup(query: str) -> tuple[str, list[Document]]:
        """Look a city up."""
        return documents_tool_output([LYON])

    model = ScriptedToolModel(script=[search("lyon", tool="lookup"), say("Silk[1](id=1).")])
    agent = create_agent(model, tools=[lookup], middleware=[ReferencesMiddleware(style=TextReferenceStyle())])
    answer = agent.invoke(QUESTION)["messages"][-1]
    assert answer.text == "Silk[1].\n\n- [1] Lyon (https://example.org/lyon)\n"


@pytest.mark.parametrize("shape", ["list", "one", "generator"])
def test_documents_from_reads_other_tool_results(shape: str) -> None:
    """documents_from reads documents from a tool result that has no artifact (a list of them, one, a generator)."""

    @tool
    def note(query: str) -> str:
        """Return a note."""
        return "Lyon is famous for silk."

    def read(message: ToolMessage) -> Any:
        found = Document(message.text, metadata={"source": "notes"})
        if message.name != "note":
            return None
        return {"list": [found], "one": found, "generator": (d for d in [found])}[shape]

    model = ScriptedToolModel(script=[search("x", tool="note"), say("Silk[1](id=1).")])
    agent = create_agent(
        model, tools=[note], middleware=[ReferencesMiddleware(style=TextReferenceStyle(), documents_from=read)]
    )
    answer = agent.invoke(QUESTION)["messages"][-1]
    assert answer.text == "Silk[1].\n\n- [1] notes\n"
    assert [m.text for m in model.seen[-1] if isinstance(m, ToolMessage)] == [
        "<document id=1>\nLyon is famous for silk.\n</document>"
    ]


async def test_tool_results_are_read_off_the_event_loop() -> None:
    """Under ainvoke, the tool results are read in a worker thread: a long thread's reading stalls no other run."""
    loop_thread = threading.get_ident()
    readers: list[int] = []

    @tool
    def note(query: str) -> str:
        """Return a note."""
        return "Lyon is famous for silk."

    def read(message: ToolMessage) -> list[Document]:
        readers.append(threading.get_ident())
        return [Document(message.text, metadata={"source": "notes"})]

    model = ScriptedToolModel(script=[search("x", tool="note"), say("Silk[1](id=1).")])
    middleware = ReferencesMiddleware(style=TextReferenceStyle(), documents_from=read)
    state = await create_agent(model, tools=[note], middleware=[middleware]).ainvoke(QUESTION)
    assert state["messages"][-1].text == "Silk[1].\n\n- [1] notes\n"
    assert readers
    assert loop_thread not in readers


@pytest.mark.parametrize(
    ("given", "named"), [(["Lyon is famous for silk."], "str"), ("Lyon.", "str"), ([3], "int"), (3, "int")]
)
def test_documents_from_giving_what_is_no_document_is_an_error_that_names_it(given: Any, named: str) -> None:
    """Not a silent loss of every citation of the tool: a TypeError naming what it gave and the tool."""

    @tool
    def note(query: str) -> str:
        """Return a note."""
        return "Lyon is famous for silk."

    model = ScriptedToolModel(script=[search("x", tool="note"), say("Silk[1](id=1).")])
    middleware = ReferencesMiddleware(style=TextReferenceStyle(), documents_from=lambda message: given)
    agent = create_agent(model, tools=[note], middleware=[middleware])
    with pytest.raises(TypeError, match=rf"^documents_from gave a {named} for tool 'note': it must return Documents"):
        agent.invoke(QUESTION)


def test_references_chat_model_works_as_the_agents_model() -> None:
    """create_agent(ReferencesChatModel(...)) binds tools through the wrapper and rewrites with fixed documents."""
    model = ScriptedToolModel(script=[say("Rome is old[1](id=1).")])
    wrapped = ReferencesChatModel(inner=model, documents=[ROME], style=TextReferenceStyle())
    agent = create_agent(wrapped, tools=[retriever_tool(CITY_DOCUMENTS)])
    texts = model_texts(agent.stream(QUESTION, stream_mode="messages"))
    assert "".join(texts) == "Rome is old[1].\n\n- [1] Rome (https://example.org/rome)\n"


def test_wrapper_forwards_profile_and_model_name() -> None:
    """The wrapper the middleware builds copies the inner model's profile and name (LangChain's checks read them)."""
    model = ScriptedToolModel(script=[say("x")], profile={"structured_output": True})
    request = ModelRequest(model=model, messages=[])
    wrapped = ReferencesMiddleware().prepare(request).model
    assert wrapped.profile == {"structured_output": True}
    assert isinstance(wrapped, ReferencesChatModel)
    assert wrapped.inner is model


def test_annotations_land_on_the_right_text_block_of_list_content() -> None:
    """A model streaming list content with text in two blocks: each citation slices its own block."""
    from langchain_core.messages import AIMessageChunk

    from tests.unit_tests.fakes import message_chunks

    chunks = [
        AIMessageChunk(content=[{"type": "text", "text": "Rome is old[1](i", "index": 0}]),
        AIMessageChunk(content=[{"type": "text", "text": "d=1).", "index": 0}]),
        AIMessageChunk(content=[{"type": "reasoning", "reasoning": "hm", "index": 1}]),
        AIMessageChunk(content=[{"type": "text", "text": "Lyon has silk[2](id=2).", "index": 2}]),
    ]
    wrapped = ReferencesChatModel(inner=message_chunks(chunks), documents=[ROME, LYON], style=TextReferenceStyle())
    merged = None
    for chunk in wrapped.stream("q"):
        merged = chunk if merged is None else merged + chunk
    assert merged is not None
    texts = [b for b in merged.content if isinstance(b, dict) and b.get("type") == "text"]
    assert [b["text"] for b in texts] == [
        "Rome is old[1].",
        "Lyon has silk[2].\n\n- [1] Rome (https://example.org/rome)\n- [2] Lyon (https://example.org/lyon)\n",
    ]
    assert [[b["text"][a["start_index"] : a["end_index"]] for a in b["annotations"]] for b in texts] == [
        ["Rome is old"],
        ["Lyon has silk"],
    ]


def test_agents_wing_imports_downward_only() -> None:
    """agents stands on streaming and the text layer; streaming and grounding never import agents, agents no apps."""
    from tests.unit_tests.test_architecture import imports, wing

    edges = {(wing(m), wing(target)) for m, found in imports().items() for target, _ in found}
    assert ("agents", "streaming") in edges
    assert ("agents", "text") in edges
    assert not {e for e in edges if e[1] == "agents" and e[0] in ("streaming", "grounding", "_inputs")}
    assert ("agents", "apps") not in edges


def test_rendered_history_and_no_instructions_are_options() -> None:
    """history="rendered" shows the model what the user saw; instructions=None adds no system prompt."""
    script = [search("rome"), say("Rome is old[1](id=1)."), say("Yes.")]
    model = ScriptedToolModel(script=script)
    agent = create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        middleware=[ReferencesMiddleware(style=TextReferenceStyle(), history="rendered", instructions=None)],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t"}}
    agent.invoke({"messages": [{"role": "user", "content": "Rome?"}]}, config)
    agent.invoke({"messages": [{"role": "user", "content": "Old?"}]}, config)
    assert not any(isinstance(m, SystemMessage) for m in model.seen[-1])
    assert [m.text for m in model.seen[-1] if isinstance(m, AIMessage) and m.text] == [
        "Rome is old[1].\n\n- [1] Rome (https://example.org/rome)\n"
    ]
    with pytest.raises(ValueError, match="history must be"):
        ReferencesMiddleware(history="markers")  # type: ignore[arg-type]


def test_best_passages_with_logit_scores() -> None:
    """best_passages (through the text layer) picks the best of negative logits and reports its own score."""
    from langchain_refs.agents import best_passages

    class Logits:
        def score(self, text_pairs: list[tuple[str, str]]) -> list[float]:
            return [-3.0, -1.5, -2.0][: len(text_pairs)]

    document = Document("Lyon is big. Lyon has silk. It rains.")
    (passage,) = best_passages([("silk", 1)], [document], scorer=Logits())
    assert (
        passage.document_position,
        passage.document_start,
        passage.document_end,
        passage.excerpt,
        passage.score,
    ) == (
        1,
        13,
        27,
        "Lyon has silk.",
        -1.5,
    )


def test_an_inner_model_that_streams_nothing_fails_as_it_does_alone() -> None:
    # The wrapper adds no last chunk of its own to an empty stream: LangChain's own error, not a pydantic one.
    alone = ChunkExactChatModel(chunks=[])
    wrapped = ReferencesChatModel(inner=ChunkExactChatModel(chunks=[]), documents=[])
    for model in (alone, wrapped):
        with pytest.raises(ValueError, match=r"^No generation chunks were returned$"):
            list(model.stream("question"))

        async def drain(model: Any = model) -> None:
            async for _ in model.astream("question"):
                pass

        with pytest.raises(ValueError, match=r"^No generation chunks were returned$"):
            asyncio.run(drain())


TWO_SENTENCES = Document(
    "Lyon sits where two rivers meet. Lyon is known for its silk.", metadata={"source": "https://example.org/lyon"}
)


@pytest.mark.parametrize(
    ("options", "cited_text"),
    [
        ({}, "Lyon is known for its silk."),
        ({"passages": True}, "Lyon is known for its silk."),
        # Off: the start of the document, whatever the claim.
        ({"passages": False}, "Lyon sits where two rivers meet. Lyon is known for its silk."),
    ],
)
def test_chat_model_passages_option(options: dict[str, Any], cited_text: str) -> None:
    """ReferencesChatModel(passages=...) is the option the middleware and manage_references take, with their meaning."""
    wrapped = ReferencesChatModel(
        inner=ChunkExactChatModel(chunks=["Lyon is known for silk[1](id=1)."]),
        documents=[TWO_SENTENCES],
        style=TextReferenceStyle(),
        **options,
    )
    (block,) = [b for b in wrapped.invoke("q").content if isinstance(b, dict) and b.get("type") == "text"]
    assert [a["cited_text"] for a in block["annotations"]] == [cited_text]


def test_chat_model_cited_text_is_the_old_name_of_passages() -> None:
    """cited_text= still works, with a DeprecationWarning naming the new option; both at once is an error."""
    inner = ChunkExactChatModel(chunks=[])
    renamed = r"ReferencesChatModel\(cited_text=\.\.\.\) is now ReferencesChatModel\(passages"
    with pytest.warns(DeprecationWarning, match=renamed):
        assert ReferencesChatModel(inner=inner, cited_text=False).passages is False
    with pytest.raises(TypeError, match="not both"):
        ReferencesChatModel(inner=inner, cited_text=False, passages=False)
    # None is "not given", as ReferencesMiddleware(cited_text=None) reads it: passages stay on.
    assert ReferencesChatModel(inner=inner, cited_text=None).passages is True


@pytest.mark.parametrize("option", ["pasages", "cited", "callback_manager", "model_kwargs"])
def test_chat_model_rejects_an_option_it_does_not_have(option: str) -> None:
    """A misspelt option is an error naming it, not silently ignored (passages would stay on)."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=rf"(?s){option}.*Extra inputs are not permitted"):
        ReferencesChatModel(inner=ChunkExactChatModel(chunks=[]), **{option: False})


def test_chat_model_takes_the_standard_parameters_with_a_warning() -> None:
    """temperature, max_tokens, stop... are the inner model's: taken (LangChain builds models with them), not kept."""
    with pytest.warns(UserWarning, match=r"ReferencesChatModel ignores max_tokens, temperature: the inner model's"):
        model = ReferencesChatModel(inner=ChunkExactChatModel(chunks=[]), temperature=0, max_tokens=10)
    assert "temperature" not in model.model_fields_set
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ReferencesChatModel(inner=ChunkExactChatModel(chunks=[]), passages=False)


class CountryNamed:
    """A scorer written by hand: a sentence naming France or Italy supports any claim, others none."""

    def score(self, text_pairs: list[tuple[str, str]]) -> list[float]:
        return [1.0 if "France" in text or "Italy" in text else 0.0 for _, text in text_pairs]


# The sentence `CountryNamed` picks in each cited document (the lexical default picks Lyon's silk).
COUNTRY_SENTENCES = [
    "Paris is the capital of France.",
    "Lyon is a city in France.",
    "Paris is the capital of France.",
    "Rome is the capital of Italy.",
]


def test_middleware_passages_take_a_scorer_as_manage_references_does() -> None:
    """ReferencesMiddleware(passages=scorer): the annotations quote the sentences that scorer chose."""
    agent, _ = build(two_rounds(), passages=CountryNamed())
    answer = agent.invoke(QUESTION)["messages"][-1]
    assert [a["cited_text"] for a in check_citations(answer)] == COUNTRY_SENTENCES


async def test_middleware_passages_scorer_when_streamed_async() -> None:
    """The same through astream's values mode: the final state's answer carries the scorer's passages."""
    agent, _ = build(two_rounds(), passages=CountryNamed())
    final = None
    async for state in agent.astream(QUESTION, stream_mode="values"):
        final = state
    assert final is not None
    assert [a["cited_text"] for a in check_citations(final["messages"][-1])] == COUNTRY_SENTENCES


class ThreadNoted(CountryNamed):
    """`CountryNamed`, noting the thread each batch is scored in (a cross-encoder's model call blocks it)."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def score(self, text_pairs: list[tuple[str, str]]) -> list[float]:
        self.threads.append(threading.get_ident())
        return super().score(text_pairs)


@pytest.mark.parametrize("call", ["astream", "ainvoke"])
async def test_chat_model_scores_passages_off_the_event_loop(call: str) -> None:
    """A passage scorer of the user's runs in a worker thread at the end of an async answer: other tasks go on."""
    scorer = ThreadNoted()
    wrapped = ReferencesChatModel(
        inner=ChunkExactChatModel(chunks=["Lyon is known for silk[1](id=1)."]),
        documents=[Document("Lyon is known for its silk. Lyon is a city in France.")],
        style=TextReferenceStyle(),
        passages=scorer,
    )
    if call == "astream":
        answer = None
        async for chunk in wrapped.astream("q"):
            answer = chunk if answer is None else answer + chunk
    else:
        answer = await wrapped.ainvoke("q")
    assert answer is not None
    (block,) = [b for b in answer.content if isinstance(b, dict) and b.get("type") == "text"]
    assert [a["cited_text"] for a in block["annotations"]] == ["Lyon is a city in France."]
    assert scorer.threads
    assert threading.get_ident() not in scorer.threads


async def test_middleware_rewrites_a_leaked_answer_off_the_event_loop() -> None:
    """aafter_model rewriting an answer that reached the agent raw scores it with the user's scorer in a thread."""
    from langchain_core.messages import HumanMessage

    scorer = ThreadNoted()
    middleware = ReferencesMiddleware(style=TextReferenceStyle(), passages=scorer)
    content, artifact = documents_tool_output([Document("Paris is in France.", metadata={"source": "p"})])
    call = AIMessage("", tool_calls=[{"name": "search", "args": {}, "id": "1"}])
    tool_result = ToolMessage(content, tool_call_id="1", artifact=artifact, name="search")
    state = {"messages": [HumanMessage("q"), call, tool_result, AIMessage("Paris is in France[1](id=1).", id="a")]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CitationLeakWarning)
        update = await middleware.aafter_model(state, None)
    assert update is not None
    assert update["messages"][-1].text.startswith("Paris is in France[1].")
    assert scorer.threads
    assert threading.get_ident() not in scorer.threads


class ClosedNoted(ChunkExactChatModel):
    """`ChunkExactChatModel` noting when its async stream is closed (a provider's HTTP response, released)."""

    events: list[str] = Field(default_factory=list)

    async def _astream(self, *args: Any, **kwargs: Any) -> Any:
        try:
            async for chunk in super()._astream(*args, **kwargs):
                yield chunk
        finally:
            self.events.append("inner closed")


@pytest.mark.parametrize("version", ["v0", "v1"])
async def test_chat_model_astream_left_early_closes_the_inner_stream(version: str) -> None:
    """A client that leaves after one chunk: the inner model's stream is closed then, as the bare model's is."""
    from langchain_core.utils.aiter import aclosing

    inner = ClosedNoted(chunks=["Lyon ", "is ", "big", "[1](id=1)."], output_version=version)
    wrapped = ReferencesChatModel(inner=inner, documents=[TWO_SENTENCES], style=TextReferenceStyle())
    async with aclosing(wrapped.astream("q")) as chunks:
        async for _ in chunks:
            break
    if version == "v1":
        # Read through the inner model's own astream, whose end leaves the close of its
        # `_astream` to Python's finaliser, which the event loop runs at its next turn.
        await asyncio.sleep(0)
    inner.events.append("client gone")
    assert inner.events == ["inner closed", "client gone"]


@pytest.mark.parametrize(
    ("output", "warned"),
    [
        ([PARIS], True),  # a list of documents: their reprs
        (PARIS, True),  # one document: its str form
        (Document("Paris is big."), True),  # one document without metadata
        ("\n\n".join(map(str, [PARIS, PARIS])) + "\n", True),  # str forms joined, a newline after
        (f"Results:\n1. {PARIS}\n2. {PARIS}", True),  # numbered, after a heading
        (f"Results:\n- {PARIS}\n* {PARIS}", True),  # bulleted
        ({"found": [PARIS], "count": 1}, True),  # in a dict: its repr
        (f"Results: {[PARIS]}", True),  # after a heading
        (f"1. {PARIS!r}\n2. {PARIS!r}", True),  # numbered reprs
        ("src/a.py:3: Document(page_content='Paris is big.')", False),  # a search through source code
        ("doc = Document(\n    page_content='Paris is big.',\n    metadata={},\n)", False),  # an argument's line
        ("The field page_content= holds the text.", False),
        # A line a grep prints of a doctest that writes the repr (the tool's own text: no documents of its own).
        ("/loader.py:4:    >>> [Document(metadata={}, page_content='x')]", False),
        ("    >>> [Document(metadata={}, page_content='x')]", False),  # the doctest itself (a file read whole)
    ],
    ids=[
        "documents",
        "one document",
        "no metadata",
        "joined",
        "numbered",
        "bulleted",
        "dict",
        "after a heading",
        "numbered reprs",
        "code search",
        "code",
        "prose",
        "grep of a doctest",
        "doctest",
    ],
)
def test_only_documents_written_as_text_get_the_warning(output: Any, warned: bool) -> None:
    """The warning is for a tool's documents LangChain wrote as text, not for any text that says page_content=."""

    @tool
    def lookup(query: str) -> Any:
        """Look it up."""
        return output

    model = ScriptedToolModel(script=[search("paris", tool="lookup"), say("Done.")])
    agent = create_agent(model, tools=[lookup], middleware=[ReferencesMiddleware(style=TextReferenceStyle())])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent.invoke(QUESTION)
    assert any("put its documents in the text" in str(w.message) for w in caught) is warned


@pytest.mark.parametrize(
    ("artifact", "warned"),
    [
        (["Paris is the capital of France."], True),  # hits as strings
        ([{"url": "https://example.org/paris", "content": "Paris is the capital of France."}], True),
        ({"results": [{"url": "https://example.org/paris", "content": "Paris."}]}, True),
        ([PARIS], False),  # documents
        ([{"page_content": "Paris is the capital of France.", "metadata": {}}], False),  # a document as a dict
        (None, False),  # no artifact
        ({"status": 200}, False),  # an artifact that holds no results
        ([], False),
    ],
    ids=["strings", "hit dicts", "results key", "documents", "document dicts", "none", "other data", "empty"],
)
def test_an_artifact_of_results_that_are_no_documents_gets_a_warning(artifact: Any, warned: bool) -> None:
    """A web search handing its hits over as strings or dicts of its own: they get no ids, and the user is told."""

    @tool(response_format="content_and_artifact")
    def web(query: str) -> tuple[str, Any]:
        """Search the web."""
        return "Paris is the capital of France.", artifact

    model = ScriptedToolModel(script=[search("paris", tool="web"), say("Paris is the capital of France[1](id=1).")])
    agent = create_agent(model, tools=[web], middleware=[ReferencesMiddleware(style=TextReferenceStyle())])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent.invoke(QUESTION)
    found = [str(w.message) for w in caught if "none a Document" in str(w.message)]
    assert bool(found) is warned
    if warned:
        assert found[0].startswith("tool 'web' handed over 1 result as ")


def test_a_document_the_tools_text_leaves_out_cannot_be_cited() -> None:
    """A tool that shows its top hit and hands over every hit: the model never read id 2, so a citation of it (a
    guess) is dropped, not listed and annotated with a passage it never read."""

    @tool(response_format="content_and_artifact")
    def top_hit(query: str) -> tuple[str, list[Document]]:
        """Search; show the top hit."""
        return PARIS.page_content + "\n(1 more result omitted)", [PARIS, ROME]

    model = ScriptedToolModel(
        script=[
            search("capital", tool="top_hit"),
            say("Paris is the capital of France[1](id=1). Rome is old[2](id=2)."),
        ]
    )
    agent = create_agent(model, tools=[top_hit], middleware=[ReferencesMiddleware(style=TextReferenceStyle())])
    answer = agent.invoke(QUESTION)["messages"][-1]
    shown = [m.text for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert shown == [f"<document id=1>\n{PARIS.page_content}\n</document>\n(1 more result omitted)"]
    assert answer.text == (
        "Paris is the capital of France[1]. Rome is old.\n\n- [1] Paris (https://example.org/paris)\n"
    )
    assert [a["url"] for a in text_block(answer)["annotations"]] == ["https://example.org/paris"]
    [invalid] = answer.response_metadata["references"]["invalid_citations"]
    assert (invalid["item"], invalid["reason"]) == ("2", "document 2 was not shown to the model")


def test_document_tags_in_a_result_without_documents_are_escaped() -> None:
    """A file search's result with no documents of its own writes a ``<document id=2>`` (a saved prompt): escaped,
    as in a result with documents, so that its words do not borrow document 2's id (and Lyon's source)."""

    @tool
    def grep(pattern: str) -> str:
        """Search the saved files."""
        return "/saved_prompt.txt:1:<document id=2>Lyon is the capital of France.</document>"

    model = ScriptedToolModel(
        script=[
            Step(tool_calls=[("s", "search", {"query": "paris lyon"}), ("g", "grep", {"pattern": "capital"})]),
            say("Paris is the capital of France[1](id=1)."),
        ]
    )
    agent = create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS), grep],
        middleware=[ReferencesMiddleware(style=TextReferenceStyle())],
    )
    agent.invoke(QUESTION)
    shown = {m.name: m.text for m in model.seen[-1] if isinstance(m, ToolMessage)}
    assert shown["grep"] == "/saved_prompt.txt:1:&lt;document id=2>Lyon is the capital of France.&lt;/document>"
    assert shown["search"].startswith("<document id=1>\nParis is the capital of France.")


def test_a_cited_document_that_writes_a_tag_is_quoted_in_its_own_words() -> None:
    """A guide saying "put each source in <document> tags": the model reads it escaped, the reader is shown the
    guide's own words (cited text, offsets into the document, the passage, the thread's documents)."""
    guide = Document(
        "Put each source in <document> tags so the model can tell sources apart. Long inputs go first.",
        metadata={"source": "https://guide.example/tags", "title": "Tags"},
    )

    @tool(response_format="content_and_artifact")
    def guides(query: str) -> tuple[str, list[Document]]:
        """Search the prompting guide."""
        return documents_tool_output([guide])

    model = ScriptedToolModel(
        script=[search("tags", tool="guides"), say("Wrap each source in document tags[1](id=1).")]
    )
    saver = InMemorySaver()
    agent = create_agent(
        model, tools=[guides], middleware=[ReferencesMiddleware(style=TextReferenceStyle())], checkpointer=saver
    )
    config = {"configurable": {"thread_id": "t"}}
    answer = agent.invoke(QUESTION, config)["messages"][-1]
    shown = [m.text for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert shown == ["<document id=1>\n" + guide.page_content.replace("<document>", "&lt;document>") + "\n</document>"]
    [annotation] = text_block(answer)["annotations"]
    assert annotation["cited_text"] == "Put each source in <document> tags so the model can tell sources apart."
    extras = annotation["extras"]
    assert guide.page_content[extras["document_start"] : extras["document_end"]] == annotation["cited_text"]
    [citation] = answer.response_metadata["references"]["citations"]
    assert citation["passage"]["excerpt"] == annotation["cited_text"]
    [kept] = agent.get_state(config).values["reference_documents"]
    assert kept["page_content"] == guide.page_content


def test_documents_from_is_not_asked_of_a_tool_error() -> None:
    """A tool that failed once (its error handled, ``status="error"``): ``documents_from``, which reads JSON, is
    not handed the error text, which is shown as it is; the retry's documents get their ids."""
    import json

    calls = []

    @tool
    def lookup(query: str) -> str:
        """Look cities up (a JSON list)."""
        calls.append(query)
        if len(calls) == 1:
            raise ToolException("the backend timed out")
        return json.dumps([{"url": "https://example.org/paris", "content": "Paris is the capital of France."}])

    lookup.handle_tool_error = True  # the error is the tool's result, with status="error"

    def read(message: ToolMessage) -> list[Document]:
        return [Document(r["content"], metadata={"source": r["url"]}) for r in json.loads(message.text)]

    model = ScriptedToolModel(
        script=[
            search("paris", tool="lookup"),
            search("paris", tool="lookup", first_id=2),
            say("Paris is the capital of France[1](id=1)."),
        ]
    )
    middleware = ReferencesMiddleware(style=TextReferenceStyle(), documents_from=read)
    state = create_agent(model, tools=[lookup], middleware=[middleware]).invoke(QUESTION)
    shown = [(m.status, m.text) for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert shown == [
        ("error", "the backend timed out"),
        (
            "success",
            '[{"url": "https://example.org/paris", "content": "<document id=1>\\nParis is the capital of '
            'France.\\n</document>"}]',
        ),
    ]
    assert state["messages"][-1].text == "Paris is the capital of France[1].\n\n- [1] https://example.org/paris\n"


@pytest.mark.parametrize("passages", ["yes", 1, 0.5])
def test_a_passages_value_that_is_no_scorer_fails_at_construction(passages: Any) -> None:
    """Neither True, False nor a scorer: a TypeError naming the option when built, as manage_references gives."""
    with pytest.raises(TypeError, match=r"passages must be True, False or a scorer"):
        ReferencesMiddleware(passages=passages)
    with pytest.raises(TypeError, match=r"passages must be True, False or a scorer"):
        ReferencesChatModel(inner=ChunkExactChatModel(chunks=[]), passages=passages)


def test_a_tool_not_declared_to_hand_documents_over_gets_a_warning_saying_how() -> None:
    """documents_tool_output from a plain @tool: its documents land in the text (no ids); a warning names the fix."""

    @tool
    def search_text(query: str) -> Any:
        """Search the documents."""
        return documents_tool_output([PARIS])

    @tool(response_format="content_and_artifact")
    def search_declared(query: str) -> Any:
        """Search the documents."""
        return documents_tool_output([PARIS])

    for found, warned in [(search_text, True), (search_declared, False)]:
        model = ScriptedToolModel(script=[search("paris", tool=found.name), say("Paris is big[1](id=1).")])
        agent = create_agent(model, tools=[found], middleware=[ReferencesMiddleware(style=TextReferenceStyle())])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            answer = agent.invoke(QUESTION)["messages"][-1]
        messages = [str(w.message) for w in caught if "put its documents in the text" in str(w.message)]
        if warned:
            assert messages
            assert messages[0].startswith(f"tool '{found.name}' put its documents in the text the model reads")
            assert 'response_format="content_and_artifact"' in messages[0]
            assert answer.text == "Paris is big."  # the citation could not stand: no document has id 1
        else:
            assert not messages
            assert answer.text.startswith("Paris is big[1].")
