"""`ReferencesChatModel`: a chat model whose answers come out with citations rewritten.

It wraps the model that writes the answer. Each call (``invoke``, ``stream``,
``ainvoke``, ``astream``; with or without tools bound) runs the inner model's
chunks through one `ReferenceSession` and yields rewritten chunks, so every
reader of the wrapper's run (LangGraph's ``stream_mode="messages"``,
``astream_events``, ``stream_events(version="v3")``, the final message) gets
rewritten text. A model call is one LLM run, the wrapper's: it carries the
inner model's provider and model name (``ls_provider``, ``ls_model_name``;
`_get_ls_params` is the inner model's) and its usage once, and token
callbacks get the rewritten text as ``str``. The inner model runs with no
callbacks and tracing off (a second LLM run would count the usage twice, and
stream raw markers); what it wrote, markers and all, is in the last chunk's
``response_metadata[MODEL_TEXT_KEY]``, so a trace still shows it.

The chunks it yields (the streaming wing's `ChunkRewriter` in its ``"v1"``
shape makes them) carry text as standard ``{"type": "text", "index": 0}``
blocks (one text block per answer once merged; tool-call chunk indices move
up by one so they never share the text's index); the last chunk carries the
held tail, the list of sources, the `Citation` annotations of the text block
and, in ``response_metadata``: ``"references"`` (`AnswerReferences` as a
dict), ``"citations"`` (the annotations, offsets into the whole text) and
`MODEL_TEXT_KEY` (what the model wrote, markers and all, for the next turn).
Read ``chunk.text`` or ``chunk.content_blocks``, not ``chunk.content``.
Where the wrapper reads the inner model's ``_stream`` itself (`_direct_call`),
it rewrites each text chunk in place and passes the same chunk on
(`ChunkRewriter.generation_owned`): what ``_stream`` yields belongs to its
reader, as LangChain's own ``stream`` treats it.

Example:
    >>> from langchain_core.documents import Document
    >>> from langchain_core.language_models import GenericFakeChatModel
    >>> from langchain_core.messages import AIMessage
    >>> from langchain_refs.streaming import TextReferenceStyle
    >>> model = ReferencesChatModel(
    ...     inner=GenericFakeChatModel(messages=iter([AIMessage("Paris is in France[1](id=1).")])),
    ...     documents=[Document("Paris is in France.", metadata={"source": "paris.html"})],
    ...     style=TextReferenceStyle())
    >>> print(model.invoke("Where is Paris?").text)
    Paris is in France[1].
    <BLANKLINE>
    - [1] paris.html
    <BLANKLINE>
"""

from __future__ import annotations

import inspect
import json
import uuid
import warnings
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any, Final, Literal

from langchain_core.caches import BaseCache
from langchain_core.callbacks import (
    AsyncCallbackHandler,
    AsyncCallbackManagerForLLMRun,
    BaseCallbackHandler,
    BaseCallbackManager,
    CallbackManager,
    CallbackManagerForLLMRun,
)
from langchain_core.documents import Document
from langchain_core.globals import get_llm_cache
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.base import LangSmithParams
from langchain_core.language_models.chat_models import generate_from_stream
from langchain_core.load import dumps
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableBinding, RunnableConfig, ensure_config
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tracers import context as tracer_context
from langchain_core.tracers.base import BaseTracer
from langchain_core.utils.aiter import aclosing
from langsmith import tracing_context
from pydantic import ConfigDict, Field, field_validator, model_validator
from typing_extensions import override

from langchain_refs.agents._edited import TEXT_CHECK_KEY, text_check
from langchain_refs.streaming import (
    DEFAULT_MAX_HOLDBACK,
    ChunkRewriter,
    MarkerSyntax,
    ReferenceSession,
    ReferenceStyle,
    SourceKey,
    SyntaxName,
    built_in_syntax,
    checked_max_holdback,
    choose_style,
    join_text_runs,
    marker_syntaxes,
    merge_chunks,
    passage_scorer,
    standard_content,
    whole_answer,
    with_refusal,
    without_added_indices,
)
from langchain_refs.text import PairScorer

if TYPE_CHECKING:
    from langchain_core.callbacks import Callbacks
    from langchain_core.language_models.model_profile import ModelProfile
    from langchain_core.rate_limiters import BaseRateLimiter

__all__ = [
    "MODEL_TEXT_KEY",
    "ReferencesChatModel",
    "cited_text_renamed",
    "rewrite_message",
    "stamped",
    "standard_blocks",
    "unannotated",
]

_MISSING: Final = object()
# LangChain's standard chat model parameters: a model's, so the inner one's here.
_INNER_MODEL_PARAMETERS: Final = frozenset(
    {
        "model",
        "temperature",
        "max_tokens",
        "timeout",
        "max_retries",
        "stop",
        "streaming",
        "api_key",
        "base_url",
        # Not a standard parameter, but the inner model's too: its cache serves the wrapper (`_InnerCache`).
        "cache",
    }
)


def cited_text_renamed(owner: str) -> str:
    """The warning the old option name ``cited_text`` of ``owner`` (a class's name) gives.

    Example:
        >>> cited_text_renamed("ReferencesChatModel").split(", ")[0]
        'ReferencesChatModel(cited_text=...) is now ReferencesChatModel(passages=...)'
    """
    return (
        f"{owner}(cited_text=...) is now {owner}(passages=...), the name manage_references uses; "
        "the old name will be removed"
    )


MODEL_TEXT_KEY: Final = "langchain_refs_model_text"
"""``response_metadata`` key of a rewritten message holding what the model wrote (raw markers)."""
MODEL_TEXT_BLOCKS_KEY: Final = "langchain_refs_model_text_blocks"
"""``response_metadata`` key of a rewritten message whose model wrote two text blocks or more: each one's length."""


def _untraced() -> RunnableConfig:
    """The config of the inner model's call: no callbacks (the wrapper's run is the model call's one run)."""
    return {"callbacks": CallbackManager(handlers=[])}


def _handler_variables() -> list[ContextVar[Any]]:
    """The context variables from which LangChain adds a handler to every run it starts.

    ``get_usage_metadata_callback``, ``collect_runs`` and other packages'
    counters (``get_openai_callback``) register one each with
    ``register_configure_hook``; LangChain keeps them in a list of its
    tracers' context module (read where it is, none when it moves).
    """
    hooks = getattr(tracer_context, "_configure_hooks", ())
    return [hook[0] for hook in hooks if isinstance(hook, tuple) and hook and isinstance(hook[0], ContextVar)]


