"""Every provider content shape through the agent path: annotations, placement of native citations, other blocks.

Expected texts and offsets are written by hand from the answers below.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

pytest.importorskip("langchain.agents", reason="the agent tests need the agents extra: pip install -e '.[agents]'")

from langchain.agents import create_agent
from langchain.agents.middleware import ModelRefusalMiddleware
from langchain.agents.middleware.model_refusal import ModelRefusalError
from langchain_core.documents import Document
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.runnables import RunnableLambda
from pydantic import Field

from langchain_refs import ReferencesChatModel, ReferencesMiddleware, TextReferenceStyle, manage_references
from tests.unit_tests.agent_fakes import CITY_DOCUMENTS, BlockStreamer, ScriptedToolModel, retriever_tool, search

PARIS = Document("Paris is big.", metadata={"source": "https://p.org", "title": "P"})
ANTHROPIC = AIMessage(
    content=[
        {"type": "thinking", "thinking": "Let me think.", "signature": "sig"},
        {"type": "text", "text": "Paris is big[1](id=1). "},
        {
            "type": "text",
            "text": "Rome is old.",
            "citations": [
                {
                    "type": "web_search_result_location",
                    "url": "https://r.org",
                    "title": "R",
                    "cited_text": "Rome is old.",
                    "encrypted_index": "x",
                }
            ],
        },
    ],
    response_metadata={"model_provider": "anthropic"},
)
OPENAI = AIMessage(
    content=[
        {
            "type": "text",
            "text": "Paris is big[1](id=1). Rome is old. Lyon has silk.",
            "annotations": [
                {"type": "url_citation", "url": "https://r.org", "title": "R", "start_index": 23, "end_index": 35}
            ],
        }
    ],
    response_metadata={"model_provider": "openai"},
)
LIST = "\n\n- [1] P (https://p.org)\n- [2] R (https://r.org)\n"


def wrapped(message: AIMessage) -> ReferencesChatModel:
    return ReferencesChatModel(
        inner=GenericFakeChatModel(messages=iter([message])), documents=[PARIS], style=TextReferenceStyle()
    )


def spans(message: BaseMessage) -> list[tuple[str, str, str]]:
    """(block type, annotated words, url) for every annotation of the standard content."""
    return [
        (block["type"], block["text"][a["start_index"] : a["end_index"]], a["url"])
        for block in message.content_blocks
        if block["type"] == "text"
        for a in block.get("annotations", [])
    ]


def test_whole_anthropic_message_gets_annotations_one_list_and_reasoning() -> None:
    """A whole list-content answer: annotated blocks, the list in the last text block, thinking as reasoning."""
    out = wrapped(ANTHROPIC).invoke("q")
    blocks = out.content_blocks
    assert [b["type"] for b in blocks] == ["reasoning", "text", "text"]
    assert blocks[0]["reasoning"] == "Let me think."
    assert [b["text"] for b in blocks[1:]] == ["Paris is big[1]. ", "Rome is old.[2]" + LIST]
    assert spans(out) == [("text", "Paris is big", "https://p.org"), ("text", "Rome is old.", "https://r.org")]


def test_whole_anthropic_citation_of_a_middle_block_is_numbered_in_that_block() -> None:
    """A provider-cited block followed by another: its number ends that block, not a block of its own."""
    message = ANTHROPIC.model_copy(update={"content": [*ANTHROPIC.content, {"type": "text", "text": " Lyon."}]})
    out = wrapped(message).invoke("q")
    assert [b["text"] for b in out.content_blocks[1:]] == ["Paris is big[1]. ", "Rome is old.[2]", " Lyon." + LIST]
    assert spans(out) == [("text", "Paris is big", "https://p.org"), ("text", "Rome is old.", "https://r.org")]


def test_openai_url_citation_is_placed_on_its_own_sentence() -> None:
    """An OpenAI url_citation over "Rome is old." numbers that sentence, not the block's end or its neighbour."""
    out = wrapped(OPENAI).invoke("q")
    assert out.text == "Paris is big[1]. Rome is old.[2] Lyon has silk." + LIST
    assert spans(out) == [("text", "Paris is big", "https://p.org"), ("text", "Rome is old.", "https://r.org")]


