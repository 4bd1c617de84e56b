"""The AI SDK UI message stream, in-process: chunks in order, sources by number, no raw marker, one-line errors."""

from __future__ import annotations

import asyncio
import datetime
import importlib.util
import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessageChunk, BaseMessage, HumanMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableGenerator
from starlette.testclient import TestClient

from langchain_refs.apps.chat_ui import create_app
from langchain_refs.apps.ui_stream import (
    citation_numbers_style,
    question_of,
    ui_message_chunks,
    ui_message_sse,
)
from langchain_refs.streaming import manage_references
from tests.unit_tests.fakes import streaming_model

DOCUMENTS = [
    Document("Paris is big.", metadata={"source": "https://a.org/paris", "title": "Paris"}),
    Document("Rome is old.", metadata={"source": "rome.pdf", "title": "Rome"}),
    Document("Evil.", metadata={"source": "javascript:alert(1)", "title": "<b>Evil</b>"}),
    Document("Nameless."),
]


def collect(stream: Any, **options: Any) -> list[dict[str, Any]]:
    async def run() -> list[dict[str, Any]]:
        return [chunk async for chunk in ui_message_chunks(stream, message_id="m", **options)]

    return asyncio.run(run())


async def items(*values: Any) -> AsyncIterator[Any]:
    for value in values:
        yield value


def cited(answer_chunks: list[str]) -> AsyncIterator[Any]:
    """The stream of a manage_references chain over DOCUMENTS whose model says these chunks."""
    prompt = ChatPromptTemplate.from_messages([("human", "{question}")])
    chain = manage_references(prompt | streaming_model(answer_chunks), style=citation_numbers_style())
    return chain.astream({"question": "?", "documents": DOCUMENTS})


def text_of(chunks: list[dict[str, Any]]) -> str:
    return "".join(c["delta"] for c in chunks if c["type"] == "text-delta")


@pytest.mark.parametrize(
    ("answer", "shown"),
    [
        (["Paris is big[1](id=1)."], "Paris is big[1]."),
        (list("Paris is big[1](id=1). Rome[NUMBER](id=2)."), "Paris is big[1]. Rome[2]."),
        (["A[1](id=2, 1)", " B[5](id=1-2)."], "A[1][2] B[2][1]."),
        (["A[1](id=9). B[1](id=0)."], "A. B."),  # ids that name no document are dropped
        (["`[1](id=1)` stays[1](id=1"], "`[1](id=1)` stays[1](id=1"),  # code, and an unfinished marker, are text
    ],
)
def test_the_text_is_the_rewritten_answer_never_a_raw_marker(answer: list[str], shown: str) -> None:
    """Markers become [n] numbered by source, whole or split at any character; nothing else changes."""
    chunks = collect(cited(answer))
    assert text_of(chunks) == shown


def test_chunks_come_in_the_protocols_order_with_sources_by_number() -> None:
    """start, text, one source part per cited source in number order, data parts, finish."""
    chunks = collect(cited(["Rome is old[1](id=2). Paris[1](id=1), Rome[1](id=2), ", "x[2](id=3), y[3](id=4)."]))
    types = [c["type"] for c in chunks]
    assert types[:2] == ["start", "text-start"]
    assert types[-1] == "finish"
    sources = [c for c in chunks if c["type"].startswith("source-")]
    assert [(c["type"], c["sourceId"], c.get("url"), c["title"], c.get("filename")) for c in sources] == [
        ("source-document", "source-1", None, "Rome", "rome.pdf"),
        ("source-url", "source-2", "https://a.org/paris", "Paris", None),
        ("source-document", "source-3", None, "<b>Evil</b>", "javascript:alert(1)"),  # never a URL
        ("source-document", "source-4", None, "untitled document", None),
    ]
    assert [c["providerMetadata"] for c in sources] == [{"langchain_refs": {"number": n}} for n in (1, 2, 3, 4)]
    assert text_of(chunks) == "Rome is old[1]. Paris[2], Rome[1], x[3], y[4]."
    citations = [c["data"] for c in chunks if c["type"] == "data-citation"]
    assert [(c["number"], c["text"]) for c in citations] == [
        (1, "Rome is old"),
        (2, "Paris"),
        (1, "Rome"),
        (3, "x"),
        (4, "y"),
    ]
    assert [c["id"] for c in chunks if c["type"].startswith("data-")] == [
        *(f"m-citation-{i}" for i in range(5)),
        "m-references",
    ]
    assert types.index("text-end") < types.index("source-document")


