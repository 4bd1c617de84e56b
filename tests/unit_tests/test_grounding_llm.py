"""The grounding wing's one LLM helper: structured output, tolerant reading, one error policy."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel, FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableLambda
from pydantic import BaseModel

from langchain_refs.grounding._llm import ModelReply, ask_model, json_in_reply


class Score(BaseModel):
    score: float


def prompts(count: int) -> list[list[BaseMessage]]:
    return [[HumanMessage(f"question {i}")] for i in range(count)]


def read_score(reply: ModelReply) -> float:
    return float(reply.data["score"])


class Failing(FakeListChatModel):
    """A fake model whose call raises when its next response is "RAISE"."""

    def _call(self, *args: Any, **kwargs: Any) -> str:
        response = super()._call(*args, **kwargs)
        if response == "RAISE":
            msg = "the service is down"
            raise ConnectionError(msg)
        return response


class FailingInBatch(Failing):
    """Failing, with a batch that honours return_exceptions as real chat models do (the fake's ignores it)."""

    def batch(  # type: ignore[override]
        self, inputs: list[Any], config: Any = None, *, return_exceptions: bool = False, **kwargs: Any
    ) -> list[Any]:
        results: list[Any] = []
        for messages in inputs:
            try:
                results.append(self.invoke(messages, config, **kwargs))
            except Exception as error:
                if not return_exceptions:
                    raise
                results.append(error)
        return results


def test_structured_output_is_used_when_the_model_has_it() -> None:
    """A model with structured output answers in the schema; the reader sees its fields as data."""
    seen: list[ModelReply] = []

    class Structured(FakeListChatModel):
        def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            return RunnableLambda(lambda _: schema(score=0.25))

    def read(reply: ModelReply) -> float:
        seen.append(reply)
        return read_score(reply)

    model = Structured(responses=["not used"])
    assert ask_model(model, prompts(2), schema=Score, read=read, default=-1.0, name="t") == [0.25, 0.25]
    assert seen[0] == ModelReply(data={"score": 0.25}, text="")


def test_a_dict_from_structured_output_is_data() -> None:
    """Structured output that gives a dict (JSON mode) reaches the reader as that dict."""

    class JsonMode(FakeListChatModel):
        def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            return RunnableLambda(lambda _: {"score": 0.5})

    model = JsonMode(responses=["not used"])
    assert ask_model(model, prompts(1), schema=Score, read=read_score, default=-1.0, name="t") == [0.5]


def test_text_replies_are_read_tolerantly() -> None:
    """Without structured output, the first JSON value of the text is the data, prose and fences around it."""
    replies = ['Sure: {"score": 0.75} hope it helps', '```json\n{"score": 1}\n```', "no number here"]
    got = ask_model(
        FakeListChatModel(responses=replies),
        prompts(3),
        schema=Score,
        read=lambda reply: (reply.data, reply.text),
        default=None,
        name="t",
        max_concurrency=1,
    )
    assert got == [
        ({"score": 0.75}, replies[0]),
        ({"score": 1}, replies[1]),
        (None, "no number here"),
    ]


def test_list_content_is_read_as_its_text() -> None:
    """A reply whose content is a list of text blocks is read as the text of those blocks."""
    message = AIMessage(content=[{"type": "text", "text": '{"score": '}, "0.5}"])
    model = FakeMessagesListChatModel(responses=[message])
    assert ask_model(model, prompts(1), schema=Score, read=read_score, default=-1.0, name="t") == [0.5]


def test_unreadable_replies_give_the_default_and_are_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    """Each reply the reader cannot use gives the default and exactly one warning naming the caller."""
    model = FakeListChatModel(responses=['{"score": 0.5}', "I think it is fine", '{"other": 1}', '{"score": 0.9}'])
    with caplog.at_level(logging.WARNING, logger="langchain_refs"):
        got = ask_model(model, prompts(4), schema=Score, read=read_score, default=-1.0, name="judge", max_concurrency=1)
    assert got == [0.5, -1.0, -1.0, 0.9]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert all(r.getMessage().startswith("unreadable judge reply") for r in warnings)
    assert "I think it is fine" in warnings[0].getMessage()


def test_a_failed_call_gives_the_default_and_the_batch_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    """A call that raises is logged once and gives the default; the other replies are still read."""
    model = FailingInBatch(responses=['{"score": 0.2}', "RAISE", '{"score": 0.4}'])
    with caplog.at_level(logging.WARNING, logger="langchain_refs"):
        got = ask_model(model, prompts(3), schema=Score, read=read_score, default=-1.0, name="t", max_concurrency=1)
    assert got == [0.2, -1.0, 0.4]
    assert caplog.text.count("unreadable t reply") == 1
    assert "the call failed" in caplog.text
    assert "the service is down" in caplog.text


def test_a_batch_that_raises_gives_every_prompt_the_default(caplog: pytest.LogCaptureFixture) -> None:
    """A runnable whose batch raises instead of returning the error: each prompt gets the default, logged once."""
    model = Failing(responses=["RAISE"])
    with caplog.at_level(logging.WARNING, logger="langchain_refs"):
        got = ask_model(model, prompts(2), schema=Score, read=read_score, default=-1.0, name="t")
    assert got == [-1.0, -1.0]
    assert caplog.text.count("unreadable t reply (the call failed: ConnectionError") == 2


def test_no_prompt_asks_nothing() -> None:
    """An empty batch returns no reply and does not call the model."""
    model = Failing(responses=["RAISE"])
    assert ask_model(model, [], schema=Score, read=read_score, default=-1.0, name="t") == []
    assert model.i == 0


def test_a_long_reply_is_logged_short(caplog: pytest.LogCaptureFixture) -> None:
    """The warning shows the start of a long reply, not all of it."""
    model = FakeListChatModel(responses=["x" * 100_000])
    with caplog.at_level(logging.WARNING, logger="langchain_refs"):
        ask_model(model, prompts(1), schema=Score, read=read_score, default=-1.0, name="t")
    assert len(caplog.text) < 1_000


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"claims": []}', {"claims": []}),
        ('Sure: ```json\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
        ("The chunks are [1, 3].", [1, 3]),
        ('See [the guide] then {"relevant": [2]}', {"relevant": [2]}),
        ('{broken {"ok": true}', {"ok": True}),
    ],
)
def test_json_in_reply_finds_the_first_value(text: str, value: Any) -> None:
    """The first JSON object or list is found, whatever prose or broken brackets come first."""
    assert json_in_reply(text) == value