def test_openai_reasoning_reads_as_standard_reasoning() -> None:
    """OpenAI Responses' reasoning block (type "reasoning", its text in a summary) comes out in the standard form."""
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Let me think."}]}
    message = OPENAI.model_copy(update={"content": [reasoning, *OPENAI.content]})
    out = wrapped(message).invoke("q")
    assert out.content_blocks[0] == {"type": "reasoning", "id": "rs_1", "reasoning": "Let me think."}
    assert out.text == "Paris is big[1]. Rome is old.[2] Lyon has silk." + LIST


def test_a_message_with_nothing_cited_keeps_its_shape() -> None:
    """No marker and no native citation: the whole list-content message comes out as it came in."""
    message = AIMessage(content=[{"type": "text", "text": "Hello."}, {"type": "text", "text": " Bye."}])
    assert wrapped(message).invoke("q").content == message.content


def anthropic_stream() -> list[AIMessageChunk]:
    meta = {"model_provider": "anthropic"}
    return [
        AIMessageChunk(content=[{"type": "thinking", "thinking": "Let me ", "index": 0}], response_metadata=meta),
        AIMessageChunk(content=[{"type": "thinking", "thinking": "think.", "index": 0}], response_metadata=meta),
        AIMessageChunk(content=[{"type": "thinking", "signature": "sig", "index": 0}], response_metadata=meta),
        AIMessageChunk(content=[{"type": "text", "text": "Paris is the capital", "index": 1}], response_metadata=meta),
        AIMessageChunk(content=[{"type": "text", "text": " of France[1](i", "index": 1}], response_metadata=meta),
        AIMessageChunk(content=[{"type": "text", "text": "d=1).", "index": 1}], response_metadata=meta),
    ]


@pytest.mark.parametrize("mode", ["invoke", "messages"])
def test_streamed_list_content_in_the_agent_has_annotations_and_reasoning(mode: str) -> None:
    """Anthropic-style list chunks through create_agent: one annotated text block; thinking kept as reasoning."""
    model = BlockStreamer(script=[])
    tool_step = ScriptedToolModel(script=[search("paris")])
    first = next(iter(tool_step._stream([])))  # the tool call, as a chunk of its own
    model.script = [[first.message], anthropic_stream()]
    agent = create_agent(
        model,
        tools=[retriever_tool(CITY_DOCUMENTS)],
        middleware=[ReferencesMiddleware(style=TextReferenceStyle())],
    )
    question = {"messages": [{"role": "user", "content": "Paris?"}]}
    if mode == "invoke":
        state = agent.invoke(question)
    else:
        values = [data for kind, data in agent.stream(question, stream_mode=["messages", "values"]) if kind == "values"]
        state = values[-1]
    answer = state["messages"][-1]
    blocks = answer.content_blocks
    assert [b["type"] for b in blocks] == ["reasoning", "text"]
    assert blocks[0]["reasoning"] == "Let me think."
    assert blocks[1]["text"] == "Paris is the capital of France[1].\n\n- [1] Paris (https://example.org/paris)\n"
    assert spans(answer) == [("text", "Paris is the capital of France", "https://example.org/paris")]


# Gemini grounds a whole answer in response_metadata; its offsets count UTF-8 bytes ("é" is two).
GEMINI_TEXT = "Paris is big[1](id=1). Café Rome is old. Lyon has silk."
GEMINI_SPAN = "Café Rome is old."
GEMINI_START = len(GEMINI_TEXT[: GEMINI_TEXT.index(GEMINI_SPAN)].encode())
GROUNDING = {
    "web_search_queries": ["rome age"],
    "grounding_chunks": [{"web": {"uri": "https://r.org", "title": "R"}}],
    "grounding_supports": [
        {
            "segment": {
                "start_index": GEMINI_START,
                "end_index": GEMINI_START + len(GEMINI_SPAN.encode()),
                "text": GEMINI_SPAN,
            },
            "grounding_chunk_indices": [0],
        }
    ],
}
GEMINI_META = {"model_provider": "google_genai", "grounding_metadata": GROUNDING}


def test_gemini_grounding_of_a_whole_answer_numbers_its_span() -> None:
    """A whole Gemini answer: the grounded span gets its number after it (bytes counted as bytes), one list."""
    out = wrapped(AIMessage(GEMINI_TEXT, response_metadata=GEMINI_META)).invoke("q")
    assert out.text == "Paris is big[1]. Café Rome is old.[2] Lyon has silk." + LIST
    assert spans(out) == [("text", "Paris is big", "https://p.org"), ("text", "Café Rome is old.", "https://r.org")]
    (native,) = [c["native"] for c in out.response_metadata["references"]["citations"] if c["native"]]
    assert native["extras"]["google_ai_metadata"]["web_search_queries"] == ["rome age"]


