"""ReferencesMiddleware in a production stack: LangChain's own middleware before and after it.

Each test builds the agent with LangChain's real middleware (PII redaction,
summarization, context editing, call limits, human in the loop, retry,
fallback) and a scripted model, and checks what the model read and what the
reader got, by hand-written values.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import operator
import re
import warnings
from typing import Any

import pytest

pytest.importorskip("langchain.agents", reason="the agent tests need the agents extra: pip install -e '.[agents]'")

from langchain.agents import AgentState, create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ModelFallbackMiddleware,
    ModelRetryMiddleware,
    PIIMiddleware,
    SummarizationMiddleware,
    TodoListMiddleware,
    ToolCallLimitMiddleware,
)
from langchain.agents.middleware.types import hook_config
from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler, CallbackManager
from langchain_core.documents import Document
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, get_buffer_string
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel
from typing_extensions import NotRequired

from langchain_refs import FORMAT_REFERENCES, ReferencesChatModel, ReferencesMiddleware, TextReferenceStyle
from tests.unit_tests.agent_fakes import CITY_DOCUMENTS, ScriptedToolModel, Step, retriever_tool, say, search

PARIS, LYON, ROME = CITY_DOCUMENTS
EMAIL = "mayor@paris.fr"
CONTACT = Document(
    f"The town hall of Paris answers at {EMAIL} on weekdays.",
    id="contact",
    metadata={"source": "https://example.org/contact", "title": "Contact"},
)
RAW_MARKER = re.compile(r"\]\(\s*id\s*=")
# What each strategy leaves of the address (langchain's own PII strategies; written by hand).
STRATEGIES = {
    "redact": "[REDACTED_EMAIL]",
    "mask": "mayor@****.fr",
    "hash": "<email_hash:",
}


def references(**options: Any) -> ReferencesMiddleware:
    return ReferencesMiddleware(style=TextReferenceStyle(), **options)


def read_by_model(model: ScriptedToolModel) -> str:
    """Everything the model was given, over all its calls, as one text."""
    return "\n".join(str(m.content) for call in model.seen for m in call)


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("order", ["pii first", "references first"])
def test_pii_redaction_of_tool_results_is_what_the_model_reads(strategy: str, order: str) -> None:
    """PIIMiddleware on tool results, either order: the model never reads the address; ids stay on the redacted text."""
    model = ScriptedToolModel(script=[search("town"), say("Write to the town hall[1](id=1).")])
    pii = PIIMiddleware("email", strategy=strategy, apply_to_tool_results=True)  # type: ignore[arg-type]
    stack = [pii, references()] if order == "pii first" else [references(), pii]
    agent = create_agent(model, tools=[retriever_tool([CONTACT])], middleware=stack)
    state = agent.invoke({"messages": [{"role": "user", "content": "How do I reach the mayor?"}]})
    read = read_by_model(model)
    assert EMAIL not in read
    shown = [m.text for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert len(shown) == 1
    assert shown[0].startswith("<document id=1>\nThe town hall of Paris answers at ")
    assert STRATEGIES[strategy] in shown[0]
    assert shown[0].endswith(" on weekdays.\n</document>")
    answer = state["messages"][-1]
    assert answer.text == "Write to the town hall[1].\n\n- [1] Contact (https://example.org/contact)\n"
    # The passage behind the citation is the text the model read, not the artifact's.
    (annotation,) = [a for b in answer.content_blocks if b["type"] == "text" for a in b.get("annotations", [])]
    assert EMAIL not in annotation["cited_text"]
    assert STRATEGIES[strategy] in annotation["cited_text"]
    assert EMAIL not in repr(state["references"])


def test_a_truncated_tool_result_is_shown_truncated_with_its_ids() -> None:
    """A middleware that cuts a document out of a tool result: the model reads the cut result, the ids still hold."""
    from langchain.agents.middleware import before_model

    @before_model
    def keep_first_document(state: Any, runtime: Any) -> dict[str, Any] | None:
        messages = list(state["messages"])
        for i, message in enumerate(messages):
            if isinstance(message, ToolMessage) and LYON.page_content in message.text:
                messages[i] = message.model_copy(update={"content": message.text.split("\n\n")[0]})
                return {"messages": messages}
        return None

    model = ScriptedToolModel(script=[search("paris lyon"), say("Paris is the capital of France[1](id=1).")])
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[keep_first_document, references()])
    state = agent.invoke({"messages": [{"role": "user", "content": "?"}]})
    (shown,) = [m.text for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert shown == f"<document id=1>\n{PARIS.page_content}\n</document>"
    assert state["messages"][-1].text == (
        "Paris is the capital of France[1].\n\n- [1] Paris (https://example.org/paris)\n"
    )


def json_results(documents: list[Document]) -> str:
    """What a web-search tool returns: its results as a JSON list, each document's text in one field."""
    return json.dumps(
        [{"url": d.metadata["source"], "title": d.metadata["title"], "content": d.page_content} for d in documents],
        ensure_ascii=False,
        indent=2,
    )


@tool(response_format="content_and_artifact")
def web_search(query: str) -> tuple[str, list[Document]]:
    """Search the web (a JSON list of results; the documents as the artifact)."""
    return json_results([CONTACT, LYON]), [CONTACT, LYON]


@pytest.mark.parametrize("order", ["pii first", "references first", "no pii"])
def test_a_json_tool_result_stays_json_with_its_ids_inside_the_texts(order: str) -> None:
    """JSON content: each document is tagged inside the string it stands in, the JSON stays valid, redacted or not."""
    model = ScriptedToolModel(
        script=[search("mayor", tool="web_search"), say("Write to the town hall[1](id=1). Lyon has silk[2](id=2).")]
    )
    pii = PIIMiddleware("email", strategy="redact", apply_to_tool_results=True)
    stack = {"pii first": [pii, references()], "references first": [references(), pii], "no pii": [references()]}
    agent = create_agent(model, tools=[web_search], middleware=stack[order])
    state = agent.invoke({"messages": [{"role": "user", "content": "How do I reach the mayor?"}]})
    (shown,) = [m.text for m in model.seen[-1] if isinstance(m, ToolMessage)]
    contact = CONTACT.page_content if order == "no pii" else CONTACT.page_content.replace(EMAIL, "[REDACTED_EMAIL]")
    assert json.loads(shown) == [
        {
            "url": "https://example.org/contact",
            "title": "Contact",
            "content": f"<document id=1>\n{contact}\n</document>",
        },
        {
            "url": "https://example.org/lyon",
            "title": "Lyon",
            "content": f"<document id=2>\n{LYON.page_content}\n</document>",
        },
    ]
    answer = state["messages"][-1]
    assert answer.text == (
        "Write to the town hall[1]. Lyon has silk[2].\n\n"
        "- [1] Contact (https://example.org/contact)\n- [2] Lyon (https://example.org/lyon)\n"
    )
    # The passages are the documents' sentences as the model read them: no JSON quote, escape or tag.
    annotations = [a for b in answer.content_blocks if b["type"] == "text" for a in b.get("annotations", [])]
    assert [a["cited_text"] for a in annotations] == [contact, "Lyon is known for its silk and its food."]


def test_documents_read_from_json_content_are_tagged_inside_it() -> None:
    """documents_from reading a JSON result (no artifact): the model reads the same JSON, the ids inside its texts."""

    @tool
    def lookup(query: str) -> str:
        """Look cities up (a JSON list)."""
        return json_results([PARIS, LYON])

    def read(message: ToolMessage) -> list[Document]:
        return [Document(r["content"], metadata={"source": r["url"]}) for r in json.loads(message.text)]

    model = ScriptedToolModel(script=[search("x", tool="lookup"), say("Lyon has silk[1](id=2).")])
    agent = create_agent(model, tools=[lookup], middleware=[references(documents_from=read)])
    answer = agent.invoke({"messages": [{"role": "user", "content": "?"}]})["messages"][-1]
    (shown,) = [m.text for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert [r["content"] for r in json.loads(shown)] == [
        f"<document id=1>\n{PARIS.page_content}\n</document>",
        f"<document id=2>\n{LYON.page_content}\n</document>",
    ]
    assert answer.text == "Lyon has silk[1].\n\n- [1] https://example.org/lyon\n"


class Summary(BaseModel):
    summary: str


def test_a_structured_answer_is_never_rewritten_into_broken_json() -> None:
    """ProviderStrategy: the answer is the structured JSON; the state keeps it valid, as the model wrote it."""
    from langchain.agents.structured_output import ProviderStrategy

    answer = '{"summary": "Paris is the capital[1](id=1)."}'
    model = ScriptedToolModel(script=[search("paris"), say(answer)])
    agent = create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        middleware=[references()],
        response_format=ProviderStrategy(Summary),
    )
    with pytest.warns(UserWarning, match="leaves structured-output calls"):
        state = agent.invoke({"messages": [{"role": "user", "content": "Paris?"}]})
    assert state["messages"][-1].text == answer
    assert json.loads(state["messages"][-1].text) == {"summary": "Paris is the capital[1](id=1)."}
    assert state["structured_response"] == Summary(summary="Paris is the capital[1](id=1).")


