"""Real chat models for the command line, loaded by ``provider:name``."""

from __future__ import annotations

from typing import Any

__all__ = ["load_model"]


def load_model(spec: str) -> Any:
    """A real chat model from ``provider:name`` through LangChain's ``init_chat_model``.

    Example:
        >>> load_model("nonsense")
        Traceback (most recent call last):
        ...
        SystemExit: --model must look like provider:name (e.g. openai:gpt-4o-mini), got 'nonsense'
    """
    if ":" not in spec:
        msg = f"--model must look like provider:name (e.g. openai:gpt-4o-mini), got {spec!r}"
        raise SystemExit(msg)
    try:
        from langchain.chat_models import init_chat_model
    except ImportError:
        msg = 'a real model needs the "models" extra: pip install "langchain-refs[models]" plus the provider package'
        raise SystemExit(msg) from None
    try:
        return init_chat_model(spec)
    except Exception as error:  # the provider's own error says what is missing
        msg = f"could not load model {spec!r}: {error}"
        raise SystemExit(msg) from None
