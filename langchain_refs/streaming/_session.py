"""One answer being rewritten: parser + source registry + style, no I/O.

The sync and async runnable paths both drive a `ReferenceSession`; all the
logic of the middleware lives here or in the parser, none in the adapters.
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from langchain_refs.streaming._parser import (
    DEFAULT_MAX_HOLDBACK,
    ID_SYNTAX,
    CitationParser,
    Marker,
    MarkerSyntax,
    SyntaxName,
    Text,
    marker_syntaxes,
)
from langchain_refs.streaming._passages import (
    attach_passages,
    find_passage,
    join_cited,
    passage_finder,
    passage_scorer,
    scored_at_close,
    with_passage,
)
from langchain_refs.streaming._protocols import check_style
from langchain_refs.streaming._references import (
    AnswerContext,
    AnswerReferences,
    Citation,
    ConsultedSource,
    InvalidCitation,
    Passage,
    Reference,
)
from langchain_refs.streaming._registry import OwnSource, SourceRegistry, key_function, resolve_source_keys
from langchain_refs.text import PairScorer, PassageFinder

__all__ = ["CitationRenderer", "ReferenceSession", "Verifier"]

logger = logging.getLogger("langchain_refs")

# The claim a citation backs is searched for in this much recent output.
_RECENT_TEXT = 512
# A sentence end (a terminator, closing quotes or brackets, a space; or a line
# end), written for text read backwards: the claim starts after the last one.
_SENTENCE_END_BACKWARDS = re.compile(r"\s[\"'\u201d\u2019)\]]*[.!?\u3002\uff01\uff1f]|\n")
# The same sentence end read forwards: a terminator, closing quotes or brackets, then a space.
_TERMINATORS = (".", "!", "?", "\u3002", "\uff01", "\uff1f")
_ASCII_TERMINATORS = (".", "!", "?")
_CLOSERS = "\"'\u201d\u2019)]"
# How many terminators `_claim_start` tries, from the last, before it reads the text backwards instead.
_TERMINATORS_TRIED = 4
_CLAIM_LEAD = " \t\r\n,;:-\u2013\u2014"
_CLAIM_TAIL = ".!?\u3002\uff01\uff1f \t\r\n"
# With keep_citations off, at most this many invalid citations are kept (the
# rest are counted), so a stream of bad markers cannot grow memory.
_INVALID_KEPT = 100
# How much of a marker a log line quotes.
_LOGGED_MARKER = 80
# The passages of closed citations are found together (`ReferenceSession._end_group`): once this many wait and
# no document joined the batch in the last `_QUIET_CLOSES` closes, or once `_MOST_WAITING` wait (the end of an
# answer then finds at most these).
_FOUND_TOGETHER = 32
_QUIET_CLOSES = 4
_MOST_WAITING = 64


class CitationRenderer(Protocol):
    """What a session needs from a style (any `ReferenceStyle` has it).

    A style that also has ``render_citation(ref, media, answer)`` and
    ``render_references(refs, answer)`` (as `ReferenceStyle` does) is given
    the answer's `AnswerContext` with each call; one with
    ``escape_text = True`` has the model's words HTML-escaped. One with
    ``show_passages = True`` gets the passages before the list is rendered;
    one with ``show_consulted = True`` and ``render_consulted(sources,
    answer, listed)`` has the sources given but not cited listed after.
    """

    def format_reference(self, ref: int, media: Any) -> str | None: ...

    def format_all_references(self, refs: list[tuple[int, Any]]) -> str: ...


Verifier = Callable[[AnswerReferences], AnswerReferences]
"""Fills in each citation's support once an answer is complete."""


def _check_documents(documents: object) -> None:
    """A ValueError naming the first of ``documents`` that is not a document (one with its ``metadata``).

    (``manage_references`` and the agents' entry points check their inputs
    with LangChain's own class; the session, which imports no LangChain,
    asks what it reads.)

    Example:
        >>> _check_documents([{"page_content": "Paris."}])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: ReferenceSession: documents[0] is a dict, expected a document with page_content and metadata ...
    """
    if isinstance(documents, (str, bytes)) or not isinstance(documents, Sequence):
        msg = f"ReferenceSession: documents must be a list of documents, got {type(documents).__name__}"
        raise ValueError(msg)
    for position, document in enumerate(documents):
        if not isinstance(getattr(document, "metadata", None), Mapping):
            msg = (
                f"ReferenceSession: documents[{position}] is a {type(document).__name__}, "
                f"expected a document with page_content and metadata (a LangChain Document)"
            )
            raise ValueError(msg)