def three_turns() -> list[Step]:
    """Rome, then Lyon, then Paris with Rome cited again by its first id: each turn a search, then an answer."""
    return [
        search("rome"),
        say("Rome is old[1](id=1)."),
        search("lyon", first_id=2),
        say("Lyon has silk[1](id=2)."),
        search("paris", first_id=3),
        say("Paris is the capital[1](id=3). Rome is old[2](id=1)."),
    ]


THREE_TURNS_ANSWER = (
    "Paris is the capital[1]. Rome is old[2].\n\n"
    "- [1] Paris (https://example.org/paris)\n"
    "- [2] Rome (https://example.org/rome)\n"
)


def test_ids_survive_summarization_and_an_early_id_still_resolves() -> None:
    """Three turns; summarization drops the early tool results; Paris gets a new id; Rome's id still cites Rome."""
    script = three_turns()
    model = ScriptedToolModel(script=script)
    summarizer = GenericFakeChatModel(messages=iter([AIMessage("Earlier: Rome and Lyon were discussed.")] * 5))
    summarization = SummarizationMiddleware(summarizer, trigger=("messages", 10), keep=("messages", 3))
    agent = create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        middleware=[summarization, references()],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "long"}}
    for question in ("Rome?", "Lyon?", "Paris, and Rome again?"):
        state = agent.invoke({"messages": [{"role": "user", "content": question}]}, config)
    last_call = model.seen[-1]
    tool_texts = [m.text for m in last_call if isinstance(m, ToolMessage)]
    # The early tool results are summarized away; Paris is shown under a new id, never an old one.
    assert tool_texts == [f"<document id=3>\n{PARIS.page_content}\n</document>"]
    assert not any(ROME.page_content in str(m.content) for m in last_call if isinstance(m, ToolMessage))
    answer = state["messages"][-1]
    assert answer.text == THREE_TURNS_ANSWER
    annotations = [a for b in answer.content_blocks if b["type"] == "text" for a in b.get("annotations", [])]
    assert [a["url"] for a in annotations] == ["https://example.org/paris", "https://example.org/rome"]
    # Rome's passage comes from the text kept in the state.
    assert annotations[1]["cited_text"] == "Rome is the capital of Italy."


def test_an_answer_lists_as_consulted_only_the_documents_its_call_was_shown() -> None:
    """Over a long thread, earlier documents stay citable, but each answer's consulted are those of its own context.

    (Every answer used to list every document of the thread: state and checkpoints grew with turns x documents.)
    """
    script = [search("rome"), say("Rome is old[1](id=1)."), search("lyon paris", first_id=2), say("Silk[1](id=3).")]
    model = ScriptedToolModel(script=script)
    summarizer = GenericFakeChatModel(messages=iter([AIMessage("Earlier: Rome was discussed.")] * 5))
    summarization = SummarizationMiddleware(summarizer, trigger=("messages", 5), keep=("messages", 2))
    agent = create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        middleware=[summarization, references()],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "consulted"}}
    for question in ("Rome?", "Lyon?"):
        state = agent.invoke({"messages": [{"role": "user", "content": question}]}, config)
    (read,) = [m.text for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert ROME.page_content not in read  # summarized away before the last call
    last = state["references"][-1]
    # Written by hand: Paris (id 2) shown and not cited; Lyon (id 3) cited; Rome (id 1) not shown this call.
    assert [r["source"] for r in last["references"]] == ["https://example.org/lyon"]
    assert [(c["source"], c["document_positions"]) for c in last["consulted"]] == [("https://example.org/paris", [2])]


def test_each_turns_consulted_are_the_documents_retrieved_for_it() -> None:
    """Two turns, nothing summarised: the second answer's consulted are its own retrievals, not the first turn's."""
    script = [search("rome"), say("Rome is old[1](id=1)."), search("lyon paris", first_id=2), say("Silk[1](id=3).")]
    model = ScriptedToolModel(script=script)
    agent = create_agent(
        model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[references()], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "turns"}}
    for question in ("Rome?", "Lyon?"):
        state = agent.invoke({"messages": [{"role": "user", "content": question}]}, config)
    first, last = state["references"]
    # Written by hand: turn 1 retrieved Rome alone (cited); turn 2 Paris (id 2, not cited) and Lyon (id 3, cited).
    assert first["consulted"] == []
    assert [(c["source"], c["document_positions"]) for c in last["consulted"]] == [("https://example.org/paris", [2])]


def test_documents_of_a_tool_result_with_empty_content_are_consulted() -> None:
    """Empty tool content: the model reads the documents themselves, so the uncited one is consulted."""

    @tool(response_format="content_and_artifact")
    def cities(query: str) -> tuple[str, list[Document]]:
        """Look cities up (no text: the documents only)."""
        return "", [PARIS, LYON]

    model = ScriptedToolModel(script=[search("x", tool="cities"), say("Paris is the capital[1](id=1).")])
    agent = create_agent(model, tools=[cities], middleware=[references()])
    state = agent.invoke({"messages": [{"role": "user", "content": "?"}]})
    (read,) = [m.text for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert (
        read == f"<document id=1>\n{PARIS.page_content}\n</document>\n<document id=2>\n{LYON.page_content}\n</document>"
    )
    assert [c["source"] for c in state["references"][-1]["consulted"]] == ["https://example.org/lyon"]


def test_document_texts_kept_are_bounded() -> None:
    """Past max_document_texts, the oldest documents keep their id and source but not their text."""
    script = [search("rome"), search("lyon", first_id=2), say("Rome is old[1](id=1). Lyon has silk[2](id=2).")]
    model = ScriptedToolModel(script=script)
    agent = create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        middleware=[references(max_document_texts=1)],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "bounded"}}
    state = agent.invoke({"messages": [{"role": "user", "content": "?"}]}, config)
    kept = agent.get_state(config).values["reference_documents"]
    assert [(e["key"].split(":")[0], e["page_content"]) for e in kept] == [("sha256", ""), ("id", LYON.page_content)]
    assert kept[1]["key"].startswith("id:lyon:sha256:")
    assert kept[0]["metadata"] == ROME.metadata
    assert state["messages"][-1].text == (
        "Rome is old[1]. Lyon has silk[2].\n\n- [1] Rome (https://example.org/rome)\n"
        "- [2] Lyon (https://example.org/lyon)\n"
    )


def test_a_negative_text_limit_is_refused() -> None:
    """max_document_texts below 0 is a clear ValueError naming the option."""
    with pytest.raises(ValueError, match="max_document_texts must be 0 or more"):
        references(max_document_texts=-1)


def test_history_maps_the_users_numbers_to_the_ids() -> None:
    """history="raw": the model reads its earlier answer numbered as the user saw it ([1](id=2), not its [5](id=2))."""
    script = [search("paris lyon"), say("Lyon has silk[5](id=2). Paris is big[7](id=1)."), say("Source 1 is Lyon.")]
    model = ScriptedToolModel(script=script)
    agent = create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        middleware=[references()],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "history"}}
    first = agent.invoke({"messages": [{"role": "user", "content": "?"}]}, config)
    assert first["messages"][-1].text.startswith("Lyon has silk[1]. Paris is big[2].")
    agent.invoke({"messages": [{"role": "user", "content": "What does source 1 say?"}]}, config)
    earlier = [m.text for m in model.seen[-1] if isinstance(m, AIMessage) and m.text]
    assert earlier == ["Lyon has silk[1](id=2). Paris is big[2](id=1)."]


