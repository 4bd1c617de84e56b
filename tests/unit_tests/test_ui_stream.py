"""The AI SDK UI message stream, in-process: chunks in order, sources by number, no raw marker, one-line errors."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessageChunk, BaseMessage, ToolMessage
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


def collect(stream: Any) -> list[dict[str, Any]]:
    async def run() -> list[dict[str, Any]]:
        return [chunk async for chunk in ui_message_chunks(stream, message_id="m")]

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
    """The text part's citations (ai 7) slice the part's text at the cited words, with their source."""
    chunks = collect(cited(["Paris is big[1](id=1). Rome is old[1](id=2)."]))
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
    chunks = collect(items("Intro. ", AIMessageChunk("Paris[1]", response_metadata={"references": references})))
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
    chunks = collect(cited(["\U0001f1eb\U0001f1f7 \U0001f600 Paris is big[1](id=1). Rome is old[1](id=2)."]))
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

    chunks = collect(cited([thought("Hm."), "Paris is big[1](id=1).", thought("And?"), " Rome is old[1](id=2)."]))
    types = [c["type"] for c in chunks]
    assert types.count("text-start") == 1
    assert types.count("reasoning-start") == 2
    [end] = [c for c in chunks if c["type"] == "text-end"]
    assert [c["source"]["id"] for c in end["citations"]] == ["source-1", "source-2"]
    assert text_of(chunks) == "Paris is big[1]. Rome is old[2]."