class _OpenCitation:
    """A citation of the open group (the markers since the last text), until the group closes.

    Its `Citation` is made once, with its passage (`citation`), when the
    passage is found, soon after the group closes: the group's citations
    are not final before (a document cited again beside one joins its
    positions). Never handed out (the references before then show values
    made from it), so it is the one value of the session changed in place:
    its positions, until its group closes.
    """

    __slots__ = ("claim", "document_positions", "end", "marker", "native", "number", "start")

    def __init__(
        self,
        number: int,
        document_positions: tuple[int, ...],
        start: int,
        end: int,
        claim: tuple[int, int, str],
        marker: str,
        native: Mapping[str, Any] | None,
    ) -> None:
        self.number = number
        self.document_positions = document_positions
        self.start = start
        self.end = end
        # The words it backs: (text_start, text_end, text), as `ReferenceSession._claim` gives them.
        self.claim = claim
        self.marker = marker
        self.native = native

    def citation(self, passage: Passage | None) -> Citation:
        """The `Citation` it stands for, with ``passage``."""
        text_start, text_end, text = self.claim
        return Citation(
            number=self.number,
            document_positions=self.document_positions,
            start=self.start,
            end=self.end,
            text_start=text_start,
            text_end=text_end,
            text=text,
            marker=self.marker,
            passage=passage,
            native=self.native,
        )