def test_gemini_grounding_after_a_streamed_answer_is_numbered_at_its_end() -> None:
    """Streamed, the grounding comes with the last chunk: its source is numbered at the end of the text, and listed."""
    text_chunks = [GEMINI_TEXT[i : i + 5] for i in range(0, len(GEMINI_TEXT), 5)]
    chunks = [AIMessageChunk(content=t, response_metadata={"model_provider": "google_genai"}) for t in text_chunks]
    chunks.append(AIMessageChunk(content="", response_metadata=GEMINI_META))
    model = ReferencesChatModel(inner=BlockStreamer(script=[chunks]), documents=[PARIS], style=TextReferenceStyle())
    streamed = "".join(c.text for c in model.stream("q"))
    assert streamed == "Paris is big[1]. Café Rome is old. Lyon has silk.[2]" + LIST


# -- streamed non-text blocks: every chunk, and their sum, in the standard form the sum is marked with ---------------

OPENAI_META = {"model_provider": "openai"}
ANTHROPIC_META = {"model_provider": "anthropic"}


def summed(chunks: list[Any]) -> AIMessageChunk:
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


def streamed(script: list[AIMessageChunk], documents: list[Document] | None = None) -> list[AIMessageChunk]:
    model = ReferencesChatModel(
        inner=BlockStreamer(script=[script]), documents=documents or [PARIS], style=TextReferenceStyle()
    )
    return list(model.stream("q"))


async def astreamed(script: list[AIMessageChunk]) -> list[AIMessageChunk]:
    model = ReferencesChatModel(inner=BlockStreamer(script=[script]), documents=[PARIS], style=TextReferenceStyle())
    return [chunk async for chunk in model.astream("q")]


def anthropic_tool_turn() -> list[AIMessageChunk]:
    """Thinking, a sentence, then a tool call, as langchain-anthropic streams them (block indices 0, 1, 2)."""
    call = {"name": "search", "args": "", "id": "toolu_1", "index": 2, "type": "tool_call_chunk"}
    return [
        *anthropic_stream()[:3],
        AIMessageChunk(
            content=[{"type": "text", "text": "Let me look.", "index": 1}], response_metadata=ANTHROPIC_META
        ),
        AIMessageChunk(
            content=[{"type": "tool_use", "id": "toolu_1", "name": "search", "input": {}, "index": 2}],
            tool_call_chunks=[call],
            response_metadata=ANTHROPIC_META,
        ),
        AIMessageChunk(
            content=[{"type": "input_json_delta", "partial_json": '{"query": "paris"}', "index": 2}],
            tool_call_chunks=[{**call, "name": None, "id": None, "args": '{"query": "paris"}'}],
            response_metadata=ANTHROPIC_META,
        ),
    ]


def openai_tool_turn(text: str = "") -> list[AIMessageChunk]:
    """An OpenAI chat tool call: empty str content, the call's arguments in two pieces (and some text before)."""
    call = {"name": "search", "args": '{"query": ', "id": "call_1", "index": 0, "type": "tool_call_chunk"}
    return [
        *([AIMessageChunk(content=text, response_metadata=OPENAI_META)] if text else []),
        AIMessageChunk(content="", tool_call_chunks=[call], response_metadata=OPENAI_META),
        AIMessageChunk(
            content="",
            tool_call_chunks=[{**call, "name": None, "id": None, "args": '"paris"}'}],
            response_metadata=OPENAI_META,
        ),
    ]


@pytest.mark.parametrize("call", ["stream", "astream"])
async def test_streamed_thinking_is_reasoning_in_every_chunk_and_in_their_sum(call: str) -> None:
    """Issue 20: a streamed Anthropic thinking block read as the standard reasoning, chunk by chunk and summed.

    The sum is marked standard (v1) for its annotations: its thinking must then be standard too, not type "thinking".
    """
    chunks = streamed(anthropic_stream()) if call == "stream" else await astreamed(anthropic_stream())
    assert [[b["type"] for b in c.content_blocks] for c in chunks[:3]] == [["reasoning"]] * 3
    total = summed(chunks)
    assert not [b for b in total.content if isinstance(b, dict) and b.get("type") == "thinking"]
    blocks = total.content_blocks
    assert [b["type"] for b in blocks] == ["reasoning", "text"]
    assert blocks[0]["reasoning"] == "Let me think."
    assert blocks[0]["extras"] == {"signature": "sig"}
    assert blocks[1]["text"] == "Paris is the capital of France[1].\n\n- [1] P (https://p.org)\n"
    assert spans(total) == [("text", "Paris is the capital of France", "https://p.org")]


