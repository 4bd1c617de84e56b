"""`manage_references`: the LangChain Runnable around a `ReferenceSession`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Final, Literal

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
from langchain_core.documents.base import BaseMedia
from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.runnables import Runnable, RunnableBinding, RunnableConfig
from typing_extensions import override

from langchain_refs._inputs import documents_from
from langchain_refs.streaming._parser import (
    BRACKET_SYNTAX,
    DAGGER_SYNTAX,
    DEFAULT_MAX_HOLDBACK,
    ID_SYNTAX,
    MarkerSyntax,
)
from langchain_refs.streaming._plumbing import astream_run, stream_run
from langchain_refs.streaming._references import AnswerReferences
from langchain_refs.streaming._session import CitationVerifier, ReferenceSession, Verifier
from langchain_refs.streaming._styles import MarkdownReferenceStyle, ReferenceStyle, source_key_function

__all__ = ["REFERENCES_EVENT", "CitationMiddleware", "ReferencesCollector", "manage_references"]

REFERENCES_EVENT: Final = "langchain_refs.references"
"""Name of the custom callback event that carries an answer's references.

Its data is ``AnswerReferences.to_dict()``, made once per answer: the very
dict the last message chunk carries as ``response_metadata["references"]``
(so read it; copy it before changing it).
"""

_SYNTAXES: Final = {s.name: s for s in (ID_SYNTAX, BRACKET_SYNTAX, DAGGER_SYNTAX)}

SyntaxName = Literal["id", "bracket", "dagger"]


def _as_chunk(message: Any) -> AIMessageChunk:
    if isinstance(message, AIMessageChunk):
        return message
    if isinstance(message, AIMessage):
        return AIMessageChunk(**message.model_dump(exclude={"type"}))
    msg = f"manage_references() wraps runnables that produce str or AI messages; got {type(message).__name__}"
    raise TypeError(msg)


# langchain-core < 1.0 has no chunk_position.
_HAS_CHUNK_POSITION: Final = "chunk_position" in AIMessageChunk.model_fields


class _AnswerRewrite:
    """Maps the inner runnable's chunks to rewritten chunks for one call.

    Every message chunk in gives exactly one chunk out (its id, metadata,
    usage and tool-call chunks untouched; the very same object when its text
    needs no change), then `finish` adds one last chunk with the held tail,
    the list of sources and the references as data.
    """

    __slots__ = (
        "_data",
        "_list_content",
        "_message_id",
        "_output",
        "_session",
        "_str_output",
        "_track_output",
        "_verify",
        "_wants_id",
    )

    def __init__(self, session: ReferenceSession, *, track_output: bool, verify: Verifier | None = None) -> None:
        self._session = session
        self._verify = verify
        self._str_output: bool | None = None
        self._message_id: str | None = None
        self._wants_id = True
        self._list_content: dict[str, Any] | None = None
        self._track_output = track_output
        self._output: list[str] = []
        self._data: dict[str, Any] | None = None

    def on_chunk(self, chunk: Any) -> Any:
        """The chunk to pass on for ``chunk``, or None when there is none."""
        # `_feed` is written out inline on the two hot paths below: one call less per chunk.
        if type(chunk) is not AIMessageChunk:
            if isinstance(chunk, str):
                self._str_output = True
                out = self._session.feed(chunk)
                if self._track_output:
                    self._output.append(out)
                return out or None
            chunk = _as_chunk(chunk)
        self._str_output = False
        if self._wants_id and chunk.id is not None:
            self._message_id = chunk.id
            # Prefer the provider's id over the ones LangChain makes up.
            self._wants_id = chunk.id.startswith("lc_")
        content = chunk.content
        update: dict[str, Any] | None = None
        if type(content) is str:
            out = self._session.feed(content)
            if self._track_output:
                self._output.append(out)
            if out is not content:
                update = {"content": out}
        else:
            update = {"content": self._rewrite_blocks(content)}
        if _HAS_CHUNK_POSITION and chunk.chunk_position == "last":
            # The last chunk is the one `finish` adds.
            update = {**(update or {}), "chunk_position": None}
        return chunk if update is None else chunk.model_copy(update=update)

    def _feed(self, text: str) -> str:
        out = self._session.feed(text)
        if self._track_output:
            self._output.append(out)
        return out

    def _rewrite_blocks(self, blocks: list[Any]) -> list[Any]:
        rewritten: list[Any] = []
        for block in blocks:
            if isinstance(block, str):
                rewritten.append(self._feed(block))
                self._list_content = {}
            elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                rewritten.append({**block, "text": self._feed(block["text"])})
                self._list_content = {k: v for k, v in block.items() if k in ("type", "index")}
            else:
                rewritten.append(block)
        return rewritten

    def finish(self) -> Any:
        """The last chunk: held tail, list of sources, references as data."""
        tail = self._session.close(self._verify)
        if self._track_output:
            self._output.append(tail)
        if self._str_output is None:
            return None
        if self._str_output:
            return tail or None
        references = self._session.references
        # Made once: the references event reuses it.
        self._data = references.to_dict()
        content: str | list[Any] = tail
        if self._list_content is not None:
            content = [{**self._list_content, "text": tail}] if self._list_content else [tail]
        last = AIMessageChunk(
            content=content,
            id=self._message_id,
            response_metadata={
                "references": self._data,
                "citations": references.standard_citations(),
            },
        )
        if _HAS_CHUNK_POSITION:
            last.chunk_position = "last"
        return last

    async def afinish(self) -> Any:
        """`finish` for the async path: a verifier may call a model, so it runs off the event loop."""
        return await asyncio.to_thread(self.finish) if self._verify is not None else self.finish()

    def references_data(self) -> dict[str, Any]:
        """The answer's references as data (`AnswerReferences.to_dict`), made once after `finish`."""
        if self._data is None:
            self._data = self._session.references.to_dict()
        return self._data

    def traced_output(self) -> Any:
        """What the run reports as its output to tracers (None when untracked)."""
        if not self._track_output:
            return None
        text = "".join(self._output)
        return text if self._str_output else AIMessageChunk(content=text, id=self._message_id)