# No checkpointer: the client sends its history back, as chat apps keep it. (earlier answer, history kept, the next
# turn's searches, what the model reads of that answer), written by hand from what each search gives (CITY_DOCUMENTS:
# "paris lyon" gives Paris then Lyon, ids 1 and 2).
RESENT_HISTORY = [
    # Only the user's and the assistant's messages: Paris's id 1 is not in this call's thread, and Rome (searched
    # anew) takes id 1, so the model must not read its Paris claim beside id 1.
    ("Paris is big[1](id=1).", "answers only", ("rome",), "Paris is big."),
    # Every message sent back, the tool results with their documents: the ids are made again the same way.
    ("Paris is big[1](id=1).", "everything", ("rome",), "Paris is big[1](id=1)."),
    # Rome then Paris searched anew: Paris is id 2 now, and Lyon, no longer in the thread, has no id.
    (
        "Lyon has silk[1](id=2). Paris is big[2](id=1).",
        "answers only",
        ("rome", "paris"),
        "Lyon has silk. Paris is big[2](id=2).",
    ),
]


@pytest.mark.parametrize(("first_answer", "kept", "searches", "read"), RESENT_HISTORY)
def test_history_sent_back_without_a_checkpointer_never_pairs_a_claim_with_another_documents_id(
    first_answer: str, kept: str, searches: tuple[str, ...], read: str
) -> None:
    """The ids of an earlier answer are checked against what it cited (its references): moved or left out."""
    script = [search("paris lyon"), say(first_answer), search(*searches, first_id=5), say("Noted.")]
    model = ScriptedToolModel(script=script)
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[references()])
    first = agent.invoke({"messages": [{"role": "user", "content": "Cities?"}]})["messages"]
    history = first if kept == "everything" else [m for m in first if not isinstance(m, ToolMessage) and m.text]
    agent.invoke({"messages": [*history, HumanMessage("And Rome?")]})
    earlier = [m.text for m in model.seen[-1] if isinstance(m, AIMessage) and m.text]
    assert earlier == [read]


@pytest.mark.parametrize("order", ["pii first", "references first"])
@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_pii_redaction_of_the_answer_is_kept_with_its_citations(order: str, mode: str) -> None:
    """PIIMiddleware on the output, either order: the state never holds the address; claims point at the edit."""
    answer = f"Mail {EMAIL}: Paris is the capital[1](id=1)."
    model = ScriptedToolModel(script=[search("paris"), say(answer), say("Noted.")])
    pii = PIIMiddleware("email", strategy="redact", apply_to_output=True)
    stack = [pii, references()] if order == "pii first" else [references(), pii]
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=stack, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": f"pii-{order}-{mode}"}}
    question = {"messages": [{"role": "user", "content": "Who do I write to?"}]}
    state = agent.invoke(question, config) if mode == "invoke" else await agent.ainvoke(question, config)
    message = state["messages"][-1]
    claim = "Mail [REDACTED_EMAIL]: Paris is the capital"
    assert message.text == f"{claim}[1].\n\n- [1] Paris (https://example.org/paris)\n"
    # Nothing of ours keeps the address: not the model's own text, not the claims, not the state's references.
    assert EMAIL not in repr(message.model_dump())
    assert EMAIL not in repr(state["references"])
    (citation,) = state["references"][-1]["citations"]
    assert citation["text"] == claim
    assert message.text[citation["start"] : citation["end"]] == "[1]"
    (block,) = [b for b in message.content_blocks if b["type"] == "text"]
    (annotation,) = block["annotations"]
    assert block["text"][annotation["start_index"] : annotation["end_index"]] == claim
    # The next turn: the model reads its earlier answer as the reader got it, never the address.
    agent.invoke({"messages": [{"role": "user", "content": "Thanks."}]}, config)
    assert EMAIL not in read_by_model(model)
    earlier = [m.text for m in model.seen[-1] if isinstance(m, AIMessage) and m.text]
    assert earlier == [message.text]


@pytest.mark.parametrize("order", ["dynamic prompt first", "references first"])
def test_a_dynamic_prompt_on_either_side_keeps_the_citation_rule(order: str) -> None:
    """@dynamic_prompt replaces the system prompt; listed inside ReferencesMiddleware too, the model reads the rule."""
    from langchain.agents.middleware import dynamic_prompt

    @dynamic_prompt
    def guide(request: Any) -> str:
        return "You are a city guide."

    model = ScriptedToolModel(script=[search("paris"), say("Paris is the capital[1](id=1).")])
    stack = [guide, references()] if order == "dynamic prompt first" else [references(), guide]
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=stack)
    agent.invoke({"messages": [{"role": "user", "content": "?"}]})
    first, answer = model.seen
    # The first call has no documents yet: the guide's prompt as it is; the answer's call: the guide's and the rule.
    assert [m.text for m in first if m.type == "system"] == ["You are a city guide."]
    assert [m.text for m in answer if m.type == "system"] == [f"You are a city guide.\n\n{FORMAT_REFERENCES}"]


def test_an_earlier_citation_of_a_source_that_is_no_text_keeps_its_id() -> None:
    """A source key giving a number (a database row): the earlier answer's id is checked as the data hold it, text."""
    rows = [Document(d.page_content, metadata={"row": 100 + i}) for i, d in enumerate(CITY_DOCUMENTS)]
    script = [search("paris"), say("Paris is big[1](id=1)."), search("rome", first_id=5), say("Noted.")]
    model = ScriptedToolModel(script=script)
    agent = create_agent(
        model, tools=[retriever_tool(rows)], middleware=[references(source_key="row")], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "rows"}}
    agent.invoke({"messages": [{"role": "user", "content": "Paris?"}]}, config)
    agent.invoke({"messages": [HumanMessage("And Rome?")]}, config)
    assert [m.text for m in model.seen[-1] if isinstance(m, AIMessage) and m.text] == ["Paris is big[1](id=1)."]


def test_plain_history_sent_back_logs_no_unknown_id(caplog: pytest.LogCaptureFixture) -> None:
    """history="plain", the history sent back without its tool results: the earlier ids are no warning each call."""
    script = [search("paris lyon"), say("Lyon has silk[1](id=2). Paris is big[2](id=1)."), search("rome"), say("Ok.")]
    model = ScriptedToolModel(script=script)
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[references(history="plain")])
    first = agent.invoke({"messages": [{"role": "user", "content": "?"}]})["messages"]
    history = [m for m in first if not isinstance(m, ToolMessage) and m.text]
    with caplog.at_level("WARNING", logger="langchain_refs"):
        agent.invoke({"messages": [*history, HumanMessage("And Rome?")]})
    assert [r.getMessage() for r in caplog.records if "dropped citation" in r.getMessage()] == []
    assert [m.text for m in model.seen[-1] if isinstance(m, AIMessage) and m.text] == ["Lyon has silk. Paris is big."]


@pytest.mark.parametrize("history", ["raw", "plain"])
def test_a_source_key_that_reads_metadata_as_is_reads_history_sent_back(history: Any) -> None:
    """A source key indexing the metadata (``d.metadata["source"]``): earlier ids read without a KeyError."""
    script = [search("paris lyon"), say("Lyon has silk[1](id=2). Paris is big[2](id=1)."), search("rome"), say("Ok.")]
    model = ScriptedToolModel(script=script)
    middleware = references(source_key=lambda d: d.metadata["source"], history=history)
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[middleware])
    first = agent.invoke({"messages": [{"role": "user", "content": "?"}]})["messages"]
    history_sent = [m for m in first if not isinstance(m, ToolMessage) and m.text]
    agent.invoke({"messages": [*history_sent, HumanMessage("And Rome?")]})
    assert [m.text for m in model.seen[-1] if isinstance(m, AIMessage) and m.text] == ["Lyon has silk. Paris is big."]


def test_instructions_of_ones_own_are_added_once() -> None:
    """A citation rule of the user's, without "(id=": the model reads it once (the middleware's, not again)."""
    rule = "Cite each claim with the number of its document in square brackets."
    model = ScriptedToolModel(script=[search("paris"), say("Paris is the capital[1](id=1).")])
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[references(instructions=rule)])
    agent.invoke({"messages": [{"role": "user", "content": "?"}]})
    assert [m.text.count(rule) for m in model.seen[-1] if m.type == "system"] == [1]