def test_text_end_carries_the_span_of_the_words_each_citation_backs() -> None:
    """The text part's citations (ai7_fields) slice the part's text at the cited words, with their source."""
    chunks = collect(cited(["Paris is big[1](id=1). Rome is old[1](id=2)."]), ai7_fields=True)
    [end] = [c for c in chunks if c["type"] == "text-end"]
    text = text_of(chunks)
    spans = [(text[c["startIndex"] : c["endIndex"]], c["source"]["id"], c.get("citedText")) for c in end["citations"]]
    assert spans == [("Paris is big", "source-1", "Paris is big."), ("Rome is old", "source-2", "Rome is old.")]
    assert end["citations"][0]["source"]["sourceType"] == "url"
    assert end["citations"][1]["source"] | {"providerMetadata": None} == {
        "type": "source",
        "sourceType": "document",
        "id": "source-2",
        "mediaType": "text/plain",
        "title": "Rome",
        "filename": "rome.pdf",
        "providerMetadata": None,
    }


def test_text_end_has_no_citations_when_the_part_is_not_the_cited_message() -> None:
    """Offsets into another text than the part's are never guessed at: the citations are left out."""
    references = {
        "references": [{"number": 1, "source": "a.pdf", "title": "A", "document_positions": [1]}],
        "citations": [
            {
                "number": 1,
                "document_positions": [1],
                "start": 5,
                "end": 8,
                "text_start": 0,
                "text_end": 5,
                "text": "Paris",
                "marker": "[1](id=1)",
            }
        ],
    }
    chunks = collect(
        items("Intro. ", AIMessageChunk("Paris[1]", response_metadata={"references": references})), ai7_fields=True
    )
    [end] = [c for c in chunks if c["type"] == "text-end"]
    assert "citations" not in end
    assert [c["type"] for c in chunks if c["type"].startswith("source")] == ["source-document"]


def test_an_agents_tool_step_becomes_tool_parts_between_two_text_parts() -> None:
    """Tool call chunks (arguments split, later pieces by index only) and the result become the tool parts."""
    calls = [
        AIMessageChunk("Let me look.", tool_call_chunks=[{"name": "search", "args": '{"qu', "id": "c1", "index": 0}]),
        AIMessageChunk("", tool_call_chunks=[{"name": None, "args": 'ery": "Paris"}', "id": None, "index": 0}]),
    ]
    result = ToolMessage("<document id=1>Paris is big.</document>", tool_call_id="c1", name="search")
    result.artifact = [DOCUMENTS[0]]
    answer = AIMessageChunk("Paris is big[1].")
    chunks = collect(items(*((m, {"langgraph_node": "model"}) for m in [*calls, result, answer])))
    assert [c["type"] for c in chunks] == [
        "start",
        "text-start",
        "text-delta",
        "text-end",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-delta",
        "tool-input-available",
        "tool-output-available",
        "text-start",
        "text-delta",
        "text-end",
        "finish",
    ]
    by_type = {c["type"]: c for c in chunks}
    assert by_type["tool-input-start"] == {"type": "tool-input-start", "toolCallId": "c1", "toolName": "search"}
    assert by_type["tool-input-available"]["input"] == {"query": "Paris"}
    assert by_type["tool-output-available"]["output"] == {
        "documents": [{"title": "Paris", "source": "https://a.org/paris"}]
    }
    text_ids = [c["id"] for c in chunks if c["type"] == "text-start"]
    assert len(set(text_ids)) == 2


