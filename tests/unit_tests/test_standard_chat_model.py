"""ReferencesChatModel against langchain-tests' standard unit tests for chat models (those that apply to a wrapper)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain_tests", reason="the standard tests need langchain-tests: pip install -e '.[test]'")

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda
from langchain_tests.unit_tests import ChatModelUnitTests

from langchain_refs.agents import ReferencesChatModel

# The suite builds every model with LangChain's standard parameters (temperature, max_tokens...): the
# wrapper takes them, as LangChain asks, and warns that they are the inner model's (test_agents.py).
pytestmark = pytest.mark.filterwarnings("ignore:ReferencesChatModel ignores:UserWarning")


class ToolFake(GenericFakeChatModel):
    """A fake chat model that takes tools (as every tool-calling provider model does)."""

    model: str = "fake-1"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        from langchain_core.utils.function_calling import convert_to_openai_tool

        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)


class TestReferencesChatModelStandard(ChatModelUnitTests):
    """The standard suite; the inner model is a fake, so nothing reaches a network."""

    @property
    def chat_model_class(self) -> type[BaseChatModel]:
        return ReferencesChatModel

    @property
    def chat_model_params(self) -> dict[str, Any]:
        return {"inner": ToolFake(messages=iter([AIMessage("Hi[1](id=1).")] * 50))}

    @property
    def has_tool_calling(self) -> bool:
        return True

    @property
    def has_structured_output(self) -> bool:
        # with_structured_output is the inner model's business: the middleware leaves structured calls alone.
        return False


class _CostlyRepr(ToolFake):
    """A model whose repr must not be made: its own parameters say what it is."""

    def __repr__(self) -> str:
        msg = "repr made"
        raise AssertionError(msg)


def test_identifying_params_are_the_inner_models_and_its_repr_only_without_them() -> None:
    # LangChain asks for the parameters on every call (invocation params, cache key): the inner
    # model's repr (every message of a fake, the whole state of a real one) is made only when
    # the inner object has no parameters of its own.
    inner = _CostlyRepr(messages=iter([AIMessage("Hi")]))
    assert ReferencesChatModel(inner=inner)._identifying_params == {"inner": inner._identifying_params, "documents": 0}

    class Plain(RunnableLambda[Any, Any]):
        """A runnable with no parameters of its own."""

        def __init__(self) -> None:
            super().__init__(lambda value: value)

        def __repr__(self) -> str:
            return "Plain()"

    assert ReferencesChatModel(inner=Plain())._identifying_params == {"inner": "Plain()", "documents": 0}