@pytest.mark.parametrize(("kept", "read"), [(True, "Paris is big[1](id=1)."), (False, "Paris is big.")])
def test_an_earlier_citation_nothing_identifies_keeps_its_id_only_where_the_ids_were_kept(
    kept: bool, read: str
) -> None:
    """Documents without a source, no passages: an id is kept from the state's ids, else left out (sent back)."""
    sourceless = [Document(d.page_content) for d in CITY_DOCUMENTS]
    script = [search("paris"), say("Paris is big[1](id=1)."), search("rome", first_id=5), say("Noted.")]
    model = ScriptedToolModel(script=script)
    saver = InMemorySaver() if kept else None
    agent = create_agent(
        model, tools=[retriever_tool(sourceless)], middleware=[references(passages=False)], checkpointer=saver
    )
    config = {"configurable": {"thread_id": "sourceless"}}
    first = agent.invoke({"messages": [{"role": "user", "content": "Paris?"}]}, config)["messages"]
    history = [] if kept else [m for m in first if not isinstance(m, ToolMessage) and m.text]
    agent.invoke({"messages": [*history, HumanMessage("And Rome?")]}, config)
    assert [m.text for m in model.seen[-1] if isinstance(m, AIMessage) and m.text] == [read]


@pytest.mark.parametrize("order", ["guardrail first", "references first"])
def test_a_cited_sentence_a_guardrail_deletes_leaves_no_citation_behind(order: str) -> None:
    """An after_model guardrail takes a cited sentence out: its citation goes from the state and the annotations."""
    from langchain.agents.middleware import after_model

    @after_model
    def no_numbers(state: Any, runtime: Any) -> Any:
        answer = state["messages"][-1]
        if not isinstance(answer, AIMessage) or answer.tool_calls:
            return None
        blocks = [{**b, "text": b["text"].replace(" It has 9 million people[1].", "")} for b in answer.content]
        return {"messages": [answer.model_copy(update={"content": blocks})]}

    answer = "Paris is the capital of France[1](id=1). It has 9 million people[1](id=1)."
    model = ScriptedToolModel(script=[search("paris"), say(answer)])
    stack = [no_numbers, references()] if order == "guardrail first" else [references(), no_numbers]
    state = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=stack).invoke(
        {"messages": [{"role": "user", "content": "?"}]}
    )
    message = state["messages"][-1]
    assert message.text == "Paris is the capital of France[1].\n\n- [1] Paris (https://example.org/paris)\n"
    assert [c["text"] for c in state["references"][-1]["citations"]] == ["Paris is the capital of France"]
    (block,) = [b for b in message.content_blocks if b["type"] == "text"]
    spans = [block["text"][a["start_index"] : a["end_index"]] for a in block.get("annotations", [])]
    assert spans == ["Paris is the capital of France"]


@pytest.mark.parametrize("order", ["guardrail first", "references first"])
@pytest.mark.parametrize(
    ("replaced", "listed", "consulted"),
    [
        # The whole answer replaced (as OpenAIModerationMiddleware(exit_behavior="replace") does): nothing cited.
        ("Paris is the capital of France[1]. Lyon is known for silk[2].", [], ["Paris", "Lyon"]),
        # One of two sources' sentences taken out: it is listed as consulted, the other stays numbered.
        (" Lyon is known for silk[2].", ["Paris"], ["Lyon"]),
    ],
    ids=["answer replaced", "one source taken out"],
)
def test_a_source_an_edit_leaves_uncited_is_listed_as_consulted(
    order: str, replaced: str, listed: list[str], consulted: list[str]
) -> None:
    """An after_model edit that takes out every citation of a source: the source is no longer listed as cited."""
    from langchain.agents.middleware import after_model

    @after_model
    def guardrail(state: Any, runtime: Any) -> Any:
        answer = state["messages"][-1]
        if not isinstance(answer, AIMessage) or answer.tool_calls:
            return None
        if not listed:
            return {"messages": [answer.model_copy(update={"content": "I can't help with that."})]}
        blocks = [{**b, "text": b["text"].replace(replaced, "")} for b in answer.content]
        return {"messages": [answer.model_copy(update={"content": blocks})]}

    answer = "Paris is the capital of France[1](id=1). Lyon is known for silk[2](id=2)."
    model = ScriptedToolModel(script=[search("paris", "lyon"), say(answer)])
    stack = [guardrail, references()] if order == "guardrail first" else [references(), guardrail]
    state = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=stack).invoke(
        {"messages": [{"role": "user", "content": "?"}]}
    )
    recorded = state["messages"][-1].response_metadata["references"]
    assert [r["title"] for r in recorded["references"]] == listed
    assert [c["title"] for c in recorded["consulted"]] == consulted
    # The state's record (where there is one: an answer that cites nothing when first recorded has none).
    for entry in state["references"]:
        assert [r["title"] for r in entry["references"]] == listed
        assert [c["title"] for c in entry["consulted"]] == consulted


@pytest.mark.parametrize("order", ["editor first", "references first"])
def test_an_answer_edited_by_a_wrap_model_call_either_side_keeps_its_offsets_on_the_edit(order: str) -> None:
    """A wrap_model_call that prefixes the answer, listed before or after: the citations point into the edited text."""
    from langchain.agents.middleware import wrap_model_call

    @wrap_model_call
    def prefix(request: Any, handler: Any) -> Any:
        response = handler(request)
        edited = [
            m.model_copy(update={"content": "Note: " + m.text}) if isinstance(m, AIMessage) else m
            for m in response.result
        ]
        return dataclasses.replace(response, result=edited)

    model = ScriptedToolModel(script=[search("paris"), say("Paris is the capital[1](id=1).")])
    stack = [prefix, references()] if order == "editor first" else [references(), prefix]
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=stack)
    state = agent.invoke({"messages": [{"role": "user", "content": "?"}]})
    message = state["messages"][-1]
    assert message.text == "Note: Paris is the capital[1].\n\n- [1] Paris (https://example.org/paris)\n"
    (citation,) = state["references"][-1]["citations"]
    # Written by hand: "Note: " moves every offset by 6.
    assert (citation["start"], citation["end"], citation["text_start"]) == (26, 29, 6)
    assert message.text[citation["start"] : citation["end"]] == "[1]"
    assert "langchain_refs_model_text" not in message.response_metadata


def test_an_answer_not_rendered_again_the_same_loses_its_offsets_not_its_edit() -> None:
    """Where the answer cannot be rendered again as it was, the edit still wins: claims' offsets are cleared."""
    model = ScriptedToolModel(script=[search("paris"), say(f"Mail {EMAIL}: Paris is the capital[1](id=1).")])
    pii = PIIMiddleware("email", strategy="redact", apply_to_output=True)
    # A source key the state cannot render the same: its answer's sources are numbered by call count.
    calls = iter(range(1, 1000))
    agent = create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        middleware=[pii, references(source_key=lambda d: f"{d.metadata['source']}#{next(calls)}")],
    )
    state = agent.invoke({"messages": [{"role": "user", "content": "?"}]})
    message = state["messages"][-1]
    assert message.text.startswith("Mail [REDACTED_EMAIL]: Paris is the capital[1].")
    assert EMAIL not in repr(message.model_dump())
    (citation,) = state["references"][-1]["citations"]
    assert (citation["text"], citation["text_start"], citation["start"]) == (None, None, None)
    (block,) = [b for b in message.content_blocks if b["type"] == "text"]
    assert "annotations" not in block


@pytest.mark.parametrize("order", ["limit first", "references first"])
def test_model_call_limit_in_either_order(order: str) -> None:
    """ModelCallLimitMiddleware beside it: the limit holds and the answer before it is rewritten."""
    model = ScriptedToolModel(script=[search("rome"), say("Rome is old[1](id=1).")])
    limit = ModelCallLimitMiddleware(run_limit=2, exit_behavior="end")
    stack = [limit, references()] if order == "limit first" else [references(), limit]
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=stack)
    state = agent.invoke({"messages": [{"role": "user", "content": "Rome?"}]})
    assert state["messages"][-1].text == "Rome is old[1].\n\n- [1] Rome (https://example.org/rome)\n"
    assert len(model.seen) == 2