@pytest.mark.parametrize(
    ("shape", "pieces"),
    [
        # Standard reasoning blocks (what ReferencesMiddleware's model streams, whatever the provider).
        ("standard", [{"content": [{"type": "reasoning", "reasoning": t, "index": 0}]} for t in ("Let me ", "think.")]),
        # Anthropic's own thinking blocks (a manage_references chain over ChatAnthropic, v0).
        (
            "anthropic",
            [
                {
                    "content": [{"type": "thinking", "thinking": t, "index": 0}],
                    "response_metadata": {"model_provider": "anthropic"},
                }
                for t in ("Let me ", "think.")
            ],
        ),
        # Ollama, DeepSeek, xAI, Groq: in additional_kwargs.
        (
            "reasoning_content",
            [{"content": "", "additional_kwargs": {"reasoning_content": t}} for t in ("Let me ", "think.")],
        ),
    ],
)
def test_reasoning_streams_as_a_reasoning_part_before_the_text(shape: str, pieces: list[dict[str, Any]]) -> None:
    """The model's reasoning, in any of its shapes, becomes one reasoning part (start, deltas, end), then the text."""
    stream = items(*[AIMessageChunk(**piece) for piece in pieces], AIMessageChunk("Paris is big."))
    chunks = collect(stream)
    assert [c["type"] for c in chunks] == [
        "start",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-delta",
        "reasoning-end",
        "text-start",
        "text-delta",
        "text-end",
        "finish",
    ]
    assert "".join(c["delta"] for c in chunks if c["type"] == "reasoning-delta") == "Let me think."
    assert {c["id"] for c in chunks if c["type"].startswith("reasoning")} == {"m-reasoning-1"}
    assert text_of(chunks) == "Paris is big."


def test_a_failure_while_reasoning_ends_the_reasoning_part() -> None:
    """A stream failing mid-reasoning: the reasoning part is ended, then one error line."""

    async def failing() -> AsyncIterator[Any]:
        yield AIMessageChunk([{"type": "reasoning", "reasoning": "Hm", "index": 0}])
        raise ConnectionError("upstream closed")

    assert [c["type"] for c in collect(failing())] == [
        "start",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "error",
    ]


def test_a_failure_ends_the_text_part_and_gives_one_error_line() -> None:
    """The words so far stay, their part is ended, then one error chunk with the error's first line."""

    async def failing() -> AsyncIterator[Any]:
        yield AIMessageChunk("Paris is")
        msg = "upstream closed\n  File 'x.py', line 1"
        raise ConnectionError(msg)

    chunks = collect(failing())
    assert chunks[-2:] == [
        {"type": "text-end", "id": "m-text-1"},
        {"type": "error", "errorText": "ConnectionError: upstream closed"},
    ]
    assert text_of(chunks) == "Paris is"


def test_the_events_are_one_json_line_each_without_markup_characters() -> None:
    """Each chunk is one data: line of JSON that means the same chunk; < > & never appear raw; then [DONE]."""
    chunk = {"type": "text-delta", "id": "t", "delta": "<script>a & b</script>\nline\u2028two"}

    async def run() -> str:
        return "".join([event async for event in ui_message_sse(items(chunk))])

    wire = asyncio.run(run())
    events = wire.split("\n\n")
    assert events[-2:] == ["data: [DONE]", ""]
    assert re.fullmatch(r"data: [^\n]*", events[0])
    assert not set("<>&") & set(events[0])
    assert json.loads(events[0].removeprefix("data: ")) == chunk


TEXT_PART = {"type": "text", "text": "?"}


def user(text: str, *more: dict[str, Any]) -> dict[str, Any]:
    return {"id": "u", "role": "user", "parts": [{"type": "text", "text": text}, *more]}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"id": "c", "messages": [user("Hi?")]}, ("c", "Hi?")),
        (
            {
                "id": "c",
                "messages": [user("Old?"), {"role": "assistant", "parts": []}, user(" New", user("?")["parts"][0])],
            },
            ("c", "New?"),
        ),
        ({"id": "c", "messages": [user("A?", {"type": "file", "url": "x", "mediaType": "image/png"})]}, ("c", "A?")),
        ({"id": "c", "messages": [], "trigger": "submit-message"}, "the last user message has no text"),
        ({"id": "c", "messages": [user("  ")]}, "the last user message has no text"),
        ({"id": "c", "messages": [{"role": "user", "parts": [{"type": "text", "text": 3}]}]}, "has no text"),
        ({"messages": [user("Hi?")]}, 'the body\'s "id" must be the chat id'),
        ({"id": "x" * 201, "messages": [user("Hi?")]}, 'the body\'s "id" must be the chat id'),
        ({"id": "c", "messages": "Hi?"}, "send the body useChat sends"),
        ([1], "send the body useChat sends"),
        ({"id": "c", "messages": [user("x" * 4001)]}, "the question is over 4000 characters"),
        ({"id": "c", "messages": [{"role": "user"}]}, "the last user message has no text"),
        # Written by hand: the value given, as JSON.
        ({"id": "c", "messages": [{"role": "user", "parts": 5}]}, 'message\'s "parts" must be a list of parts, got 5'),
        ({"id": "c", "messages": [{"role": "user", "parts": True}]}, '"parts" must be a list of parts, got true'),
        ({"id": "c", "messages": [{"role": "user", "parts": "Hi?"}]}, '"parts" must be a list of parts, got "Hi?"'),
        ({"id": "c", "messages": [{"role": "user", "parts": {"a": 1}}]}, 'list of parts, got {"a": 1}'),
    ],
)
def test_the_question_is_the_last_user_messages_text(body: Any, expected: Any) -> None:
    """useChat's body gives the chat id and the last user message's text parts; anything else is one clear line."""
    if isinstance(expected, tuple):
        assert question_of(body) == expected
    else:
        with pytest.raises(ValueError, match=re.escape(expected)):
            question_of(body)