@pytest.mark.parametrize("text", ["", "no json here", "{not json}", "[" * 100_000, "[0," * 30_000])
def test_json_in_reply_without_json_raises_value_error(text: str) -> None:
    """No JSON (or JSON nested too deep to read) is a ValueError, never a RecursionError."""
    with pytest.raises(ValueError, match="no JSON"):
        json_in_reply(text)


def test_json_in_reply_bounds_its_attempts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long reply full of stray brackets is given up after 64 failed attempts, not one per bracket."""
    calls = 0
    real = json.JSONDecoder.raw_decode

    def counting(self: json.JSONDecoder, s: str, idx: int = 0) -> tuple[Any, int]:
        nonlocal calls
        calls += 1
        return real(self, s, idx)

    monkeypatch.setattr(json.JSONDecoder, "raw_decode", counting)
    with pytest.raises(ValueError, match="no JSON"):
        json_in_reply("{x " * 10_000 + '{"late": 1}')
    assert calls == 64


class ToolCalling(FakeMessagesListChatModel):
    """A fake model with tool calling, so LangChain's own with_structured_output path runs on its replies."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return self


def tool_call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": "call-1"}])


def test_structured_reply_in_the_schema_is_read() -> None:
    """A tool call that fills the schema is read as the schema's data."""
    model = ToolCalling(responses=[tool_call("Score", {"score": 0.3})])
    assert ask_model(model, prompts(1), schema=Score, read=read_score, default=-1.0, name="t") == [0.3]