@pytest.mark.parametrize("order", ["hitl first", "references first"])
def test_human_in_the_loop_in_either_order(order: str) -> None:
    """HumanInTheLoopMiddleware interrupts the search; once approved, the answer cites with its ids."""
    model = ScriptedToolModel(script=[search("rome"), say("Rome is old[1](id=1).")])
    hitl = HumanInTheLoopMiddleware(interrupt_on={"search": True})
    stack = [hitl, references()] if order == "hitl first" else [references(), hitl]
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=stack, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "hitl"}}
    paused = agent.invoke({"messages": [{"role": "user", "content": "Rome?"}]}, config)
    assert "__interrupt__" in paused
    state = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert state["messages"][-1].text == "Rome is old[1].\n\n- [1] Rome (https://example.org/rome)\n"


class Counted(ScriptedToolModel):
    """A scripted model with a token counter of its own (a provider's), over any budget: every call is edited."""

    def get_num_tokens_from_messages(self, messages: list[Any], tools: Any = None) -> int:
        return 1_000_000


@pytest.mark.parametrize("count", ["approximate", "model"])
@pytest.mark.parametrize("order", ["editing first", "references first"])
def test_context_editing_clears_old_tool_results_and_their_ids_still_resolve(order: str, count: str) -> None:
    """ContextEditingMiddleware clears all but the last tool result; a citation of a cleared document's id resolves.

    With ``token_count_method="model"`` listed after the middleware, it counts
    with the wrapper: before, that fell to LangChain's GPT-2 tokenizer (an
    ImportError without ``transformers``, a hub download with it).
    """
    script = three_turns()
    model = Counted(script=script)
    editing = ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=1, keep=1)], token_count_method=count)
    stack = [editing, references()] if order == "editing first" else [references(), editing]
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=stack, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "edited"}}
    for question in ("Rome?", "Lyon?", "Paris, and Rome again?"):
        state = agent.invoke({"messages": [{"role": "user", "content": question}]}, config)
    tool_texts = [m.text for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert tool_texts == ["[cleared]", "[cleared]", f"<document id=3>\n{PARIS.page_content}\n</document>"]
    answer = state["messages"][-1]
    assert answer.text == THREE_TURNS_ANSWER
    annotations = [a for b in answer.content_blocks if b["type"] == "text" for a in b.get("annotations", [])]
    # Rome's passage comes from the text kept in the state, not from the cleared tool result.
    cited = [a["cited_text"] for a in annotations]
    assert cited == ["Paris is the capital of France.", "Rome is the capital of Italy."]


def test_tokens_are_counted_by_the_inner_model_through_its_bindings_unless_the_wrapper_has_a_counter() -> None:
    """The wrapper counts as the model under its bindings does; a ``custom_get_token_ids`` of its own wins."""
    bound = Counted(script=[]).bind(stop=["\n"])
    assert ReferencesChatModel(inner=bound).get_num_tokens_from_messages([HumanMessage("hi")]) == 1_000_000
    own = ReferencesChatModel(inner=bound, custom_get_token_ids=lambda text: list(range(len(text))))
    assert own.get_num_tokens("Paris") == 5
    assert own.get_num_tokens_from_messages([HumanMessage("Paris")]) == len(get_buffer_string([HumanMessage("Paris")]))


def test_a_configurable_models_provider_is_its_default_models() -> None:
    """``init_chat_model(..., configurable_fields=...)`` is no chat model but hands on its default model's methods.

    Before, the wrapper of one reported ``ls_provider="referenceschatmodel"``:
    a trace's provider, and ``ProviderToolSearchMiddleware`` listed after the
    middleware refused the model. (Its tokens are counted the same way, by
    the default model's ``get_num_tokens_from_messages``, which for Anthropic
    asks the API: not run here.)
    """
    pytest.importorskip("langchain_anthropic", reason="the provider clients are in the test extra")
    from langchain.chat_models import init_chat_model

    configurable = init_chat_model("anthropic:claude-sonnet-4-5", configurable_fields=("temperature",), api_key="x")
    wrapper = ReferencesChatModel(inner=configurable.bind(max_tokens=5))
    params = wrapper._get_ls_params()
    assert (params["ls_provider"], params["ls_model_name"], params.get("ls_max_tokens")) == (
        "anthropic",
        "claude-sonnet-4-5",
        5,
    )


@pytest.mark.parametrize("call", ["invoke", "stream"])
def test_a_stop_bound_on_the_inner_model_reaches_its_trace_and_the_call_works(call: str) -> None:
    """``model.bind(stop=[...])`` wrapped: its trace holds that stop (before: a ``TypeError`` on every call)."""
    model = ScriptedToolModel(script=[say("Paris is the capital[1](id=1).")])
    wrapper = ReferencesChatModel(inner=model.bind(stop=["\n"]), documents=[PARIS], style=TextReferenceStyle())
    assert wrapper._get_ls_params()["ls_stop"] == ["\n"]
    assert wrapper._get_ls_params(stop=["."])["ls_stop"] == ["."]  # the call's own stop first, as LangChain's
    if call == "invoke":
        text = wrapper.invoke("capital?").text
    else:
        text = "".join(chunk.text for chunk in wrapper.stream("capital?"))
    assert text == "Paris is the capital[1].\n\n- [1] Paris (https://example.org/paris)\n"


class Flaky(ScriptedToolModel):
    """A scripted model whose first call fails before it writes anything (a provider's outage)."""

    failures: int = 1

    def _next(self, messages: list[Any]) -> Any:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("provider down")
        return super()._next(messages)


@pytest.mark.parametrize("mode", ["invoke", "messages"])
@pytest.mark.parametrize("order", ["retry first", "references first"])
def test_model_retry_in_either_order(order: str, mode: str) -> None:
    """ModelRetryMiddleware calls the model again after a failure: the retried answer is rewritten, no raw marker."""
    model = Flaky(script=[search("rome"), say("Rome is old[1](id=1).")])
    retry = ModelRetryMiddleware(max_retries=2, initial_delay=0, jitter=False)
    stack = [retry, references()] if order == "retry first" else [references(), retry]
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=stack)
    question = {"messages": [{"role": "user", "content": "Rome?"}]}
    expected = "Rome is old[1].\n\n- [1] Rome (https://example.org/rome)\n"
    if mode == "invoke":
        assert agent.invoke(question)["messages"][-1].text == expected
    else:
        streamed = [
            chunk.text
            for chunk, meta in agent.stream(question, stream_mode="messages")
            if meta.get("langgraph_node") == "model"
        ]
        assert "".join(streamed) == expected
        assert not any(RAW_MARKER.search(t) for t in streamed)
    assert model.failures == 0
    assert len(model.seen) == 2


def cited_beside(*calls: tuple[str, str, dict[str, Any]]) -> Step:
    """A cited sentence streamed beside tool calls, in one answer."""
    return Step(say("Rome is old[1](id=1).").chunks, tool_calls=calls)


ROME_ANSWER = "Rome is old[1].\n\n- [1] Rome (https://example.org/rome)\n"


@pytest.mark.parametrize(("behavior", "answers"), [("continue", 2), ("end", 1)])
@pytest.mark.parametrize("order", ["limit first", "references first"])
def test_a_cited_answer_whose_tool_call_is_blocked_is_recorded(order: str, behavior: str, answers: int) -> None:
    """ToolCallLimitMiddleware blocks the second search and appends its own messages after the cited answer.

    Listed after this middleware, its ``after_model`` runs first: the answer
    was then no longer the last message, and its record was lost.
    """
    model = ScriptedToolModel(
        script=[search("rome"), cited_beside(("call_2", "search", {"query": "lyon"})), say("Rome is old[1](id=1).")]
    )
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior=behavior)  # type: ignore[arg-type]
    stack = [limit, references()] if order == "limit first" else [references(), limit]
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=stack)
    state = agent.invoke({"messages": [{"role": "user", "content": "Rome?"}]})
    cited = [m for m in state["messages"] if isinstance(m, AIMessage) and m.text.startswith("Rome is old")]
    assert [m.text for m in cited] == [ROME_ANSWER] * answers
    assert [entry["message_id"] for entry in state["references"]] == [m.id for m in cited]
    assert all(entry["references"][0]["source"] == "https://example.org/rome" for entry in state["references"])


