"""`manage_references`: the LangChain Runnable around a `ReferenceSession`."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Final

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
from langchain_core.documents.base import BaseMedia
from langchain_core.language_models import BaseLanguageModel
from langchain_core.runnables import (
    Runnable,
    RunnableConfig,
    RunnableGenerator,
    RunnableSequence,
    RunnableWithFallbacks,
    ensure_config,
)
from langchain_core.runnables.base import RunnableBindingBase, RunnableLike, coerce_to_runnable
from langchain_core.runnables.configurable import DynamicRunnable, RunnableConfigurableAlternatives
from langchain_core.runnables.utils import ConfigurableFieldSpec
from typing_extensions import override

from langchain_refs._inputs import checked_documents_key, documents_from
from langchain_refs.streaming._chunks import (
    ChunkRewriter,
    OutputVersion,
    merge_chunks,
    whole_answer,
    without_added_indices,
)
from langchain_refs.streaming._parser import (
    DEFAULT_MAX_HOLDBACK,
    MarkerSyntax,
    SyntaxName,
    checked_max_holdback,
    marker_syntaxes,
)
from langchain_refs.streaming._passages import passage_scorer
from langchain_refs.streaming._plumbing import astream_run, in_graph_node, stream_run
from langchain_refs.streaming._protocols import (
    CitationVerifier,
    checked_flag,
    checked_support_threshold,
    scorer_lock,
    support_threshold_of,
)
from langchain_refs.streaming._references import AnswerReferences
from langchain_refs.streaming._session import ReferenceSession, Verifier
from langchain_refs.streaming._styles import ReferenceStyle, choose_style
from langchain_refs.text import PairScorer

__all__ = [
    "DEPRECATED_NAME",
    "REFERENCES_EVENT",
    "ReferencesCollector",
    "ReferencesRunnable",
    "manage_references",
    "old_name",
]

REFERENCES_EVENT: Final = "langchain_refs.references"
"""Name of the custom callback event that carries an answer's references.