def _refuse_bare_model(runnable: Runnable[Any, Any]) -> None:
    """Refuse a bare model: it cannot take the dict of documents the middleware is called with."""
    model = runnable
    while isinstance(model, RunnableBinding):  # model.bind(...), model.with_config(...)
        model = model.bound
    if isinstance(model, BaseLanguageModel):
        msg = (
            f"manage_references() was given a bare {type(model).__name__}, but it is called with a dict that holds "
            f"the documents, which a model cannot take: wrap a prompt and the model, "
            f"e.g. manage_references(prompt | model) with prompt = ChatPromptTemplate.from_messages(...) "
            f"that formats the documents (see format_documents)"
        )
        raise TypeError(msg)


class CitationMiddleware(Runnable[dict[str, Any], Any]):
    """Rewrites the citation markers of a runnable's answer while it streams.

    Built by `manage_references`; see there for the options. The input is a
    dict holding the documents under ``documents_key``; it is passed on to the
    wrapped runnable unchanged.

    Example:
        >>> from langchain_core.documents import Document
        >>> from langchain_core.runnables import RunnableLambda
        >>> from langchain_refs import TextReferenceStyle
        >>> answer = RunnableLambda(lambda _: "Lyon[1](id=2) and Paris[2](id=1).")
        >>> docs = [Document("...", metadata={"source": "paris.html"}),
        ...         Document("...", metadata={"source": "lyon.html"})]
        >>> chain = manage_references(answer, style=TextReferenceStyle())
        >>> print(chain.invoke({"documents": docs}))
        Lyon[1] and Paris[2].
        <BLANKLINE>
        - [1] lyon.html
        - [2] paris.html
        <BLANKLINE>
    """

    def __init__(
        self,
        runnable: Runnable[Any, Any],
        *,
        documents_key: str = "documents",
        style: ReferenceStyle | None = None,
        source_key: str | Callable[[BaseMedia], Any] | None = None,
        syntaxes: Sequence[SyntaxName | MarkerSyntax] = ("id",),
        max_holdback: int = DEFAULT_MAX_HOLDBACK,
        keep_citations: bool = True,
        verifier: CitationVerifier | None = None,
        support_threshold: float = 0.5,
        name: str | None = None,
    ) -> None:
        _refuse_bare_model(runnable)
        self.bound = runnable
        self.documents_key = documents_key
        self.style = style if style is not None else MarkdownReferenceStyle()
        self.source_key = source_key
        resolved: list[MarkerSyntax] = []
        for syntax in syntaxes:
            if isinstance(syntax, MarkerSyntax):
                resolved.append(syntax)
            elif syntax in _SYNTAXES:
                resolved.append(_SYNTAXES[syntax])
            else:
                msg = f"unknown marker syntax {syntax!r}; choose from {sorted(_SYNTAXES)} or pass a MarkerSyntax"
                raise ValueError(msg)
        self.syntaxes = tuple(resolved)
        if max_holdback < 1:
            msg = f"max_holdback must be a positive number of characters, got {max_holdback!r}"
            raise ValueError(msg)
        self.max_holdback = max_holdback
        self.keep_citations = keep_citations
        if verifier is not None and not isinstance(verifier, CitationVerifier):
            msg = (
                f"verifier must score citations (have verify_citations(references, documents, threshold=...)); "
                f"got {type(verifier).__name__}: use a langchain_refs scorer such as LexicalScorer(), "
                f"or wrap a LangChain cross-encoder as CrossEncoderScorer(your_cross_encoder)"
            )
            raise TypeError(msg)
        self.verifier = verifier
        self.support_threshold = support_threshold
        self.name = name or "manage_references"

    def _verifier_for(self, input: Any) -> Verifier | None:
        if self.verifier is None:
            return None
        documents = documents_from(input, self.documents_key)
        verifier, threshold = self.verifier, self.support_threshold
        return lambda references: verifier.verify_citations(references, documents, threshold=threshold)

    def start_session(self, input: Any, *, answer_id: str = "") -> ReferenceSession:
        """A fresh session for one answer to ``input`` (checks the documents).

        Example:
            >>> from langchain_core.runnables import RunnableLambda
            >>> session = manage_references(RunnableLambda(str)).start_session({"documents": []})
            >>> session.feed("text")
            'text'
        """
        documents = documents_from(input, self.documents_key)
        # The style is shared and never changed: the session hands it this
        # answer's id and source function with each call.
        source_of = self.style.source_of if self.source_key is None else source_key_function(self.source_key)
        return ReferenceSession(
            documents,
            source_key=source_of,
            style=self.style,
            syntaxes=self.syntaxes,
            max_holdback=self.max_holdback,
            keep_citations=self.keep_citations,
            answer_id=answer_id,
        )

    def _rewrite_for(self, input: Any, run_manager: Any) -> _AnswerRewrite:
        """The per-call state: a session for this answer, named after the run."""
        session = self.start_session(input, answer_id=run_manager.run_id.hex[-8:])
        return _AnswerRewrite(session, track_output=bool(run_manager.handlers), verify=self._verifier_for(input))

    @override
    def invoke(self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return _merge(self.stream(input, config, **kwargs))

    @override
    async def ainvoke(self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return _merge([chunk async for chunk in self.astream(input, config, **kwargs)])

    @override
    def stream(self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[Any]:
        return stream_run(
            self,
            input,
            config,
            start=lambda run_manager: self._rewrite_for(input, run_manager),
            inner=lambda child_config: self.bound.stream(input, child_config, **kwargs),
            map_chunk=_AnswerRewrite.on_chunk,
            finish=_AnswerRewrite.finish,
            on_end=_dispatch_references,
        )

    @override
    def astream(self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        return astream_run(
            self,
            input,
            config,
            start=lambda run_manager: self._rewrite_for(input, run_manager),
            inner=lambda child_config: self.bound.astream(input, child_config, **kwargs),
            map_chunk=_AnswerRewrite.on_chunk,
            finish=_AnswerRewrite.afinish,
            on_end=_adispatch_references,
        )


def _dispatch_references(rewrite: _AnswerRewrite, config: RunnableConfig) -> None:
    dispatch_custom_event(REFERENCES_EVENT, rewrite.references_data(), config=config)


async def _adispatch_references(rewrite: _AnswerRewrite, config: RunnableConfig) -> None:
    await adispatch_custom_event(REFERENCES_EVENT, rewrite.references_data(), config=config)


def _merge(chunks: Iterator[Any] | list[Any]) -> Any:
    """Add streamed chunks up into the value `invoke` returns."""
    texts: list[str] = []
    message: AIMessageChunk | None = None
    for chunk in chunks:
        if isinstance(chunk, str):
            texts.append(chunk)
        else:
            message = chunk if message is None else message + chunk
    if message is not None:
        return AIMessage(**message.model_dump(exclude={"type", "tool_call_chunks", "chunk_position"}))
    return "".join(texts)


class ReferencesCollector(BaseCallbackHandler):
    """A callback handler that keeps the references of every answer it sees.

    Useful where the output is a ``str`` (after ``StrOutputParser``), which
    cannot carry metadata.

    Example:
        >>> from langchain_core.documents import Document
        >>> from langchain_core.runnables import RunnableLambda
        >>> collector = ReferencesCollector()
        >>> chain = manage_references(RunnableLambda(lambda _: "Yes[1](id=1)"))
        >>> _ = chain.invoke({"documents": [Document("x", metadata={"source": "a.pdf"})]},
        ...                  {"callbacks": [collector]})
        >>> [r.source for r in collector.answers[-1].references]
        ['a.pdf']
    """

    def __init__(self) -> None:
        self.answers: list[AnswerReferences] = []

    @override
    def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
        if name == REFERENCES_EVENT:
            self.answers.append(AnswerReferences.from_dict(data))


def manage_references(
    runnable: Runnable[Any, Any],
    *,
    documents_key: str = "documents",
    style: ReferenceStyle | None = None,
    source_key: str | Callable[[BaseMedia], Any] | None = None,
    syntaxes: Sequence[SyntaxName | MarkerSyntax] = ("id",),
    max_holdback: int = DEFAULT_MAX_HOLDBACK,
    keep_citations: bool = True,
    verifier: CitationVerifier | None = None,
    support_threshold: float = 0.5,
) -> CitationMiddleware:
    """Wrap ``runnable`` so its ``[n](id=k)`` citations are rewritten as it streams.

    Args:
        runnable: produces the answer: a chat model, ``prompt | model``, or a
            chain returning ``str``.
        documents_key: the input key holding the documents shown to the model.
        style: how citations and the list of sources are written
            (default: `MarkdownReferenceStyle`).
        source_key: the metadata key or callable giving a document's source;
            documents with the same source share a number (default: the
            style's ``source_id_key``, ``"source"``).
        syntaxes: marker syntaxes to recognise: ``"id"`` (``[n](id=k)``),
            ``"bracket"`` (``[k]``), ``"dagger"`` (``【k†source】``), or your own
            `MarkerSyntax`.
        max_holdback: the most characters held back while a marker may still
            be completing.
        keep_citations: keep every citation with its offsets in the
            references data (the default); off, only the numbered sources are
            kept, so memory stays flat however long the stream.
        verifier: a scorer from the grounding wing (e.g. `LexicalScorer`,
            `LLMJudgeScorer`; any other ``BaseCrossEncoder`` wrapped as
            ``CrossEncoderScorer(it)``) that checks, once the answer is complete, each
            citation's words against the documents it cites; the references
            data then carry ``support`` and ``supported``, and the built-in
            styles mark unsupported sources in the final list. Off by default;
            the text still streams with no added delay.
        support_threshold: the support a citation needs to count as supported.

    Example:
        >>> from langchain_core.documents import Document
        >>> from langchain_core.runnables import RunnableLambda
        >>> from langchain_refs import TextReferenceStyle
        >>> chain = manage_references(RunnableLambda(lambda _: "Yes[1](id=1)."),
        ...                           style=TextReferenceStyle())
        >>> chain.invoke({"documents": [Document("x", metadata={"source": "a.pdf"})]})
        'Yes[1].\\n\\n- [1] a.pdf\\n'
    """
    return CitationMiddleware(
        runnable,
        documents_key=documents_key,
        style=style,
        source_key=source_key,
        syntaxes=syntaxes,
        max_holdback=max_holdback,
        keep_citations=keep_citations,
        verifier=verifier,
        support_threshold=support_threshold,
    )