def test_streamed_thinking_with_nothing_cited_reads_the_same() -> None:
    """Nothing cited: the summed answer still reads as reasoning and text, the text as written."""
    script = [*anthropic_stream()[:3], AIMessageChunk(content=[{"type": "text", "text": "Hi.", "index": 1}])]
    blocks = summed(streamed(script)).content_blocks
    assert [(b["type"], b.get("reasoning", b.get("text"))) for b in blocks] == [
        ("reasoning", "Let me think."),
        ("text", "Hi."),
    ]


def test_streamed_openai_tool_call_turn_keeps_its_tool_call_in_the_standard_content() -> None:
    """Issue 20: a streamed tool-call turn (no text) shows its tool call in content_blocks, as the model alone does."""
    total = summed(streamed(openai_tool_turn()))
    assert total.tool_calls == [{"name": "search", "args": {"query": "paris"}, "id": "call_1", "type": "tool_call"}]
    calls = [b for b in total.content_blocks if b["type"] == "tool_call"]
    assert [(b["id"], b["name"], b["args"]) for b in calls] == [("call_1", "search", {"query": "paris"})]
    assert [b["type"] for b in total.content_blocks] == ["tool_call"]


def test_streamed_text_then_tool_call_keeps_both_and_the_annotation() -> None:
    """Text with a citation, then a tool call (OpenAI chat): the annotated text and the call, both standard."""
    total = summed(streamed(openai_tool_turn("Paris is big[1](id=1).")))
    assert [b["type"] for b in total.content_blocks] == ["text", "tool_call"]
    assert spans(total) == [("text", "Paris is big", "https://p.org")]
    assert total.tool_calls[0]["args"] == {"query": "paris"}


def test_streamed_anthropic_tool_turn_is_reasoning_text_and_tool_call() -> None:
    """Thinking, text, tool_use streamed: reasoning, text and the tool call with its arguments, summed."""
    total = summed(streamed(anthropic_tool_turn()))
    blocks = total.content_blocks
    assert [b["type"] for b in blocks] == ["reasoning", "text", "tool_call"]
    assert (blocks[2]["id"], blocks[2]["args"]) == ("toolu_1", {"query": "paris"})
    assert total.tool_calls == [{"name": "search", "args": {"query": "paris"}, "id": "toolu_1", "type": "tool_call"}]


def test_whole_tool_call_turns_read_as_the_model_alone() -> None:
    """invoke: the same turns whole show the same blocks as streamed."""
    turns = [(openai_tool_turn(), ["tool_call"]), (anthropic_tool_turn(), ["reasoning", "text", "tool_call"])]
    for script, expected in turns:
        model = ReferencesChatModel(inner=BlockStreamer(script=[script]), documents=[PARIS], style=TextReferenceStyle())
        out = model.invoke("q")
        assert [b["type"] for b in out.content_blocks] == expected
        assert out.tool_calls[0]["args"] == {"query": "paris"}


@pytest.mark.parametrize("call", ["invoke", "ainvoke"])
async def test_a_whole_message_dumped_from_summed_chunks_keeps_its_tool_call(call: str) -> None:
    """A model whose whole answer is ``AIMessage(**summed_chunks.model_dump())`` carries the chunks' fields as extras.

    Before, those extras (``tool_call_chunks``, ``chunk_position``) met the
    tool call chunks the wrapper makes from the message's tool calls: a
    ``TypeError`` at every call.
    """
    summed = AIMessageChunk(
        content="Paris is big[1](id=1).",
        tool_call_chunks=[
            {"name": "search", "args": '{"query": "paris"}', "id": "c1", "index": 0, "type": "tool_call_chunk"}
        ],
        chunk_position="last",
    )
    model = wrapped(AIMessage(**summed.model_dump(exclude={"type"})))
    out = model.invoke("q") if call == "invoke" else await model.ainvoke("q")
    assert out.text == "Paris is big[1].\n\n- [1] P (https://p.org)\n"
    assert out.tool_calls == [{"name": "search", "args": {"query": "paris"}, "id": "c1", "type": "tool_call"}]
    assert spans(out) == [("text", "Paris is big", "https://p.org")]


