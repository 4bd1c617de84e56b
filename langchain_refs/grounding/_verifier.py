"""Support for the citations a model made: each citation scored against what it cites."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from langchain_core.cross_encoders import BaseCrossEncoder
from langchain_core.documents.base import BaseMedia

from langchain_refs._inputs import document_text
from langchain_refs.streaming import support_threshold_of
from langchain_refs.streaming._references import AnswerReferences
from langchain_refs.text import SentenceSplitter, sentence_windows

__all__ = ["SupportScorer", "verify_citations"]


class SupportScorer(BaseCrossEncoder):
    """A cross-encoder whose scores say how well evidence supports a claim, in [0, 1].

    Every scorer of the grounding wing is one, so it can be handed to
    ``manage_references(verifier=...)``: it implements the streaming wing's
    `CitationVerifier` protocol through `verify_citations`.

    ``support_threshold`` is the score from which a citation counts as
    supported when no threshold is given. Each scorer of this package sets
    its own, chosen on the development data by one rule (the threshold that
    maximises macro-F1 of attributable vs not attributable on the
    AttributionBench development split, scored the way `verify_citations`
    scores a citation; see ``bench/eval_grounding.py``), so that "supported"
    means about the same whichever scorer is used. A scorer of your own
    keeps 0.5 unless it says otherwise.

    Example:
        >>> from langchain_refs import LexicalScorer
        >>> isinstance(LexicalScorer(), SupportScorer)
        True
    """

    support_threshold: float = 0.5

    def verify_citations(
        self, references: AnswerReferences, documents: Sequence[BaseMedia], *, threshold: float | None = None
    ) -> AnswerReferences:
        """Score each citation of ``references`` against the ``documents`` it cites.

        ``threshold=None`` uses this scorer's ``support_threshold``.

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
    threshold: float | None = None,
    splitter: SentenceSplitter | None = None,
    window: int | None = None,
) -> AnswerReferences:
    """Score each citation's words against the documents it cites.

    By default each citation is scored once, against the text of the
    documents it cites (joined by blank lines): every scorer of this package
    reads long evidence as sentence windows itself, blended with the whole
    (lexical) or as the best window (embeddings). With ``window`` set, the
    citation's ``support`` is instead its best score over windows of
    ``window`` sentences of the cited documents (for a scorer of your own
    that only reads short texts). On the AttributionBench development split
    the whole-text reading separates attributable claims better (AUROC 0.752
    against 0.726 for the best two-sentence window, lexical scorer).

    ``supported`` says whether ``support`` reaches ``threshold``; None uses
    the scorer's ``support_threshold`` (0.5 for a scorer without one). A
    position that names no document of ``documents`` (below 1 or past the
    end) gives no evidence; a citation with no evidence, or no words, gets
    support 0. Each citation is scored on its own, so its support does not
    depend on the other citations of the answer.

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
    if threshold is None:
        threshold = support_threshold_of(scorer)
    splitter = splitter or SentenceSplitter()
    texts: dict[int, list[str]] = {}
    for citation in references.citations:
        for position in citation.document_positions:
            # documents[-1] would silently stand for position 0: check the range, not just the end.
            if position not in texts and 1 <= position <= len(documents):
                text = document_text(documents[position - 1])
                if window is None:
                    texts[position] = [text] if text.strip() else []
                else:
                    spans = sentence_windows(splitter.split(text), window, 1)
                    texts[position] = [text[s:e] for s, e in spans] or [text]
    checked = []
    for citation in references.citations:
        cited = [t for p in dict.fromkeys(citation.document_positions) for t in texts.get(p, ())]
        evidence = cited if window is not None else ["\n\n".join(cited)] if cited else []
        scores = scorer.score([(citation.text, text) for text in evidence]) if evidence and citation.text else [0.0]
        support = round(max(scores), 6)
        checked.append(replace(citation, support=support, supported=support >= threshold))
    return replace(references, citations=tuple(checked))