def test_prose_instead_of_the_schema_is_read_from_the_text() -> None:
    """A model with structured output that answers in prose is read from its text, not given the default."""
    model = ToolCalling(responses=[AIMessage(content='I would say {"score": 0.6}.')])
    assert ask_model(model, prompts(1), schema=Score, read=read_score, default=-1.0, name="t") == [0.6]


def test_a_tool_call_outside_the_schema_is_read_from_its_arguments() -> None:
    """Arguments that fail the schema (a label in lower case) still reach the reader, which may accept them."""
    from langchain_refs import Claim, LLMClaimChecker

    model = ToolCalling(responses=[tool_call("_Verdict", {"label": "entailment"})])
    assert [c.label for c in LLMClaimChecker(model).check_batch([Claim(text="c")], ["r"])] == ["Entailment"]


def test_arguments_the_reader_cannot_use_give_the_default(caplog: pytest.LogCaptureFixture) -> None:
    """Arguments that neither fit the schema nor the reader give the default, logged once."""
    model = ToolCalling(responses=[tool_call("Score", {"score": "high"})])
    with caplog.at_level(logging.WARNING, logger="langchain_refs"):
        assert ask_model(model, prompts(1), schema=Score, read=read_score, default=-1.0, name="t") == [-1.0]
    assert caplog.text.count("unreadable t reply") == 1


class ToolsRefused(FakeListChatModel):
    """A model whose structured calls fail (as a provider refusing tools would); plain calls answer."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        def refuse(_: Any) -> Any:
            msg = "tools are not supported for this model"
            raise ValueError(msg)

        return RunnableLambda(refuse)


def test_a_failed_structured_call_is_asked_again_as_text(caplog: pytest.LogCaptureFixture) -> None:
    """When the structured call fails, each prompt is asked once more as plain text and read tolerantly."""
    model = ToolsRefused(responses=['{"score": 0.4}', '{"score": 0.9}'])
    with caplog.at_level(logging.WARNING, logger="langchain_refs"):
        got = ask_model(model, prompts(2), schema=Score, read=read_score, default=-1.0, name="t", max_concurrency=1)
    assert got == [0.4, 0.9]
    assert "unreadable" not in caplog.text


def test_structured_output_without_include_raw_still_works() -> None:
    """A with_structured_output that refuses include_raw is used without it."""

    class Strict(FakeListChatModel):
        def with_structured_output(self, schema: Any, include_raw: bool = False) -> Any:  # type: ignore[override]
            if include_raw:
                msg = "include_raw is not supported"
                raise ValueError(msg)
            return RunnableLambda(lambda _: schema(score=0.75))

    model = Strict(responses=["unused"])
    assert ask_model(model, prompts(1), schema=Score, read=read_score, default=-1.0, name="t") == [0.75]


def test_failures_are_recorded_one_flattened_line_each() -> None:
    """Inside recorded_model_failures each unreadable reply is one line, a multi-line reason flattened."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.messages import HumanMessage
    from pydantic import BaseModel

    from langchain_refs.grounding import recorded_model_failures

    class Score(BaseModel):
        score: float

    def read(_: object) -> float:
        raise ValueError("first line\nsecond line")

    model = FakeListChatModel(responses=["a", "b"])
    with recorded_model_failures() as failures:
        ask_model(model, [[HumanMessage("x")], [HumanMessage("y")]], schema=Score, read=read, default=0.0, name="t")
    assert len(failures) == 2
    assert all(
        f.startswith("unreadable t reply (ValueError: first line second line); using the default 0.0.")
        for f in failures
    )
    # Outside the block nothing is collected.
    ask_model(model, [[HumanMessage("z")]], schema=Score, read=read, default=0.0, name="t")
    assert len(failures) == 2
