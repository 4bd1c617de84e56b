"""The hand-written run plumbing: callbacks, astream_events and astream_log see the rewritten stream.

CI runs this file on the newest langchain-core and again on the oldest one
supported (see ``.ci/run``), since it leans on how LangChain opens, taps and
closes a run.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import ConfigurableField, RunnableLambda

from langchain_refs import REFERENCES_EVENT, TextReferenceStyle, manage_references
from tests.unit_tests.fakes import ChunkExactChatModel, sample_documents

PROMPT = ChatPromptTemplate.from_template("{question}")
EXPECTED = "Yes[1] and no[2].\n\n- [1] b.pdf\n- [2] c.pdf\n"
CHUNKS = ["Yes[1](", "id=3) and no[2](i", "d=5)."]


def inputs() -> dict[str, Any]:
    return {"documents": sample_documents(), "question": "q"}


def chain() -> Any:
    return manage_references(PROMPT | ChunkExactChatModel(chunks=CHUNKS), style=TextReferenceStyle())


def text_of(chunk: Any) -> str:
    return chunk if isinstance(chunk, str) else str(chunk.content)


async def test_astream_events_v2_shows_rewritten_chunks_nested_runs_and_references() -> None:
    """astream_events(v2): our run streams rewritten text, the model nests under it, one references event."""
    events = [event async for event in chain().astream_events(inputs(), version="v2")]
    ours = [e for e in events if e["name"] == "manage_references"]
    assert ours[0]["event"] == "on_chain_start"
    assert ours[-1]["event"] == "on_chain_end"
    streamed = [text_of(e["data"]["chunk"]) for e in ours if e["event"] == "on_chain_stream"]
    assert "".join(streamed) == EXPECTED
    assert all("(id=" not in piece for piece in streamed)
    assert text_of(ours[-1]["data"]["output"]) == EXPECTED
    run_id = ours[0]["run_id"]
    model_events = [e for e in events if e["event"] == "on_chat_model_stream"]
    assert model_events
    assert all(run_id in e["parent_ids"] for e in model_events)
    custom = [e for e in events if e["event"] == "on_custom_event" and e["name"] == REFERENCES_EVENT]
    assert [[r["source"] for r in e["data"]["references"]] for e in custom] == [["b.pdf", "c.pdf"]]


async def test_astream_log_final_output_and_streamed_output_are_rewritten() -> None:
    """astream_log: the streamed output and the final output are the rewritten answer."""
    final: Any = None
    async for log in chain().astream_log(inputs(), diff=False):
        final = log
    assert final is not None
    state = final.state
    assert "".join(text_of(c) for c in state["streamed_output"]) == EXPECTED
    assert text_of(state["final_output"]) == EXPECTED
    assert any(name.startswith("ChunkExactChatModel") for name in state["logs"])


async def test_astream_events_of_a_str_chain() -> None:
    """A chain ending in StrOutputParser streams rewritten str chunks through astream_events."""
    str_chain = chain() | StrOutputParser()
    streamed = [
        e["data"]["chunk"]
        async for e in str_chain.astream_events(inputs(), version="v2")
        if e["event"] == "on_chain_stream" and e["name"] == "manage_references"
    ]
    assert "".join(text_of(c) for c in streamed) == EXPECTED


def test_callbacks_see_start_end_and_error() -> None:
    """A failing inner runnable ends the run with on_chain_error, and the error reaches the caller."""
    from langchain_core.callbacks import BaseCallbackHandler

    seen: list[str] = []

    class Recorder(BaseCallbackHandler):
        def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
            seen.append(f"start:{kwargs.get('name')}")

        def on_chain_error(self, error: BaseException, **kwargs: Any) -> None:
            seen.append(f"error:{type(error).__name__}")

    def boom(_: Any) -> str:
        msg = "inner failed"
        raise RuntimeError(msg)

    with pytest.raises(RuntimeError, match="inner failed"):
        manage_references(RunnableLambda(boom)).invoke(inputs(), {"callbacks": [Recorder()]})
    assert seen[0] == "start:manage_references"
    assert seen[-1] == "error:RuntimeError"


def test_a_bare_chat_model_is_refused_with_the_fix() -> None:
    """manage_references(chat_model) fails at construction and shows `prompt | model`."""
    model = GenericFakeChatModel(messages=iter([AIMessage("x")]))
    with pytest.raises(TypeError, match=r"bare GenericFakeChatModel.*manage_references\(prompt \| model\)"):
        manage_references(model)


def test_a_bound_chat_model_is_refused_too() -> None:
    """A model behind .bind()/.with_config() is still a bare model."""
    model = GenericFakeChatModel(messages=iter([AIMessage("x")])).with_config(tags=["t"])
    with pytest.raises(TypeError, match="prompt \\| model"):
        manage_references(model)


def fake_model() -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage("x")]))


@pytest.mark.parametrize(
    "wrap",
    [
        lambda model: model.with_retry(),
        lambda model: model.with_fallbacks([fake_model()]),
        lambda model: (PROMPT | fake_model()).with_fallbacks([model]),
        lambda model: model.configurable_fields(cache=ConfigurableField(id="cache")),
        lambda model: (PROMPT | model).configurable_alternatives(ConfigurableField(id="which"), bare=model),
        lambda model: model.bind(stop=["."]).with_retry().with_config(tags=["t"]),
    ],
    ids=["retry", "fallbacks", "a bare fallback", "configurable fields", "a bare alternative", "nested"],
)
def test_a_wrapped_chat_model_is_refused_too(wrap: Any) -> None:
    """A model behind with_retry, with_fallbacks (or as a fallback), configurable_*: still a bare model."""
    with pytest.raises(TypeError, match=r"bare GenericFakeChatModel.*manage_references\(prompt \| model\)"):
        manage_references(wrap(fake_model()))


def test_a_function_is_made_a_runnable_and_anything_else_refused() -> None:
    """A function is taken as LangChain's | takes it; None, a str or a dict (no answer) is a one-line TypeError."""
    out = manage_references(lambda _: "Yes[1](id=3).", style=TextReferenceStyle()).invoke(inputs())
    assert out == "Yes[1].\n\n- [1] b.pdf\n"
    for wrong, name in [(None, "NoneType"), ("prompt", "str"), ({"answer": lambda _: "x"}, "dict")]:
        with pytest.raises(TypeError, match=rf"^manage_references\(\) wraps a Runnable .* got {name}$"):
            manage_references(wrong)


