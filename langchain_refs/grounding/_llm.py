"""The one way the grounding wing asks a chat model and reads its replies.

`LLMJudgeScorer`, `LLMClaimExtractor`, `LLMClaimChecker` and
`LLMReferenceFilter` all go through `ask_model`, so they share:

- structured output with a fallback: a model that has structured output
  answers in the caller's schema; when it answers in prose instead of the
  schema, or its answer does not fit the schema, the reply's own text (or the
  arguments of its tool call) is read tolerantly; when the structured call
  itself fails, the prompt is asked once more as plain text;
- batching: every prompt of a call goes in one ``batch``, ``max_concurrency``
  at a time;
- tolerant JSON: the first JSON object or list in a text reply counts, prose
  and code fences around it allowed (`json_in_reply`);
- one error policy: a reply that cannot be read — the call raised, the reply
  holds no value the caller recognises — is logged once (one warning on the
  ``langchain_refs`` logger naming the caller, the reason and the start of
  the reply) and yields the caller's default. Nothing raises out of a batch,
  and one bad reply never costs the others theirs. Code that must show such
  failures to a person (the checking page) collects them, whatever the
  logging setup, with `recorded_model_failures`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel

__all__ = [
    "ModelReply",
    "ask_model",
    "checked_chat_model",
    "is_failed_call",
    "json_in_reply",
    "recorded_model_failures",
]

logger = logging.getLogger("langchain_refs")

# Where `recorded_model_failures` collects, in the context (thread or task) that opened it.
_failures: ContextVar[list[str] | None] = ContextVar("langchain_refs_model_failures", default=None)


_CALL_FAILED: Final = "the call failed: "


def is_failed_call(line: str) -> bool:
    """Whether a line of `recorded_model_failures` is a call that failed, which another try may get through.

    A call fails on a network error or a quota; else the model answered, with
    a reply that could not be read.

    Example:
        >>> is_failed_call("unreadable judge reply (the call failed: TimeoutError()); using the default 0.0.")
        True
        >>> is_failed_call("unreadable judge reply (ValueError: no score); using the default 0.0.")
        False
    """
    return f"({_CALL_FAILED}" in line


@contextmanager
def recorded_model_failures() -> Iterator[list[str]]:
    """Collect one line for each chat-model reply that failed or could not be read in the code run inside.

    The LLM-backed parts never raise on a bad reply: they log it and use
    their default (no claims, Neutral, the judge's default). Inside this
    block each such reply is also added to the list it gives, as one line
    (whitespace flattened, at most 300 characters), whatever the logging
    setup. It is a context variable: each thread or task that opens one sees
    only its own.

    Example:
        >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
        >>> from langchain_refs import LLMJudgeScorer
        >>> with recorded_model_failures() as failures:
        ...     LLMJudgeScorer(FakeListChatModel(responses=["no idea"])).score([("a", "b")])
        [0.0]
        >>> failures[0][:23]
        'unreadable judge reply '
    """
    found: list[str] = []
    token = _failures.set(found)
    try:
        yield found
    finally:
        _failures.reset(token)


T = TypeVar("T")

_OPENING = re.compile(r"[\[{]")
# Each failed attempt costs up to the length of the reply (the decoder reports the
# line and column of its error): a bound on attempts keeps a long reply full of
# stray brackets linear.
_MAX_FAILED_ATTEMPTS = 64


def json_in_reply(text: str) -> Any:
    """The first JSON object or list in a reply, tolerating prose and code fences around it.

    It is looked for from each ``[`` or ``{`` in turn; after 64 that begin no
    JSON value (or nest too deeply to read), the reply counts as holding none,
    so the work stays linear in the length of the reply.

    Raises:
        ValueError: no JSON object or list was found.

    Example:
        >>> json_in_reply('Sure: ```json\\n{"claims": []}\\n```')
        {'claims': []}
    """
    decoder = json.JSONDecoder()
    failed = 0
    for match in _OPENING.finditer(text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except (json.JSONDecodeError, RecursionError):
            failed += 1
            if failed >= _MAX_FAILED_ATTEMPTS:
                break
            continue
        return value
    msg = "no JSON in the reply"
    raise ValueError(msg)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelReply:
    """A model's reply, as `ask_model` hands it to the caller's reader.

    ``data`` is the structured output as plain data (a dict), or the first
    JSON object or list found in the reply's text (None when there is none);
    ``text`` is the reply's text ("" for structured output).

    Example:
        >>> ModelReply(data={"score": 0.5}, text='{"score": 0.5}').data["score"]
        0.5
    """

    data: Any
    text: str


def _reply_text(message: BaseMessage) -> str:
    """The text of a message, whatever the shape of its content (a string or blocks)."""
    content = message.content
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "".join(parts)


def _as_reply(raw: Any) -> ModelReply:
    # A message is a pydantic model too: look at it first.
    if isinstance(raw, BaseMessage | str):
        text = raw if isinstance(raw, str) else _reply_text(raw)
        try:
            data = json_in_reply(text)
        except ValueError:
            data = None
        return ModelReply(data=data, text=text)
    if isinstance(raw, BaseModel):
        return ModelReply(data=raw.model_dump(), text="")
    if _is_raw_structured(raw):
        if raw["parsed"] is not None:
            return _as_reply(raw["parsed"])
        # The model did not fill the schema: read its tool call's arguments, else its text.
        message = raw["raw"]
        reply = _as_reply(message)
        calls = getattr(message, "tool_calls", None) or []
        if calls and isinstance(calls[0].get("args"), dict):
            return ModelReply(data=calls[0]["args"], text=reply.text)
        return reply
    return ModelReply(data=raw, text="")


def _is_raw_structured(raw: Any) -> bool:
    """Whether ``raw`` is what ``with_structured_output(..., include_raw=True)`` gives."""
    return (
        isinstance(raw, dict) and set(raw) == {"raw", "parsed", "parsing_error"} and isinstance(raw["raw"], BaseMessage)
    )


def _structured(model: BaseChatModel, schema: type[BaseModel]) -> Any | None:
    """The model answering in ``schema`` with its raw reply kept, or None when it has no structured output."""
    try:
        return model.with_structured_output(schema, include_raw=True)
    except (NotImplementedError, AttributeError):
        return None
    except (TypeError, ValueError):
        # A with_structured_output that takes no include_raw.
        try:
            return model.with_structured_output(schema)
        except (NotImplementedError, AttributeError):
            return None


def _batch(runnable: Any, prompts: list[list[BaseMessage]], max_concurrency: int) -> list[Any]:
    """One reply or exception per prompt, whether or not the runnable honours return_exceptions."""
    try:
        raws: list[Any] = runnable.batch(prompts, {"max_concurrency": max_concurrency}, return_exceptions=True)
    except Exception as error:  # a runnable that ignores return_exceptions: every reply failed with it
        return [error] * len(prompts)
    for raw in raws:
        if isinstance(raw, BaseException) and not isinstance(raw, Exception):  # an interrupt is not a reply
            raise raw
    return raws


def checked_chat_model(model: object, owner: str) -> BaseChatModel:
    """``model`` when it is a chat model (or a Runnable such as one with tools bound), else a TypeError.

    A model's name (``"openai:gpt-4o-mini"``, as the command line takes it)
    is not a model: the error says how to build one. Checked when ``owner``
    is built, so that a wrong model does not turn every answer into the
    default an unreadable reply gets.

    Example:
        >>> checked_chat_model("openai:gpt-4o-mini", "LLMJudgeScorer")
        Traceback (most recent call last):
        ...
        TypeError: LLMJudgeScorer needs a chat model, not its name: build it with init_chat_model('openai:gpt-4o-mini')
    """
    if isinstance(model, str):
        msg = f"{owner} needs a chat model, not its name: build it with init_chat_model({model!r})"
        raise TypeError(msg)
    if not isinstance(model, Runnable):
        msg = f"{owner} needs a chat model (a LangChain BaseChatModel), got {type(model).__name__}"
        raise TypeError(msg)
    return model  # type: ignore[return-value]


def ask_model(
    model: BaseChatModel,
    prompts: Sequence[Sequence[BaseMessage]],
    *,
    schema: type[BaseModel],
    read: Callable[[ModelReply], T],
    default: T,
    name: str,
    max_concurrency: int = 4,
) -> list[T]:
    """Ask ``model`` every prompt in one batch and read each reply with ``read``.

    The model answers in ``schema`` when it has structured output
    (``with_structured_output``, its raw reply kept); otherwise its text is
    read tolerantly (the first JSON value in it, prose and code fences around
    it allowed). A structured reply that does not fill the schema is read from
    its tool call's arguments or its text; a structured call that fails is
    asked again once as plain text. ``read`` turns a `ModelReply` into the
    caller's value and raises (any exception) when it cannot; then, as when
    the call itself failed, the reply is logged once, naming ``name``, and
    gives ``default``, returned as is.

    Example:
        >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
        >>> from langchain_core.messages import HumanMessage
        >>> class Score(BaseModel):
        ...     score: float
        >>> model = FakeListChatModel(responses=['Sure: {"score": 0.8}', "no idea"])
        >>> ask_model(model, [[HumanMessage("a")], [HumanMessage("b")]], schema=Score,
        ...           read=lambda reply: float(reply.data["score"]), default=0.0, name="judge",
        ...           max_concurrency=1)
        [0.8, 0.0]
    """
    if not prompts:
        return []
    asked = [list(p) for p in prompts]
    structured = _structured(model, schema)
    raws = _batch(structured if structured is not None else model, asked, max_concurrency)
    failed = [i for i, raw in enumerate(raws) if isinstance(raw, Exception)]
    if structured is not None and failed:
        # The structured call failed (a provider may refuse tools for this model): ask as plain text.
        again = _batch(model, [asked[i] for i in failed], max_concurrency)
        for i, raw in zip(failed, again, strict=True):
            raws[i] = raw
    results = []
    for raw in raws:
        if isinstance(raw, Exception):
            reason = f"{_CALL_FAILED}{raw!r}"
        else:
            try:
                results.append(read(_as_reply(raw)))
                continue
            except Exception as error:  # whatever the reader could not use
                reason = f"{type(error).__name__}: {error}"
        message = f"unreadable {name} reply ({reason}); using the default {default!r}. Reply: {raw!r:.300}"
        logger.warning("%s", message)
        recording = _failures.get()
        if recording is not None:
            recording.append(" ".join(message.split())[:300])
        results.append(default)
    return results