def test_a_messages_stream_client_sums_standard_blocks_in_the_agent() -> None:
    """create_agent, stream_mode="messages": the model node's chunks, summed as a client sums them, read standard."""
    model = BlockStreamer(script=[])
    tool_step = ScriptedToolModel(script=[search("paris")])
    first = next(iter(tool_step._stream([])))
    model.script = [[first.message], anthropic_stream()]
    agent = create_agent(
        model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[ReferencesMiddleware(style=TextReferenceStyle())]
    )
    by_id: dict[str, list[AIMessageChunk]] = {}
    for chunk, _meta in agent.stream({"messages": [{"role": "user", "content": "Paris?"}]}, stream_mode="messages"):
        if isinstance(chunk, AIMessageChunk):
            by_id.setdefault(str(chunk.id), []).append(chunk)
    answer = summed(list(by_id.values())[-1])
    assert [b["type"] for b in answer.content_blocks] == ["reasoning", "text"]
    assert spans(answer) == [("text", "Paris is the capital of France", "https://example.org/paris")]


def reasoning_in_kwargs() -> list[AIMessageChunk]:
    """Reasoning as Ollama, DeepSeek, xAI and Groq's clients stream it: in additional_kwargs, the text as str."""
    meta = {"model_provider": "ollama"}
    return [
        AIMessageChunk(content="", additional_kwargs={"reasoning_content": "Let me "}, response_metadata=meta),
        AIMessageChunk(content="", additional_kwargs={"reasoning_content": "think."}, response_metadata=meta),
        AIMessageChunk(content="Paris is big[1](i", response_metadata=meta),
        AIMessageChunk(content="d=1).", response_metadata=meta),
    ]


@pytest.mark.parametrize("call", ["stream", "invoke"])
def test_reasoning_kept_in_additional_kwargs_reads_as_reasoning(call: str) -> None:
    """Issue 20: an answer marked standard (it cites) still shows the reasoning a client kept in additional_kwargs.

    The bare message's content_blocks read it from there; a message marked v1 is read from its content alone.
    """
    bare = summed(reasoning_in_kwargs())
    assert [b["type"] for b in bare.content_blocks] == ["reasoning", "text"]
    if call == "stream":
        chunks = streamed(reasoning_in_kwargs())
        assert [[b["type"] for b in c.content_blocks] for c in chunks[:2]] == [["reasoning"], ["reasoning"]]
        answer: Any = summed(chunks)
    else:
        model = ReferencesChatModel(
            inner=BlockStreamer(script=[reasoning_in_kwargs()]), documents=[PARIS], style=TextReferenceStyle()
        )
        answer = model.invoke("q")
    blocks = answer.content_blocks
    assert [(b["type"], b.get("reasoning")) for b in blocks] == [("reasoning", "Let me think."), ("text", None)]
    assert blocks[1]["text"] == "Paris is big[1].\n\n- [1] P (https://p.org)\n"
    assert spans(answer) == [("text", "Paris is big", "https://p.org")]
    assert answer.additional_kwargs["reasoning_content"] == "Let me think."


def test_str_text_after_a_block_at_index_0_keeps_a_block_of_its_own() -> None:
    """Gemini streams its thinking as a block at index 0, then its text as str: the text must not join that block.

    Was: the whole answer merged into the reasoning block, its text empty.
    """
    meta = {"model_provider": "google_genai"}
    call = {"name": "search", "args": '{"query": "paris"}', "id": "c1", "index": 1, "type": "tool_call_chunk"}
    script = [
        AIMessageChunk(content=[{"type": "thinking", "thinking": "Hm.", "index": 0}], response_metadata=meta),
        AIMessageChunk(content="Paris is big[1](i", response_metadata=meta),
        AIMessageChunk(content="d=1).", response_metadata=meta),
        AIMessageChunk(content="", tool_call_chunks=[call], response_metadata=meta),
    ]
    total = summed(streamed(script))
    assert total.text == "Paris is big[1].\n\n- [1] P (https://p.org)\n"
    assert [(b["type"], b.get("reasoning")) for b in total.content_blocks] == [
        ("reasoning", "Hm."),
        ("text", None),
        ("tool_call", None),
    ]
    assert spans(total) == [("text", "Paris is big", "https://p.org")]
    assert [(c["id"], c["args"]) for c in total.tool_calls] == [("c1", {"query": "paris"})]


