"""LangChain's standard ``Citation`` annotations for a rewritten answer.

Each citation of an answer becomes one ``{"type": "citation", ...}`` dict (see
``langchain_core.messages.content.Citation``): ``url`` and ``title`` of the
source, ``start_index``/``end_index`` of the words it backs in the rewritten
text, and ``cited_text``, an excerpt of the cited document: the sentence of
the document that best supports those words, scored with the text layer's
lexical engine (no model, no download). It is computed once the answer is
complete, so the stream gains no latency. ``extras`` keep our own data: the
citation's number, the ids of the documents it cites, and where in which
document the excerpt stands (``document_id``, ``document_start``,
``document_end``) with its ``score``.

Example:
    >>> from langchain_core.documents import Document
    >>> from langchain_refs.streaming import AnswerReferences, Citation, Reference
    >>> doc = Document("Rome is old. Paris is in France. It rains.", metadata={"source": "p.html"})
    >>> refs = AnswerReferences(
    ...     references=(Reference(number=1, source="p.html", title=None, document_positions=(1,)),),
    ...     citations=(Citation(number=1, document_positions=(1,), start=15, end=18, text_start=0,
    ...                         text_end=15, text="Paris in France", marker="[1](id=1)"),))
    >>> standard_citations(refs, [doc])[0]["cited_text"]
    'Paris is in France.'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.documents import Document

from langchain_refs.streaming import AnswerReferences
from langchain_refs.text import PairScorer, find_passages

__all__ = ["Passage", "best_passages", "standard_citations"]

# With passages off, ``cited_text`` is the start of the cited document, cut here.
_FALLBACK_EXCERPT = 300


@dataclass(frozen=True, slots=True, kw_only=True)
class Passage:
    """The span of a document that best supports a claim.

    ``document`` is the 1-based position of the document in the list given;
    ``text == page_content[start:end]``.

    Example:
        >>> Passage(document=1, start=0, end=4, text="Rome", score=0.5).text
        'Rome'
    """

    document: int
    start: int
    end: int
    text: str
    score: float


def best_passages(
    claims: Sequence[tuple[str, int]],
    documents: Sequence[Document],
    *,
    scorer: PairScorer | None = None,
) -> list[Passage]:
    """For each ``(claim, document position)``, the document's sentence that best supports the claim.

    The text layer's `find_passages` does the work: each document is split
    into sentences once, all pairs are scored in one batch (one call of the
    scorer; the lexical engine by default), ties go to the earlier sentence.

    Example:
        >>> from langchain_core.documents import Document
        >>> docs = [Document("Lyon is big. Lyon has silk.")]
        >>> best_passages([("silk from Lyon", 1)], docs)[0].text
        'Lyon has silk.'
    """
    found = find_passages([(claim, documents[position - 1].page_content) for claim, position in claims], scorer=scorer)
    return [
        Passage(document=position, start=span.start, end=span.end, text=span.excerpt, score=span.score)
        for (_, position), span in zip(claims, found, strict=True)
    ]


def standard_citations(
    references: AnswerReferences,
    documents: Sequence[Document],
    *,
    passages: bool = True,
    scorer: PairScorer | None = None,
) -> list[dict[str, Any]]:
    """The answer's citations as standard ``Citation`` dicts, offsets into the whole rewritten text.

    With ``passages`` off, ``cited_text`` is the start of the cited document
    (no scoring at all).

    Example:
        >>> standard_citations(AnswerReferences(), [])
        []
    """
    by_number = {r.number: r for r in references.references}
    citations = [c for c in references.citations if c.document_positions]
    # A citation naming several documents of one source gets the best excerpt among them.
    wanted = [(c.text, position) for c in citations for position in c.document_positions]
    if passages:
        found = iter(best_passages(wanted, documents, scorer=scorer))
    else:
        found = iter(
            Passage(document=p, start=0, end=len(t), text=t, score=0.0)
            for _, p in wanted
            for t in [documents[p - 1].page_content[:_FALLBACK_EXCERPT]]
        )
    annotations: list[dict[str, Any]] = []
    for citation in citations:
        candidates = [next(found) for _ in citation.document_positions]
        passage = max(candidates, key=lambda p: p.score)
        reference = by_number.get(citation.number)
        annotation: dict[str, Any] = {
            "type": "citation",
            "start_index": citation.text_start,
            "end_index": citation.text_end,
            "cited_text": passage.text,
            "extras": {
                "number": citation.number,
                "document_ids": list(citation.document_positions),
                "document_id": passage.document,
                "document_start": passage.start,
                "document_end": passage.end,
                "score": passage.score,
            },
        }
        if reference is not None and reference.source is not None:
            annotation["url"] = reference.source
        if reference is not None and reference.title:
            annotation["title"] = reference.title
        annotations.append(annotation)
    return annotations
