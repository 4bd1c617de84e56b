"""Every provider content shape through the agent path: annotations, placement of native citations, other blocks.

Expected texts and offsets are written by hand from the answers below.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("langchain.agents", reason="the agent tests need the agents extra: pip install -e '.[agents]'")

from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, message_chunk_to_message
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from langchain_refs import ReferencesChatModel, ReferencesMiddleware, TextReferenceStyle
from tests.unit_tests.agent_fakes import CITY_DOCUMENTS, ScriptedToolModel, retriever_tool, search

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


class BlockStreamer(BaseChatModel):
    """Streams a fixed list of chunks (list content, Anthropic-style indices), then the answer."""

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
