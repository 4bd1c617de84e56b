"""The passage behind each citation: attached once the answer is complete.

For every citation of documents, `attach_passages` asks the text layer's
passage finder for the sentence of each cited document that best supports
the words the citation backs (one split per document, one scoring batch),
and keeps the best one (the first cited document on a tie). Native citations
(a provider's own) have no document of ours and get none. With the lexical
engine a session finds them as citations close (`passage_finder`: each
citation's documents join the batch as it closes, `join_cited`, and its
passage is found a little later with others, `find_passage`), and at the
end finds again only those a document cited later made stale: the same
passages, with no burst of scoring at the end.

Example:
    >>> from types import SimpleNamespace as Doc
    >>> from langchain_refs.streaming._references import AnswerReferences, Citation
    >>> refs = AnswerReferences(citations=(Citation(number=1, document_positions=(1,), start=15, end=18,
    ...     text_start=0, text_end=15, text="Paris in France", marker="[1](id=1)"),))
    >>> doc = Doc(page_content="Rome is old. Paris is in France. It rains.")
    >>> attach_passages(refs, [doc]).citations[0].passage.excerpt
    'Paris is in France.'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import fields, replace
from typing import Any, Final

from langchain_refs.streaming._protocols import scorer_lock
from langchain_refs.streaming._references import AnswerReferences, Citation, Passage
from langchain_refs.text import PASSAGE_SUPPORT, LexicalSupport, PairScorer, PassageFinder, find_passages

__all__ = [
    "attach_passages",
    "find_passage",
    "join_cited",
    "passage_finder",
    "passage_scorer",
    "scored_at_close",
    "with_passage",
]


def passage_scorer(passages: bool | PairScorer | None) -> PairScorer | None:
    """The scorer a ``passages`` option stands for: True the lexical default, False/None none.

    Example:
        >>> passage_scorer(True) is PASSAGE_SUPPORT, passage_scorer(False)
        (True, None)
    """
    if passages is True:
        return PASSAGE_SUPPORT
    if passages is False or passages is None:
        return None
    if not callable(getattr(passages, "score", None)):
        msg = (
            f"passages must be True, False or a scorer with score(pairs) -> scores (a LangChain cross-encoder, "
            f"a langchain_refs scorer); got {type(passages).__name__}"
        )
        raise TypeError(msg)
    return passages


def scored_at_close(passages: bool | PairScorer | None) -> bool:
    """Whether the ``passages`` option scores the passages once an answer is complete: a scorer of the user's.

    The lexical engine finds them as citations close, in a few milliseconds;
    another scorer (a cross-encoder: a model) scores them all at the end, and
    async callers run that end in a worker thread.

    Example:
        >>> class Scorer:
        ...     def score(self, pairs): return [0.0] * len(pairs)
        >>> scored_at_close(True), scored_at_close(False), scored_at_close(Scorer())
        (False, False, True)
    """
    scorer = passage_scorer(passages)
    return scorer is not None and type(scorer) is not LexicalSupport


def passage_finder(scorer: PairScorer | None) -> PassageFinder | None:
    """A `PassageFinder` for ``scorer`` when it is the lexical engine (others score at the end, in one batch).

    Example:
        >>> passage_finder(PASSAGE_SUPPORT) is not None, passage_finder(None)
        (True, None)
    """
    return PassageFinder(scorer=scorer) if type(scorer) is LexicalSupport else None


def join_cited(finder: PassageFinder, claim: str, positions: tuple[int, ...], documents: Sequence[Any]) -> None:
    """The texts of a citation that just closed join ``finder``'s batch, as `attach_passages` would join them.

    ``claim`` is the words the citation backs (`Citation.text`),
    ``positions`` its document positions: each in ``documents`` joins,
    unless the claim is blank (no passage is searched for a blank claim,
    and its texts are not in `attach_passages`'s batch). Its passage is
    found later (`find_passage`); until then `PassageFinder.generation`
    says whether the batch changed: a document cited for the first time
    changes the words' rarity, and the passages found before must then be
    found again.

    Example:
        >>> from types import SimpleNamespace as Doc
        >>> from langchain_refs.text import PassageFinder
        >>> finder = PassageFinder()
        >>> join_cited(finder, "Paris in France", (1, 2), [Doc(page_content="Paris is in France.")])
        >>> finder.generation
        1
    """
    if not claim.strip():
        return
    count = len(documents)
    for position in positions:
        if 1 <= position <= count:
            finder.join(_text_of(documents[position - 1]))


def find_passage(
    finder: PassageFinder, claim: str, positions: tuple[int, ...], documents: Sequence[Any]
) -> Passage | None:
    """The best passage among the documents at ``positions``, within ``finder``'s batch as it now stands.

    As `attach_passages` chooses it (the first on a tie), once the
    documents of every citation of the answer so far have joined the batch
    (`join_cited`). None: no position in ``documents`` (a native citation
    has none).

    Example:
        >>> from types import SimpleNamespace as Doc
        >>> from langchain_refs.text import PassageFinder
        >>> docs = [Doc(page_content="Rome is old. Paris is big.")]
        >>> find_passage(PassageFinder(), "Paris", (1,), docs).excerpt
        'Paris is big.'
    """
    find = finder.find_one
    count = len(documents)
    if len(positions) == 1:
        # The usual citation, of one document: nothing to choose between.
        position = positions[0]
        if not 1 <= position <= count:
            return None
        return _passage(position, find(claim, _text_of(documents[position - 1])))
    return _chosen_passage(positions, count, lambda position: find(claim, _text_of(documents[position - 1])))


def _chosen_passage(
    positions: tuple[int, ...], count: int, window_of: Callable[[int], tuple[int, int, str, float]]
) -> Passage | None:
    """The `Passage` of the best window ``window_of`` gives for each of ``positions`` in 1..``count``.

    The highest score wins, the first on a tie (NaN loses to any score); None when no position is in range.
    """
    best: tuple[int, tuple[int, int, str, float]] | None = None
    for position in positions:
        if 1 <= position <= count:
            window = window_of(position)
            if best is None or _rank(window[3]) > _rank(best[1][3]):
                best = (position, window)
    if best is None:
        return None
    position, window = best
    return _passage(position, window)


def _passage(position: int, window: tuple[int, int, str, float]) -> Passage:
    """The `Passage` of the document at ``position`` that ``window`` (start, end, excerpt, score) spans."""
    start, end, excerpt, score = window
    return Passage(document_position=position, document_start=start, document_end=end, excerpt=excerpt, score=score)


def attach_passages(
    references: AnswerReferences,
    documents: Sequence[Any],
    scorer: PairScorer | None = None,
    finder: PassageFinder | None = None,
) -> AnswerReferences:
    """``references`` with each document citation's `Passage` filled in.

    The words a citation backs (``Citation.text``) are the claim; the cited
    documents' sentences the candidates, scored by ``scorer`` (default: the
    lexical engine) in one batch. A position outside ``documents`` gives no
    candidate; a citation with none keeps ``passage=None``. A ``finder``
    (the lexical engine's, given ``scorer``'s settings) brings what it read
    as citations closed (the documents' sentences, the batch's weights): the
    same result, sooner.

    Example:
        >>> attach_passages(AnswerReferences(), []) == AnswerReferences()
        True
    """
    citations = references.citations
    wanted: list[tuple[str, int]] = [
        (citation.text, position)
        for citation in citations
        if citation.native is None
        for position in citation.document_positions
        if 1 <= position <= len(documents)
    ]
    if not wanted:
        return references
    texts = [_text_of(document) for document in documents]
    pairs = [(claim, texts[position - 1]) for claim, position in wanted]
    if finder is not None:
        found = iter(finder.find_windows(pairs))
    else:
        scoring = scorer if scorer is not None else PASSAGE_SUPPORT
        # A scorer of the user's is called in turn by answers that end together in threads (`scorer_lock`).
        with scorer_lock(scoring) if type(scoring) is not LexicalSupport else nullcontext():
            spans = find_passages(pairs, scorer=scoring)
        found = iter([(span.start, span.end, span.excerpt, span.score) for span in spans])
    attached = []
    count = len(documents)
    for citation in citations:
        if citation.native is not None:
            attached.append(citation)
            continue
        # The windows come in the order `wanted` asked for them: one per position in range.
        passage = _chosen_passage(citation.document_positions, count, lambda _position: next(found))
        attached.append(citation if passage is None else with_passage(citation, passage))
    return replace(references, citations=tuple(attached))


# The fields `with_passage` copies by name: were `Citation` to gain one, it would fall back to `replace`.
_CITATION_FIELDS: Final = (
    "number",
    "document_positions",
    "start",
    "end",
    "text_start",
    "text_end",
    "text",
    "marker",
    "support",
    "supported",
    "unsupported_reason",
    "passage",
    "native",
)
_COPIED_BY_NAME: Final = tuple(f.name for f in fields(Citation)) == _CITATION_FIELDS


def with_passage(citation: Citation, passage: Passage | None) -> Citation:
    """``replace(citation, passage=passage)``, without its generic reading of every field (one per citation).

    Example:
        >>> cited = Citation(number=1, document_positions=(1,), start=5, end=8,
        ...     text_start=0, text_end=5, text="Paris", marker="[1](id=1)")
        >>> found = Passage(document_position=1, document_start=0, document_end=6, excerpt="Paris.", score=1.0)
        >>> with_passage(cited, found) == replace(cited, passage=found)
        True
    """
    if type(citation) is not Citation or not _COPIED_BY_NAME:
        return replace(citation, passage=passage)
    return Citation(
        number=citation.number,
        document_positions=citation.document_positions,
        start=citation.start,
        end=citation.end,
        text_start=citation.text_start,
        text_end=citation.text_end,
        text=citation.text,
        marker=citation.marker,
        support=citation.support,
        supported=citation.supported,
        unsupported_reason=citation.unsupported_reason,
        passage=passage,
        native=citation.native,
    )


def _text_of(document: Any) -> str:
    # `_inputs.document_text` reads it the same way, but `_inputs` imports LangChain: the session must not.
    text = getattr(document, "page_content", None)
    return text if isinstance(text, str) else ""


def _rank(score: float) -> float:
    # NaN compares false with everything: rank it below every real score.
    return -math.inf if math.isnan(score) else score