def test_a_tool_call_shows_once_whatever_the_translator_adds_to_each_block() -> None:
    """Google's translator adds a message's tool calls to any block's translation: two thoughts, one call."""
    message = AIMessage(
        content=[
            {"type": "thinking", "thinking": "A"},
            {"type": "thinking", "thinking": "B"},
            {"type": "text", "text": "Paris is big[1](id=1)."},
        ],
        tool_calls=[{"name": "search", "args": {"query": "paris"}, "id": "call_1", "type": "tool_call"}],
        response_metadata={"model_provider": "google_genai"},
    )
    out = wrapped(message).invoke("q")
    assert [(b["type"], b.get("reasoning") or b.get("id")) for b in out.content_blocks] == [
        ("reasoning", "A"),
        ("reasoning", "B"),
        ("text", None),
        ("tool_call", "call_1"),
    ]


def test_an_empty_first_str_chunk_does_not_fix_the_text_index() -> None:
    """A stream opening with empty str content, then thoughts at index 0, then text: the text keeps a block."""
    meta = {"model_provider": "google_genai"}
    script = [
        AIMessageChunk(content="", response_metadata=meta),
        AIMessageChunk(content=[{"type": "thinking", "thinking": "Hm.", "index": 0}], response_metadata=meta),
        AIMessageChunk(content="Paris is big[1](id=1).", response_metadata=meta),
    ]
    total = summed(streamed(script))
    assert total.text == "Paris is big[1].\n\n- [1] P (https://p.org)\n"
    assert [b["type"] for b in total.content_blocks] == ["reasoning", "text"]


def test_the_list_follows_the_last_text_even_when_it_came_as_str_after_blocks() -> None:
    """A text block, a code block, then str text: the list of sources ends the answer, not its first block."""
    meta = {"model_provider": "google_genai"}
    code = {"type": "executable_code", "executable_code": "print(1)", "language": "PYTHON", "id": "x", "index": 1}
    script = [
        AIMessageChunk(
            content=[{"type": "text", "text": "Paris is big[1](id=1).", "index": 0}], response_metadata=meta
        ),
        AIMessageChunk(content=[code], response_metadata=meta),
        AIMessageChunk(content=" Still big.", response_metadata=meta),
    ]
    total = summed(streamed(script))
    assert total.text == "Paris is big[1]. Still big.\n\n- [1] P (https://p.org)\n"


def test_a_whole_gemini_answer_of_thoughts_and_a_string_keeps_its_grounding_in_v0() -> None:
    """v0, whole: [thinking, "text"] with Gemini's grounding: the numbers and the list are in the text, once."""
    message = AIMessage([{"type": "thinking", "thinking": "Hm."}, GEMINI_TEXT], response_metadata=GEMINI_META)
    runnable = manage_references(RunnableLambda(lambda _: message), style=TextReferenceStyle())
    out = runnable.invoke({"documents": [PARIS]})
    assert out.text == "Paris is big[1]. Café Rome is old.[2] Lyon has silk." + LIST
    # The model's own shape: its thinking as it was, so the answer is not marked standard.
    assert out.content[0] == {"type": "thinking", "thinking": "Hm."}
    assert "output_version" not in out.response_metadata


# A refusal given outside the content, after cited text, as each provider gives one (hand-written):
# (the answer's last chunk's fields, the refusal block LangChain's translator reads from them).
REFUSALS = {
    "openai": (
        {"additional_kwargs": {"refusal": "I can't go on."}, "response_metadata": {"model_provider": "openai"}},
        {"type": "refusal", "refusal": "I can't go on."},
    ),
    "google": (
        {"response_metadata": {"model_provider": "google_genai", "finish_reason": "SAFETY"}},
        {"type": "refusal", "refusal": "", "extras": {"finish_reason": "SAFETY"}},
    ),
    "anthropic": (
        {"response_metadata": {"model_provider": "anthropic", "stop_reason": "refusal"}},
        {"type": "refusal", "refusal": ""},
    ),
}


def refused(provider: str) -> list[AIMessageChunk]:
    fields, _ = REFUSALS[provider]
    provider_only = {"model_provider": fields["response_metadata"]["model_provider"]}
    return [
        AIMessageChunk(content="Paris is big[1](id=1). ", id="r", response_metadata=provider_only),
        AIMessageChunk(content="", id="r", chunk_position="last", **fields),
    ]


