"""The references of one answer, as data: frozen values, no LangChain needed."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import FunctionType
from typing import Any, Final

from langchain_refs.streaming._slots import slot_setters
from langchain_refs.streaming._urls import safe_url

__all__ = [
    "AnswerContext",
    "AnswerReferences",
    "Citation",
    "ConsultedSource",
    "InvalidCitation",
    "Passage",
    "Reference",
]


def _native() -> bool:
    """Whether this module runs compiled (mypyc): its functions are then native, not Python functions."""
    return not isinstance(_native, FunctionType)


# Compiled, the __init__ of Citation and Passage stores each field straight into its slot (see
# streaming/_parser.py, _NATIVE).
_NATIVE: Final = _native()

# Without a passage, ``cited_text`` is the start of the cited document, cut here.
_DOCUMENT_START: Final = 300


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerContext:
    """What a style is told about the one answer it is rendering.

    A style is configuration shared by every answer; what belongs to one
    answer is passed with each rendering call instead: ``answer_id`` (unique
    per answer, so HTML ids stay unique when several answers share a page),
    ``support`` (number -> whether a verifier found it supported; None before
    or without a verifier) and ``source_of`` (the function the answer's
    sources are numbered by, so the list shows the same source; None: the
    style's own ``source_id_key``) and ``passages`` (number -> the passages
    of its citations, in citation order; None until the answer is complete,
    and without passages).

    Example:
        >>> AnswerContext(answer_id="a1", support={1: False}).support[1]
        False
    """

    answer_id: str = ""
    support: Mapping[int, bool] | None = None
    source_of: Callable[[Any], Any] | None = None
    passages: Mapping[int, tuple[Passage, ...]] | None = None
    rendered: dict[Any, Any] = field(init=False, default_factory=dict, repr=False, compare=False)
    """What a style already rendered for this answer (it may cache here: the
    context lives exactly as long as the answer)."""


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Passage:
    """The span of a cited document that best supports the words a citation backs.

    ``document_position`` is the 1-based position of the document among those
    given to the model; ``document_start``/``document_end`` are character
    offsets into its text, so ``text[document_start:document_end] ==
    excerpt``; ``score`` is the scorer's (in [0, 1] for the default lexical
    one). The same shape as a deepset ``ReferencePredictor`` reference.

    Example:
        >>> text = "Rome is old. Paris is in France."
        >>> p = Passage(document_position=1, document_start=13, document_end=32,
        ...             excerpt="Paris is in France.", score=0.9)
        >>> text[p.document_start:p.document_end] == p.excerpt
        True
    """

    document_position: int
    document_start: int
    document_end: int
    excerpt: str
    score: float

    def __init__(
        self, *, document_position: int, document_start: int, document_end: int, excerpt: str, score: float
    ) -> None:
        # One per citation, as `Citation`'s own __init__ (compiled, a frozen dataclass's generated
        # __init__ runs as interpreted Python).
        if _NATIVE:
            self.document_position = document_position  # type: ignore[misc]
            self.document_start = document_start  # type: ignore[misc]
            self.document_end = document_end  # type: ignore[misc]
            self.excerpt = excerpt  # type: ignore[misc]
            self.score = score  # type: ignore[misc]
        else:
            # Each slot's own setter (a frozen dataclass's fields are set past its __setattr__, as its generated
            # __init__ sets them with object.__setattr__, which costs about twice as much per field).
            set_position, set_start, set_end, set_excerpt, set_score = _PASSAGE_SETTERS
            set_position(self, document_position)
            set_start(self, document_start)
            set_end(self, document_end)
            set_excerpt(self, excerpt)
            set_score(self, score)


_PASSAGE_SETTERS: Final = () if _NATIVE else slot_setters(Passage)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsultedSource:
    """A source the model was given but did not cite: not numbered, listed apart.

    ``document_positions`` are the 1-based positions of all its documents.

    Example:
        >>> ConsultedSource(source="c.pdf", title="C", document_positions=(3,)).source
        'c.pdf'
    """

    source: str | None
    title: str | None
    document_positions: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Reference:
    """One numbered source of an answer, as listed at its end.

    ``document_positions`` are the 1-based positions, in the documents given
    to the model, of every document cited under this number, in order of
    first citation.

    Example:
        >>> Reference(number=1, source="b.pdf", title="B", document_positions=(3, 4))
        Reference(number=1, source='b.pdf', title='B', document_positions=(3, 4))
    """

    number: int
    source: str | None
    title: str | None
    document_positions: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True, init=False)
class Citation:
    """One citation as it stands in the output text.

    ``start``/``end`` delimit the rendered citation in the text the middleware
    produced (``output[start:end]``); ``text_start``/``text_end`` delimit the
    words it backs (the clause before it), and ``text`` holds those words.
    ``marker`` is what the model wrote. ``support`` (a score in [0, 1]) and
    ``supported`` are filled in when a verifier checked the citation;
    ``unsupported_reason`` says why a verifier refused support although the
    words score well (a meaning guard: "the sources say 330 metres, not 450
    metres"), else None.
    ``passage`` is the span of the cited document that best supports the
    words (None when passages are off, until the answer is complete, and for
    native citations). ``native`` is set for a citation the model made
    natively (a provider's ``Citation`` annotation on a text block, as a
    standard ``Citation`` dict): it has no marker (``""``) and no document
    positions, and its source is the provider's.

    Example:
        >>> out = "Paris is in France[1]."
        >>> c = Citation(number=1, document_positions=(2,), start=18, end=21,
        ...              text_start=0, text_end=18, text="Paris is in France", marker="[1](id=2)")
        >>> out[c.start:c.end], out[c.text_start:c.text_end]
        ('[1]', 'Paris is in France')
    """

    number: int
    document_positions: tuple[int, ...]
    start: int
    end: int
    text_start: int
    text_end: int
    text: str
    marker: str
    support: float | None = None
    supported: bool | None = None
    unsupported_reason: str | None = None
    passage: Passage | None = None
    native: Mapping[str, Any] | None = field(default=None, hash=False)

    def __init__(
        self,
        *,
        number: int,
        document_positions: tuple[int, ...],
        start: int,
        end: int,
        text_start: int,
        text_end: int,
        text: str,
        marker: str,
        support: float | None = None,
        supported: bool | None = None,
        unsupported_reason: str | None = None,
        passage: Passage | None = None,
        native: Mapping[str, Any] | None = None,
    ) -> None:
        # One per citation, as it streams: compiled, each field goes straight into its slot; in pure
        # Python each is set as dataclasses' frozen __init__ sets it.
        if _NATIVE:
            self.number = number  # type: ignore[misc]
            self.document_positions = document_positions  # type: ignore[misc]
            self.start = start  # type: ignore[misc]
            self.end = end  # type: ignore[misc]
            self.text_start = text_start  # type: ignore[misc]
            self.text_end = text_end  # type: ignore[misc]
            self.text = text  # type: ignore[misc]
            self.marker = marker  # type: ignore[misc]
            self.support = support  # type: ignore[misc]
            self.supported = supported  # type: ignore[misc]
            self.unsupported_reason = unsupported_reason  # type: ignore[misc]
            self.passage = passage  # type: ignore[misc]
            self.native = native  # type: ignore[misc]
        else:
            # Each slot's own setter, as in `Passage`.
            (
                set_number,
                set_positions,
                set_start,
                set_end,
                set_text_start,
                set_text_end,
                set_text,
                set_marker,
                set_support,
                set_supported,
                set_reason,
                set_passage,
                set_native,
            ) = _CITATION_SETTERS
            set_number(self, number)
            set_positions(self, document_positions)
            set_start(self, start)
            set_end(self, end)
            set_text_start(self, text_start)
            set_text_end(self, text_end)
            set_text(self, text)
            set_marker(self, marker)
            set_support(self, support)
            set_supported(self, supported)
            set_reason(self, unsupported_reason)
            set_passage(self, passage)
            set_native(self, native)


_CITATION_SETTERS: Final = () if _NATIVE else slot_setters(Citation)


@dataclass(frozen=True, slots=True, kw_only=True)
class InvalidCitation:
    """A cited id that named no document; it was dropped from the text.

    ``item`` is the id as the model wrote it (a run of consecutive ids that
    name no document is one item, ``"4-255"``), ``offset`` where in the output
    the marker stood.

    Example:
        >>> InvalidCitation(marker="[1](id=9)", item="9", reason="no document 9 (6 given)", offset=4)
        InvalidCitation(marker='[1](id=9)', item='9', reason='no document 9 (6 given)', offset=4)
    """

    marker: str
    item: str
    reason: str
    offset: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerReferences:
    """Everything known about the citations of one answer.

    ``omitted_invalid_citations`` counts the invalid citations seen but not
    kept: with ``keep_citations`` off only the first ones are kept, so that
    memory stays flat however many the model writes. ``consulted`` lists the
    sources the model was given but did not cite, in the order of their
    first document (they have no number).

    Example:
        >>> refs = AnswerReferences(references=(
        ...     Reference(number=1, source="https://a.org", title="A", document_positions=(1,)),))
        >>> AnswerReferences.from_dict(refs.to_dict()) == refs
        True
    """

    references: tuple[Reference, ...] = ()
    citations: tuple[Citation, ...] = ()
    invalid_citations: tuple[InvalidCitation, ...] = field(default=())
    omitted_invalid_citations: int = 0
    consulted: tuple[ConsultedSource, ...] = ()

    def __repr__(self) -> str:
        # The count and the consulted sources are shown only when there are
        # some: the common repr stays the short one users see in examples.
        omitted = (
            f", omitted_invalid_citations={self.omitted_invalid_citations}" if self.omitted_invalid_citations else ""
        )
        consulted = f", consulted={self.consulted!r}" if self.consulted else ""
        return (
            f"AnswerReferences(references={self.references!r}, citations={self.citations!r}, "
            f"invalid_citations={self.invalid_citations!r}{omitted}{consulted})"
        )

    def to_dict(self) -> dict[str, Any]:
        """The references as plain JSON-ready data.

        Example:
            >>> AnswerReferences().to_dict()  # doctest: +NORMALIZE_WHITESPACE
            {'references': [], 'citations': [], 'invalid_citations': [], 'omitted_invalid_citations': 0,
             'consulted': []}
        """
        return self._with_citation_rows([_citation_dict(c) for c in self.citations])

    def _with_citation_rows(self, citations: list[dict[str, Any]]) -> dict[str, Any]:
        """`to_dict` with its citations already written (`_citation_dict` of each)."""
        # Written out field by field: `dataclasses.asdict` copies each value
        # recursively, on the last chunk of every answer (bench/ measures it).
        # tests/unit_tests/test_hot_path.py checks every field is here.
        return {
            "references": [
                {
                    "number": r.number,
                    "source": r.source,
                    "title": r.title,
                    "document_positions": list(r.document_positions),
                }
                for r in self.references
            ],
            "citations": citations,
            "invalid_citations": [
                {"marker": i.marker, "item": i.item, "reason": i.reason, "offset": i.offset}
                for i in self.invalid_citations
            ],
            "omitted_invalid_citations": self.omitted_invalid_citations,
            "consulted": [
                {"source": s.source, "title": s.title, "document_positions": list(s.document_positions)}
                for s in self.consulted
            ],
        }

    def to_json(self) -> str:
        """The references as a JSON string.

        Example:
            >>> AnswerReferences().to_json()  # doctest: +NORMALIZE_WHITESPACE
            '{"references": [], "citations": [], "invalid_citations": [], "omitted_invalid_citations": 0,
              "consulted": []}'
        """
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AnswerReferences:
        """Rebuild the value written by `to_dict` (data written before a field existed reads as its default).

        Example:
            >>> AnswerReferences.from_dict({"references": []})
            AnswerReferences(references=(), citations=(), invalid_citations=())
        """
        return cls(
            references=tuple(
                Reference(**{**r, "document_positions": tuple(r["document_positions"])})
                for r in data.get("references", ())
            ),
            citations=tuple(_citation_from_dict(c) for c in data.get("citations", ())),
            invalid_citations=tuple(InvalidCitation(**i) for i in data.get("invalid_citations", ())),
            omitted_invalid_citations=int(data.get("omitted_invalid_citations", 0)),
            consulted=tuple(
                ConsultedSource(**{**s, "document_positions": tuple(s["document_positions"])})
                for s in data.get("consulted", ())
            ),
        )

    def standard_citations(self, documents: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        """The citations as LangChain's standard ``Citation`` annotations, in order.

        Each has ``type="citation"``, ``url`` and ``title`` of its source
        (when it has them; the ``url`` only when it may become a link, by
        `safe_url`: a ``javascript:`` source gives none), ``start_index``/``end_index`` of the words it
        backs in the output text, and ``cited_text``: what the *source* says,
        never the answer's words — the citation's passage, else (given the
        ``documents``) the start of its first document, else nothing (see
        ``langchain_core.messages.content.Citation``). ``extras`` hold the
        citation's ``number`` and ``document_positions`` and, with a passage,
        ``document_position``, ``document_start``, ``document_end`` and
        ``score``. A native citation keeps what its provider said (its
        ``cited_text`` and ``extras``), with offsets into the output text.

        Example:
            >>> refs = AnswerReferences(
            ...     references=(Reference(number=1, source="https://a.org", title="A",
            ...                           document_positions=(1,)),),
            ...     citations=(Citation(number=1, document_positions=(1,), start=5, end=8,
            ...                         text_start=0, text_end=5, text="Paris", marker="[1](id=1)",
            ...                         passage=Passage(document_position=1, document_start=0, document_end=19,
            ...                                         excerpt="Paris is in France.", score=0.8)),))
            >>> refs.standard_citations()[0]["cited_text"]
            'Paris is in France.'
        """
        annotate = _StandardCitations(self.references, documents)
        return [annotate.of(citation) for citation in self.citations]


def data_and_standard_citations(
    references: AnswerReferences, documents: Sequence[Any] | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(references.to_dict(), references.standard_citations(documents))``, in one pass over the citations.

    What an answer's last chunk carries. Reading each citation's fields is
    most of the cost when they were made over a long stream (each object
    read is then a cache and TLB miss on a large heap): one pass reads them
    once, not twice.

    Example:
        >>> data, annotations = data_and_standard_citations(AnswerReferences())
        >>> data == AnswerReferences().to_dict(), annotations
        (True, [])
    """
    annotate = _StandardCitations(references.references, documents)
    rows: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    for citation in references.citations:
        rows.append(_citation_dict(citation))
        annotations.append(annotate.of(citation))
    return references._with_citation_rows(rows), annotations


