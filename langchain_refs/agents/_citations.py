"""LangChain's standard ``Citation`` annotations for a rewritten answer, and the passages behind them.

The streaming wing does the work: a `ReferenceSession` finds each citation's
`Passage` with the text layer's passage finder (lexical by default, as each citation
closes), and `AnswerReferences.standard_citations` writes the
annotations: ``url`` and ``title`` of the source, ``start_index``/
``end_index`` of the words it backs in the rewritten text, and
``cited_text``, the passage of the cited document that best supports those
words. ``extras`` keep our own data: the citation's ``number``, its
``document_positions`` (ids in the thread) and where the passage stands
(``document_position``, ``document_start``, ``document_end``) with its
``score``. These helpers serve references made without passages.

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
from typing import Any

from langchain_core.documents import Document

from langchain_refs.streaming import AnswerReferences, Passage, attach_passages
from langchain_refs.text import PairScorer, find_passages

__all__ = ["Passage", "best_passages", "standard_citations"]


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
        >>> best_passages([("silk from Lyon", 1)], docs)[0].excerpt
        'Lyon has silk.'
    """
    found = find_passages([(claim, documents[position - 1].page_content) for claim, position in claims], scorer=scorer)
    return [
        Passage(
            document_position=position,
            document_start=span.start,
            document_end=span.end,
            excerpt=span.excerpt,
            score=span.score,
        )
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

    Citations without a passage get one first (unless ``passages`` is off:
    ``cited_text`` is then the start of the cited document).

    Example:
        >>> standard_citations(AnswerReferences(), [])
        []
    """
    if passages and any(c.passage is None and c.document_positions for c in references.citations):
        references = attach_passages(references, documents, scorer)
    return references.standard_citations(documents)
