"""`ReferencesChatModel`: a chat model whose answers come out with citations rewritten.

It wraps the model that writes the answer. Each call (``invoke``, ``stream``,
``ainvoke``, ``astream``; with or without tools bound) runs the inner model's
chunks through one `ReferenceSession` and yields rewritten chunks, so every
reader of the wrapper's run (LangGraph's ``stream_mode="messages"``,
``astream_events``, ``stream_events(version="v3")``, the final message) gets
rewritten text. The inner model runs without the callback handlers that
stream tokens to clients: its raw tokens reach tracers (LangSmith) but no
stream.

The chunks it yields (the streaming wing's `ChunkRewriter` in its ``"v1"``
shape makes them) carry text as standard ``{"type": "text", "index": 0}``
blocks (one text block per answer once merged; tool-call chunk indices move
up by one so they never share the text's index); the last chunk carries the
held tail, the list of sources, the `Citation` annotations of the text block
and, in ``response_metadata``: ``"references"`` (`AnswerReferences` as a
dict), ``"citations"`` (the annotations, offsets into the whole text) and
`MODEL_TEXT_KEY` (what the model wrote, markers and all, for the next turn).
Read ``chunk.text`` or ``chunk.content_blocks``, not ``chunk.content``.

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

import json
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, Final

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    BaseCallbackManager,
    CallbackManager,
    CallbackManagerForLLMRun,
)
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableConfig, ensure_config
from pydantic import Field
from typing_extensions import override

from langchain_refs.streaming import (
    DEFAULT_MAX_HOLDBACK,
    ChunkRewriter,
    MarkdownReferenceStyle,
    ReferenceSession,
    marker_syntaxes,
    source_key_function,
)

__all__ = ["MODEL_TEXT_KEY", "ReferencesChatModel", "rewrite_message"]

MODEL_TEXT_KEY: Final = "langchain_refs_model_text"
"""``response_metadata`` key of a rewritten message holding what the model wrote (raw markers)."""


def _is_stream_consumer(handler: Any) -> bool:
    # LangGraph's messages handlers, astream_events and astream_log all tap
    # the output iterators (langchain-core's _StreamingCallbackHandler protocol).
    return callable(getattr(handler, "tap_output_iter", None)) and callable(getattr(handler, "tap_output_aiter", None))


def _quiet_config(run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None) -> RunnableConfig:
    """The config for the inner model: this run's callbacks minus those that stream tokens to clients.

    Tracers still see the inner run (raw text, by design); stream readers see
    only the wrapper's rewritten run.
    """
    parent: uuid.UUID | None
    if run_manager is not None:
        handlers = list(run_manager.inheritable_handlers)
        parent = run_manager.run_id
        tags = list(run_manager.inheritable_tags)
        metadata = dict(run_manager.inheritable_metadata)
    else:
        # langchain-core's invoke-as-stream path calls _stream without a run
        # manager: the callbacks are then those of the caller's config.
        callbacks = ensure_config().get("callbacks")
        if isinstance(callbacks, BaseCallbackManager):
            handlers = list(callbacks.inheritable_handlers)
            parent = callbacks.parent_run_id
            tags = list(callbacks.inheritable_tags)
            metadata = dict(callbacks.inheritable_metadata)
        else:
            handlers, parent, tags, metadata = list(callbacks or []), None, [], {}
    kept = [h for h in handlers if not _is_stream_consumer(h)]
    manager = CallbackManager(
        handlers=kept,
        inheritable_handlers=kept,
        parent_run_id=parent,
        tags=tags,
        inheritable_tags=tags,
        metadata=metadata,
        inheritable_metadata=metadata,
    )
    return {"callbacks": manager}


def _with_stop(stop: list[str] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    # Only chat models take ``stop``: pass it on only when there is one.
    return kwargs if stop is None else {**kwargs, "stop": stop}


def _as_chunk(message: BaseMessage) -> AIMessageChunk:
    if isinstance(message, AIMessageChunk):
        return message
    if isinstance(message, AIMessage):
        return AIMessageChunk(
            **message.model_dump(exclude={"type", "tool_calls", "invalid_tool_calls"}),
            tool_call_chunks=[
                {"name": c["name"], "args": _json(c["args"]), "id": c.get("id"), "index": i, "type": "tool_call_chunk"}
                for i, c in enumerate(message.tool_calls)
            ],
        )
    msg = f"ReferencesChatModel wraps chat models, which answer with AI messages; got {type(message).__name__}"
    raise TypeError(msg)


def _json(args: Any) -> str:
    return json.dumps(args, ensure_ascii=False)


def _merged(chunks: Sequence[AIMessageChunk]) -> AIMessage:
    message = chunks[0]
    for chunk in chunks[1:]:
        message = message + chunk
    return AIMessage(**message.model_dump(exclude={"type", "tool_call_chunks", "chunk_position"}))


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
        max_holdback: the most characters held back for a partial marker.
        cited_text: find, for each citation, the sentence of the cited
            document that best supports it (``cited_text`` of the
            annotation); off: the start of the document.

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
    cited_text: bool = True
    model_name: str | None = None

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
        return {"inner": getattr(self.inner, "_identifying_params", repr(self.inner)), "documents": len(self.documents)}

    @override
    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ReferencesChatModel:
        """A copy whose inner model has ``tools`` bound (as ``create_agent`` asks).

        Example:
            >>> from langchain_core.language_models import GenericFakeChatModel
            >>> class Tools(GenericFakeChatModel):
            ...     def bind_tools(self, tools, **kwargs): return self
            >>> ReferencesChatModel(inner=Tools(messages=iter([]))).bind_tools([])._llm_type
            'langchain-refs'
        """
        return self.model_copy(update={"inner": self.inner.bind_tools(tools, **kwargs)})

    def _start(self, run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None) -> ChunkRewriter:
        style = self.style if self.style is not None else MarkdownReferenceStyle()
        run_id = run_manager.run_id if run_manager is not None else uuid.uuid4()
        session = ReferenceSession(
            self.documents,
            source_key=style.source_of if self.source_key is None else source_key_function(self.source_key),
            style=style,
            syntaxes=marker_syntaxes(self.syntaxes),
            max_holdback=self.max_holdback,
            answer_id=run_id.hex[-8:],
            passages=self.cited_text,
        )
        return ChunkRewriter(session, documents=self.documents, model_text_key=MODEL_TEXT_KEY)

    @override
    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        answer = self._start(run_manager)
        for chunk in self.inner.stream(messages, _quiet_config(run_manager), **_with_stop(stop, kwargs)):
            yield ChatGenerationChunk(message=answer.on_chunk_v1(_as_chunk(chunk)))
        yield ChatGenerationChunk(message=answer.finish())

    @override
    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        answer = self._start(run_manager)
        async for chunk in self.inner.astream(messages, _quiet_config(run_manager), **_with_stop(stop, kwargs)):
            yield ChatGenerationChunk(message=answer.on_chunk_v1(_as_chunk(chunk)))
        yield ChatGenerationChunk(message=answer.finish())

    @override
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        inner = self.inner.invoke(messages, _quiet_config(run_manager), **_with_stop(stop, kwargs))
        return ChatResult(generations=[ChatGeneration(message=self._rewrite_whole(inner, run_manager))])

    @override
    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        inner = await self.inner.ainvoke(messages, _quiet_config(run_manager), **_with_stop(stop, kwargs))
        return ChatResult(generations=[ChatGeneration(message=self._rewrite_whole(inner, run_manager))])

    def _rewrite_whole(
        self, message: BaseMessage, run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None
    ) -> AIMessage:
        answer = self._start(run_manager)
        return _merged([answer.on_chunk_v1(_as_chunk(message)), answer.finish()])


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