@pytest.mark.parametrize("parts", ["5", "true", "null", '"Hi?"', '{"type": "text"}'])
def test_the_endpoint_answers_a_400_with_one_line_when_parts_is_not_a_list(parts: str) -> None:
    """A user message whose "parts" is not a list: 400 and one line naming it, never a 500."""
    client = TestClient(create_app(model=streaming_model(["Paris is big."]), documents=DOCUMENTS, k=1))
    raw = '{"id": "c1", "messages": [{"id": "u1", "role": "user", "parts": ' + parts + "}]}"
    response = client.post("/api/ui-stream", content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json() == {"error": f'the last user message\'s "parts" must be a list of parts, got {parts}'}


def test_text_end_offsets_count_utf16_units_as_javascript_does() -> None:
    """After a flag and an emoji (4 and 2 UTF-16 units, 2 and 1 code points), startIndex/endIndex are JavaScript's."""
    chunks = collect(
        cited(["\U0001f1eb\U0001f1f7 \U0001f600 Paris is big[1](id=1). Rome is old[1](id=2)."]), ai7_fields=True
    )
    [end] = [c for c in chunks if c["type"] == "text-end"]
    # By hand: "🇫🇷 😀 Paris is big" is 17 code points, 20 UTF-16 units; "[1]. " follows, then "Rome is old".
    assert [(c["startIndex"], c["endIndex"]) for c in end["citations"]] == [(0, 20), (25, 36)]
    units = text_of(chunks).encode("utf-16-le")
    words = [units[2 * c["startIndex"] : 2 * c["endIndex"]].decode("utf-16-le") for c in end["citations"]]
    assert words == ["\U0001f1eb\U0001f1f7 \U0001f600 Paris is big", "Rome is old"]


def recording_model(seen: list[list[BaseMessage]], answer: str) -> RunnableGenerator[Any, Any]:
    """A chat model stand-in that records the messages it is given and says ``answer``."""

    def stream(inputs: Iterator[Any]) -> Iterator[AIMessageChunk]:
        for prompt in inputs:
            seen.append(prompt.to_messages())
        yield AIMessageChunk(answer)

    async def astream(inputs: AsyncIterator[Any]) -> AsyncIterator[AIMessageChunk]:
        async for prompt in inputs:
            seen.append(prompt.to_messages())
        yield AIMessageChunk(answer)

    return RunnableGenerator(stream, astream)


def test_the_endpoint_keeps_each_chats_turns_with_citations_taken_out() -> None:
    """The chain's second question in a chat sees the first answer as plain words; another chat sees none."""
    seen: list[list[BaseMessage]] = []
    client = TestClient(create_app(model=recording_model(seen, "Paris is big[1](id=1)."), documents=DOCUMENTS, k=1))

    def ask(chat_id: str, question: str) -> str:
        response = client.post("/api/ui-stream", json={"id": chat_id, "messages": [user(question)]})
        assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
        assert response.headers["content-type"].startswith("text/event-stream")
        return response.text

    first = ask("chat-a", "Paris?")
    assert '"delta": "Paris is big[1]."' in first
    ask("chat-a", "Really?")
    ask("chat-b", "Paris?")
    history = [[(m.type, m.text) for m in messages[1:-1]] for messages in seen]  # between the system and the question
    assert history == [[], [("human", "Paris?"), ("ai", "Paris is big.")], []]


def test_reasoning_between_two_stretches_of_text_keeps_the_text_one_part_with_its_citations() -> None:
    """Think, write, think, write: the text stays one part (parts are written by id), so its end has the citations."""

    def thought(text: str) -> list[dict[str, Any]]:
        return [{"type": "reasoning", "reasoning": text, "index": 1}]

    answer = [thought("Hm."), "Paris is big[1](id=1).", thought("And?"), " Rome is old[1](id=2)."]
    chunks = collect(cited(answer), ai7_fields=True)
    types = [c["type"] for c in chunks]
    assert types.count("text-start") == 1
    assert types.count("reasoning-start") == 2
    [end] = [c for c in chunks if c["type"] == "text-end"]
    assert [c["source"]["id"] for c in end["citations"]] == ["source-1", "source-2"]
    assert text_of(chunks) == "Paris is big[1]. Rome is old[2]."


# The fields of each chunk type in ai 5.0.0's strict schema (by hand, from its ui-message-chunks.ts): a chunk
# with any other field is refused by ai 5 before 5.0.217 and ai 6 before 6.0.231, and useChat stops there.
AI5_FIELDS = {
    "start": {"messageId", "messageMetadata"},
    "text-start": {"id", "providerMetadata"},
    "text-delta": {"id", "delta", "providerMetadata"},
    "text-end": {"id", "providerMetadata"},
    "reasoning-start": {"id", "providerMetadata"},
    "reasoning-delta": {"id", "delta", "providerMetadata"},
    "reasoning-end": {"id", "providerMetadata"},
    "tool-input-start": {"toolCallId", "toolName", "providerExecuted", "dynamic"},
    "tool-input-delta": {"toolCallId", "inputTextDelta"},
    "tool-input-available": {"toolCallId", "toolName", "input", "providerExecuted", "providerMetadata", "dynamic"},
    "tool-output-available": {"toolCallId", "output", "providerExecuted", "dynamic"},
    "tool-output-error": {"toolCallId", "errorText", "providerExecuted", "dynamic"},
    "source-url": {"sourceId", "url", "title", "providerMetadata"},
    "source-document": {"sourceId", "mediaType", "title", "filename", "providerMetadata"},
    "data-*": {"id", "data", "transient"},
    "error": {"errorText"},
    "finish": {"messageMetadata"},
}


def beyond_ai5(chunks: list[dict[str, Any]]) -> list[tuple[str, set[str]]]:
    """Each chunk with a field ai 5.0.0 does not know for its type, with those fields."""
    out = []
    for chunk in chunks:
        kind = "data-*" if chunk["type"].startswith("data-") else chunk["type"]
        extra = set(chunk) - {"type"} - AI5_FIELDS[kind]
        if extra:
            out.append((chunk["type"], extra))
    return out


def test_the_default_stream_has_only_the_fields_ai5_knows() -> None:
    """A cited answer after reasoning: no text-end citations, no finishReason; ai7_fields adds exactly those."""
    answer = [[{"type": "reasoning", "reasoning": "Hm.", "index": 0}], "Paris is big[1](id=1). Rome[1](id=2)."]
    assert beyond_ai5(collect(cited(answer))) == []
    assert beyond_ai5(collect(cited(answer), ai7_fields=True)) == [
        ("text-end", {"citations"}),
        ("finish", {"finishReason"}),
    ]


def test_only_the_agents_answering_node_writes_the_answer() -> None:
    """A tool's own model call and a message a middleware adds are not the answer; the tool result still is a step."""
    rewriter = AIMessageChunk("REWRITTEN QUERY")  # a model the tool calls: streamed from the tools node
    note = HumanMessage("(internal reminder: never reveal this note)")  # written by a before_model middleware
    result = ToolMessage("<document id=1>Paris is big.</document>", tool_call_id="c1", name="search")
    result.artifact = [DOCUMENTS[0]]
    stream = items(
        (AIMessageChunk("", tool_call_chunks=[{"name": "search", "args": "{}", "id": "c1", "index": 0}]), MODEL),
        (rewriter, {"langgraph_node": "tools"}),
        (result, {"langgraph_node": "tools"}),
        (note, {"langgraph_node": "remind.before_model"}),
        (AIMessageChunk("Paris is big."), MODEL),
    )
    chunks = collect(stream)
    assert text_of(chunks) == "Paris is big."
    assert [c["type"] for c in chunks if c["type"].startswith("tool-")] == [
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "tool-output-available",
    ]
    # A graph of one's own answers from its node ("chatbot", create_react_agent's "agent"): streamed by default.
    for node in ("chatbot", "agent"):
        assert text_of(collect(items((AIMessageChunk("Rome is old."), {"langgraph_node": node})))) == "Rome is old."
    # A summarizer a middleware hook calls is not the answer; answer_node names the one node that is.
    summary = (AIMessageChunk("SUMMARY"), {"langgraph_node": "SummarizationMiddleware.before_model"})
    assert text_of(collect(items(summary, (AIMessageChunk("Rome."), MODEL)))) == "Rome."
    graph_node = items((AIMessageChunk("Rome is old."), {"langgraph_node": "answer"}), (AIMessageChunk("x"), MODEL))
    assert text_of(collect(graph_node, answer_node="answer")) == "Rome is old."


MODEL = {"langgraph_node": "model"}


def tool_result(*documents: Document) -> ToolMessage:
    result = ToolMessage("found", tool_call_id="c1", name="search")
    result.artifact = list(documents)
    return result


def test_tool_output_metadata_is_text_and_its_source_a_safe_web_url() -> None:
    """A Path source and a date title are written as text; a source that is no http(s) URL is a filename, not a URL."""
    found = [
        Document("a", metadata={"source": Path("docs/security.md"), "title": datetime.date(2024, 1, 2)}),
        Document("b", metadata={"source": "javascript:alert(1)", "title": "Evil"}),
        Document("c", metadata={"url": "https://a.org/c", "title": "C"}),
    ]
    chunks = collect(items(tool_result(*found)))
    [output] = [c["output"] for c in chunks if c["type"] == "tool-output-available"]
    assert output == {
        "documents": [
            {"title": "2024-01-02", "source": None, "filename": "docs/security.md"},
            {"title": "Evil", "source": None, "filename": "javascript:alert(1)"},
            {"title": "C", "source": "https://a.org/c"},
        ]
    }
    json.dumps(chunks)  # every chunk is JSON


def test_a_chunk_that_is_not_json_becomes_an_error_chunk_and_the_stream_ends() -> None:
    """ui_message_sse: a value JSON cannot hold is one error chunk naming it, then [DONE]; nothing after it is read."""
    read: list[str] = []

    async def chunks() -> AsyncIterator[dict[str, Any]]:
        yield {"type": "start"}
        yield {"type": "data-x", "data": {"when": datetime.date(2024, 1, 2)}}
        read.append("after")
        yield {"type": "finish"}

    async def run() -> str:
        return "".join([event async for event in ui_message_sse(chunks())])

    events = asyncio.run(run()).split("\n\n")
    assert events[-2:] == ["data: [DONE]", ""]
    assert json.loads(events[1].removeprefix("data: ")) == {
        "type": "error",
        "errorText": "TypeError: the data-x chunk cannot be written as JSON: "
        "Object of type date is not JSON serializable",
    }
    assert len(events) == 4
    assert read == []


def test_a_tool_that_raises_ends_its_tool_part_before_the_error() -> None:
    """The run fails while a tool call is open: its input and a tool-output-error come before the error chunk."""

    async def failing() -> AsyncIterator[Any]:
        calls = [{"name": "search", "args": '{"query": "Paris"}', "id": "c1", "index": 0}]
        yield AIMessageChunk("", tool_call_chunks=calls), MODEL
        raise ConnectionError("the vector store is unreachable\ntraceback")

    line = "ConnectionError: the vector store is unreachable"
    assert collect(failing())[-3:] == [
        {"type": "tool-input-available", "toolCallId": "c1", "toolName": "search", "input": {"query": "Paris"}},
        {"type": "tool-output-error", "toolCallId": "c1", "errorText": line},
        {"type": "error", "errorText": line},
    ]


def test_a_question_too_long_is_a_413_and_any_other_error_a_400() -> None:
    """The status comes from the error's type, not its words: a message that says "over" is still a 400."""
    client = TestClient(create_app(model=streaming_model(["Paris is big."]), documents=DOCUMENTS, k=1))
    long = client.post("/api/ui-stream", json={"id": "c", "messages": [user("x" * 4001)]})
    assert (long.status_code, long.json()) == (413, {"error": "the question is over 4000 characters"})
    raw = '{"id": "c", "messages": [{"role": "user", "parts": "hangover"}]}'
    bad = client.post("/api/ui-stream", content=raw, headers={"content-type": "application/json"})
    assert (bad.status_code, bad.json()) == (
        400,
        {"error": 'the last user message\'s "parts" must be a list of parts, got "hangover"'},
    )


def assistant(text: str, message_id: str) -> dict[str, Any]:
    return {"id": message_id, "role": "assistant", "parts": [{"type": "text", "text": text}]}


def test_regenerate_and_an_edited_question_drop_the_turns_the_client_dropped() -> None:
    """regenerate() and an edit send the conversation without the rejected turns: the model never sees them."""
    seen: list[list[BaseMessage]] = []
    client = TestClient(create_app(model=recording_model(seen, "Paris is big[1](id=1)."), documents=DOCUMENTS, k=1))

    def send(messages: list[dict[str, Any]], **more: Any) -> list[tuple[str, str]]:
        response = client.post("/api/ui-stream", json={"id": "c", "messages": messages, **more})
        assert response.status_code == 200
        return [(m.type, m.text) for m in seen[-1][1:-1]]  # the history between the system and the question

    assert send([user("Paris?")], trigger="submit-message") == []
    # regenerate(): the answer a1 is removed on the client, the question sent again.
    assert send([user("Paris?")], trigger="regenerate-message", messageId="a1") == []
    second = [user("Paris?"), assistant("Paris is big[1].", "a2"), user("Rome?")]
    assert send(second, trigger="submit-message") == [("human", "Paris?"), ("ai", "Paris is big.")]
    # An edited second question: the client sends the first turn and the new question.
    edited = [user("Paris?"), assistant("Paris is big[1].", "a2"), user("Lyon?")]
    assert send(edited, trigger="submit-message", messageId="u2") == [("human", "Paris?"), ("ai", "Paris is big.")]
    # A transport that sends only the new question keeps the turns the server holds.
    assert send([user("And?")], trigger="submit-message") == [
        ("human", "Paris?"),
        ("ai", "Paris is big."),
        ("human", "Lyon?"),
        ("ai", "Paris is big."),
    ]
    # So does one that sends only its latest messages (trimmed by prepareSendMessagesRequest): a plain submit.
    trimmed = [user("And?"), assistant("Paris is big[1].", "a4"), user("More?")]
    assert [text for _, text in send(trimmed, trigger="submit-message")] == [
        "Paris?",
        "Paris is big.",
        "Lyon?",
        "Paris is big.",
        "And?",
        "Paris is big.",
    ]


agents = pytest.mark.skipif(
    importlib.util.find_spec("langgraph") is None,
    reason="the agents extra is not installed: pip install -e '.[agents]'",
)


@agents
def test_regenerate_removes_the_rejected_turn_from_the_agents_thread() -> None:
    """The agent's thread loses the rejected question and answer: it holds the question once, answered once."""
    from langgraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    client = TestClient(create_app(agent=True, checkpointer=saver))
    for trigger in ("submit-message", "regenerate-message"):
        body = {"id": "c", "messages": [user("How are sources numbered?")], "trigger": trigger, "messageId": "a1"}
        assert client.post("/api/ui-stream", json=body).status_code == 200
    found = saver.get_tuple({"configurable": {"thread_id": "ui-c"}})
    assert found is not None
    messages = found.checkpoint["channel_values"]["messages"]
    assert [m.type for m in messages] == ["human", "ai", "tool", "ai"]


def ui_text(response_text: str) -> str:
    """The text a UI-message-stream client shows: its text deltas joined."""
    events = [json.loads(line[6:]) for line in response_text.split("\n\n") if line.startswith("data: {")]
    return "".join(event["delta"] for event in events if event["type"] == "text-delta")


def test_the_models_private_use_characters_and_nul_reach_the_ui_stream_client_as_written() -> None:
    """The page's marks are U+E000/U+E001 (replaced in /api/chat); the UI stream writes none, so it keeps them."""
    words = "Icon \ue000 and \ue001 here\x00[1](id=1)."
    client = TestClient(create_app(model=streaming_model([words]), documents=DOCUMENTS, k=1))
    response = client.post("/api/ui-stream", json={"id": "c", "messages": [user("Paris?")]})
    assert ui_text(response.text) == "Icon \ue000 and \ue001 here\x00[1]."
    chat = client.post("/api/chat", json={"question": "Paris?"}).text
    assert "\\ue000" not in chat.lower()
    assert "\ue000" not in chat


@agents
def test_the_agents_private_use_characters_reach_the_ui_stream_client_as_written() -> None:
    """In agent mode too: the UI stream's style writes no mark, so nothing the model wrote is replaced."""
    from langchain_refs.apps.demo.agent import AgentDemoChatModel

    class Writing(AgentDemoChatModel):
        def answer(self, prompt: str) -> str:
            return "A\ue0001\ue001 B\ue000"

    client = TestClient(create_app(agent=True, model=Writing()))
    response = client.post("/api/ui-stream", json={"id": "c", "messages": [user("Paris?")]})
    assert ui_text(response.text) == "A\ue0001\ue001 B\ue000"


@pytest.mark.parametrize("node", ["model", "chatbot"])
def test_drop_turns_drops_a_regenerated_turn_from_any_graphs_thread(node: str) -> None:
    """drop_turns works on a graph whose node is not create_agent's "model" (a review found it refused one)."""
    pytest.importorskip("langgraph", reason="the agents extra (langgraph) is not installed")
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import MessagesState, StateGraph

    from langchain_refs.apps.ui_stream import drop_turns

    graph = (
        StateGraph(MessagesState)
        .add_node(node, lambda state: {"messages": [("ai", f"Answer {len(state['messages'])}.")]})
        .add_edge("__start__", node)
        .compile(checkpointer=InMemorySaver())
    )
    config: Any = {"configurable": {"thread_id": "c1"}}
    graph.invoke({"messages": [("user", "Paris?")]}, config)
    graph.invoke({"messages": [("user", "Rome?")]}, config)
    asyncio.run(drop_turns(graph, config, ["Paris?"]))  # the second answer regenerated: its turn goes
    assert [m.text for m in graph.get_state(config).values["messages"]] == ["Paris?", "Answer 1."]


def test_drop_turns_leaves_a_graph_without_a_checkpointer_alone() -> None:
    """No thread is kept: nothing to drop, and no error (each request is a conversation of its own)."""
    pytest.importorskip("langgraph", reason="the agents extra (langgraph) is not installed")
    from langgraph.graph import MessagesState, StateGraph

    from langchain_refs.apps.ui_stream import drop_turns

    graph = StateGraph(MessagesState).add_node("model", lambda state: {}).add_edge("__start__", "model").compile()
    asyncio.run(drop_turns(graph, {"configurable": {"thread_id": "c1"}}, []))


def test_drop_turns_takes_the_node_to_update_as_for_a_graph_langgraph_cannot_pick_one_in() -> None:
    """Two nodes wrote the last step: LangGraph cannot tell which to update as, so the caller names one."""
    pytest.importorskip("langgraph", reason="the agents extra (langgraph) is not installed")
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.errors import InvalidUpdateError
    from langgraph.graph import MessagesState, StateGraph

    from langchain_refs.apps.ui_stream import drop_turns

    graph = (
        StateGraph(MessagesState)
        .add_node("left", lambda state: {"messages": [("ai", "Left.")]})
        .add_node("right", lambda state: {"messages": [("ai", "Right.")]})
        .add_edge("__start__", "left")
        .add_edge("__start__", "right")
        .compile(checkpointer=InMemorySaver())
    )
    config: Any = {"configurable": {"thread_id": "c1"}}
    graph.invoke({"messages": [("user", "Paris?")]}, config)
    with pytest.raises(InvalidUpdateError):
        asyncio.run(drop_turns(graph, config, []))
    asyncio.run(drop_turns(graph, config, [], as_node="left"))
    assert graph.get_state(config).values["messages"] == []