@pytest.mark.parametrize("order", ["todo first", "references first"])
def test_a_cited_answer_beside_two_write_todos_is_recorded(order: str) -> None:
    """TodoListMiddleware refuses two write_todos at once, appending an error for each after the cited answer."""
    todos = {"todos": [{"content": "answer", "status": "in_progress"}]}
    model = ScriptedToolModel(
        script=[
            search("rome"),
            cited_beside(("t1", "write_todos", todos), ("t2", "write_todos", todos)),
            say("Done."),
        ]
    )
    stack = [TodoListMiddleware(), references()] if order == "todo first" else [references(), TodoListMiddleware()]
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=stack)
    state = agent.invoke({"messages": [{"role": "user", "content": "Rome?"}]})
    (cited,) = [m for m in state["messages"] if isinstance(m, AIMessage) and m.text.startswith("Rome is old")]
    assert cited.text == ROME_ANSWER
    assert [entry["message_id"] for entry in state["references"]] == [cited.id]


@pytest.mark.parametrize("order", ["hitl first", "references first"])
def test_a_cited_answer_whose_tool_call_is_rejected_is_recorded(order: str) -> None:
    """HumanInTheLoopMiddleware: the reviewer rejects the search beside a cited sentence; its record is kept."""
    model = ScriptedToolModel(
        script=[search("rome"), cited_beside(("call_2", "search", {"query": "lyon"})), say("Done.")]
    )
    hitl = HumanInTheLoopMiddleware(interrupt_on={"search": True})
    stack = [hitl, references()] if order == "hitl first" else [references(), hitl]
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=stack, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "reject"}}
    agent.invoke({"messages": [{"role": "user", "content": "Rome?"}]}, config)
    agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    state = agent.invoke(Command(resume={"decisions": [{"type": "reject", "message": "No more searches."}]}), config)
    (cited,) = [m for m in state["messages"] if isinstance(m, AIMessage) and m.text.startswith("Rome is old")]
    assert cited.text == ROME_ANSWER
    assert [entry["message_id"] for entry in state["references"]] == [cited.id]


class Cache(AgentMiddleware[Any, Any]):
    """Answers the model's third call itself, as a response cache does (an answer that never met the model)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.calls += 1
        return AIMessage("Done.") if self.calls == 3 else handler(request)


def test_an_answer_from_a_middleware_listed_after_leaves_the_earlier_answers_record_as_edited() -> None:
    """PII redacts the earlier cited answer of the turn; a cache answers the next call: the record stays redacted.

    Before, ``after_model`` took the last rewritten answer of the turn for
    the cache's (which it never rewrote), realigned it again and kept its old,
    unredacted record.
    """
    cited = cited_beside(("call_2", "search", {"query": "lyon"}))
    cited.chunks = say(f"Mail {EMAIL}: Rome is old[1](id=1).").chunks
    model = ScriptedToolModel(script=[search("rome"), cited, say("unused")])
    pii = PIIMiddleware("email", strategy="redact", apply_to_output=True)
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[pii, references(), Cache()])
    state = agent.invoke({"messages": [{"role": "user", "content": "Rome?"}]})
    assert state["messages"][-1].text == "Done."
    (entry,) = state["references"]
    (citation,) = entry["citations"]
    assert citation["text"] == "Mail [REDACTED_EMAIL]: Rome is old"
    assert EMAIL not in json.dumps(state["references"])


class JumpBackOnce(AgentMiddleware[Any, Any]):
    """Sends the first text answer back to the model from its ``after_model`` (a check that asks again)."""

    def __init__(self) -> None:
        super().__init__()
        self.jumped = False

    @hook_config(can_jump_to=["model"])
    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        if self.jumped or not state["messages"][-1].text:
            return None
        self.jumped = True
        return {"jump_to": "model"}


def test_an_answer_whose_after_model_was_skipped_is_recorded_in_the_order_of_the_answers() -> None:
    """The first answer's after_model is skipped by a jump: it is recorded at the end of the run, before the second."""
    model = ScriptedToolModel(
        script=[search("rome", "lyon"), say("Rome is old[1](id=1)."), say("Lyon has silk[1](id=2).")]
    )
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[references(), JumpBackOnce()])
    state = agent.invoke({"messages": [{"role": "user", "content": "Rome and Lyon?"}]})
    answers = [m for m in state["messages"] if isinstance(m, AIMessage) and m.text]
    assert [m.text.split("[")[0] for m in answers] == ["Rome is old", "Lyon has silk"]
    assert [entry["message_id"] for entry in state["references"]] == [m.id for m in answers]


class Broken(ScriptedToolModel):
    """A primary model that always fails."""

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("primary down")

    def _stream(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("primary down")


def test_model_fallback_listed_before_is_rewritten() -> None:
    """ModelFallbackMiddleware listed before: the fallback model's answer is rewritten while it streams."""
    fallback = ScriptedToolModel(script=[search("rome"), say("Rome is old[1](id=1).")])
    agent = create_agent(
        Broken(script=[]),
        tools=[retriever_tool(CITY_DOCUMENTS)],
        middleware=[ModelFallbackMiddleware(fallback), references()],
    )
    streamed = [
        chunk.text
        for chunk, meta in agent.stream({"messages": [{"role": "user", "content": "Rome?"}]}, stream_mode="messages")
        if meta.get("langgraph_node") == "model"
    ]
    assert "".join(streamed).endswith("Rome is old[1].\n\n- [1] Rome (https://example.org/rome)\n")
    assert not any(RAW_MARKER.search(t) for t in streamed)


class Metered(ScriptedToolModel):
    """A scripted model that reports 100 input and 10 output tokens per call, as provider "fakeprovider"."""

    def _stream(self, *args: Any, **kwargs: Any) -> Any:
        for chunk in super()._stream(*args, **kwargs):
            if chunk.message.chunk_position == "last":
                chunk.message.usage_metadata = {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}
            yield chunk

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        result = super()._generate(*args, **kwargs)
        result.generations[0].message.usage_metadata = {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}
        return result

    def _get_ls_params(self, stop: Any = None, **kwargs: Any) -> Any:
        return {"ls_provider": "fakeprovider", "ls_model_name": "fake-1", "ls_model_type": "chat"}


class Tally(BaseCallbackHandler):
    """Sums usage over every LLM run, as a tracer's token count does, and keeps what token callbacks got."""

    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []
        self.total = 0
        self.tokens: list[Any] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.runs.append({"name": serialized.get("name"), **(kwargs.get("metadata") or {})})

    def on_llm_new_token(self, token: Any, **kwargs: Any) -> None:
        self.tokens.append(token)

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                usage = getattr(generation.message, "usage_metadata", None) or {}
                self.total += usage.get("total_tokens", 0)


@pytest.mark.parametrize("mode", ["invoke", "messages"])
def test_one_llm_run_per_model_call_with_its_usage_once(mode: str) -> None:
    """Usage summed over all LLM runs equals the model's; each run carries the real provider and model name."""
    model = Metered(script=[search("rome"), say("Rome is old[1](id=1).")])
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[references()])
    tally = Tally()
    question = {"messages": [{"role": "user", "content": "Rome?"}]}
    if mode == "invoke":
        state = agent.invoke(question, {"callbacks": [tally]})
    else:
        for _ in agent.stream(question, {"callbacks": [tally]}, stream_mode="messages"):
            pass
        state = None
    assert len(model.seen) == 2
    assert tally.total == 2 * 110
    assert len(tally.runs) == 2
    assert {(r["name"], r["ls_provider"], r["ls_model_name"]) for r in tally.runs} == {
        ("Metered", "fakeprovider", "fake-1")
    }
    if state is not None:
        assert state["messages"][-1].usage_metadata["total_tokens"] == 110


class Labels(BaseCallbackHandler):
    """Keeps the tags and the metadata (LangChain's and LangGraph's own keys left out) of each chat model run."""

    def __init__(self) -> None:
        self.runs: list[tuple[list[str], dict[str, Any]]] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.runs.append(_labels(kwargs))


_FRAMEWORK_KEYS = ("langgraph_", "checkpoint_", "ls_", "lc_", "__")