@pytest.mark.parametrize("call", ["invoke", "ainvoke", "invoke streamed", "ainvoke streamed"])
@pytest.mark.parametrize("provider", sorted(REFUSALS))
async def test_a_refusal_after_cited_text_is_in_the_standard_content(provider: str, call: str) -> None:
    """The answer is marked standard to keep its annotations: the refusal the provider gave outside it joins it.

    Before, ``content_blocks`` skipped the provider's translator for the
    rewritten answer, and the refusal was gone.
    """
    model = ReferencesChatModel(
        inner=BlockStreamer(script=[refused(provider)]), documents=[PARIS], style=TextReferenceStyle()
    )
    # Streamed: added up as LangChain (and an agent's model node) adds a stream up.
    streamed = {"stream": True} if call.endswith("streamed") else {}
    out = await model.ainvoke("q", **streamed) if call.startswith("ainvoke") else model.invoke("q", **streamed)
    assert [b["type"] for b in out.content_blocks] == ["text", "refusal"]
    assert out.content_blocks[-1] == REFUSALS[provider][1]
    assert spans(out) == [("text", "Paris is big", "https://p.org")]


@pytest.mark.parametrize("mode", ["invoke", "messages"])
@pytest.mark.parametrize("order", ["refusal first", "references first"])
@pytest.mark.parametrize("provider", sorted(REFUSALS))
def test_model_refusal_middleware_sees_a_refusal_after_cited_text(provider: str, order: str, mode: str) -> None:
    """LangChain's ModelRefusalMiddleware raises on the refusal, in either order, as with the model alone."""
    call = AIMessageChunk(
        content="",
        id="c",
        tool_call_chunks=[{"name": "search", "args": '{"query": "paris"}', "id": "c1", "index": 0}],
    )
    model = BlockStreamer(script=[[call], refused(provider)])
    references = ReferencesMiddleware(style=TextReferenceStyle())
    refusal = ModelRefusalMiddleware()
    stack = [refusal, references] if order == "refusal first" else [references, refusal]
    agent = create_agent(model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=stack)
    question = {"messages": [{"role": "user", "content": "Paris?"}]}
    run = agent.invoke if mode == "invoke" else functools.partial(agent.stream, stream_mode="messages")
    with pytest.raises(ModelRefusalError):
        list(run(question))


@pytest.mark.parametrize("call", ["invoke", "invoke streamed"])
def test_a_refusal_after_thinking_and_cited_text_comes_last(call: str) -> None:
    """With a native block translated too, the refusal is the answer's last block, whole or streamed (one home)."""
    thinking = {"type": "thinking", "thinking": "Hm.", "signature": "s", "index": 0}
    text = {"type": "text", "text": "Paris is big[1](id=1).", "index": 1}
    chunks = [
        AIMessageChunk(content=[thinking], id="r", response_metadata={"model_provider": "anthropic"}),
        AIMessageChunk(content=[text], id="r"),
        AIMessageChunk(content=[], id="r", response_metadata={"stop_reason": "refusal"}, chunk_position="last"),
    ]
    model = ReferencesChatModel(inner=BlockStreamer(script=[chunks]), documents=[PARIS], style=TextReferenceStyle())
    out = model.invoke("q", stream=True) if call.endswith("streamed") else model.invoke("q")
    assert [b["type"] for b in out.content_blocks] == ["reasoning", "text", "refusal"]