@contextmanager
def _detached() -> Iterator[None]:
    """Start the inner model's own run (its public ``stream`` or ``invoke``) with no handler of the caller's.

    The wrapper's run is the model call's one run. An empty callback manager
    in the inner call's config is not enough: LangChain adds to it the
    handlers of the config in context (a ``RunnableBinding``, as
    ``bind_tools`` makes, merges them in; LangGraph's ``messages`` stream is
    one) and the handlers its context variables hold (a usage counter). Here
    the config in context keeps all but its callbacks, those variables are
    cleared and tracing is off, for the call's first step (when LangChain
    sets the run up); they are put back after it.
    """
    restore: list[tuple[ContextVar[Any], Token[Any]]] = []
    config = var_child_runnable_config.get()
    if config is not None and config.get("callbacks") is not None:
        restore.append((var_child_runnable_config, var_child_runnable_config.set({**config, "callbacks": None})))
    for variable in _handler_variables():
        if variable.get() is not None:
            restore.append((variable, variable.set(None)))
    try:
        with tracing_context(enabled=False):
            yield
    finally:
        for variable, token in reversed(restore):
            variable.reset(token)


def _unbound(inner: Any) -> tuple[Any, dict[str, Any]]:
    """What is under ``inner``'s bindings (tools, options), and the options bound."""
    bound: dict[str, Any] = {}
    while isinstance(inner, RunnableBinding):
        bound = {**inner.kwargs, **bound}
        inner = inner.bound
    return inner, bound


def _model_labels(inner: Any) -> tuple[list[str], dict[str, Any]]:
    """The tags and metadata of the chat model under ``inner``'s bindings: its runs' own (local) ones.

    Example:
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> model = GenericFakeChatModel(messages=iter([]), tags=["prod"], metadata={"team": "search"})
        >>> tags, metadata = _model_labels(model.bind(stop=["."]))
        >>> tags, metadata["team"]
        (['prod'], 'search')
    """
    model, _ = _inner_chat_model(inner)
    if model is None:
        return [], {}
    return list(model.tags or ()), dict(model.metadata or {})


def _passed_on(inner: Any, config: RunnableConfig | None) -> RunnableConfig | None:
    """``config`` as the bindings around ``inner`` pass it on to the model (``with_config``, ``with_listeners``).

    What the model's run would get from them (handlers, tags, metadata, a run
    name, listeners), the model call's one run, the wrapper's, gets instead:
    the outermost binding first, each merging its own config as it does.

    Example:
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> bound = GenericFakeChatModel(messages=iter([])).with_config(tags=["eu"], run_name="planner")
        >>> config = _passed_on(bound, {"tags": ["call"]})
        >>> config["tags"], config["run_name"]
        (['call', 'eu'], 'planner')
    """
    while isinstance(inner, RunnableBinding):
        config = inner._merge_configs(config)
        inner = inner.bound
    return config


def _without_handlers(inner: Any) -> Any:
    """``inner`` with no handler nor config factory in its bindings: the wrapper's run has them (`_passed_on`).

    Example:
        >>> from langchain_core.callbacks import BaseCallbackHandler
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> bound = GenericFakeChatModel(messages=iter([])).with_config(callbacks=[BaseCallbackHandler()], tags=["eu"])
        >>> _without_handlers(bound).config
        {'tags': ['eu']}
    """
    if not isinstance(inner, RunnableBinding):
        return inner
    bound = _without_handlers(inner.bound)
    if bound is inner.bound and "callbacks" not in inner.config and not inner.config_factories:
        return inner
    config = {key: value for key, value in inner.config.items() if key != "callbacks"}
    return inner.model_copy(update={"bound": bound, "config": config, "config_factories": []})


def _inner_chat_model(inner: Any) -> tuple[BaseChatModel | None, dict[str, Any]]:
    """The chat model under ``inner``'s bindings (tools, options), and the options bound."""
    model, bound = _unbound(inner)
    return (model if isinstance(model, BaseChatModel) else None), bound


def _inner_method(inner: Any, name: str) -> tuple[Callable[..., Any] | None, dict[str, Any]]:
    """The method ``name`` of the chat model under ``inner``'s bindings, and the options bound (None: no such model).

    A configurable model (``init_chat_model`` with ``configurable_fields``)
    is no chat model, but hands on its default model's methods: those count.
    """
    model, bound = _unbound(inner)
    if isinstance(model, BaseChatModel):
        return getattr(model, name), bound
    method = getattr(model, name, None) if isinstance(model, Runnable) else None
    return (method if callable(method) else None), bound


class _TextTokens:
    """A token-reading callback handler, given the chunk's text as ``str`` in ``on_llm_new_token``.

    The wrapper's chunks carry text as standard blocks (so that they merge
    into one annotated block), and LangChain hands handlers
    ``chunk.content``, a list. Every other event reaches the handler as is.
    """

    __slots__ = ("_handler",)

    def __init__(self, handler: Any) -> None:
        self._handler = handler

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handler, name)

    def on_llm_new_token(self, token: Any, **kwargs: Any) -> Any:
        return self._handler.on_llm_new_token(_token_text(token, kwargs), **kwargs)


class _AsyncTextTokens(_TextTokens):
    """`_TextTokens` for a handler whose ``on_llm_new_token`` is a coroutine (LangChain awaits it)."""

    __slots__ = ()

    @override
    async def on_llm_new_token(self, token: Any, **kwargs: Any) -> Any:
        return await self._handler.on_llm_new_token(_token_text(token, kwargs), **kwargs)


def _token_text(token: Any, kwargs: dict[str, Any]) -> str:
    if isinstance(token, str):
        return token
    message = getattr(kwargs.get("chunk"), "message", None)
    return str(message.text) if isinstance(message, BaseMessage) else ""


def _reads_tokens(handler: Any) -> bool:
    """A handler that reads tokens, and is neither a tracer nor a stream reader (those take the chunk)."""
    if isinstance(handler, (BaseTracer, _TextTokens)) or callable(getattr(handler, "tap_output_iter", None)):
        return False
    method = getattr(type(handler), "on_llm_new_token", None)
    return method is not None and method not in (
        BaseCallbackHandler.on_llm_new_token,
        AsyncCallbackHandler.on_llm_new_token,
    )


def _text_token(handler: Any) -> Any:
    if not _reads_tokens(handler):
        return handler
    if inspect.iscoroutinefunction(handler.on_llm_new_token):
        return _AsyncTextTokens(handler)
    return _TextTokens(handler)


def _text_token_config(config: RunnableConfig | None) -> RunnableConfig:
    """``config`` with its token-reading handlers given text (see `_TextTokens`)."""
    config = ensure_config(config)
    callbacks = config.get("callbacks")
    if isinstance(callbacks, list):
        if any(map(_reads_tokens, callbacks)):
            return {**config, "callbacks": [_text_token(h) for h in callbacks]}
    elif isinstance(callbacks, BaseCallbackManager) and any(map(_reads_tokens, callbacks.handlers)):
        manager = callbacks.copy()
        manager.handlers = [_text_token(h) for h in callbacks.handlers]
        manager.inheritable_handlers = [_text_token(h) for h in callbacks.inheritable_handlers]
        return {**config, "callbacks": manager}
    return config


