"""Real chat models for the command line, loaded by ``provider:name``."""

from __future__ import annotations

import importlib.util
from typing import Any

from pydantic import ValidationError

from langchain_refs.apps._errors import CommandError, first_line

__all__ = ["load_model", "provider_package"]

# The provider names of init_chat_model whose package is not simply
# "langchain-" + the provider with dashes.
_PACKAGES = {
    "azure_openai": "langchain-openai",
    "bedrock": "langchain-aws",
    "bedrock_converse": "langchain-aws",
    "google_anthropic_vertex": "langchain-google-vertexai",
}


def provider_package(provider: str) -> str:
    """The pip package that holds the chat models of an ``init_chat_model`` provider.

    Example:
        >>> provider_package("ollama"), provider_package("google_genai"), provider_package("bedrock")
        ('langchain-ollama', 'langchain-google-genai', 'langchain-aws')
    """
    return _PACKAGES.get(provider, "langchain-" + provider.replace("_", "-"))


def load_model(spec: str) -> Any:
    """A real chat model from ``provider:name`` through LangChain's ``init_chat_model``.

    Every failure is a `CommandError` with a one-line message that says what to
    install or fix.

    Example:
        >>> load_model("nonsense")
        Traceback (most recent call last):
        ...
        langchain_refs.apps.CommandError: --model must look like provider:name (e.g. openai:gpt-4o-mini), got 'nonsense'
    """
    provider, _, name = spec.partition(":")
    if not provider or not name:
        msg = f"--model must look like provider:name (e.g. openai:gpt-4o-mini), got {spec!r}"
        raise CommandError(msg)
    package = provider_package(provider)
    try:
        from langchain.chat_models import init_chat_model
    except ImportError:
        msg = (
            f"--model needs LangChain's init_chat_model and the provider package: in a clone of langchain-refs run "
            f'pip install -e ".[models]" {package} (or pip install "langchain>=1.0" {package})'
        )
        raise CommandError(msg) from None
    try:
        # The provider named, not inferred: an unknown one is said to be unsupported (inferring it, LangChain would
        # ask for a model_provider argument this command has no option for).
        return init_chat_model(name, model_provider=provider)
    except Exception as error:
        # A missing provider package shows up as an ImportError, or, when
        # init_chat_model falls back to langchain-community, as an
        # AttributeError from deep inside it: name the package either way.
        missing = isinstance(error, ImportError | AttributeError)
        if missing and importlib.util.find_spec(package.replace("-", "_")) is None:
            msg = f"--model {spec}: the {provider!r} provider needs its package: pip install {package}"
        else:
            msg = f"--model {spec}: could not load the model: {_reason(error)}"
        raise CommandError(msg) from None


def _reason(error: Exception) -> str:
    """Why a model could not be made, in one line: a pydantic error's first problem, else the first line.

    A model class that refuses its settings (no API key, a missing field)
    raises a pydantic ``ValidationError`` whose first line only counts the
    errors ("1 validation error for ChatGoogleGenerativeAI").

    Example:
        >>> import pydantic
        >>> class Chat(pydantic.BaseModel):
        ...     model: str
        >>> try:
        ...     Chat()
        ... except pydantic.ValidationError as error:
        ...     _reason(error)
        'model: Field required'
    """
    errors = error.errors() if isinstance(error, ValidationError) else []
    if not errors:
        return first_line(error)
    first = errors[0]
    # A validator's own ValueError reads "Value error, <its message>": its message is the reason.
    message = first_line(ValueError(str(first["msg"]).removeprefix("Value error, ")))
    where = ".".join(str(part) for part in first.get("loc", ()))
    return f"{where}: {message}" if where else message