class _SeenBlockStreamer(BlockStreamer):
    """A `BlockStreamer` that keeps the messages of each call it is given."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def _stream(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        yield from super()._stream(messages, *args, **kwargs)


def _earlier_answer_as_read(answer: list[AIMessageChunk], history: str) -> list[tuple[str, Any]]:
    """The blocks (type, text) the model reads of ``answer`` next turn: after a search, ``answer``, then a question."""
    from langgraph.checkpoint.memory import InMemorySaver

    meta = {"model_provider": "anthropic"}
    calls = [generation.message for generation in ScriptedToolModel(script=[search("paris rome")])._stream([])]
    again = [AIMessageChunk(content=[{"type": "text", "text": "Yes.", "index": 0}], response_metadata=meta)]
    model = _SeenBlockStreamer(script=[calls, answer, again])
    middleware = ReferencesMiddleware(style=TextReferenceStyle(), history=history)
    agent = create_agent(
        model, tools=[retriever_tool(CITY_DOCUMENTS)], middleware=[middleware], checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "earlier"}}
    agent.invoke({"messages": [{"role": "user", "content": "?"}]}, config)
    agent.invoke({"messages": [{"role": "user", "content": "More?"}]}, config)
    earlier = [m for m in model.seen[-1] if isinstance(m, AIMessage) and m.text][-1]
    return [(block["type"], block.get("text")) for block in earlier.content if isinstance(block, dict)]


@pytest.mark.parametrize("shape", ["streamed", "whole"])
@pytest.mark.parametrize(("history", "read"), [("raw", ["[1](id=1)", "[2](id=2)"]), ("plain", ["", ""])])
def test_an_answer_in_two_text_blocks_goes_back_to_the_model_block_by_block(
    history: str, read: list[str], shape: str
) -> None:
    """Text, a server tool's call and result, text: the model reads its answer next turn in that order.

    Found in use: all the text went into the first block, ahead of the
    search it was written around, its two sentences glued ("More:Rome").
    Expected blocks written by hand: each text block's own text, its
    citations as ``history`` writes them (the ids the model gave them).
    """
    meta = {"model_provider": "anthropic"}
    answer = [
        AIMessageChunk(content=[{"type": "text", "text": "Paris is big[1](i", "index": 0}], response_metadata=meta),
        AIMessageChunk(content=[{"type": "text", "text": "d=1). More:", "index": 0}], response_metadata=meta),
        AIMessageChunk(
            content=[{"type": "server_tool_use", "id": "srv1", "name": "web_search", "input": {}, "index": 1}],
            response_metadata=meta,
        ),
        AIMessageChunk(
            content=[{"type": "web_search_tool_result", "tool_use_id": "srv1", "content": [], "index": 2}],
            response_metadata=meta,
        ),
        AIMessageChunk(content=[{"type": "text", "text": "Rome is old[2](id=2).", "index": 3}], response_metadata=meta),
    ]
    if shape == "whole":  # one chunk, its blocks with no indices (a whole message's)
        blocks = [
            {"type": "text", "text": "Paris is big[1](id=1). More:"},
            {"type": "server_tool_use", "id": "srv1", "name": "web_search", "input": {}},
            {"type": "web_search_tool_result", "tool_use_id": "srv1", "content": []},
            {"type": "text", "text": "Rome is old[2](id=2)."},
        ]
        answer = [AIMessageChunk(content=blocks, response_metadata=meta)]
    blocks = _earlier_answer_as_read(answer, history)
    assert blocks == [
        ("text", f"Paris is big{read[0]}. More:"),
        ("server_tool_call", None),
        ("server_tool_result", None),
        ("text", f"Rome is old{read[1]}."),
    ]


@pytest.mark.parametrize(("history", "rome"), [("raw", " Rome is old[3](id=2)."), ("plain", " Rome is old.")])
def test_an_answer_with_a_citation_only_block_goes_back_block_by_block(history: str, rome: str) -> None:
    """An Anthropic citation in a text block of its own (no text) keeps the others each in its place.

    Found by a review: the empty block's length was left out, the blocks no
    longer matched, and all the text went back into the first block. The
    citation's block goes (an empty text block some providers refuse); the
    web search's citation took number 2, so Rome's id 2 reads as [3].
    """
    meta = {"model_provider": "anthropic"}
    grass = {
        "type": "web_search_result_location",
        "url": "https://g.org",
        "title": "Grass",
        "cited_text": "The grass is green.",
        "encrypted_index": "abc",
    }
    answer = [
        AIMessageChunk(
            content=[{"type": "text", "text": "Paris is big[1](id=1). More:", "index": 0}], response_metadata=meta
        ),
        AIMessageChunk(
            content=[{"type": "server_tool_use", "id": "srv1", "name": "web_search", "input": {}, "index": 1}],
            response_metadata=meta,
        ),
        AIMessageChunk(
            content=[{"type": "web_search_tool_result", "tool_use_id": "srv1", "content": [], "index": 2}],
            response_metadata=meta,
        ),
        AIMessageChunk(content=[{"type": "text", "text": "Grass is green.", "index": 3}], response_metadata=meta),
        AIMessageChunk(
            content=[{"type": "text", "text": "", "citations": [grass], "index": 4}], response_metadata=meta
        ),
        AIMessageChunk(
            content=[{"type": "text", "text": " Rome is old[2](id=2).", "index": 5}], response_metadata=meta
        ),
    ]
    blocks = _earlier_answer_as_read(answer, history)
    paris = "Paris is big[1](id=1). More:" if history == "raw" else "Paris is big. More:"
    assert blocks == [
        ("text", paris),
        ("server_tool_call", None),
        ("server_tool_result", None),
        ("text", "Grass is green."),
        ("text", rome),
    ]