def _direct_call(
    inner: Any, stop: list[str] | None, kwargs: dict[str, Any]
) -> tuple[BaseChatModel, dict[str, Any]] | None:
    """The inner chat model and the arguments of its ``_stream``, when its chunks can be read directly.

    The wrapper's run is the model call's one run, so the inner model's own
    ``stream`` would only open a run nobody sees, at a cost per chunk (about
    as much as the bare model's whole stream, measured in ``bench/run.py``).
    Its ``_stream`` gives the same chunks when nothing that ``stream`` adds
    applies: a model that streams, without its own callbacks, without v1
    output to convert, with streaming not turned off. Otherwise None: the
    inner model's ``stream`` is used.
    """
    model, bound = _inner_chat_model(inner)
    if (
        model is None
        or type(model)._stream is BaseChatModel._stream
        or model.disable_streaming
        or model.callbacks
        or getattr(model, "output_version", None) == "v1"
        # LangChain's own opt-outs of streaming for one model: built with streaming=False, or called with stream=False.
        or ("streaming" in model.model_fields_set and getattr(model, "streaming", None) is False)
    ):
        return None
    call = _call_options(bound, stop, kwargs)
    return None if "stream" in call and not call["stream"] else (model, call)


def _call_options(bound: dict[str, Any], stop: list[str] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The options a call of the inner model gets: bound ones, then the call's, as LangChain passes them on."""
    call = {**bound, **kwargs}
    # What LangChain's stream and generate take out before calling _stream and _generate_with_cache.
    call.pop("ls_structured_output_format", None)
    call.pop("structured_output_format", None)
    if stop is not None:
        call["stop"] = stop
    return call


class _InnerCache:
    """The inner model's cache entry for one call: where LangChain keeps that model's answer to these messages.

    The key is the one the model's own ``invoke`` makes (its parameters and
    the call's options, the messages without their ids), so the wrapper
    reads and writes the very entries the model would alone. The wrapper
    calls ``_stream`` directly when it streams, which no cache reads: this
    does it. What is kept is the model's answer, never a rewritten one.
    """

    __slots__ = ("_cache", "_llm_string", "_prompt")

    def __init__(self, cache: BaseCache, prompt: str, llm_string: str) -> None:
        self._cache = cache
        self._prompt = prompt
        self._llm_string = llm_string

    @classmethod
    def of(
        cls, inner: Any, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> _InnerCache | None:
        """The entry for a call of ``inner`` (None: it is not cached, or not a chat model whose cache is known)."""
        model, bound = _inner_chat_model(inner)
        if model is None or model.cache is False:
            return None
        cache = model.cache if isinstance(model.cache, BaseCache) else get_llm_cache()
        if cache is None:
            # None set (``cache=True`` with none set: the model's own ``invoke`` says so, its ``stream`` does not).
            return None
        call = _call_options(bound, stop, kwargs)
        call_stop = call.pop("stop", None)
        ids_left_out = [m.model_copy(update={"id": None}) if m.id is not None else m for m in messages]
        return cls(cache, dumps(ids_left_out), model._get_llm_string(stop=call_stop, **call))

    def lookup(self) -> AIMessage | None:
        """The answer kept for the call, marked as served from the cache as LangChain marks it; None if none."""
        return _served(self._cache.lookup(self._prompt, self._llm_string))

    async def alookup(self) -> AIMessage | None:
        """`lookup`, asynchronously."""
        return _served(await self._cache.alookup(self._prompt, self._llm_string))

    def update(self, chunks: list[ChatGenerationChunk]) -> None:
        """Keep the answer ``chunks`` add up to (as LangChain adds up a stream)."""
        self._cache.update(self._prompt, self._llm_string, _answer_of(chunks))

    async def aupdate(self, chunks: list[ChatGenerationChunk]) -> None:
        """`update`, asynchronously."""
        await self._cache.aupdate(self._prompt, self._llm_string, _answer_of(chunks))


def _served(kept: Any) -> AIMessage | None:
    """The answer a cache kept, as LangChain serves it: its usage marked ``total_cost`` 0."""
    if not isinstance(kept, list) or not kept:
        return None
    message = getattr(kept[0], "message", None)
    if not isinstance(message, AIMessage):
        # A text generation kept by an older LangChain: the text is the answer.
        return AIMessage(content=kept[0].text)
    return message.model_copy(update={"usage_metadata": {**(message.usage_metadata or {}), "total_cost": 0}})


def _answer_of(chunks: list[ChatGenerationChunk]) -> list[ChatGeneration]:
    """The generations LangChain keeps for a streamed answer: the chunks added up, their info in the metadata."""
    generations = generate_from_stream(iter(chunks)).generations
    for generation in generations:
        generation.message.response_metadata = {
            **(generation.generation_info or {}),
            **generation.message.response_metadata,
        }
    return generations


def _raw_copy(read: ChatGenerationChunk | AIMessageChunk) -> ChatGenerationChunk:
    """What the inner model streamed, kept before the wrapper rewrites it (in place, for its own generations)."""
    if isinstance(read, ChatGenerationChunk):
        return ChatGenerationChunk(message=read.message.model_copy(), generation_info=read.generation_info)
    return ChatGenerationChunk(message=read.model_copy())


def unannotated(messages: list[BaseMessage]) -> list[BaseMessage]:
    """``messages`` with the annotations of rewritten answers (``references`` in their metadata) taken out.

    A rewritten answer fed back as history carries its standard ``Citation``
    annotations, which a provider's client turns into its own citations when
    it sends the message back (langchain-anthropic makes Anthropic
    ``citations`` of them, with our fields in: an API refuses those). The
    model reads its earlier answer's text; the annotations are for the
    reader. A provider's own answers keep theirs.

    An answer langchain-openai wrote in its legacy shape (``output_version=
    "v0"`` of the Responses API: its reasoning, server tools' outputs and
    call ids in ``additional_kwargs``) goes back with the blocks that shape
    keeps in its content only (its text, a compaction, a custom tool's call).
    The client rebuilds that shape's other items from ``additional_kwargs``
    and ``tool_calls`` whatever the content holds, so the standard blocks
    of the rewritten answer (its ``tool_call``...) would be sent a second
    time: a function call twice.

    Example:
        >>> answer = AIMessage(content=[{"type": "text", "text": "Hi[1]", "annotations": [{"type": "citation"}]}],
        ...     response_metadata={"references": {}, "output_version": "v1"})
        >>> unannotated([answer])[0].content
        [{'type': 'text', 'text': 'Hi[1]'}]
    """
    out: list[BaseMessage] | None = None
    for position, message in enumerate(messages):
        content = message.content
        if not (isinstance(message, AIMessage) and isinstance(content, list)):
            continue
        if "references" not in message.response_metadata:
            continue
        legacy = _read_as_legacy_openai(message)
        if legacy or any(isinstance(block, dict) and "annotations" in block for block in content):
            if out is None:
                out = list(messages)
            blocks = [
                {k: v for k, v in block.items() if k != "annotations"} if isinstance(block, dict) else block
                for block in content
                if not legacy or (isinstance(block, dict) and block.get("type") in _LEGACY_OPENAI_CONTENT)
            ]
            out[position] = message.model_copy(update={"content": blocks})
    return messages if out is None else out


# The ``additional_kwargs`` keys by which langchain-openai tells an answer in its legacy (v0) shape, as it reads
# one back (langchain-core's OpenAI translator; "__openai_function_call_ids__" maps call ids to item ids).
_LEGACY_OPENAI_KEYS: Final = ("reasoning", "tool_outputs", "refusal", "__openai_function_call_ids__")
# The blocks such an answer keeps in its content, read back as they are: its text, and the items the standard form
# holds as "non_standard" (a compaction, a custom tool's call). The client rebuilds the others.
_LEGACY_OPENAI_CONTENT: Final = frozenset({"text", "non_standard"})


def _read_as_legacy_openai(message: AIMessage) -> bool:
    """Whether langchain-openai reads ``message`` back as an answer in its legacy shape (``output_version="v0"``).

    As the client tells one: an answer whose content is a list of blocks,
    with one of `_LEGACY_OPENAI_KEYS` in ``additional_kwargs`` or a message
    item's id (``msg_``) beside a response's (``resp_``); an answer another
    provider gave is never one (one that names none may be, as for the client).

    Example:
        >>> answer = AIMessage(content=[{"type": "text", "text": "Hi"}], id="msg_1",
        ...     response_metadata={"model_provider": "openai", "id": "resp_1"})
        >>> _read_as_legacy_openai(answer), _read_as_legacy_openai(answer.model_copy(update={"id": "resp_1"}))
        (True, False)
        >>> _read_as_legacy_openai(answer.model_copy(update={"response_metadata": {"id": "resp_1"}}))
        True
    """
    metadata = message.response_metadata
    if metadata.get("model_provider", "openai") != "openai" or not isinstance(message.content, list):
        return False
    if not all(isinstance(block, dict) for block in message.content):
        return False
    if any(key in message.additional_kwargs for key in _LEGACY_OPENAI_KEYS):
        return True
    response_id = metadata.get("id")
    return (
        isinstance(message.id, str)
        and message.id.startswith("msg_")
        and isinstance(response_id, str)
        and response_id.startswith("resp_")
    )


def _with_stop(stop: list[str] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    # Only chat models take ``stop``: pass it on only when there is one.
    return kwargs if stop is None else {**kwargs, "stop": stop}


def _as_chunk(message: BaseMessage) -> AIMessageChunk:
    if isinstance(message, AIMessageChunk):
        return message
    if isinstance(message, AIMessage):
        # A whole message may carry a chunk's streaming-only fields as extras
        # (an ``AIMessage`` made from a dump of summed chunks): its tool calls
        # are what the chunk's calls are made from, so those extras go.
        return AIMessageChunk(
            **message.model_dump(
                exclude={"type", "tool_calls", "invalid_tool_calls", "tool_call_chunks", "chunk_position"}
            ),
            tool_call_chunks=[
                {"name": c["name"], "args": _json(c["args"]), "id": c.get("id"), "index": i, "type": "tool_call_chunk"}
                for i, c in enumerate(message.tool_calls)
            ],
        )
    msg = f"ReferencesChatModel wraps chat models, which answer with AI messages; got {type(message).__name__}"
    raise TypeError(msg)


def _json(args: Any) -> str:
    return json.dumps(args, ensure_ascii=False)


class _AnswerStart(ChatGenerationChunk):
    """The first chunk of a rewritten answer: it adds up the answer's chunks as LangChain does, in linear time.

    LangChain adds a model call's chunks up as ``first + [the others]``. The
    wrapper's chunks carry their text as standard blocks, and LangChain merges
    blocks by copying the text so far at every chunk (a cost per chunk that
    grows with the answer; a bare model streaming blocks pays it too). This
    first chunk joins each run of text-only chunks into one chunk first (the
    texts joined once: `join_text_runs`), then lets LangChain add what is left:
    the same result, checked against LangChain's own sum in
    ``tests/unit_tests/test_agents_merge.py``. The answer summed gets the
    refusal its provider gave outside its content (`with_refusal`).

    Example:
        >>> def block(text):
        ...     return AIMessageChunk(content=[{"type": "text", "text": text, "index": 0}], id="run-1")
        >>> total = _AnswerStart.of(ChatGenerationChunk(message=block("Par"))) + [
        ...     ChatGenerationChunk(message=block(t)) for t in ("is ", "is ", "big.")]
        >>> total.message.content, type(total).__name__
        ([{'type': 'text', 'text': 'Paris is big.', 'index': 0}], 'ChatGenerationChunk')
    """

    @classmethod
    def of(cls, generation: ChatGenerationChunk) -> _AnswerStart:
        """``generation`` as an answer's first chunk (the same fields, set the same way)."""
        return cls.model_construct(
            _fields_set=generation.model_fields_set,
            text=generation.text,
            message=generation.message,
            generation_info=generation.generation_info,
        )

    @override
    def __add__(self, other: ChatGenerationChunk | list[ChatGenerationChunk]) -> ChatGenerationChunk:
        if isinstance(other, list):
            generations = [self, *other]
            # A chunk with generation info is added by LangChain as it comes (its info merged in order).
            messages = [None if g.generation_info else g.message for g in generations]
            joined = join_text_runs(generations, messages, _generation_of)
            if joined is not None:
                head, *rest = joined
                total = ChatGenerationChunk.__add__(head, rest)
            else:
                total = ChatGenerationChunk.__add__(self, other)
            # The answer summed: a refusal given outside its content joins its standard content.
            total.message = with_refusal(total.message)
            return total
        return ChatGenerationChunk.__add__(self, other)


class _StampedAnswerStart(_AnswerStart):
    """`_AnswerStart` whose sum, the answer as it leaves the model, is stamped with `text_check` (`stamped`)."""

    @override
    def __add__(self, other: ChatGenerationChunk | list[ChatGenerationChunk]) -> ChatGenerationChunk:
        total = super().__add__(other)
        total.message = stamped(total.message)
        return total


def stamped(message: Any) -> Any:
    """``message``, a rewritten answer, stamped with `text_check` (to tell a later edit); anything else as it is.

    A stamp already there is kept: the first is taken as the answer leaves the model, before any edit.

    Example:
        >>> [key for key in stamped(AIMessage("Hi", response_metadata={MODEL_TEXT_KEY: "Hi"})).response_metadata]
        ['langchain_refs_model_text', 'langchain_refs_text_check']
    """
    if not isinstance(message, AIMessage):
        return message
    metadata = message.response_metadata
    if MODEL_TEXT_KEY not in metadata or TEXT_CHECK_KEY in metadata:
        return message
    metadata = {**message.response_metadata, TEXT_CHECK_KEY: text_check(message)}
    return message.model_copy(update={"response_metadata": metadata})


def _generation_of(message: AIMessageChunk) -> ChatGenerationChunk:
    return ChatGenerationChunk(message=message)


class ReferencesChatModel(BaseChatModel):
    """A chat model that rewrites the ``[n](id=k)`` citations of another one, as it streams.

    ``documents`` are the documents the model may cite: ``id=k`` names
    ``documents[k - 1]``. `ReferencesMiddleware` builds one per model call of
    an agent, with the thread's documents; use it directly where the
    documents are known beforehand (``create_agent(ReferencesChatModel(...))``
    or any chain that needs a real chat model). ``bind_tools`` and ``bind``
    reach the inner model; ``profile`` and ``model_name`` are copied from it
    by the middleware so that LangChain's checks see the real model.

    Args:
        inner: the model that writes the answer.
        documents: the documents it was shown, id = 1-based position.
        style: how citations and the list of sources are written
            (default: `MarkdownReferenceStyle`).
        source_key: the metadata key or callable giving a document's source
            (default: the style's).
        syntaxes: the marker syntaxes to recognise (names or `MarkerSyntax`).
        max_holdback: the most characters held back for a partial marker: a
            marker longer than that stays as the model wrote it.
        passages: find, for each citation, the passage of the cited
            document that best supports it (the ``cited_text`` of its
            annotation), as ``manage_references(passages=...)`` does: True
            with the lexical engine, a scorer with ``score(pairs)`` (a
            grounding scorer, a LangChain ``BaseCrossEncoder``) to use it
            (once the answer is complete), False for none (the start of the
            document). Its old name ``cited_text`` still works, with a
            ``DeprecationWarning``.
        consulted_ids: the ids of the documents the model was shown for
            this answer, of which the uncited ones are listed as consulted
            (None, the default: all of ``documents``). The middleware gives
            those of the call's tool results: a thread's earlier documents
            stay citable without being reported as consulted by every answer.
        unshown_ids: the ids of documents the model was not shown (a tool's
            text left them out): a citation of one is dropped, as of an
            unknown id. The middleware gives them.
        stamp_text: stamp the answer with a digest of its text as it leaves
            the model (``response_metadata["langchain_refs_text_check"]``), so
            that a middleware's later edit of it is told and its offsets
            moved onto the edit; the middleware sets it.
        instructions: the citation rule (`FORMAT_REFERENCES`), added to the
            system prompt of a call that has documents and whose prompt asks
            for no ``(id=...)`` markers; the middleware sets it, so that a
            middleware inside it that replaces the system prompt
            (``@dynamic_prompt``) does not take the rule away.

    An option it does not have is an error (pydantic's ``ValidationError``
    names it), not ignored: a misspelt ``passages`` would leave them on.
    LangChain's standard model parameters (``temperature``, ``max_tokens``,
    ``stop``...) are the inner model's: they are taken, as LangChain asks
    of every chat model, and ignored with a warning; so is ``cache``. The
    inner model's cache serves the wrapper: the inner model's answers are
    kept in it under its own key, as it keeps them alone, and each answer it
    serves is rewritten anew (for this call's style, options and documents).

    Example:
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> from langchain_core.messages import AIMessage
        >>> model = ReferencesChatModel(inner=GenericFakeChatModel(messages=iter([AIMessage("Hi[1](id=9)")])))
        >>> model.invoke("hello").text
        'Hi'
    """

    inner: Any
    documents: list[Document] = Field(default_factory=list)
    style: Any = None
    source_key: Any = None
    syntaxes: tuple[Any, ...] = ("id",)
    max_holdback: int = DEFAULT_MAX_HOLDBACK
    # True, False or a `PairScorer` (a protocol: pydantic cannot check it, `passage_scorer` does).
    passages: Any = True
    consulted_ids: tuple[int, ...] | None = None
    unshown_ids: tuple[int, ...] = ()
    # Set by the middleware: the answer is stamped with `text_check` as it leaves this model, so that an
    # edit of it by a middleware listed after (inside) ReferencesMiddleware is told too.
    stamp_text: bool = False
    model_name: str | None = None
    instructions: str | None = None

    model_config = ConfigDict(extra="forbid")

    if TYPE_CHECKING:
        # The options as type checkers see them (pydantic's own ``__init__`` takes ``**data: Any``).
        def __init__(
            self,
            *,
            inner: Runnable[Any, Any] | None,
            documents: Sequence[Document] = ...,
            style: ReferenceStyle | None = None,
            source_key: SourceKey | None = None,
            syntaxes: SyntaxName | MarkerSyntax | Sequence[SyntaxName | MarkerSyntax] = ...,
            max_holdback: int = ...,
            passages: bool | PairScorer = True,
            consulted_ids: Collection[int] | None = None,
            unshown_ids: Collection[int] = (),
            stamp_text: bool = False,
            model_name: str | None = None,
            instructions: str | None = None,
            profile: ModelProfile | None = None,
            cited_text: bool | PairScorer | None = None,
            # Every chat model's own (`BaseChatModel`'s fields).
            name: str | None = None,
            verbose: bool = ...,
            callbacks: Callbacks = None,
            tags: list[str] | None = None,
            metadata: dict[str, Any] | None = None,
            custom_get_token_ids: Callable[[str], list[int]] | None = None,
            rate_limiter: BaseRateLimiter | None = None,
            disable_streaming: bool | Literal["tool_calling"] = False,
            output_version: str | None = None,
        ) -> None: ...

    def __init__(self, **options: Any) -> None:  # type: ignore[no-redef]
        if "cited_text" in options and options["cited_text"] is None:
            del options["cited_text"]  # not given, as the middleware reads it
        if "cited_text" in options:
            if "passages" in options:
                msg = "ReferencesChatModel takes passages=... (cited_text is its old name), not both"
                raise TypeError(msg)
            warnings.warn(cited_text_renamed("ReferencesChatModel"), DeprecationWarning, stacklevel=2)
            options["passages"] = options.pop("cited_text")
        if options.get("cache") is False:
            del options["cache"]  # the wrapper's own, always (a copy rebuilt from its fields gives it)
        ignored = sorted(options.keys() & _INNER_MODEL_PARAMETERS)
        if ignored:
            # LangChain builds every chat model with these (its standard tests do): taken, never silently.
            warnings.warn(
                f"ReferencesChatModel ignores {', '.join(ignored)}: the inner model's parameters, set them on it",
                UserWarning,
                stacklevel=2,
            )
            for name in ignored:
                del options[name]
        super().__init__(**options)

    @field_validator("inner", mode="before")
    @classmethod
    def _checked_inner(cls, inner: Any) -> Any:
        # None: a wrapper that only rewrites whole messages (`rewrite_message`); else a model, checked when given.
        if isinstance(inner, str):
            msg = f"inner must be a chat model, not its name: build it with init_chat_model({inner!r})"
            raise TypeError(msg)
        if inner is not None and not isinstance(inner, Runnable):
            msg = f"inner must be a chat model (a LangChain BaseChatModel), got {type(inner).__name__}"
            raise TypeError(msg)
        return inner

    @field_validator("documents", mode="before")
    @classmethod
    def _checked_documents(cls, documents: Any) -> Any:
        # One document alone (or a text) would be read field by field: pydantic's error says so in 13 lines.
        if isinstance(documents, (Document, str, dict)):
            msg = f"documents must be a list of documents, got one {type(documents).__name__}: write [it]"
            raise TypeError(msg)
        return documents

    @field_validator("passages")
    @classmethod
    def _checked_passages(cls, passages: Any) -> Any:
        passage_scorer(passages)  # a wrong value fails here, not at the end of the first answer
        return passages

    @field_validator("max_holdback", mode="before")
    @classmethod
    def _checked_max_holdback(cls, max_holdback: Any) -> int:
        # Before pydantic's own: True or 2.5 is the error the other entry points give, not 1 or a pydantic error.
        return checked_max_holdback(max_holdback)

    @field_validator("syntaxes", mode="before")
    @classmethod
    def _resolved_syntaxes(cls, syntaxes: Any) -> tuple[Any, ...]:
        # Resolved (and checked) when given, as manage_references and the middleware do: one name alone is one.
        return marker_syntaxes(syntaxes)

    @model_validator(mode="after")
    def _checked_options(self) -> ReferencesChatModel:
        # The check manage_references and the middleware make when given a style: here, not mid-answer.
        choose_style(self.style, self.source_key)
        return self

    @model_validator(mode="after")
    def _inner_model_labels(self) -> ReferencesChatModel:
        # A model call's one run is the wrapper's: it carries the inner model's own tags and metadata, as
        # the model's run would (those of the bindings around it come with each call: `_passed_on`).
        # Merged, so that validating again (a copy rebuilt by LangChain) changes nothing.
        tags, metadata = _model_labels(self.inner)
        if tags:
            self.tags = list(dict.fromkeys([*tags, *(self.tags or ())]))
        if metadata:
            self.metadata = {**metadata, **(self.metadata or {})}
        return self

    @model_validator(mode="after")
    def _own_cache_off(self) -> ReferencesChatModel:
        # LangChain's cache of the wrapper's own answers would keep them rewritten (for one style and
        # one set of documents): the inner model's answers are cached instead (`_InnerCache`).
        if self.cache is not False:
            self.cache = False
        return self

    @property
    @override
    def _llm_type(self) -> str:
        return "langchain-refs"

    @override
    def __repr_args__(self) -> Any:
        # Tracers record every run's model by its repr: keep it short, not
        # every document of the thread and the inner model's whole state.
        return [("inner", type(self.inner).__name__), ("documents", len(self.documents))]

    @property
    @override
    def _identifying_params(self) -> dict[str, Any]:
        # The inner model's own parameters; its repr only when it has none (made only then: a repr can be long).
        inner = getattr(self.inner, "_identifying_params", _MISSING)
        return {"inner": repr(self.inner) if inner is _MISSING else inner, "documents": len(self.documents)}

    # Token callbacks get text: LangChain passes them ``chunk.content``, here standard blocks.

    def _call_config(self, config: RunnableConfig | None) -> RunnableConfig:
        """The config of a call: the inner model's bindings' config passed on, token callbacks given text."""
        if self.inner is None:
            msg = "ReferencesChatModel(inner=None) has no model to call: give it inner=<your chat model>"
            raise ValueError(msg)
        return _text_token_config(_passed_on(self.inner, config))

    @override
    def invoke(
        self, input: Any, config: RunnableConfig | None = None, *, stop: list[str] | None = None, **kwargs: Any
    ) -> AIMessage:
        return super().invoke(input, self._call_config(config), stop=stop, **kwargs)

    @override
    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, *, stop: list[str] | None = None, **kwargs: Any
    ) -> AIMessage:
        return await super().ainvoke(input, self._call_config(config), stop=stop, **kwargs)

    @override
    def stream(
        self, input: Any, config: RunnableConfig | None = None, *, stop: list[str] | None = None, **kwargs: Any
    ) -> Iterator[AIMessageChunk]:
        return super().stream(input, self._call_config(config), stop=stop, **kwargs)

    @override
    def astream(
        self, input: Any, config: RunnableConfig | None = None, *, stop: list[str] | None = None, **kwargs: Any
    ) -> AsyncIterator[AIMessageChunk]:
        return super().astream(input, self._call_config(config), stop=stop, **kwargs)

    @override
    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        """The inner model's name (``ChatOpenAI``...): traces show the model call under the model's name.

        Example:
            >>> from langchain_core.language_models import GenericFakeChatModel
            >>> ReferencesChatModel(inner=GenericFakeChatModel(messages=iter([]))).get_name()
            'GenericFakeChatModel'
        """
        model, _ = _inner_chat_model(self.inner)
        if name is None and self.name is None and model is not None:
            name = model.get_name()
        return super().get_name(suffix, name=name)

    @override
    def _get_invocation_params(self, stop: list[str] | None = None, **kwargs: Any) -> dict[str, Any]:
        """The run's parameters, with the options bound on the inner model (tools, tool choice, stop) in.

        Tools are bound on the inner model (`bind_tools`): a trace shows
        them among the call's parameters, as it shows the bare model's.

        Example:
            >>> from langchain_core.language_models import GenericFakeChatModel
            >>> inner = GenericFakeChatModel(messages=iter([])).bind(stop=["\\n"], tool_choice="auto")
            >>> params = ReferencesChatModel(inner=inner)._get_invocation_params()
            >>> params["stop"], params["tool_choice"]
            (['\\n'], 'auto')
        """
        call = _call_options(_unbound(self.inner)[1], stop, kwargs)
        return super()._get_invocation_params(**call)

    @override
    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        """The inner model's provider and model name: the one run of a model call is traced as that model's."""
        method, bound = _inner_method(self.inner, "_get_ls_params")
        if method is None:
            return super()._get_ls_params(stop=stop, **kwargs)
        # The call's stop, else the one bound (``model.bind(stop=[...])``), as the model's own call gets it.
        params: LangSmithParams = method(**_call_options(bound, stop, kwargs))
        return params

    @override
    def get_token_ids(self, text: str) -> list[int]:
        """The inner model's tokens of ``text`` (unless ``custom_get_token_ids`` is given).

        LangChain's default for a model without a tokenizer of its own loads
        GPT-2's from the Hugging Face hub: a wrapper must count as the model it
        wraps does (``ContextEditingMiddleware(token_count_method="model")``
        and any budget counted on the agent's model).

        Example:
            >>> from langchain_core.language_models import GenericFakeChatModel
            >>> class Words(GenericFakeChatModel):
            ...     def get_token_ids(self, text): return [len(w) for w in text.split()]
            >>> ReferencesChatModel(inner=Words(messages=iter([]))).get_token_ids("Paris is big")
            [5, 2, 3]
        """
        method, _ = _inner_method(self.inner, "get_token_ids")
        if method is None or self.custom_get_token_ids is not None:
            return super().get_token_ids(text)
        count: list[int] = method(text)
        return count

    @override
    def get_num_tokens(self, text: str) -> int:
        """The inner model's count of ``text``'s tokens (see `get_token_ids`).

        Example:
            >>> from langchain_core.language_models import GenericFakeChatModel
            >>> class Fixed(GenericFakeChatModel):
            ...     def get_num_tokens(self, text): return 7
            >>> ReferencesChatModel(inner=Fixed(messages=iter([]))).get_num_tokens("Paris")
            7
        """
        method, _ = _inner_method(self.inner, "get_num_tokens")
        if method is None or self.custom_get_token_ids is not None:
            return super().get_num_tokens(text)
        count: int = method(text)
        return count

    @override
    def get_num_tokens_from_messages(self, messages: list[BaseMessage], tools: Sequence[Any] | None = None) -> int:
        """The inner model's count of the messages as it reads them (the annotations it never sees left out).

        Example:
            >>> from langchain_core.language_models import GenericFakeChatModel
            >>> from langchain_core.messages import HumanMessage
            >>> class Counted(GenericFakeChatModel):
            ...     def get_num_tokens_from_messages(self, messages, tools=None): return 10 * len(messages)
            >>> ReferencesChatModel(inner=Counted(messages=iter([]))).get_num_tokens_from_messages([HumanMessage("hi")])
            10
        """
        method, _ = _inner_method(self.inner, "get_num_tokens_from_messages")
        if method is None or self.custom_get_token_ids is not None:
            return super().get_num_tokens_from_messages(messages, tools)
        count: int = method(unannotated(list(messages)), tools)
        return count

    @override
    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, AIMessage]:
        """A binding of a copy whose inner model has ``tools`` bound (as ``create_agent`` asks).

        The inner model converts the tools to its provider's form; the result
        is a `RunnableBinding`, as every chat model's ``bind_tools`` returns.

        Example:
            >>> from langchain_core.language_models import GenericFakeChatModel
            >>> class Tools(GenericFakeChatModel):
            ...     def bind_tools(self, tools, **kwargs): return self
            >>> ReferencesChatModel(inner=Tools(messages=iter([]))).bind_tools([]).bound._llm_type
            'langchain-refs'
        """
        return self.model_copy(update={"inner": self.inner.bind_tools(tools, **kwargs)}).bind()

    @override
    def with_structured_output(
        self, schema: dict[str, Any] | type, *, include_raw: bool = False, **kwargs: Any
    ) -> Runnable[Any, Any]:
        """The inner model's structured output, its options (``method``, ``strict``...) as given.

        A structured answer is never cited nor rewritten (`ReferencesMiddleware`
        leaves structured calls alone), and it needs no citation rule: a
        middleware that asks the agent's model for one (LangChain's
        ``LLMToolSelectorMiddleware``) gets the provider's own way of giving it.

        Example:
            >>> from langchain_core.language_models import GenericFakeChatModel
            >>> from langchain_core.runnables import RunnableLambda
            >>> class Structured(GenericFakeChatModel):
            ...     def with_structured_output(self, schema, *, include_raw=False, **kwargs):
            ...         return RunnableLambda(lambda _: kwargs)
            >>> inner = Structured(messages=iter([]))
            >>> ReferencesChatModel(inner=inner).with_structured_output({}, method="json_schema").invoke("?")
            {'method': 'json_schema'}
        """
        structured: Runnable[Any, Any] = self.inner.with_structured_output(schema, include_raw=include_raw, **kwargs)
        return structured

    def _start(self, run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None) -> ChunkRewriter:
        chosen = choose_style(self.style, self.source_key)
        run_id = run_manager.run_id if run_manager is not None else uuid.uuid4()
        session = ReferenceSession(
            self.documents,
            source_key=chosen.source_of,
            style=chosen.style,
            syntaxes=marker_syntaxes(self.syntaxes),
            max_holdback=self.max_holdback,
            answer_id=run_id.hex[-8:],
            passages=self.passages,
            consulted_positions=self.consulted_ids,
            unshown_positions=self.unshown_ids,
        )
        return ChunkRewriter(
            session,
            documents=self.documents,
            model_text_key=MODEL_TEXT_KEY,
            model_text_blocks_key=MODEL_TEXT_BLOCKS_KEY,
        )

    @override
    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        messages = self._prompted(unannotated(messages))
        cached = _InnerCache.of(self.inner, messages, stop, kwargs)
        served = cached.lookup() if cached is not None else None
        if served is not None:
            answer, first_chunk = self._served_start(served, run_manager)
            yield first_chunk
            last = answer.finish()
            if last is not None:
                yield ChatGenerationChunk(message=last)
            return
        raw: list[ChatGenerationChunk] = []
        answer = self._start(run_manager)
        first = True
        for read in self._inner_stream(messages, stop, kwargs):
            if cached is not None:
                raw.append(_raw_copy(read))
            generation = (
                answer.generation_owned(read) if isinstance(read, ChatGenerationChunk) else answer.generation_v1(read)
            )
            yield self._first(generation) if first else generation
            first = False
        if cached is not None and raw:
            cached.update(raw)
        last = answer.finish()
        # None: the inner model streamed nothing, and LangChain says so as for the model alone.
        if last is not None:
            generation = ChatGenerationChunk(message=last)
            yield self._first(generation) if first else generation

    @override
    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        messages = self._prompted(unannotated(messages))
        cached = _InnerCache.of(self.inner, messages, stop, kwargs)
        served = await cached.alookup() if cached is not None else None
        if served is not None:
            answer, first_chunk = self._served_start(served, run_manager)
            yield first_chunk
            # A passage scorer of the caller's may call a model: off the event loop.
            last = await answer.afinish()
            if last is not None:
                yield ChatGenerationChunk(message=last)
            return
        raw: list[ChatGenerationChunk] = []
        answer = self._start(run_manager)
        first = True
        # Closed with this stream (a client that leaves early), not when the garbage collector gets to it.
        async with aclosing(self._ainner_stream(messages, stop, kwargs)) as reads:
            async for read in reads:
                if cached is not None:
                    raw.append(_raw_copy(read))
                generation = (
                    answer.generation_owned(read)
                    if isinstance(read, ChatGenerationChunk)
                    else answer.generation_v1(read)
                )
                yield self._first(generation) if first else generation
                first = False
        if cached is not None and raw:
            await cached.aupdate(raw)
        # A passage scorer of the caller's may call a model: off the event loop.
        last = await answer.afinish()
        # None: the inner model streamed nothing, and LangChain says so as for the model alone.
        if last is not None:
            generation = ChatGenerationChunk(message=last)
            yield self._first(generation) if first else generation

    def _prompted(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        """``messages`` with `instructions` in their system prompt, when there are documents and it has no rule."""
        if not self.instructions or not self.documents:
            return messages
        first = messages[0] if messages else None
        system = first if isinstance(first, SystemMessage) else None
        if system is not None and has_citation_rule(system.text, self.instructions, self.syntaxes):
            return messages  # a rule of its own, or this one, added by the middleware
        rest = messages[1:] if system is not None else messages
        return [with_instructions(system, self.instructions), *rest]

    def _served_start(
        self, served: AIMessage, run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None
    ) -> tuple[ChunkRewriter, _AnswerStart]:
        """An answer the inner model's cache served, streamed as two chunks: its rewriter, and its text rewritten.

        The rewriter's ``finish`` (or ``afinish``) gives the second: the list of sources.
        """
        answer, rewritten, _ = self._whole_start(served, run_manager)
        return answer, self._first(ChatGenerationChunk(message=rewritten))

    def _first(self, generation: ChatGenerationChunk) -> _AnswerStart:
        """The answer's first chunk, which adds the answer's chunks up (and stamps their sum, with ``stamp_text``)."""
        return (_StampedAnswerStart if self.stamp_text else _AnswerStart).of(generation)

    def _inner_stream(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> Iterator[ChatGenerationChunk | AIMessageChunk]:
        """What the inner model streams, with no run of its own (see `_direct_call`).

        Read directly, its generations: the wrapper is their one reader and
        owns them, as LangChain's ``stream`` owns what ``_stream`` yields
        (`ChunkRewriter.generation_owned`). Otherwise the chunks of its ``stream``.
        """
        direct = _direct_call(self.inner, stop, kwargs)
        if direct is not None:
            model, call = direct
            if model.rate_limiter:
                model.rate_limiter.acquire(blocking=True)
            yield from model._stream(messages, **call)
            return
        chunks = _without_handlers(self.inner).stream(messages, _untraced(), **_with_stop(stop, kwargs))
        # The inner run is set up on its first step: detached, so that no handler (LangGraph's
        # messages stream, a usage counter, a tracer) sees the call a second time.
        with _detached():
            first = next(chunks, None)
        if first is not None:
            yield _as_chunk(first)
            for chunk in chunks:
                yield _as_chunk(chunk)

    async def _ainner_stream(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> AsyncIterator[ChatGenerationChunk | AIMessageChunk]:
        """The async twin of `_inner_stream`."""
        direct = _direct_call(self.inner, stop, kwargs)
        if direct is not None:
            model, call = direct
            if model.rate_limiter:
                await model.rate_limiter.aacquire(blocking=True)
            async with aclosing(model._astream(messages, **call)) as generations:
                async for generation in generations:
                    yield generation
            return
        called = _without_handlers(self.inner)
        async with aclosing(called.astream(messages, _untraced(), **_with_stop(stop, kwargs))) as chunks:
            with _detached():
                first = await anext(chunks, None)
            if first is not None:
                yield _as_chunk(first)
                async for chunk in chunks:
                    yield _as_chunk(chunk)

    @override
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with _detached():
            inner = _without_handlers(self.inner).invoke(
                self._prompted(unannotated(messages)), _untraced(), **_with_stop(stop, kwargs)
            )
        return ChatResult(generations=[ChatGeneration(message=self._rewrite_whole(inner, run_manager))])

    @override
    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with _detached():
            called = _without_handlers(self.inner)
            inner = await called.ainvoke(self._prompted(unannotated(messages)), _untraced(), **_with_stop(stop, kwargs))
        answer, rewritten, added = self._whole_start(inner, run_manager)
        # A passage scorer of the caller's may call a model: off the event loop.
        message = self._whole_end(rewritten, await answer.afinish(), added, inner)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _rewrite_whole(
        self, message: BaseMessage, run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None
    ) -> AIMessage:
        answer, rewritten, added = self._whole_start(message, run_manager)
        return self._whole_end(rewritten, answer.finish(), added, message)

    def _whole_start(
        self, message: BaseMessage, run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None
    ) -> tuple[ChunkRewriter, Any, frozenset[int]]:
        """A whole answer's rewriting begun: its rewriter, its text rewritten, the indices given (`whole_answer`)."""
        answer = self._start(run_manager)
        if getattr(message, "usage_metadata", None) is not None:
            # Its usage is put back as it is (`_whole_end`): LangChain marks an answer its cache
            # served with usage ``{"total_cost": 0}``, set unchecked, which a new chunk's checks refuse.
            message = message.model_copy(update={"usage_metadata": None})
        ready, added = whole_answer(message, standard=True)
        return answer, answer.on_chunk_v1(_as_chunk(ready)), added

    def _whole_end(self, rewritten: Any, last: Any, added: frozenset[int], message: BaseMessage) -> AIMessage:
        """The whole answer: its rewritten text and its last chunk (the list of sources), with ``message``'s usage."""
        merged: AIMessage = without_added_indices(merge_chunks([rewritten, last]), added)
        usage = getattr(message, "usage_metadata", None)
        if usage is not None:
            merged = merged.model_copy(update={"usage_metadata": usage})
        answer: AIMessage = stamped(merged) if self.stamp_text else merged
        return answer


def has_citation_rule(prompt: str, instructions: str, syntaxes: Sequence[MarkerSyntax]) -> bool:
    """Whether a system prompt asks for citations already: it holds ``instructions``, or ``(id=`` the id syntax reads.

    Example:
        >>> from langchain_refs.streaming import marker_syntaxes
        >>> has_citation_rule("Cite as [n](id=k).", "Cite.", marker_syntaxes("id"))
        True
        >>> has_citation_rule("Cite as [n](id=k).", "Cite as [k].", marker_syntaxes("bracket"))
        False
    """
    return instructions in prompt or ("(id=" in prompt and any(built_in_syntax(s) == "id" for s in syntaxes))


def with_instructions(system: SystemMessage | None, instructions: str) -> SystemMessage:
    """``system`` with ``instructions`` after its text (a new system message when there is none).

    Example:
        >>> with_instructions(SystemMessage("Be brief."), "Cite.").content
        'Be brief.\\n\\nCite.'
    """
    if system is None:
        return SystemMessage(instructions)
    if isinstance(system.content, str):
        text = f"{system.content}\n\n{instructions}" if system.content else instructions
        return system.model_copy(update={"content": text})
    # Block content (e.g. with cache-control marks): add a block, keep the others as they are.
    return system.model_copy(update={"content": [*system.content, {"type": "text", "text": instructions}]})


def standard_blocks(message: AIMessage) -> AIMessage:
    """``message`` with its provider-native blocks in LangChain's standard form when its content is marked ``v1``.

    The rewritten answer marks its content as standard (``output_version``
    ``"v1"``) so that its text blocks keep their annotations; its other
    blocks (a provider's ``thinking``, server tool results...) must then be
    standard too (`standard_content`): the rewriting puts them so, and an
    answer rewritten by an older release is put so here.

    Example:
        >>> message = AIMessage(
        ...     content=[{"type": "thinking", "thinking": "Hm.", "signature": "s"}, {"type": "text", "text": "Hi"}],
        ...     response_metadata={"output_version": "v1", "model_provider": "anthropic"})
        >>> [b["type"] for b in standard_blocks(message).content]
        ['reasoning', 'text']
    """
    metadata = message.response_metadata
    if metadata.get("output_version") != "v1" or not isinstance(message.content, list):
        return message
    content = standard_content(message.content, message)
    return message if content is None else message.model_copy(update={"content": content})


def rewrite_message(message: AIMessage, model: ReferencesChatModel) -> AIMessage:
    """``message`` (a whole answer) rewritten as ``model`` would have streamed it.

    Example:
        >>> from langchain_core.documents import Document
        >>> from langchain_refs.streaming import TextReferenceStyle
        >>> model = ReferencesChatModel(inner=None, documents=[Document("x", metadata={"source": "a"})],
        ...                             style=TextReferenceStyle())
        >>> rewrite_message(AIMessage("Yes[1](id=1)."), model).text
        'Yes[1].\\n\\n- [1] a\\n'
    """
    return model._rewrite_whole(message, None)