Its data is ``AnswerReferences.to_dict()``, made once per answer: the very
dict the last message chunk carries as ``response_metadata["references"]``
(so read it; copy it before changing it).
"""

DEPRECATED_NAME: Final = (
    "CitationMiddleware is now ReferencesRunnable (in LangChain 1.x a middleware is an agent's "
    "AgentMiddleware; for agents use ReferencesMiddleware); the old name will be removed"
)
"""The warning the old name ``CitationMiddleware`` gives."""


def _checked_runnable(given: Any) -> Runnable[Any, Any]:
    """``given`` as a Runnable (a function made one, as LangChain's ``|`` makes it); never a bare model.

    (A dict, which ``|`` makes a `RunnableParallel`, would answer with a dict: refused.)

    A bare model, however wrapped (``bind``, ``with_config``, ``with_retry``,
    ``with_fallbacks``, ``configurable_fields``), cannot take the dict of
    documents the middleware is called with.

    Example:
        >>> _checked_runnable(len).invoke("abc")
        3
    """
    if isinstance(given, Runnable):
        runnable: Runnable[Any, Any] = given
    elif callable(given):
        runnable = coerce_to_runnable(given)
    else:
        name = type(given).__name__
        msg = f"manage_references() wraps a Runnable that writes the answer, e.g. prompt | model; got {name}"
        raise TypeError(msg)
    model = _model_inside(runnable)
    if model is not None:
        msg = (
            f"manage_references() was given a bare {type(model).__name__}, but it is called with a dict that holds "
            f"the documents, which a model cannot take: wrap a prompt and the model, "
            f"e.g. manage_references(prompt | model) with prompt = ChatPromptTemplate.from_messages(...) "
            f"that formats the documents (see format_documents)"
        )
        raise TypeError(msg)
    return runnable


def _model_inside(runnable: Runnable[Any, Any]) -> BaseLanguageModel[Any] | None:
    """A model that would be called with the input as it is: ``runnable`` itself, under its wrappers, or a fallback."""
    found: list[Runnable[Any, Any]] = [runnable]
    while found:
        inner = found.pop()
        if isinstance(inner, BaseLanguageModel):
            return inner
        if isinstance(inner, RunnableBindingBase):  # bind, with_config, with_retry, with_types
            found.append(inner.bound)
        elif isinstance(inner, RunnableWithFallbacks):
            found += [inner.runnable, *inner.fallbacks]
        elif isinstance(inner, DynamicRunnable):  # configurable_fields, configurable_alternatives
            found.append(inner.default)
            if isinstance(inner, RunnableConfigurableAlternatives):
                found += [a for a in inner.alternatives.values() if isinstance(a, Runnable)]
    return None


def _refuse_options_not_used(runnable: ReferencesRunnable) -> None:
    """Refuse an option that the others given would leave unused (it would be ignored without a word)."""
    checked_flag(runnable.keep_citations, "keep_citations")
    if runnable.support_threshold is not None and runnable.verifier is None:
        msg = "support_threshold is the verifier's: give verifier=... too (e.g. LexicalScorer()), or leave it out"
        raise ValueError(msg)
    if not runnable.keep_citations:
        if runnable.verifier is not None:
            msg = "verifier checks each citation, but keep_citations=False keeps none: leave one of them out"
            raise ValueError(msg)
        if getattr(runnable.style, "show_passages", False):
            msg = "the style's show_passages shows each citation's passage, but keep_citations=False keeps none"
            raise ValueError(msg)
        if runnable.passages is not True and runnable.passages is not False:
            msg = "passages=<a scorer> finds each citation's passage, but keep_citations=False keeps none"
            raise ValueError(msg)
    if runnable.passages is False and getattr(runnable.style, "show_passages", False):
        msg = "the style's show_passages shows the passages that passages=False turns off: leave one of them out"
        raise ValueError(msg)


class ReferencesRunnable(Runnable[dict[str, Any], Any]):
    """Rewrites the citation markers of a runnable's answer while it streams.

    Built by `manage_references`; see there for the options. The input is a
    dict holding the documents under ``documents_key``; it is passed on to the
    wrapped runnable unchanged. It used to be called ``CitationMiddleware``;
    in LangChain 1.x a middleware is an agent's ``AgentMiddleware`` (for
    agents, see ``ReferencesMiddleware``), so the old name now only works
    with a ``DeprecationWarning``.

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
        runnable: RunnableLike[Any, Any],
        *,
        documents_key: str = "documents",
        style: ReferenceStyle | None = None,
        source_key: str | Callable[[BaseMedia], Any] | None = None,
        syntaxes: SyntaxName | MarkerSyntax | Sequence[SyntaxName | MarkerSyntax] = ("id",),
        max_holdback: int = DEFAULT_MAX_HOLDBACK,
        keep_citations: bool = True,
        verifier: CitationVerifier | None = None,
        support_threshold: float | None = None,
        passages: bool | PairScorer = True,
        output_version: OutputVersion = "v0",
        name: str | None = None,
    ) -> None:
        runnable = _checked_runnable(runnable)
        if output_version not in ("v0", "v1"):
            msg = f"output_version must be 'v0' or 'v1', got {output_version!r}"
            raise ValueError(msg)
        passage_scorer(passages)  # a wrong value fails here, not at the end of the first answer
        self.passages = passages
        self.output_version = output_version
        self.bound = runnable
        self.documents_key = checked_documents_key(documents_key)
        self._style_choice = choose_style(style, source_key)
        self.style = self._style_choice.style
        self.source_key = source_key
        self.syntaxes = marker_syntaxes(syntaxes)
        self.max_holdback = checked_max_holdback(max_holdback)
        self.keep_citations = keep_citations
        if isinstance(verifier, type):
            msg = f"verifier must be a scorer, not the class {verifier.__name__}: write {verifier.__name__}()"
            raise TypeError(msg)
        if verifier is not None and not isinstance(verifier, CitationVerifier):
            msg = (
                f"verifier must score citations (have verify_citations(references, documents, threshold=...)); "
                f"got {type(verifier).__name__}: use a langchain_refs scorer such as LexicalScorer(), "
                f"or wrap a LangChain cross-encoder as CrossEncoderScorer(your_cross_encoder)"
            )
            raise TypeError(msg)
        self.verifier = verifier
        self.support_threshold = checked_support_threshold(support_threshold)
        _refuse_options_not_used(self)
        self.name = name or "manage_references"

    @property
    @override
    def config_specs(self) -> list[ConfigurableFieldSpec]:
        """The configurable fields of the wrapped runnable: ``invoke(..., {"configurable": ...})`` reaches them.

        Example:
            >>> from langchain_core.runnables import ConfigurableField, RunnableLambda
            >>> from langchain_core.language_models import FakeListLLM
            >>> inner = FakeListLLM(responses=["x"]).configurable_fields(
            ...     responses=ConfigurableField(id="responses"))
            >>> [spec.id for spec in manage_references(RunnableLambda(str) | inner).config_specs]
            ['responses']
        """
        return self.bound.config_specs

    def _verifier_for(self, input: Any) -> Verifier | None:
        if self.verifier is None:
            return None
        documents = documents_from(input, self.documents_key)
        verifier, threshold = self.verifier, self.support_threshold
        if threshold is None:
            # The verifier's own calibrated threshold (each grounding scorer has one), else one half.
            threshold = support_threshold_of(verifier)
        lock = scorer_lock(verifier)

        def verify(references: AnswerReferences) -> AnswerReferences:
            # Async answers end in worker threads, several at once: the shared verifier is called in turn.
            with lock:
                return verifier.verify_citations(references, documents, threshold=threshold)

        return verify

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
        return ReferenceSession(
            documents,
            source_key=self._style_choice.source_of,
            style=self.style,
            syntaxes=self.syntaxes,
            max_holdback=self.max_holdback,
            keep_citations=self.keep_citations,
            answer_id=answer_id,
            passages=self.passages,
        )

    def _rewrite_for(self, input: Any, run_manager: Any) -> ChunkRewriter:
        """The per-call state: a session for this answer, named after the run."""
        session = self.start_session(input, answer_id=run_manager.run_id.hex[-8:])
        return ChunkRewriter(
            session,
            documents=documents_from(input, self.documents_key),
            track_output=bool(run_manager.handlers),
            verify=self._verifier_for(input),
        )

    def _map_chunk(self) -> Callable[[ChunkRewriter, Any], Any]:
        return ChunkRewriter.on_chunk if self.output_version == "v0" else ChunkRewriter.on_chunk_v1

    @override
    def invoke(self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """The rewritten answer to ``input``, whole; the inner runnable is invoked (its retries and fallbacks hold).

        Inside a LangGraph node the inner runnable streams instead, so that
        the graph's ``stream_mode="messages"`` shows the rewritten tokens as
        they come (retry the node with LangGraph's ``retry_policy``).

        Example:
            >>> from langchain_core.documents import Document
            >>> from langchain_core.runnables import RunnableLambda
            >>> from langchain_refs import TextReferenceStyle
            >>> answer = RunnableLambda(lambda _: "Paris[1](id=1).")
            >>> docs = [Document("Paris is in France.", metadata={"source": "p.html"})]
            >>> manage_references(answer, style=TextReferenceStyle()).invoke({"documents": docs})
            'Paris[1].\\n\\n- [1] p.html\\n'
        """
        config = ensure_config(config)
        if in_graph_node(config):
            return merge_chunks(self.stream(input, config, **kwargs))
        generator = _ends_in_generator(self.bound)
        standard = self.output_version == "v1"
        added: set[int] = set()

        def whole(child_config: RunnableConfig) -> Iterator[Any]:
            answer, given = whole_answer(self.bound.invoke(input, child_config, **kwargs), standard=standard)
            added.update(given)
            return _whole(answer, generator)

        return without_added_indices(merge_chunks(self._stream(input, config, whole)), frozenset(added))

    @override
    async def ainvoke(self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """The async twin of `invoke`."""
        config = ensure_config(config)
        if in_graph_node(config):
            return merge_chunks([chunk async for chunk in self.astream(input, config, **kwargs)])
        generator = _ends_in_generator(self.bound)
        standard = self.output_version == "v1"
        added: set[int] = set()

        async def whole(child_config: RunnableConfig) -> AsyncIterator[Any]:
            answer, given = whole_answer(await self.bound.ainvoke(input, child_config, **kwargs), standard=standard)
            added.update(given)
            if answer is not None or not generator:
                yield answer

        chunks = self._astream(input, config, whole)
        return without_added_indices(merge_chunks([chunk async for chunk in chunks]), frozenset(added))

    @override
    def stream(self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[Any]:
        return self._stream(input, config, lambda child_config: self.bound.stream(input, child_config, **kwargs))

    @override
    def astream(self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        return self._astream(input, config, lambda child_config: self.bound.astream(input, child_config, **kwargs))

    def _stream(
        self, input: dict[str, Any], config: RunnableConfig | None, inner: Callable[[RunnableConfig], Iterator[Any]]
    ) -> Iterator[Any]:
        """The rewritten chunks of ``inner(child_config)`` (the inner runnable's stream, or its answer whole)."""
        return stream_run(
            self,
            input,
            config,
            start=lambda run_manager: self._rewrite_for(input, run_manager),
            inner=inner,
            map_chunk=self._map_chunk(),
            finish=ChunkRewriter.finish,
            on_end=_dispatch_references,
        )

    def _astream(
        self,
        input: dict[str, Any],
        config: RunnableConfig | None,
        inner: Callable[[RunnableConfig], AsyncIterator[Any]],
    ) -> AsyncIterator[Any]:
        """The async twin of `_stream`."""
        return astream_run(
            self,
            input,
            config,
            start=lambda run_manager: self._rewrite_for(input, run_manager),
            inner=inner,
            map_chunk=self._map_chunk(),
            finish=ChunkRewriter.afinish,
            on_end=_adispatch_references,
        )


def _whole(answer: Any, generator: bool) -> Iterator[Any]:
    """An answer given whole, as a stream of one chunk.

    None is no chunk from a ``generator`` (LangChain's ``invoke`` of one that
    yielded nothing), else a chunk the rewriter refuses, as ``stream`` does.
    """
    if answer is not None or not generator:
        yield answer


def _ends_in_generator(runnable: Runnable[Any, Any]) -> bool:
    """Whether ``runnable``'s answer is a `RunnableGenerator`'s (at the end of a sequence, under its wrappers)."""
    while True:
        if isinstance(runnable, RunnableSequence):
            runnable = runnable.last
        elif isinstance(runnable, RunnableBindingBase):
            runnable = runnable.bound
        else:
            return isinstance(runnable, RunnableGenerator)


def _dispatch_references(rewrite: ChunkRewriter, config: RunnableConfig) -> None:
    dispatch_custom_event(REFERENCES_EVENT, rewrite.references_data(), config=config)


async def _adispatch_references(rewrite: ChunkRewriter, config: RunnableConfig) -> None:
    await adispatch_custom_event(REFERENCES_EVENT, rewrite.references_data(), config=config)


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
    runnable: RunnableLike[Any, Any],
    *,
    documents_key: str = "documents",
    style: ReferenceStyle | None = None,
    source_key: str | Callable[[BaseMedia], Any] | None = None,
    syntaxes: SyntaxName | MarkerSyntax | Sequence[SyntaxName | MarkerSyntax] = ("id",),
    max_holdback: int = DEFAULT_MAX_HOLDBACK,
    keep_citations: bool = True,
    verifier: CitationVerifier | None = None,
    support_threshold: float | None = None,
    passages: bool | PairScorer = True,
    output_version: OutputVersion = "v0",
) -> ReferencesRunnable:
    """Wrap ``runnable`` so its ``[n](id=k)`` citations are rewritten as it streams.

    Args:
        runnable: writes the answer from the input dict: ``prompt | model``
            (a bare chat model cannot take the dict: it is refused, with the
            fix), a chain returning ``str``, or a function (made a Runnable,
            as LangChain's ``|`` makes one).
        documents_key: the input key holding the documents shown to the model.
        style: how citations and the list of sources are written
            (default: `MarkdownReferenceStyle`).
        source_key: the metadata key or callable giving a document's source;
            documents with the same source share a number (default: the
            style's ``source_id_key``, ``"source"``).
        syntaxes: marker syntaxes to recognise: ``"id"`` (``[n](id=k)``),
            ``"bracket"`` (``[k]``, not right after a letter or digit, where
            ``list[0]`` is code), ``"dagger"`` (``【k†source】``), or your own
            `MarkerSyntax`.
        max_holdback: the most characters held back while a marker may still
            be completing: a marker longer than that (``[1](id=1)`` is 9)
            stays as the model wrote it.
        keep_citations: keep every citation with its offsets in the
            references data (the default); off, only the numbered sources are
            kept, so memory stays flat however long the stream, and neither
            passages nor a verifier's check are made (both need the
            citations: a verifier, or a style's ``show_passages``, with it off
            is refused).
        verifier: a scorer from the grounding wing (e.g. `LexicalScorer`,
            `LLMJudgeScorer`; any other ``BaseCrossEncoder`` wrapped as
            ``CrossEncoderScorer(it)``) that checks, once the answer is complete, each
            citation's words against the documents it cites; the references
            data then carry ``support`` and ``supported``, and the built-in
            styles mark unsupported sources in the final list. Off by default;
            the text still streams with no added delay.
        support_threshold: the support a citation needs to count as supported
            (with a ``verifier`` only); None (the default) takes the
            verifier's own ``support_threshold`` (each scorer of the grounding
            wing has a calibrated one), or 0.5 for a verifier without one.
        passages: find, for each citation, the passage of the cited document
            that best supports it (`Citation.passage`, the ``cited_text`` of
            the standard annotations): True (the default) with the lexical
            engine, any scorer with ``score(pairs)`` (a grounding scorer, a
            LangChain ``BaseCrossEncoder``) to use it, False for none. With
            the lexical engine each passage is found as its citation closes
            (tens of µs on that chunk, none on ordinary text), so the end of
            the answer carries no burst; another scorer works once the answer
            is complete, in one batch.
        output_version: the shape of message chunks, as LangChain chat models'
            own option: ``"v0"`` (the default) keeps the model's shape (``str``
            content stays ``str``; the annotations are in
            ``response_metadata["citations"]``); ``"v1"`` writes the text as
            standard ``{"type": "text", "index": 0}`` blocks whose last one
            carries the ``annotations``, so that ``message.content_blocks``
            shows them. A model's own text blocks get their annotations in
            both.

    Example:
        >>> from langchain_core.documents import Document
        >>> from langchain_core.runnables import RunnableLambda
        >>> from langchain_refs import TextReferenceStyle
        >>> chain = manage_references(RunnableLambda(lambda _: "Yes[1](id=1)."),
        ...                           style=TextReferenceStyle())
        >>> chain.invoke({"documents": [Document("x", metadata={"source": "a.pdf"})]})
        'Yes[1].\\n\\n- [1] a.pdf\\n'
    """
    return ReferencesRunnable(
        runnable,
        documents_key=documents_key,
        style=style,
        source_key=source_key,
        syntaxes=syntaxes,
        max_holdback=max_holdback,
        keep_citations=keep_citations,
        verifier=verifier,
        support_threshold=support_threshold,
        passages=passages,
        output_version=output_version,
    )


def old_name(module: str, name: str) -> Any:
    """What the ``__getattr__`` of ``module`` gives for ``name``: ``CitationMiddleware``, else its AttributeError.

    ``CitationMiddleware`` is the old name of `ReferencesRunnable`: the class,
    with a ``DeprecationWarning`` at the line that read the name. The package,
    the streaming wing and this module each answer for it with this function.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", DeprecationWarning)
        ...     old_name("langchain_refs", "CitationMiddleware") is ReferencesRunnable
        True
    """
    if name == "CitationMiddleware":
        # Past this function and the module's `__getattr__`: the line that read the name.
        warnings.warn(DEPRECATED_NAME, DeprecationWarning, stacklevel=3)
        return ReferencesRunnable
    msg = f"module {module!r} has no attribute {name!r}"
    raise AttributeError(msg)


def __getattr__(name: str) -> Any:
    """``CitationMiddleware``, the old name of `ReferencesRunnable`, with a ``DeprecationWarning``."""
    return old_name(__name__, name)