def _citation_dict(c: Citation) -> dict[str, Any]:
    """One citation of `AnswerReferences.to_dict`."""
    return {
        "number": c.number,
        "document_positions": list(c.document_positions),
        "start": c.start,
        "end": c.end,
        "text_start": c.text_start,
        "text_end": c.text_end,
        "text": c.text,
        "marker": c.marker,
        "support": c.support,
        "supported": c.supported,
        "unsupported_reason": c.unsupported_reason,
        "passage": None if c.passage is None else _passage_dict(c.passage),
        "native": None if c.native is None else dict(c.native),
    }


class _StandardCitations:
    """Writes the standard ``Citation`` annotation of each citation of one answer (`standard_citations`)."""

    __slots__ = ("_documents", "_heads", "_starts", "_unlisted")

    def __init__(self, references: Sequence[Reference], documents: Sequence[Any] | None) -> None:
        self._documents = documents
        # What every citation of a number starts with: its type, and the url and title of its source. Copied
        # per citation: one C-level copy instead of three stores (run for every citation on an answer's last chunk).
        self._heads: dict[int, dict[str, Any]] = {}
        for reference in references:
            head: dict[str, Any] = {"type": "citation"}
            # A UI links the url: a source that may not become a link (javascript:, data:...) gives none.
            url = safe_url(reference.source)
            if url is not None:
                head["url"] = url
            if reference.title:
                head["title"] = reference.title
            self._heads[reference.number] = head
        self._unlisted: dict[str, Any] = {"type": "citation"}
        # The start of each document cited without a passage, cut once (many citations share a document).
        self._starts: dict[int, str | None] = {}

    def of(self, citation: Citation) -> dict[str, Any]:
        """The annotation of ``citation``."""
        annotation: dict[str, Any]
        extras: dict[str, Any]
        passage = citation.passage
        if citation.native is not None:
            annotation = {**citation.native, "type": "citation"}
            if "url" in annotation:
                # A provider's url as every other annotation's: none where it may not become a link.
                url = safe_url(annotation["url"]) if isinstance(annotation["url"], str) else None
                if url is None:
                    del annotation["url"]
                else:
                    annotation["url"] = url
            extras = dict(annotation.get("extras") or {})
        else:
            annotation = self._heads.get(citation.number, self._unlisted).copy()
            cited: str | None
            if passage is not None:
                cited = passage.excerpt
            elif self._documents is None or not citation.document_positions:
                cited = None
            else:
                position = citation.document_positions[0]
                starts = self._starts
                if position in starts:
                    cited = starts[position]
                else:
                    cited = starts[position] = _document_start(position, self._documents)
            if cited is not None:
                annotation["cited_text"] = cited
            if passage is not None:
                # The usual case, written in one go.
                annotation["start_index"] = citation.text_start
                annotation["end_index"] = citation.text_end
                annotation["extras"] = {
                    "number": citation.number,
                    "document_positions": list(citation.document_positions),
                    "document_position": passage.document_position,
                    "document_start": passage.document_start,
                    "document_end": passage.document_end,
                    "score": passage.score,
                }
                return annotation
            extras = {}
        annotation["start_index"] = citation.text_start
        annotation["end_index"] = citation.text_end
        extras["number"] = citation.number
        extras["document_positions"] = list(citation.document_positions)
        if passage is not None:
            extras["document_position"] = passage.document_position
            extras["document_start"] = passage.document_start
            extras["document_end"] = passage.document_end
            extras["score"] = passage.score
        annotation["extras"] = extras
        return annotation


def _passage_dict(passage: Passage) -> dict[str, Any]:
    return {
        "document_position": passage.document_position,
        "document_start": passage.document_start,
        "document_end": passage.document_end,
        "excerpt": passage.excerpt,
        "score": passage.score,
    }


def _citation_from_dict(data: Mapping[str, Any]) -> Citation:
    passage = data.get("passage")
    return Citation(
        **{
            **data,
            "document_positions": tuple(data["document_positions"]),
            "passage": None if passage is None else Passage(**passage),
        }
    )


def _document_start(position: int, documents: Sequence[Any]) -> str | None:
    """The start of the document at a 1-based position (None: no such document, or no text)."""
    if not 1 <= position <= len(documents):
        return None
    text = getattr(documents[position - 1], "page_content", None)
    return text[:_DOCUMENT_START] if isinstance(text, str) else None
