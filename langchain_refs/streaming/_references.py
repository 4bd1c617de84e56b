"""The references of one answer, as data: frozen values, no LangChain needed."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AnswerContext", "AnswerReferences", "Citation", "InvalidCitation", "Reference"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerContext:
    """What a style is told about the one answer it is rendering.

    A style is configuration shared by every answer; what belongs to one
    answer is passed with each rendering call instead: ``answer_id`` (unique
    per answer, so HTML ids stay unique when several answers share a page),
    ``support`` (number -> whether a verifier found it supported; None before
    or without a verifier) and ``source_of`` (the function the answer's
    sources are numbered by, so the list shows the same source; None: the
    style's own ``source_id_key``).

    Example:
        >>> AnswerContext(answer_id="a1", support={1: False}).support[1]
        False
    """

    answer_id: str = ""
    support: Mapping[int, bool] | None = None
    source_of: Callable[[Any], Any] | None = None
    rendered: dict[Any, Any] = field(init=False, default_factory=dict, repr=False, compare=False)
    """What a style already rendered for this answer (it may cache here: the
    context lives exactly as long as the answer)."""


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


@dataclass(frozen=True, slots=True, kw_only=True)
class Citation:
    """One citation as it stands in the output text.

    ``start``/``end`` delimit the rendered citation in the text the middleware
    produced (``output[start:end]``); ``text_start``/``text_end`` delimit the
    words it backs (the clause before it), and ``text`` holds those words.
    ``marker`` is what the model wrote. ``support`` (a score in [0, 1]) and
    ``supported`` are filled in when a verifier checked the citation.

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
    memory stays flat however many the model writes.

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

    def __repr__(self) -> str:
        # The count is shown only when something was omitted: the common
        # repr stays the short one users see in examples.
        omitted = (
            f", omitted_invalid_citations={self.omitted_invalid_citations}" if self.omitted_invalid_citations else ""
        )
        return (
            f"AnswerReferences(references={self.references!r}, citations={self.citations!r}, "
            f"invalid_citations={self.invalid_citations!r}{omitted})"
        )

    def to_dict(self) -> dict[str, Any]:
        """The references as plain JSON-ready data.

        Example:
            >>> AnswerReferences().to_dict()
            {'references': [], 'citations': [], 'invalid_citations': [], 'omitted_invalid_citations': 0}
        """
        # Written out field by field: `dataclasses.asdict` copies each value
        # recursively and cost ~10x as much, on the last chunk of every answer.
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
            "citations": [
                {
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
                }
                for c in self.citations
            ],
            "invalid_citations": [
                {"marker": i.marker, "item": i.item, "reason": i.reason, "offset": i.offset}
                for i in self.invalid_citations
            ],
            "omitted_invalid_citations": self.omitted_invalid_citations,
        }

    def to_json(self) -> str:
        """The references as a JSON string.

        Example:
            >>> AnswerReferences().to_json()
            '{"references": [], "citations": [], "invalid_citations": [], "omitted_invalid_citations": 0}'
        """
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AnswerReferences:
        """Rebuild the value written by `to_dict`.

        Example:
            >>> AnswerReferences.from_dict({"references": []})
            AnswerReferences(references=(), citations=(), invalid_citations=())
        """
        return cls(
            references=tuple(
                Reference(**{**r, "document_positions": tuple(r["document_positions"])})
                for r in data.get("references", ())
            ),
            citations=tuple(
                Citation(**{**c, "document_positions": tuple(c["document_positions"])})
                for c in data.get("citations", ())
            ),
            invalid_citations=tuple(InvalidCitation(**i) for i in data.get("invalid_citations", ())),
            omitted_invalid_citations=int(data.get("omitted_invalid_citations", 0)),
        )

    def standard_citations(self) -> list[dict[str, Any]]:
        """The citations as LangChain's standard ``Citation`` annotations.

        Each has ``type="citation"``, ``url`` and ``title`` of its source,
        ``start_index``/``end_index`` of the words it backs in the output text
        and those words as ``cited_text`` (see
        ``langchain_core.messages.content.Citation``).

        Example:
            >>> refs = AnswerReferences(
            ...     references=(Reference(number=1, source="https://a.org", title="A",
            ...                           document_positions=(1,)),),
            ...     citations=(Citation(number=1, document_positions=(1,), start=5, end=8,
            ...                         text_start=0, text_end=5, text="Paris", marker="[1](id=1)"),))
            >>> refs.standard_citations()[0]["cited_text"]
            'Paris'
        """
        by_number = {r.number: r for r in self.references}
        annotations: list[dict[str, Any]] = []
        for citation in self.citations:
            reference = by_number[citation.number]
            annotation: dict[str, Any] = {
                "type": "citation",
                "start_index": citation.text_start,
                "end_index": citation.text_end,
                "cited_text": citation.text,
                "extras": {
                    "number": citation.number,
                    "document_positions": list(citation.document_positions),
                },
            }
            if reference.source is not None:
                annotation["url"] = reference.source
            if reference.title:
                annotation["title"] = reference.title
            annotations.append(annotation)
        return annotations