def _labels(run: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """A run's tags and metadata (``run``: its start event's keywords), LangChain's and LangGraph's keys left out."""
    ours = {k: v for k, v in (run.get("metadata") or {}).items() if not k.startswith(_FRAMEWORK_KEYS)}
    return run.get("tags") or [], ours


@pytest.mark.parametrize("middleware", ["none", "references"])
def test_the_models_own_tags_and_metadata_label_its_traced_runs(middleware: str) -> None:
    """A model's ``tags`` and ``metadata`` (how traces are filtered) are on each model call's run, as without us."""
    model = ScriptedToolModel(
        script=[search("rome"), say("Rome is old[1](id=1).")], tags=["prod"], metadata={"team": "search"}
    )
    agent = create_agent(
        model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[references()] if middleware == "references" else []
    )
    labels = Labels()
    agent.invoke({"messages": [{"role": "user", "content": "Rome?"}]}, {"callbacks": [labels]})
    # By hand: LangGraph's step tag, then the model's own; its metadata.
    assert labels.runs == [(["seq:step:1", "prod"], {"team": "search"})] * 2


def test_tags_and_metadata_of_the_bindings_around_the_model_label_its_run() -> None:
    """``model.with_config(tags=..., metadata=...)`` wrapped: the wrapper's run carries them and the model's own."""
    model = ScriptedToolModel(script=[say("Hi.")], tags=["prod"], metadata={"team": "search"})
    bound = model.with_config(tags=["eu"], metadata={"region": "eu-west"})
    labels = Labels()
    ReferencesChatModel(inner=bound).invoke("hello", {"callbacks": [labels]})
    assert labels.runs == [(["eu", "prod"], {"region": "eu-west", "team": "search"})]


class Seen(BaseCallbackHandler):
    """Keeps each chat model run's name and output, and the tokens, as a handler given to one model would."""

    def __init__(self) -> None:
        self.runs: list[str] = []
        self.outputs: list[str] = []
        self.tokens: list[Any] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.runs.append(kwargs.get("name") or serialized.get("name"))

    def on_llm_new_token(self, token: Any, **kwargs: Any) -> None:
        self.tokens.append(token)

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.outputs.append(response.generations[0][0].text)


@pytest.mark.parametrize("call", ["invoke", "ainvoke", "stream", "astream"])
async def test_a_handler_given_to_the_model_with_config_sees_its_call_once_rewritten(call: str) -> None:
    """``model.with_config(callbacks=[handler], run_name=...)`` wrapped: one run, under that name, rewritten.

    Before, the handler saw nothing of a streamed call (the wrapper read the
    model's ``_stream``), and a raw run of an invoked one.
    """
    seen = Seen()
    model = ScriptedToolModel(script=[say("Paris is the capital[1](id=1).")])
    bound = model.with_config(callbacks=[seen], run_name="planner")
    wrapper = ReferencesChatModel(inner=bound, documents=[PARIS], style=TextReferenceStyle())
    if call == "invoke":
        wrapper.invoke("capital?")
    elif call == "ainvoke":
        await wrapper.ainvoke("capital?")
    elif call == "stream":
        list(wrapper.stream("capital?"))
    else:
        [chunk async for chunk in wrapper.astream("capital?")]
    answer = "Paris is the capital[1].\n\n- [1] Paris (https://example.org/paris)\n"
    assert (seen.runs, seen.outputs) == (["planner"], [answer])
    assert all(isinstance(token, str) for token in seen.tokens)
    if call.endswith("stream"):
        assert "".join(seen.tokens) == answer


class Runs(AsyncCallbackHandler):
    """Each chat model run as a handler given to one model sees it: name, tags, metadata (ours), output."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, list[str], dict[str, Any]]] = []
        self.outputs: list[str] = []

    async def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        tags, ours = _labels(kwargs)
        self.runs.append((kwargs.get("name") or serialized.get("name"), sorted(tags), ours))

    async def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.outputs.append(response.generations[0][0].text)


def _configured(model: Any, runs: Runs, how: str) -> Any:
    """``model`` with ``runs`` and labels given the way ``how`` names (LangChain's own ways of configuring a model)."""
    labels: dict[str, Any] = {"tags": ["eu"], "metadata": {"region": "eu-west", "team": "binding"}}
    if how == "handler list":
        return model.with_config(callbacks=[runs], run_name="planner", **labels)
    if how == "callback manager":
        manager = CallbackManager(handlers=[runs], inheritable_tags=["eu"], inheritable_metadata=labels["metadata"])
        return model.with_config(callbacks=manager)
    if how == "bound twice":
        return model.bind(stop=["\n\n\n"]).with_config(callbacks=[runs], run_name="planner").with_config(**labels)
    # with_listeners: a config factory that adds its own tracer
    return model.with_config(**labels).with_listeners(
        on_start=lambda run: runs.runs.append((run.name, sorted(run.tags or []), {})),
        on_end=lambda run: runs.outputs.append(run.outputs["generations"][0][0]["text"]),
    )


@pytest.mark.parametrize("how", ["handler list", "callback manager", "bound twice", "listeners"])
@pytest.mark.parametrize("call", ["invoke", "astream"])
async def test_the_model_calls_run_is_labelled_as_the_bare_models_is(call: str, how: str) -> None:
    """Handlers, tags, metadata and run name given around the model: its one run has them, as the bare model's has.

    The oracle is LangChain's own run of the bare model, configured the same
    way; the model's own metadata wins over a binding's, the call's over both.
    """
    seen: dict[str, Runs] = {}
    for wrapped in (False, True):
        runs = seen["wrapped" if wrapped else "bare"] = Runs()
        model = ScriptedToolModel(script=[say("Paris is the capital[1](id=1).")], metadata={"team": "model"})
        runnable = _configured(model, runs, how)
        if wrapped:
            runnable = ReferencesChatModel(inner=runnable, documents=[PARIS], style=TextReferenceStyle())
        config: dict[str, Any] = {"metadata": {"region": "call"}}
        if call == "invoke":
            runnable.invoke("capital?", config)
        else:
            [chunk async for chunk in runnable.astream("capital?", config)]
    assert seen["wrapped"].runs == seen["bare"].runs
    assert len(seen["bare"].runs) == 1
    assert seen["bare"].outputs == ["Paris is the capital[1](id=1)."]
    assert seen["wrapped"].outputs == ["Paris is the capital[1].\n\n- [1] Paris (https://example.org/paris)\n"]


def test_a_wrapper_rebuilt_from_its_fields_is_the_same_wrapper() -> None:
    """LangChain's ``configurable_fields`` rebuilds a model from its fields: no warning, one run, the same labels."""
    from langchain_core.runnables import ConfigurableField

    labels = Labels()
    model = ScriptedToolModel(script=[say("Hi.")], tags=["prod"], metadata={"team": "search"})
    wrapper = ReferencesChatModel(inner=model.with_config(callbacks=[labels], tags=["eu"]))
    configurable = wrapper.configurable_fields(max_holdback=ConfigurableField(id="holdback"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        configurable.invoke("hello", {"configurable": {"holdback": 50}})
    assert labels.runs == [(["eu", "prod"], {"team": "search"})]


def test_token_callbacks_get_the_rewritten_text_as_str() -> None:
    """on_llm_new_token handlers receive str tokens that add up to the rewritten answer, never raw markers."""
    model = Metered(script=[search("rome"), say("Rome is old[1](id=1).")])
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[references()])
    tally = Tally()
    question = {"messages": [{"role": "user", "content": "Rome?"}]}
    for _ in agent.stream(question, {"callbacks": [tally]}, stream_mode="messages"):
        pass
    assert all(isinstance(t, str) for t in tally.tokens)
    assert "".join(tally.tokens).endswith("Rome is old[1].\n\n- [1] Rome (https://example.org/rome)\n")
    assert not RAW_MARKER.search("".join(tally.tokens))


class BoundMetered(Metered):
    """`Metered` whose ``bind_tools`` binds, as a provider's does (a ``RunnableBinding`` around the model)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return self.bind(tools=[getattr(t, "name", str(t)) for t in tools], **kwargs)

    # `get_usage_metadata_callback` counts usage per ``response_metadata["model_name"]``.
    def _stream(self, *args: Any, **kwargs: Any) -> Any:
        for chunk in super()._stream(*args, **kwargs):
            if chunk.message.chunk_position == "last":
                chunk.message.response_metadata = {"model_name": "fake-1"}
            yield chunk

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        result = super()._generate(*args, **kwargs)
        result.generations[0].message.response_metadata = {"model_name": "fake-1"}
        return result


class Parameters(BaseCallbackHandler):
    """Keeps the tools and stop among each chat model run's parameters (what a trace shows of the call)."""

    def __init__(self) -> None:
        self.runs: list[tuple[Any, Any]] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        params = kwargs.get("invocation_params") or {}
        self.runs.append((params.get("tools"), params.get("stop")))


@pytest.mark.parametrize("middleware", ["none", "references"])
def test_the_tools_bound_are_among_the_traced_runs_parameters(middleware: str) -> None:
    """A trace shows the tools the agent bound (on the inner model: `bind_tools`) among the call's parameters."""
    model = BoundMetered(script=[search("rome"), say("Rome is old[1](id=1).")])
    agent_model: Any = model if middleware == "none" else ReferencesChatModel(inner=model)
    parameters = Parameters()
    bound = agent_model.bind_tools([retriever_tool(CITY_DOCUMENTS)]).bind(stop=["\n\n\n"])
    bound.invoke("Rome?", {"callbacks": [parameters]})
    # By hand: the tool's name (BoundMetered binds names), the stop bound.
    assert parameters.runs == [(["search"], ["\n\n\n"])]


# What makes the wrapper call the inner model's own stream or invoke (not its `_stream`): each opens the inner
# model's run, which LangChain would hand the caller's handlers (the graph's messages stream, a usage counter).
INNER_RUN_OPTIONS = {
    "output_version v1": {"output_version": "v1"},
    "callbacks on the model": {"callbacks": [BaseCallbackHandler()]},
    "streaming turned off": {"disable_streaming": True},
}


class NoStreamingEndpoint(ScriptedToolModel):
    """A provider-like model with LangChain's ``streaming`` field, whose endpoint refuses a streamed request."""

    streaming: bool = True

    def _stream(self, *args: Any, **kwargs: Any) -> Any:
        if not self.streaming:
            msg = "this deployment does not support stream=true"
            raise RuntimeError(msg)
        return super()._stream(*args, **kwargs)


@pytest.mark.parametrize("call", ["stream", "astream"])
async def test_a_model_built_with_streaming_off_is_never_streamed_by_the_agent(call: str) -> None:
    """LangChain's opt-out ``streaming=False`` holds inside the middleware: the model is invoked, the text rewritten."""
    model = NoStreamingEndpoint(script=[search("rome"), say("Rome is old[1](id=1).")], streaming=False)
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[references()])
    question = {"messages": [{"role": "user", "content": "Rome?"}]}
    if call == "stream":
        streamed = list(agent.stream(question, stream_mode="messages"))
    else:
        streamed = [item async for item in agent.astream(question, stream_mode="messages")]
    text = "".join(message.text for message, meta in streamed if meta["langgraph_node"] == "model")
    assert text == "Rome is old[1].\n\n- [1] Rome (https://example.org/rome)\n"


def test_a_wrapped_model_built_with_streaming_off_is_never_streamed() -> None:
    """``ReferencesChatModel.stream`` of a model built with ``streaming=False`` invokes it, as its own stream would."""
    from langchain_refs.agents import ReferencesChatModel

    inner = NoStreamingEndpoint(script=[say("Rome is old[1](id=1).")], streaming=False)
    wrapper = ReferencesChatModel(inner=inner, documents=CITY_DOCUMENTS[2:3], style=TextReferenceStyle())
    assert "".join(chunk.text for chunk in wrapper.stream("Rome?")) == (
        "Rome is old[1].\n\n- [1] Rome (https://example.org/rome)\n"
    )


@pytest.mark.parametrize("options", INNER_RUN_OPTIONS.values(), ids=INNER_RUN_OPTIONS.keys())
@pytest.mark.parametrize("call", ["stream", "astream"])
async def test_the_inner_models_own_run_reaches_no_handler_of_the_caller(options: dict[str, Any], call: str) -> None:
    """The messages stream shows the rewritten answer once (never the inner run's raw tokens), usage counts once."""
    from langchain_core.callbacks import get_usage_metadata_callback

    model = BoundMetered(script=[search("rome"), say("Rome is old[1](id=1).")], **options)
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[references()])
    question = {"messages": [{"role": "user", "content": "Rome?"}]}
    tally = Tally()
    with get_usage_metadata_callback() as usage:
        if call == "stream":
            streamed = list(agent.stream(question, {"callbacks": [tally]}, stream_mode="messages"))
        else:
            streamed = [item async for item in agent.astream(question, {"callbacks": [tally]}, stream_mode="messages")]
    text = "".join(message.text for message, meta in streamed if meta["langgraph_node"] == "model")
    assert text == "Rome is old[1].\n\n- [1] Rome (https://example.org/rome)\n"
    assert tally.total == 2 * 110
    assert [run["name"] for run in tally.runs] == ["BoundMetered", "BoundMetered"]
    assert usage.usage_metadata == {"fake-1": {"input_tokens": 200, "output_tokens": 20, "total_tokens": 220}}


@pytest.mark.parametrize("options", INNER_RUN_OPTIONS.values(), ids=INNER_RUN_OPTIONS.keys())
@pytest.mark.parametrize("call", ["invoke", "ainvoke", "stream", "astream"])
async def test_a_wrapped_models_usage_counts_once(options: dict[str, Any], call: str) -> None:
    """`get_usage_metadata_callback` around one call of the wrapper counts the model's usage once."""
    from langchain_core.callbacks import get_usage_metadata_callback

    from langchain_refs.agents import ReferencesChatModel

    inner = BoundMetered(script=[say("Paris is big[1](id=1).")], **options).bind_tools([])
    wrapper = ReferencesChatModel(inner=inner, documents=CITY_DOCUMENTS, style=TextReferenceStyle())
    with get_usage_metadata_callback() as usage:
        if call == "invoke":
            message = wrapper.invoke("Rome?")
        elif call == "ainvoke":
            message = await wrapper.ainvoke("Rome?")
        elif call == "stream":
            message = functools.reduce(operator.add, wrapper.stream("Rome?"))
        else:
            message = functools.reduce(operator.add, [chunk async for chunk in wrapper.astream("Rome?")])
    assert message.text == "Paris is big[1].\n\n- [1] Paris (https://example.org/paris)\n"
    assert usage.usage_metadata == {"fake-1": {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}}


def test_a_long_threads_earlier_answers_read_from_memory_are_read_as_anew() -> None:
    """Earlier answers are read once per middleware, then from memory: what the model reads is what a middleware
    reading them for the first time gives (three turns, an answer citing each search, one cited again later)."""
    script = [
        search("paris"),
        say("Paris is big[1](id=1)."),
        search("lyon"),
        say("Lyon has silk[1](id=2), unlike Paris[2](id=1)."),
        search("rome"),
        say("Rome is old[1](id=3)."),
        say("Noted."),
    ]
    checkpointer = InMemorySaver()
    config = {"configurable": {"thread_id": "long"}}
    warm = references()
    model = ScriptedToolModel(script=script)
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[warm], checkpointer=checkpointer)
    for question in ("Paris?", "Lyon?", "Rome?"):
        agent.invoke({"messages": [{"role": "user", "content": question}]}, config)
    # The last turn, twice from the same checkpoint: by the middleware that read the thread so far, and a new one.
    checkpoint = agent.get_state(config).config["configurable"]["checkpoint_id"]
    fork = {"configurable": {"thread_id": "long", "checkpoint_id": checkpoint}}
    seen = []
    for middleware in (warm, references()):
        model = ScriptedToolModel(script=[say("Noted.")])
        agent = create_agent(
            model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[middleware], checkpointer=checkpointer
        )
        agent.invoke({"messages": [{"role": "user", "content": "And?"}]}, fork)
        seen.append([m.text for m in model.seen[-1] if isinstance(m, AIMessage) and m.text])
    # Written by hand: each answer as the user saw it numbered, with the ids the thread keeps.
    expected = ["Paris is big[1](id=1).", "Lyon has silk[1](id=2), unlike Paris[2](id=1).", "Rome is old[1](id=3)."]
    assert seen == [expected, expected]


class AppState(AgentState[Any]):
    """An app's own agent state: the ids of the references its UI picked."""

    references: NotRequired[list[str]]


def test_a_state_of_the_users_with_its_own_references_key_gets_an_error_that_names_the_clash() -> None:
    """An app's state_schema with a "references" of its own (ids from a UI): one error saying to rename that key."""
    model = ScriptedToolModel(script=[search("paris"), say("Paris is big[1](id=1).")])
    agent = create_agent(
        model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[references()], state_schema=AppState
    )
    with pytest.raises(TypeError, match=r"'references' holds str entries.*rename that key of your state_schema"):
        agent.invoke({"messages": [{"role": "user", "content": "?"}], "references": ["kb-42"]})