def test_the_wrapped_runnables_configurable_fields_are_its_own() -> None:
    """config_specs shows the inner chain's configurable fields, and the configuration reaches them."""
    inner = PROMPT | GenericFakeChatModel(messages=iter([AIMessage("Yes[1](id=3).")])).configurable_fields(
        cache=ConfigurableField(id="model_cache")
    )
    chain = manage_references(inner, style=TextReferenceStyle())
    assert [spec.id for spec in chain.config_specs] == ["model_cache"]
    assert chain.invoke(inputs(), {"configurable": {"model_cache": False}}).content == "Yes[1].\n\n- [1] b.pdf\n"


def test_prompt_then_model_is_accepted() -> None:
    """The documented shape, prompt | model, is wrapped and runs."""
    model = GenericFakeChatModel(messages=iter([AIMessage("Yes[1](id=3).")]))
    out = manage_references(PROMPT | model, style=TextReferenceStyle()).invoke(inputs())
    assert out.content == "Yes[1].\n\n- [1] b.pdf\n"


def test_a_scorer_that_is_not_a_verifier_is_refused() -> None:
    """verifier= takes a citation verifier; a plain object gets a TypeError naming the fix."""
    with pytest.raises(TypeError, match="CrossEncoderScorer"):
        manage_references(PROMPT | ChunkExactChatModel(chunks=["x"]), verifier=object())  # type: ignore[arg-type]
