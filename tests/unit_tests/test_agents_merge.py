"""The wrapper's first chunk adds up an answer's chunks exactly as LangChain's own sum does, only in linear time.

Both sums then add, to an answer marked standard, the refusal its provider gave
outside its content (`with_refusal`, tested by its own table).
"""

from __future__ import annotations

import pytest

pytest.importorskip("langchain", reason="the agents wing needs the agents extra: pip install -e '.[agents]'")

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk

from langchain_refs.agents._chat_model import _AnswerStart
from langchain_refs.streaming import merge_chunks, with_refusal


def _block(text: str, index: Any = 0, kind: str = "text") -> dict[str, Any]:
    return {"type": kind, "text": text, "index": index}


# Every field a chunk may carry, with values that add up to themselves and values that do not
# (a model name is a str that LangChain concatenates, a count an int it adds).
_contents = st.one_of(
    st.builds(lambda t: [_block(t)], st.text(max_size=5)),
    st.just([]),
    st.text(max_size=5),
    st.builds(lambda t: [_block(t, 1)], st.text(max_size=3)),
    st.builds(lambda t: [_block(t, 0, "thinking")], st.text(max_size=3)),
    st.builds(lambda t: [_block(t), _block("x", 1)], st.text(max_size=3)),
    st.builds(lambda t: [{"type": "text", "text": t, "index": 0, "annotations": []}], st.text(max_size=3)),
    st.builds(lambda t: [t], st.text(max_size=3)),
)
_metadata = st.sampled_from(
    [{}, {"model_provider": "openai"}, {"model_name": "m"}, {"count": 1}, {"output_version": "v1"}]
)
_ids = st.sampled_from(["run-1", "run-1", "lc_run--2", "msg_1", None])


@st.composite
def _chunk(draw: st.DrawFn) -> ChatGenerationChunk:
    fields: dict[str, Any] = {"content": draw(_contents), "id": draw(_ids), "response_metadata": draw(_metadata)}
    if draw(st.integers(0, 9)) == 0:
        fields["tool_call_chunks"] = [{"name": "search", "args": "{}", "id": "c1", "index": 1}]
    if draw(st.integers(0, 9)) == 0:
        fields["usage_metadata"] = {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}
    if draw(st.integers(0, 9)) == 0:
        fields["additional_kwargs"] = {"refusal": "no"}
    info = {"finish_reason": "stop"} if draw(st.integers(0, 9)) == 0 else None
    return ChatGenerationChunk(message=AIMessageChunk(**fields), generation_info=info)


def _plain_text_run(n: int) -> list[ChatGenerationChunk]:
    return [
        ChatGenerationChunk(message=AIMessageChunk(content=[_block(f"t{i} ")], id="run-1", response_metadata={}))
        for i in range(n)
    ]


def _sum(first: ChatGenerationChunk, rest: list[ChatGenerationChunk], *, refusal: bool = False) -> Any:
    """The sum's fields; with ``refusal``, its message as `with_refusal` gives it (LangChain's own sum, then that)."""
    try:
        total = first + rest
    except Exception as error:  # both sums must fail alike
        return type(error)
    message = with_refusal(total.message) if refusal else total.message
    return type(total), message.model_dump(), total.generation_info, total.text


@st.composite
def _answers(draw: st.DrawFn) -> list[ChatGenerationChunk]:
    """Chunks of every shape with a run of text-only chunks (what the wrapper yields for an answer) spliced in."""
    chunks = draw(st.lists(_chunk(), min_size=1, max_size=8))
    at = min(draw(st.integers(0, 9)), len(chunks))
    return [*chunks[:at], *_plain_text_run(draw(st.integers(0, 12))), *chunks[at:]]


@settings(max_examples=400, deadline=None)
@given(_answers())
def test_the_first_chunk_adds_up_as_langchain_does(chunks: list[ChatGenerationChunk]) -> None:
    first, rest = chunks[0], chunks[1:]
    assert _sum(_AnswerStart.of(first), rest) == _sum(first, rest, refusal=True)


def test_an_answer_of_text_chunks_is_added_up_once() -> None:
    # Thousands of chunks: the texts are joined once, and the sum is LangChain's.
    chunks = _plain_text_run(3000)
    chunks.append(
        ChatGenerationChunk(
            message=AIMessageChunk(
                content=[{**_block("[1] a.pdf"), "annotations": [{"type": "citation", "start_index": 0}]}],
                id="run-1",
                response_metadata={"references": {"n": 1}},
                chunk_position="last",
            )
        )
    )
    ours = _AnswerStart.of(chunks[0]) + chunks[1:]
    assert _sum(_AnswerStart.of(chunks[0]), chunks[1:]) == _sum(chunks[0], chunks[1:], refusal=True)
    assert ours.message.content[0]["text"].startswith("t0 t1 t2 ")
    assert ours.message.content[0]["text"].endswith("t2999 [1] a.pdf")


def _added_one_by_one(messages: list[AIMessageChunk]) -> Any:
    """What `merge_chunks` must give: LangChain's `+`, one chunk at a time, the streaming-only fields dropped, then
    the refusal given outside an answer marked standard added (`with_refusal`)."""
    try:
        total = messages[0]
        for message in messages[1:]:
            total = total + message
        return with_refusal(AIMessage(**total.model_dump(exclude={"type", "tool_call_chunks", "chunk_position"})))
    except Exception as error:  # both sums must fail alike
        return type(error)


def _merged(messages: list[AIMessageChunk]) -> Any:
    try:
        return merge_chunks(messages)
    except Exception as error:
        return type(error)


@settings(max_examples=400, deadline=None)
@given(_answers())
def test_merge_chunks_adds_up_as_adding_one_by_one_does(chunks: list[ChatGenerationChunk]) -> None:
    # `invoke` of `manage_references` adds its stream's chunks up at once, runs of text-only chunks joined first.
    messages = [g.message for g in chunks]
    assert _merged(messages) == _added_one_by_one(messages)


def test_invoke_adds_a_long_answer_up_in_one_pass() -> None:
    # 3,000 text-only chunks in the v1 shape and a last one: the texts are joined once, the sum is LangChain's.
    messages = [g.message for g in _plain_text_run(3000)]
    messages.append(AIMessageChunk(content=[_block(" end")], id="run-1", response_metadata={"n": 1}))
    merged = merge_chunks(messages)
    assert merged == _added_one_by_one(messages)
    assert merged.content == [_block("".join(f"t{i} " for i in range(3000)) + " end")]
