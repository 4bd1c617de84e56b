"""Support for the citations a model made: each citation scored against what it cites."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from langchain_core.cross_encoders import BaseCrossEncoder
from langchain_core.documents.base import BaseMedia

from langchain_refs._inputs import document_text
from langchain_refs.streaming._references import AnswerReferences
from langchain_refs.text import SentenceSplitter, sentence_windows

__all__ = ["SupportScorer", "verify_citations"]


class SupportScorer(BaseCrossEncoder):
    """A cross-encoder whose scores say how well evidence supports a claim, in [0, 1].

    Every scorer of the grounding wing is one, so it can be handed to
    ``manage_references(verifier=...)``: it implements the streaming wing's
    `CitationVerifier` protocol through `verify_citations`.

    Example:
        >>> from langchain_refs import LexicalScorer
        >>> isinstance(LexicalScorer(), SupportScorer)
        True
    """

    def verify_citations(
        self, references: AnswerReferences, documents: Sequence[BaseMedia], *, threshold: float = 0.5
    ) -> AnswerReferences:
        """Score each citation of ``references`` against the ``documents`` it cites.

        Example:
            >>> from langchain_refs import LexicalScorer
            >>> LexicalScorer().verify_citations(AnswerReferences(references=(), citations=()), [])
            AnswerReferences(references=(), citations=(), invalid_citations=())
        """
        return verify_citations(references, documents, self, threshold=threshold)


def verify_citations(
    references: AnswerReferences,
    documents: Sequence[BaseMedia],
    scorer: BaseCrossEncoder,
    *,
    threshold: float = 0.5,
    splitter: SentenceSplitter | None = None,
    window: int = 2,
) -> AnswerReferences:
    """Score each citation's words against the documents it cites.

    Each citation's ``support`` is its best score over windows of ``window``
    sentences of the cited documents; ``supported`` says whether it reaches
    ``threshold``. A position that names no document of ``documents`` (below 1
    or past the end) gives no evidence; a citation with no evidence, or no
    words, gets support 0.

    Example:
        >>> from langchain_core.documents import Document
        >>> from langchain_refs import Citation, LexicalScorer, Reference
        >>> refs = AnswerReferences(
        ...     references=(Reference(number=1, source="a", title=None, document_positions=(1,)),),
        ...     citations=(Citation(number=1, document_positions=(1,), start=5, end=8, text_start=0,
        ...                         text_end=5, text="Paris is in France", marker="[1](id=1)"),))
        >>> checked = verify_citations(refs, [Document("Paris is a city in France.")], LexicalScorer())
        >>> checked.citations[0].supported
        True
    """
    splitter = splitter or SentenceSplitter()
    windows: dict[int, list[str]] = {}
    for citation in references.citations:
        for position in citation.document_positions:
            # documents[-1] would silently stand for position 0: check the range, not just the end.
            if position not in windows and 1 <= position <= len(documents):
                text = document_text(documents[position - 1])
                windows[position] = [text[s:e] for s, e in sentence_windows(splitter.split(text), window, 1)] or [text]
    checked = []
    for citation in references.citations:
        evidence = [w for p in citation.document_positions for w in windows.get(p, ())]
        scores = scorer.score([(citation.text, text) for text in evidence]) if evidence and citation.text else [0.0]
        support = round(max(scores), 6)
        checked.append(replace(citation, support=support, supported=support >= threshold))
    return replace(references, citations=tuple(checked))