class ReferenceSession:
    """Rewrites the citations of one streamed answer.

    Args:
        documents: the documents the model was shown, in prompt order.
        source_key: gives a document's source key (None when it has none):
            a callable, or the metadata key that holds it.
        style: renders each citation and the final list of sources.
        syntaxes: the marker syntaxes to recognise (`MarkerSyntax` values or
            their names; one alone is one).
        max_holdback: the most characters held back for a partial marker.
        keep_citations: record every citation (with its offsets) for
            `references`; turn off for endless streams, whose memory then stays
            flat (the numbered sources are kept either way; of the invalid
            citations, the first 100 are kept and the others counted).
        answer_id: the answer's id, given to the style (HTML ids carry it).
        passages: find, for each citation, the passage of the cited document
            that best supports it (`Citation.passage`): True (the default)
            with the lexical engine, a scorer with ``score(pairs)`` (any
            LangChain cross-encoder, any grounding scorer) to use that, False
            for none. With the lexical engine the kept citations' passages
            are found as they close, 32 at a time once no new
            document has been cited for a few citations (in a `feed` whose
            text ends a run of adjacent markers: tens of µs per citation,
            ordinary text none), and at most 64 at the end; another scorer
            works once the answer is complete, in one batch. Each citation's
            value is made once, with its passage, so the end only finds
            again the passages a document cited for the first time later
            made stale (it changes the words' rarity). The references show
            passages once the answer is complete.
        consulted_positions: the positions of the documents the model was
            shown for this answer (None, the default: all of them), of which
            the uncited ones are the sources consulted (`consulted`); an
            agent's thread keeps earlier documents citable, not consulted.
        unshown_positions: the positions of documents the model was not
            shown (a tool's result left them out of its text): it cannot
            know their ids, so a citation of one is dropped as invalid.

    Each marker costs at most one log line, however many ids it names; a run
    of consecutive ids that name no document is one invalid citation.

    Example:
        >>> from types import SimpleNamespace as Doc
        >>> docs = [Doc(metadata={"source": "a"}, id=None), Doc(metadata={"source": "b"}, id=None)]
        >>> class Plain:
        ...     def format_reference(self, ref, media): return f"[{ref}]"
        ...     def format_all_references(self, refs):
        ...         return "".join(f"\\n{n}. {m.metadata['source']}" for n, m in refs)
        >>> session = ReferenceSession(docs, source_key=lambda d: d.metadata.get("source"),
        ...                            style=Plain())
        >>> session.feed("B[1](id=2), A[2](") + session.feed("id=1).") + session.close()
        'B[1], A[2].\\n1. b\\n2. a'
    """

    __slots__ = (
        "_answer",
        "_citations",
        "_cite",
        "_cited",
        "_claim_floor",
        "_closed",
        "_consulted_positions",
        "_documents",
        "_escape",
        "_final",
        "_finder",
        "_group",
        "_invalid",
        "_keep_citations",
        "_list",
        "_marker_texts",
        "_max_holdback",
        "_native",
        "_omitted_invalid",
        "_output_length",
        "_parser",
        "_passages",
        "_quiet",
        "_recent",
        "_registry",
        "_reused",
        "_single_positions",
        "_stale",
        "_style",
        "_syntaxes",
        "_trim_at",
        "_unshown",
        "_verified",
        "_waiting",
        "_window_start",
    )

    def __init__(
        self,
        documents: Sequence[Any],
        *,
        source_key: str | Callable[[Any], Any],
        style: CitationRenderer,
        syntaxes: SyntaxName | MarkerSyntax | Sequence[SyntaxName | MarkerSyntax] = (ID_SYNTAX,),
        max_holdback: int = DEFAULT_MAX_HOLDBACK,
        keep_citations: bool = True,
        answer_id: str = "",
        passages: bool | PairScorer = True,
        consulted_positions: Collection[int] | None = None,
        unshown_positions: Collection[int] = (),
    ) -> None:
        # The options as manage_references takes them: a metadata key, syntax names (checked, each once here).
        check_style(style)
        _check_documents(documents)
        if not callable(source_key):
            source_key = key_function(source_key)
        syntaxes = marker_syntaxes(syntaxes)
        self._documents = documents
        self._consulted_positions = None if consulted_positions is None else frozenset(consulted_positions)
        self._unshown: frozenset[int] = frozenset(unshown_positions)
        self._style = style
        self._passages = passage_scorer(passages)
        self._keep_citations = keep_citations
        # The kept citations' passages are found as they close, a few at a time (lexical engine): no burst at the end.
        self._finder: PassageFinder | None = passage_finder(self._passages) if keep_citations else None
        self._registry = SourceRegistry(resolve_source_keys(documents, source_key))
        # The style is shared configuration: what belongs to this answer goes
        # with each call, never onto the style.
        self._answer = AnswerContext(answer_id=answer_id, source_of=source_key)
        cite = getattr(style, "render_citation", None)
        self._cite: Callable[[int, Any, AnswerContext], str | None] = (
            cite if cite is not None else lambda ref, media, _: style.format_reference(ref, media)
        )
        listing = getattr(style, "render_references", None)
        self._list: Callable[[list[tuple[int, Any]], AnswerContext], str] = (
            listing if listing is not None else lambda refs, _: style.format_all_references(refs)
        )
        self._escape = bool(getattr(style, "escape_text", False))
        # (number, document position) -> its citation, rendered once: only for a style that says it would
        # give the same rendering again (`TemplateReferenceStyle.reuses_citations`).
        self._reused: dict[tuple[int, int], str] | None = {} if getattr(style, "reuses_citations", False) else None
        self._omitted_invalid = 0
        self._parser = CitationParser(syntaxes, max_holdback=max_holdback)
        self._syntaxes = syntaxes
        self._max_holdback = max_holdback
        self._output_length = 0
        # The claim before a citation is looked for in the output since the
        # last marker (`_claim_floor`), within the latest 512 to 1,024
        # characters (a window that restarts 512 characters back whenever it
        # passes 1,024: `_window_start`, `_trim_at`). `_recent` holds that
        # text, in pieces: joining per chunk would copy it each time.
        self._recent: list[str] = []
        self._claim_floor = 0
        self._window_start = 0
        self._trim_at = 2 * _RECENT_TEXT
        # Without the finder, the citations closed so far, as the references show them before the answer is complete.
        self._citations: list[Citation] = []
        # With the finder (instead), the citations closed so far with their passages (their final values, made
        # as the passages are found, so that the end only gathers them), and how many of those, from the first,
        # were found within an earlier batch of texts than the finder's now; then the closed citations whose
        # passages are still to be found (their documents in the batch), and how many closes in a row left the
        # batch as it was.
        self._cited: list[Citation] = []
        self._stale = 0
        self._waiting: list[_OpenCitation] = []
        self._quiet = 0
        self._single_positions: dict[int, tuple[int, ...]] = {}
        # Each marker text once, for the citations kept (a session's own table: `sys.intern`'s is the process's,
        # and its growth would count against a stream that keeps nothing).
        self._marker_texts: dict[str, str] | None = {} if keep_citations else None
        self._invalid: list[InvalidCitation] = []
        # Citations rendered since the last text, by number: a source cited
        # again right beside itself is rendered once. Their values are made as the group closes.
        self._group: dict[int, _OpenCitation] = {}
        self._verified: AnswerReferences | None = None
        self._final: AnswerReferences | None = None
        self._closed = False
        # Sources cited natively (no document of ours): number -> what the style renders.
        self._native: dict[int, Any] = {}

    @property
    def held(self) -> str:
        """The text held back because it may still become a marker.

        Example:
            >>> from langchain_refs.streaming import TextReferenceStyle
            >>> ReferenceSession([], source_key=str, style=TextReferenceStyle()).held
            ''
        """
        return self._parser.held

    @property
    def scores_at_close(self) -> bool:
        """Whether the closed answer's `references` call a passage scorer of the caller's (a cross-encoder...).

        The lexical engine finds passages as citations close, in a few
        milliseconds at most at the end; another scorer scores them all once
        the answer is closed, and may take long (a model): async callers run
        `close` and `references` off the event loop then.

        Example:
            >>> from langchain_refs.streaming import TextReferenceStyle
            >>> class Scorer:
            ...     def score(self, pairs): return [0.0] * len(pairs)
            >>> style = TextReferenceStyle()
            >>> sessions = [ReferenceSession([], source_key=str, style=style, passages=p) for p in (True, Scorer())]
            >>> [session.scores_at_close for session in sessions]
            [False, True]
        """
        return self._keep_citations and scored_at_close(self._passages)

    @property
    def output_length(self) -> int:
        """How many characters the session has produced so far.

        Example:
            >>> from langchain_refs.streaming import TextReferenceStyle
            >>> ReferenceSession([], source_key=str, style=TextReferenceStyle()).output_length
            0
        """
        return self._output_length

    def feed(self, text: str) -> str:
        """Take the next chunk of the answer; return the text ready to stream.

        When nothing in the chunk needs rewriting, the very same ``str`` object
        is returned, so callers can pass their chunk on untouched.

        Example:
            >>> from langchain_refs.streaming import TextReferenceStyle
            >>> ReferenceSession([], source_key=str, style=TextReferenceStyle()).feed("plain")
            'plain'
        """
        if self._parser.pass_through(text):
            return self._note_output(text) if text else text
        events = self._parser.feed(text)
        # Often none: the chunk only extends a held marker.
        return self._render(events) if events else ""

    def close(self, verify: Verifier | None = None) -> str:
        """End the answer: return the held tail and the list of cited sources.

        ``verify``, when given, receives the references once the text is
        complete and returns them with each citation's support filled in; the
        list of sources is rendered after it, and the style is told which
        numbers are supported (`AnswerContext.support`). The list names, for
        each number, the document cited under it last (as langchain-references
        0.2.x does). A style that shows passages is told them
        (`AnswerContext.passages`); one that shows the sources consulted but
        not cited lists them after.

        Closing again returns nothing more (the list is not written twice).

        Example:
            >>> from langchain_refs.streaming import TextReferenceStyle
            >>> ReferenceSession([], source_key=str, style=TextReferenceStyle()).feed("a [") == "a "
            True
        """
        if self._closed:
            return ""
        tail = self._render(self._parser.close())
        if self._group:
            self._end_group()
        answer = self._answer
        if verify is not None:
            self._verified = verify(self._build(self._cited_so_far()))
            supported: dict[int, bool] = {}
            for citation in self._verified.citations:
                if citation.supported is not None:
                    supported[citation.number] = supported.get(citation.number, True) and citation.supported
            answer = replace(answer, support=supported)
        self._closed = True
        style = self._style
        if self._passages is not None and getattr(style, "show_passages", False):
            shown: dict[int, tuple[Passage, ...]] = {}
            for citation in self.references.citations:
                if citation.passage is not None:
                    shown[citation.number] = (*shown.get(citation.number, ()), citation.passage)
            answer = replace(answer, passages=shown)
        refs = [
            (number, self._native[number] if position == 0 else self._documents[position - 1])
            for number, position in enumerate(self._registry.last_cited(), start=1)
        ]
        listing = self._list(refs, answer) if refs else ""
        render_consulted = getattr(style, "render_consulted", None)
        if render_consulted is not None and getattr(style, "show_consulted", False):
            consulted = [self._documents[positions[0] - 1] for _, positions in self._uncited()]
            if consulted:
                listing += render_consulted(consulted, answer, bool(refs))
        self._output_length += len(listing)
        return tail + listing

    @property
    def references(self) -> AnswerReferences:
        """The references of the answer so far, as data.

        Once the answer is closed they are complete: verified (with a
        verifier), with each citation's passage (unless passages are off) and
        the sources consulted but not cited; they are made once.

        Example:
            >>> from langchain_refs.streaming import TextReferenceStyle
            >>> ReferenceSession([], source_key=str, style=TextReferenceStyle()).references
            AnswerReferences(references=(), citations=(), invalid_citations=())
        """
        if self._final is not None:
            return self._final
        if not self._closed:
            return self._build(self._cited_so_far())
        if self._verified is not None:
            references = self._verified
            if self._finder is not None:
                references = self._with_passages_found(references)
            elif self._passages is not None:
                references = attach_passages(references, self._documents, self._passages)
        elif self._finder is not None:
            references = self._build(self._with_final_passages())
        else:
            references = self._build(self._cited_so_far())
            if self._passages is not None:
                references = attach_passages(references, self._documents, self._passages)
        self._final = references
        return references

    def end_block(self) -> str:
        """Release what the parser holds, as at the end of the answer, and go on with a fresh parser.

        For a caller that places native citations at the end of a content
        block: held text belongs before them. A marker cannot span the cut.

        Example:
            >>> from langchain_refs.streaming import TextReferenceStyle
            >>> session = ReferenceSession([], source_key=str, style=TextReferenceStyle())
            >>> session.feed("see [1](id="), session.end_block(), session.feed("2)")
            ('see ', '[1](id=', '2)')
        """
        events = self._parser.close()
        self._parser = CitationParser(self._syntaxes, max_holdback=self._max_holdback)
        return self._render(events) if events else ""

    def cite_native(self, key: Hashable, media: Any, annotation: Mapping[str, Any]) -> str:
        """Render a citation the model made natively, here, numbered with the marker citations.

        ``key`` names the source (see `native_source_key`): a key that
        documents share joins their number. ``media`` is what the style
        renders for a source no document stands for (a document whose
        metadata holds ``source``/``url`` and ``title``); ``annotation`` is
        the provider's citation as a standard ``Citation`` dict, kept in the
        data (`Citation.native`). A source cited again right beside itself
        is rendered once, as with markers.

        Example:
            >>> from types import SimpleNamespace as Doc
            >>> class Plain:
            ...     def format_reference(self, ref, media): return f"[{ref}]"
            ...     def format_all_references(self, refs):
            ...         return "".join(f" {n}={m.metadata['source']}" for n, m in refs)
            >>> session = ReferenceSession([], source_key=lambda d: d.metadata.get("source"), style=Plain())
            >>> media = Doc(metadata={"source": "https://a.org"}, id=None)
            >>> session.feed("Grass is green.") + session.cite_native("https://a.org", media, {}) + session.close()
            'Grass is green.[1] 1=https://a.org'
        """
        registry = self._registry
        number = registry.number_of_key(key)
        if number is not None and number in self._group:
            return ""
        claim = self._claim()
        rendered = self._cite(registry.next_number() if number is None else number, media, self._answer)
        if rendered is None:
            return ""
        number = registry.cite_key(key)
        if registry.last_cited()[number - 1] == 0:
            self._native.setdefault(number, media)
        self._add_citation(number, rendered, claim, positions=(), marker="", native=dict(annotation))
        self._end_marker()
        return rendered

    def _cited_so_far(self) -> tuple[Citation, ...]:
        """The citations as the references show them before the answer is complete: without passages.

        Found as they closed, the passages may still change (a document cited later changes the words'
        rarity): they are shown once the answer is complete.
        """
        if not self._keep_citations:
            return ()
        group = [opened.citation(None) for opened in self._group.values()]
        if self._finder is None:
            return (*self._citations, *group)
        # One list is kept, not two: a citation's value before the end is its final one without the passage.
        closed = [citation if citation.passage is None else with_passage(citation, None) for citation in self._cited]
        waiting = [opened.citation(None) for opened in self._waiting]
        return (*closed, *waiting, *group)

    def _with_final_passages(self) -> tuple[Citation, ...]:
        """The citations of the closed answer, each with the passage `attach_passages` gives it on the whole answer.

        The citations still waiting get theirs (at most `_MOST_WAITING`); the others got theirs as the answer
        streamed, and those found within an earlier batch of texts than the last (the first `_stale`) are found
        again, and only those whose passage changed are made again.
        """
        citations = self._cited
        finder = self._finder
        if finder is not None:
            self._find_waiting()
            documents = self._documents
            for k in range(self._stale):
                citation = citations[k]
                if citation.passage is not None:
                    passage = find_passage(finder, citation.text, citation.document_positions, documents)
                    if passage != citation.passage:
                        citations[k] = with_passage(citation, passage)
            self._stale = 0
        return tuple(citations)

    def _with_passages_found(self, verified: AnswerReferences) -> AnswerReferences:
        """The verified references with the passages found as the citations closed (`attach_passages`'s).

        A verifier gives back the citations it was given, its findings filled
        in: each then takes the passage of the citation it stands for. One
        that changed a citation's words or documents (or their number) has
        them all found again, as `attach_passages` finds them.
        """
        found = self._with_final_passages()
        given = verified.citations
        if len(given) != len(found) or any(
            v.text != f.text or v.document_positions != f.document_positions or v.native != f.native
            for v, f in zip(given, found, strict=True)
        ):
            return attach_passages(verified, self._documents, self._passages, self._finder)
        return replace(
            verified, citations=tuple([with_passage(v, f.passage) for v, f in zip(given, found, strict=True)])
        )

    def _build(self, citations: tuple[Citation, ...]) -> AnswerReferences:
        """The references with ``citations``: numbered sources, citations, invalid ones, sources not cited."""
        references = []
        documents = self._documents
        listed = self._registry.last_cited()
        for number, key, positions in self._registry.numbered():
            # The title of the document the list names.
            position = listed[number - 1]
            media = self._native[number] if position == 0 else documents[position - 1]
            metadata = getattr(media, "metadata", None) or {}
            title = metadata.get("title")
            # A source only a provider named (position 0): its URL, if it has one, is the source.
            source = metadata.get("url") if position == 0 else None if isinstance(key, OwnSource) else str(key)
            references.append(
                Reference(
                    number=number,
                    source=None if source is None else str(source),
                    title=None if title is None else str(title),
                    document_positions=tuple(positions),
                )
            )
        consulted = []
        for key, positions in self._uncited():
            metadata = getattr(documents[positions[0] - 1], "metadata", None) or {}
            title = metadata.get("title")
            consulted.append(
                ConsultedSource(
                    source=None if isinstance(key, OwnSource) else str(key),
                    title=None if title is None else str(title),
                    document_positions=tuple(positions),
                )
            )
        return AnswerReferences(
            references=tuple(references),
            citations=citations,
            invalid_citations=tuple(self._invalid),
            omitted_invalid_citations=self._omitted_invalid,
            consulted=tuple(consulted),
        )

    # -- internals ---------------------------------------------------------

    def _uncited(self) -> list[tuple[Hashable, list[int]]]:
        """The sources consulted: uncited, of the documents shown for this answer (their positions among those)."""
        uncited = self._registry.uncited()
        shown = self._consulted_positions
        if shown is None:
            return uncited
        kept = [(key, [p for p in positions if p in shown]) for key, positions in uncited]
        return [(key, positions) for key, positions in kept if positions]

    def _note_output(self, text: str) -> str:
        """``text`` (not empty) as it is output: escaped when the style asks, counted, kept for claims."""
        if self._escape:
            text = _escape_html(text)
        self._output_length += len(text)
        if self._group:
            self._end_group()
        self._recent.append(text)
        if self._output_length > self._trim_at:
            self._move_window()
        return text

    def _claim(self) -> tuple[int, int, str]:
        """The claim the next citation backs: that of the citations beside it, else the clause before it."""
        if self._group:
            return next(iter(self._group.values())).claim
        return self._claim_span()

    def _add_citation(
        self,
        number: int,
        rendered: str,
        claim: tuple[int, int, str],
        *,
        positions: tuple[int, ...],
        marker: str,
        native: Mapping[str, Any] | None = None,
    ) -> None:
        """Record a citation just rendered at the end of the output, in the current group."""
        start = self._output_length
        end = self._output_length = start + len(rendered)
        self._group[number] = _OpenCitation(number, positions, start, end, claim, marker, native)

    def _end_marker(self) -> None:
        """After a marker (or a native citation): the next claim starts here."""
        if self._output_length > self._trim_at:
            self._move_window()
        self._claim_floor = self._output_length
        self._recent.clear()

    def _move_window(self) -> None:
        """The window passed 1,024 characters: it restarts 512 characters back."""
        self._window_start = self._output_length - _RECENT_TEXT
        self._trim_at = self._window_start + 2 * _RECENT_TEXT
        if self._window_start > self._claim_floor:
            self._recent = ["".join(self._recent)[-_RECENT_TEXT:]]

    def _end_group(self) -> None:
        if self._keep_citations:
            finder = self._finder
            if finder is None:
                citations = self._citations
                for opened in self._group.values():
                    citations.append(opened.citation(None))
            else:
                # The group's documents join the batch now; their passages are found a little later, together
                # with others (`_find_waiting`): while documents are still joining, a passage found at once
                # would soon be found again, and many found in a row cost less each than one at a time.
                generation = finder.generation
                documents = self._documents
                waiting = self._waiting
                for opened in self._group.values():
                    join_cited(finder, opened.claim[2], opened.document_positions, documents)
                    waiting.append(opened)
                if finder.generation != generation:
                    # A text joined the batch: the passages found before were found within another one.
                    self._stale = len(self._cited)
                    self._quiet = 0
                else:
                    self._quiet += 1
                if len(waiting) >= _MOST_WAITING or (len(waiting) >= _FOUND_TOGETHER and self._quiet >= _QUIET_CLOSES):
                    self._find_waiting()
        self._group = {}

    def _find_waiting(self) -> None:
        """The passages of the closed citations still waiting for theirs, found within the batch as it stands."""
        finder = self._finder
        if finder is None or not self._waiting:
            return
        cited = self._cited
        documents = self._documents
        for opened in self._waiting:
            # Each citation's value is made now, once, with its passage: the end of the answer only gathers them.
            cited.append(opened.citation(find_passage(finder, opened.claim[2], opened.document_positions, documents)))
        self._waiting = []

    def _render(self, events: list[Text | Marker]) -> str:
        if len(events) == 1:
            # The usual case in small chunks (the text before a marker, or a marker alone): no list to join.
            event = events[0]
            if type(event) is Text:
                return self._note_output(event.text) if event.text else ""
            return self._render_marker(event)  # type: ignore[arg-type]
        pieces: list[str] = []
        for event in events:
            if type(event) is Text:
                if event.text:
                    pieces.append(self._note_output(event.text))
            else:
                rendered = self._render_marker(event)  # type: ignore[arg-type]
                if rendered:
                    pieces.append(rendered)
        return "".join(pieces)

    def _drop(self, marker: Marker, dropped: list[tuple[str, str]], offset: int) -> None:
        """Log and record the invalid items of one marker: one log line, bounded storage."""
        if logger.isEnabledFor(logging.WARNING):
            raw = marker.raw if len(marker.raw) <= _LOGGED_MARKER else marker.raw[: _LOGGED_MARKER - 3] + "..."
            if len(dropped) == 1:
                logger.warning("dropped citation %r in %r: %s", dropped[0][0], raw, dropped[0][1])
            else:
                shown = "; ".join(f"{item!r}: {reason}" for item, reason in dropped[:3])
                more = f"; and {len(dropped) - 3} more" if len(dropped) > 3 else ""
                logger.warning("dropped %d citations in %r: %s%s", len(dropped), raw, shown, more)
        if not self._keep_citations:
            room = max(0, _INVALID_KEPT - len(self._invalid))
            self._omitted_invalid += max(0, len(dropped) - room)
            dropped = dropped[:room]
        self._invalid.extend(
            InvalidCitation(marker=marker.raw, item=item, reason=reason, offset=offset) for item, reason in dropped
        )

    def _render_marker(self, marker: Marker) -> str:
        offset = self._output_length
        group = self._group
        claim = self._claim()
        registry = self._registry
        count = len(self._documents)
        reused = self._reused
        unshown = self._unshown
        dropped = [(item, "not a document id") for item in marker.malformed] if marker.malformed else []
        # Each piece renders a document not yet in the group: few, so joined as they come (no list per marker).
        out = ""
        # A run of consecutive ids naming no document is one invalid item, so
        # a range like 1-255 costs one entry, not 252.
        run_start: int | None = None
        run_end = 0
        for doc_id in marker.ids:
            if not 1 <= doc_id <= count:
                if run_start is not None and doc_id == run_end + 1:
                    run_end = doc_id
                else:
                    if run_start is not None:
                        dropped.append(_no_document(run_start, run_end, count))
                    run_start = run_end = doc_id
                continue
            if run_start is not None:
                dropped.append(_no_document(run_start, run_end, count))
                run_start = None
            if doc_id in unshown:
                dropped.append((_id_text(doc_id), f"document {_id_text(doc_id)} was not shown to the model"))
                continue
            number = registry.number_if_cited(doc_id)
            if number is not None and number in group:
                registry.cite(doc_id)
                opened = group[number]
                if doc_id not in opened.document_positions:
                    opened.document_positions = (*opened.document_positions, doc_id)
                continue
            rendered = None if reused is None or number is None else reused.get((number, doc_id))
            if rendered is None:
                given = registry.next_number() if number is None else number
                rendered = self._cite(given, self._documents[doc_id - 1], self._answer)
                if reused is not None and rendered is not None:
                    reused[given, doc_id] = rendered
            if rendered is None:
                # Hidden by the style: no number is used up.
                continue
            number = registry.cite(doc_id)
            # Kept citations share their small values: one positions tuple per document, one string per marker text.
            alone = self._single_positions.get(doc_id)
            if alone is None:
                # Read back from the dict: compiled, a tuple literal is unboxed, and boxed anew at each use.
                self._single_positions[doc_id] = (doc_id,)
                alone = self._single_positions[doc_id]
            raw = marker.raw
            if self._marker_texts is not None:
                raw = self._marker_texts.setdefault(raw, raw)
            self._add_citation(number, rendered, claim, positions=alone, marker=raw)
            out += rendered
        if run_start is not None:
            dropped.append(_no_document(run_start, run_end, count))
        if dropped:
            self._drop(marker, dropped, offset)
        self._end_marker()
        return out

    def _claim_span(self) -> tuple[int, int, str]:
        """The clause the next citation backs, as output offsets.

        It starts after the last sentence end before it (found searching the
        text backwards, so only the tail is read) and leaves out the
        punctuation and spaces around it.
        """
        recent = self._recent
        text = "".join(recent)
        recent.clear()
        recent.append(text)
        floor = self._output_length - len(text)
        end = len(text.rstrip())
        head = text[:end].rstrip(_CLAIM_TAIL)
        start = _claim_start(head)
        claim = text[start:end].lstrip(_CLAIM_LEAD)
        start = end - len(claim)
        return floor + start, floor + end, claim


