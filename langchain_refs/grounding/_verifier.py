"""Support for the citations a model made: each citation scored against what it cites."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from langchain_core.cross_encoders import BaseCrossEncoder
from langchain_core.documents.base import BaseMedia

from langchain_refs._inputs import checked_documents, document_text
from langchain_refs.grounding._guards import DEFAULT_GUARDS, GuardFinding, MeaningGuards, checked_guards
from langchain_refs.streaming import AnswerReferences, checked_support_threshold, support_threshold_of
from langchain_refs.text import DEFAULT_SPLITTER, SentenceSplitter, sentence_windows

__all__ = ["GUARD_FROM", "GUARD_PENALTY", "SupportScorer", "citation_findings", "verify_citations"]

GUARD_PENALTY = 0.95
"""The factor a citation's support is multiplied by when a meaning guard fires on it."""
GUARD_FROM = 1.0
"""The share of the threshold from which a citation's words are held to the meaning guards.

Below it the citation is unsupported anyway; from it, a guard that fires
makes it unsupported and lowers its support a little (so that it ranks
below the same score unguarded). On the development splits, guarding from
the threshold with a factor of 0.95 keeps the AUROC of AttributionBench
(0.752) and of WiCE (0.938), where guarding from 0.8 of it would raise them
by 0.002 at a third more guarded citations (see ``bench/eval_grounding.py``).
"""


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
    guards: MeaningGuards | None = DEFAULT_GUARDS
    """The meaning guards `verify_citations` applies for this scorer (None: the score alone)."""

    def verify_citations(
        self, references: AnswerReferences, documents: Sequence[BaseMedia], *, threshold: float | None = None
    ) -> AnswerReferences:
        """Score each citation of ``references`` against the ``documents`` it cites.

        ``threshold=None`` uses this scorer's ``support_threshold``; the
        scorer's ``guards`` are applied (see `verify_citations`).

        Example:
            >>> from langchain_refs import LexicalScorer
            >>> LexicalScorer().verify_citations(AnswerReferences(references=(), citations=()), [])
            AnswerReferences(references=(), citations=(), invalid_citations=())
        """
        return verify_citations(references, documents, self, threshold=threshold, guards=self.guards)


def checked_scorer(scorer: object, owner: str) -> None:
    """Nothing when ``scorer`` scores pairs (``score(pairs)``), else a TypeError naming ``owner``.

    Example:
        >>> checked_scorer("lexical", "ScorerClaimChecker")
        Traceback (most recent call last):
        ...
        TypeError: ScorerClaimChecker: scorer must have score(pairs) (LexicalScorer(), a cross-encoder...), got str
    """
    if not callable(getattr(scorer, "score", None)):
        got = type(scorer).__name__
        msg = f"{owner}: scorer must have score(pairs) (LexicalScorer(), a cross-encoder...), got {got}"
        raise TypeError(msg)


def verify_citations(
    references: AnswerReferences,
    documents: Sequence[BaseMedia],
    scorer: BaseCrossEncoder,
    *,
    threshold: float | None = None,
    splitter: SentenceSplitter | None = None,
    window: int | None = None,
    guards: MeaningGuards | None = DEFAULT_GUARDS,
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

    ``supported`` says whether ``support`` reaches ``threshold`` (and no
    guard fired, below); None uses
    the scorer's ``support_threshold`` (0.5 for a scorer without one). A
    position that names no document of ``documents`` (below 1 or past the
    end) gives no evidence; a citation with no evidence, or no words, gets
    support 0. Each citation is scored on its own, so its support does not
    depend on the other citations of the answer.

    ``guards`` (on by default; None or ``MeaningGuards.off()`` for the score
    alone) hold every citation whose support reaches `GUARD_FROM` of the
    threshold to what it asserts: when a number, name, negation or antonym
    of its words is missing from or disagrees with the text it cites, it is
    not supported, whatever its score, and its support is multiplied by
    `GUARD_PENALTY` (it still ranks the citations). `citation_findings` says
    which guard fired and what the source says instead.

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
        >>> wrong = replace(refs, citations=(replace(refs.citations[0], text="Paris is in Italy"),))
        >>> verify_citations(wrong, [Document("Paris is a city in France.")], LexicalScorer()).citations[0].supported
        False
    """
    if not isinstance(references, AnswerReferences):
        got = type(references).__name__
        msg = f"verify_citations(): references must be an AnswerReferences (a session's), got {got}"
        raise TypeError(msg)
    checked_documents(documents, "verify_citations()")
    checked_scorer(scorer, "verify_citations()")
    guards = checked_guards(guards, "verify_citations()")
    threshold = checked_support_threshold(threshold, option="threshold", none_means="the scorer's own")
    if threshold is None:
        threshold = support_threshold_of(scorer)
    splitter = splitter or DEFAULT_SPLITTER
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
        supported = support >= threshold
        finding = (
            guards.check(citation.text, "\n\n".join(cited))
            if guards is not None and support > 0 and support >= GUARD_FROM * threshold
            else None
        )
        if finding is not None:
            support, supported = round(support * GUARD_PENALTY, 6), False
        checked.append(
            replace(
                citation,
                support=support,
                supported=supported,
                unsupported_reason=None if finding is None else finding.reason,
            )
        )
    return replace(references, citations=tuple(checked))


def citation_findings(
    references: AnswerReferences, documents: Sequence[BaseMedia], *, guards: MeaningGuards | None = DEFAULT_GUARDS
) -> tuple[GuardFinding | None, ...]:
    """For each citation, the meaning guard that fires on it against the documents it cites, or None.

    ``guards=None`` runs none (as `verify_citations` takes it): every entry is None.

    The reason `verify_citations` gives a citation no support although its
    words score well: ``finding.reason`` says what the source says instead
    ("the sources say 330 metres, not 450 metres"); ``start``/``end`` are
    offsets in the cited documents' texts joined by blank lines.

    Example:
        >>> from langchain_core.documents import Document
        >>> from langchain_refs import Citation, Reference
        >>> refs = AnswerReferences(
        ...     references=(Reference(number=1, source="a", title=None, document_positions=(1,)),),
        ...     citations=(Citation(number=1, document_positions=(1,), start=0, end=3, text_start=0,
        ...                         text_end=0, text="The tower is 450 metres tall", marker="[1](id=1)"),))
        >>> citation_findings(refs, [Document("The tower is 330 metres tall.")])[0].reason
        'the sources say 330 metres, not 450 metres'
    """
    checked_documents(documents, "citation_findings()")
    guards = checked_guards(guards, "citation_findings()")
    if guards is None:
        # No guard runs: none fires.
        return tuple(None for _ in references.citations)
    found: list[GuardFinding | None] = []
    for citation in references.citations:
        cited = [
            document_text(documents[p - 1])
            for p in dict.fromkeys(citation.document_positions)
            if 1 <= p <= len(documents)
        ]
        found.append(guards.check(citation.text, "\n\n".join(cited)) if cited and citation.text else None)
    return tuple(found)