def _claim_start(head: str) -> int:
    """Where the claim in ``head`` starts: after its last sentence end (0: none).

    That is the end of the first match of `_SENTENCE_END_BACKWARDS` in ``head``
    reversed. The last terminators are tried first, found with `str.rfind`
    (the claim usually starts just after the previous citation's sentence end,
    so reading the text backwards would read all of it); past a few that end
    no sentence (``2.5``, a URL), the text is read backwards after all.
    """
    line = head.rfind("\n")
    size = len(head)
    bound = size
    terminators = _ASCII_TERMINATORS if head.isascii() else _TERMINATORS
    for _ in range(_TERMINATORS_TRIED):
        at = -1
        for terminator in terminators:
            found = head.rfind(terminator, 0, bound)
            if found > at:
                at = found
        if at < line:
            # No sentence end after the last line end (nor before it: that one comes first).
            return line + 1
        if at < 0:
            return 0
        after = at + 1
        while after < size and head[after] in _CLOSERS:
            after += 1
        if after < size and head[after].isspace():
            return after + 1
        bound = at
    found_backwards = _SENTENCE_END_BACKWARDS.search(head[::-1])
    return 0 if found_backwards is None else size - found_backwards.start()


def _escape_html(text: str) -> str:
    # Most chunks hold none of the three: keep the very same object then.
    if "&" in text or "<" in text or ">" in text:
        return html.escape(text, quote=False)
    return text


def _id_text(doc_id: int) -> str:
    try:
        return str(doc_id)
    except ValueError:  # past Python's int-to-str digit limit
        return f"a {doc_id.bit_length()}-bit number"


def _no_document(first: int, last: int, count: int) -> tuple[str, str]:
    """The invalid item and its reason for ids ``first``..``last``, none of which names a document."""
    if first == last:
        return _id_text(first), f"no document {_id_text(first)} ({count} given)"
    ids = f"{_id_text(first)}-{_id_text(last)}"
    return ids, f"no documents {ids} ({count} given)"
