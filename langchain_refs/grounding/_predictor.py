"""Grounding: references predicted for answers without markers, and citation support.

`ReferencePredictor` splits an answer and its documents into sentence windows,
scores every (answer window, document window) pair with a scorer, and attaches
to the answer the best-supported document spans, with exact character offsets
on both sides. `verify_citations` scores the citations a model did write
against the documents they cite.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from langchain_core.cross_encoders import BaseCrossEncoder
from langchain_core.documents.base import BaseMedia
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from typing_extensions import override

from langchain_refs._inputs import checked_documents, checked_documents_key, document_text, documents_from, input_value
from langchain_refs.grounding._guards import DEFAULT_GUARDS, MeaningGuards, checked_guards
from langchain_refs.grounding._scoring import LexicalScorer
from langchain_refs.streaming import checked_support_threshold, support_threshold_of
from langchain_refs.text import DEFAULT_SPLITTER, SentenceSplitter, sentence_windows, window_indices

__all__ = ["PredictedReference", "ReferencePredictor", "needs_reference"]

# "partially_grounded" starts at this share of the scorer's support_threshold (0.35 for the lexical scorer's 0.5).
_PARTIAL_SHARE = 0.7

_NO_CLAIM = re.compile(
    r"^\s*(?:#{1,6}\s|(?:hi|hello|hey|thanks|thank you|you're welcome|sure|of course|great question)\b"
    r"|(?:i|we)\s+(?:could not|couldn't|cannot|can't|did not|didn't|do not|don't)\s+(?:find|know|see|locate)\b"
    r"|(?:the|these|those)\s+documents?\s+(?:do|does)\s+not\b|(?:let me know|i hope this helps|feel free)\b)",
    re.IGNORECASE,
)
_WORDS = re.compile(r"\w+")


def needs_reference(sentence: str) -> bool:
    """Whether a sentence makes a claim a source should back (rule-based).

    Greetings, headings, "I could not find this in the documents", closing
    pleasantries and fragments of fewer than four words need none.

    Example:
        >>> [needs_reference(s) for s in ["Hello!", "# Summary", "I could not find it.",
        ...                               "Paris is the capital of France."]]
        [False, False, False, True]
    """
    if _NO_CLAIM.match(sentence):
        return False
    return len(_WORDS.findall(sentence)) >= 4


@dataclass(frozen=True, slots=True, kw_only=True)
class PredictedReference:
    """A span of a document that supports a span of the answer.

    ``answer[answer_start_idx:answer_end_idx]`` and
    ``document_text(document)[document_start_idx:document_end_idx]`` are the two
    spans; ``document_position`` is 1-based in the documents given. ``guard``
    and ``reason`` name the meaning guard that kept the span from a
    supporting label, and why (None when none fired).

    Example:
        >>> ref = PredictedReference(document_start_idx=0, document_end_idx=5, answer_start_idx=0,
        ...     answer_end_idx=5, score=0.9, document_id="d1", document_position=1, label="grounded")
        >>> PredictedReference.from_dict(ref.to_dict()) == ref
        True
    """

    document_start_idx: int
    document_end_idx: int
    answer_start_idx: int
    answer_end_idx: int
    score: float
    document_id: str | None
    document_position: int
    label: str
    guard: str | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data.

        Example:
            >>> PredictedReference(document_start_idx=0, document_end_idx=1, answer_start_idx=0,
            ...     answer_end_idx=1, score=1.0, document_id=None, document_position=1,
            ...     label="grounded").to_dict()["label"]
            'grounded'
        """
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PredictedReference:
        """Rebuild the value written by `to_dict`.

        Example:
            >>> PredictedReference.from_dict({"document_start_idx": 0, "document_end_idx": 1,
            ...     "answer_start_idx": 0, "answer_end_idx": 1, "score": 0.5, "document_id": None,
            ...     "document_position": 2, "label": "partially_grounded"}).document_position
            2
        """
        return cls(**data)


def _document_id(document: BaseMedia) -> str | None:
    if document.id:
        return str(document.id)
    for key in ("id", "source"):
        if document.metadata.get(key):
            return str(document.metadata[key])
    return None


class ReferencePredictor(Runnable[dict[str, Any], Any]):
    """Predicts the document spans that back each sentence of an answer.

    Input: a dict with the answer(s) under ``answer_key`` (a ``str``, an
    ``AIMessage`` or a list of them) and the documents under
    ``documents_key``. Output: the answer(s) as ``AIMessage`` with
    ``response_metadata["references"]``, a list of `PredictedReference` dicts.

    Args:
        scorer: any ``BaseCrossEncoder`` giving scores in [0, 1] (default
            `LexicalScorer`, no model).
        splitter: the sentence splitter (default `SentenceSplitter`).
        answer_window_size / answer_window_stride: sentences per answer window.
        document_window_size / document_window_stride: sentences per document
            window, a new window every stride sentences (a stride larger than
            the size leaves the sentences between windows unread).
        context_sentences / context_weight: how document windows are
            ranked: each window is also scored with ``context_sentences``
            sentences of its document on either side, and ranked by
            ``context_weight`` of that score blended with the rest of its own
            (0.3 of one sentence each side by default; ties go to the higher
            own score). Evidence often runs over neighbouring sentences: on
            the WiCE development split (each page one document) the first
            span the lexical scorer ranks is in a supporting set more often
            with it (see ``bench/eval_grounding.py``). The context only
            ranks: a reference's span, ``score`` and ``label`` are its
            window's own. It costs a second scorer call per window (none with
            ``context_weight=0``).
        threshold: keep every document window whose own score reaches
            this, best ranked first; None keeps the best-ranked window of
            each answer window.
        label_thresholds: label -> minimum score, checked from the highest.
            None (the default) ties the labels to the scorer: ``grounded``
            from its ``support_threshold`` (the score from which
            `verify_citations` calls a citation supported: 0.5 for
            `LexicalScorer`, 0.5 for a scorer without one), and
            ``partially_grounded`` from 0.7 of that.
        default_class: the label below every threshold.
        batch_size: pairs per scorer call.
        verifiability: decides which answer windows need a reference
            (default `needs_reference`; None scores every window).
        guards: the meaning guards (`MeaningGuards`; None: the score alone).
            A span that would get a label above ``default_class`` gets
            ``default_class`` when a guard fires on the answer window against
            the document window with its context (a number, name, negation
            or antonym missing or changed); ``guard`` and ``reason`` say why.

    Example:
        >>> from langchain_core.documents import Document
        >>> docs = [Document("Lyon is known for food. Paris is the capital of France.", id="d1")]
        >>> answer = ReferencePredictor().invoke(
        ...     {"answer": "Hello! Paris is the capital of France.", "documents": docs})
        >>> ref = answer.response_metadata["references"][0]
        >>> answer.content[ref["answer_start_idx"]:ref["answer_end_idx"]]
        'Paris is the capital of France.'
        >>> docs[0].page_content[ref["document_start_idx"]:ref["document_end_idx"]], ref["label"]
        ('Paris is the capital of France.', 'grounded')
        >>> wrong = ReferencePredictor().invoke({"answer": "Paris is the capital of Spain.", "documents": docs})
        >>> [(r["label"], r["reason"]) for r in wrong.response_metadata["references"]]
        [('not_grounded', 'the sources say France, not Spain')]
    """

    def __init__(
        self,
        *,
        scorer: BaseCrossEncoder | None = None,
        splitter: SentenceSplitter | None = None,
        answer_key: str = "answer",
        documents_key: str = "documents",
        answer_window_size: int = 1,
        answer_window_stride: int = 1,
        document_window_size: int = 1,
        document_window_stride: int = 1,
        context_sentences: int = 1,
        context_weight: float = 0.3,
        threshold: float | None = None,
        label_thresholds: dict[str, float] | None = None,
        default_class: str = "not_grounded",
        batch_size: int = 256,
        verifiability: Callable[[str], bool] | None = needs_reference,
        guards: MeaningGuards | None = DEFAULT_GUARDS,
    ) -> None:
        for name, value in [
            ("answer_window_size", answer_window_size),
            ("answer_window_stride", answer_window_stride),
            ("document_window_size", document_window_size),
            ("document_window_stride", document_window_stride),
            ("batch_size", batch_size),
        ]:
            if value < 1:
                msg = f"{name} must be at least 1, got {value}"
                raise ValueError(msg)
        if context_sentences < 0:
            msg = f"context_sentences must be 0 or more, got {context_sentences}"
            raise ValueError(msg)
        if not 0.0 <= context_weight <= 1.0:
            msg = f"context_weight must be from 0 to 1, got {context_weight}"
            raise ValueError(msg)
        self.context_sentences = context_sentences
        self.context_weight = context_weight
        self.scorer = scorer or LexicalScorer()
        self.splitter = splitter or DEFAULT_SPLITTER
        self.answer_key = answer_key
        self.documents_key = checked_documents_key(documents_key)
        self.answer_window = (answer_window_size, answer_window_stride)
        self.document_window = (document_window_size, document_window_stride)
        self.threshold = checked_support_threshold(threshold, option="threshold", none_means="the best window only")
        if label_thresholds is None:
            supported = support_threshold_of(self.scorer)
            label_thresholds = {"grounded": supported, "partially_grounded": round(_PARTIAL_SHARE * supported, 6)}
        for label, share in label_thresholds.items():
            checked_support_threshold(share, option=f"label_thresholds[{label!r}]", none_means=None)
        self.label_thresholds = sorted(label_thresholds.items(), key=lambda item: -item[1])
        self.default_class = default_class
        self.batch_size = batch_size
        self.verifiability = verifiability
        self.guards = checked_guards(guards, "ReferencePredictor")

    def _scores(self, claim: str, evidence: list[str]) -> list[float]:
        scores: list[float] = []
        for i in range(0, len(evidence), self.batch_size):
            scores.extend(self.scorer.score([(claim, text) for text in evidence[i : i + self.batch_size]]))
        return scores

    def label(self, score: float) -> str:
        """The label of a score.

        Example:
            >>> [ReferencePredictor().label(s) for s in (0.9, 0.4, 0.1)]
            ['grounded', 'partially_grounded', 'not_grounded']
        """
        for name, minimum in self.label_thresholds:
            if score >= minimum:
                return name
        return self.default_class

    def predict(self, answer: str, documents: Sequence[BaseMedia]) -> list[PredictedReference]:
        """The references of one answer text.

        Example:
            >>> from langchain_core.documents import Document
            >>> ReferencePredictor().predict("I could not find this in the documents.", [Document("x")])
            []
        """
        if not isinstance(answer, str):
            msg = f"ReferencePredictor.predict: the answer must be a text (str), got {type(answer).__name__}"
            raise TypeError(msg)
        checked_documents(documents, "ReferencePredictor.predict")
        answer_windows = [
            (start, end)
            for start, end in sentence_windows(self.splitter.split(answer), *self.answer_window)
            if self.verifiability is None or self.verifiability(answer[start:end])
        ]
        texts = [document_text(document) for document in documents]
        document_windows: list[tuple[int, int, int]] = []
        context_spans: list[tuple[int, int]] = []
        around = self.context_sentences
        for position, text in enumerate(texts, start=1):
            spans = self.splitter.split(text)
            for first, last in window_indices(len(spans), *self.document_window):
                document_windows.append((position, spans[first].start, spans[last].end))
                widest = spans[min(len(spans) - 1, last + around)]
                context_spans.append((spans[max(0, first - around)].start, widest.end))
        if not answer_windows or not document_windows:
            return []
        # The same evidence faces every answer window: cut it once.
        evidence = [texts[p - 1][s:e] for p, s, e in document_windows]
        contexts = [texts[p - 1][s:e] for (p, _, _), (s, e) in zip(document_windows, context_spans, strict=True)]
        # Only the windows whose context is more than themselves need a second score (none without a weight).
        pairs = zip(evidence, contexts, strict=True)
        widened = [i for i, (window, context) in enumerate(pairs) if context != window] if self.context_weight else []
        references = []
        for answer_start, answer_end in answer_windows:
            claim = answer[answer_start:answer_end]
            # Rounded once: the score kept, the label and the threshold all see the same number.
            own = [round(float(score), 6) for score in self._scores(claim, evidence)]
            rank = list(own)
            if widened:
                in_context = self._scores(claim, [contexts[i] for i in widened])
                for i, score in zip(widened, in_context, strict=True):
                    rank[i] = (1 - self.context_weight) * own[i] + self.context_weight * float(score)
            order = sorted(range(len(own)), key=lambda i: (-rank[i], -own[i], i))
            chosen = order[:1] if self.threshold is None else [i for i in order if own[i] >= self.threshold]
            for i in chosen:
                position, start, end = document_windows[i]
                label = self.label(own[i])
                finding = None
                if label != self.default_class and self.guards is not None:
                    finding = self.guards.check(claim, contexts[i])
                    label = self.default_class if finding is not None else label
                references.append(
                    PredictedReference(
                        document_start_idx=start,
                        document_end_idx=end,
                        answer_start_idx=answer_start,
                        answer_end_idx=answer_end,
                        score=own[i],
                        document_id=_document_id(documents[position - 1]),
                        document_position=position,
                        label=label,
                        guard=finding.guard if finding else None,
                        reason=finding.reason if finding else None,
                    )
                )
        return references

    def _annotate(self, answer: Any, documents: Sequence[BaseMedia]) -> AIMessage:
        if isinstance(answer, str):
            message = AIMessage(content=answer)
        elif isinstance(answer, BaseMessage):
            message = AIMessage(**answer.model_dump(exclude={"type", "tool_call_chunks", "chunk_position"}))
        else:
            msg = f"ReferencePredictor answers must be str or AIMessage, got {type(answer).__name__}"
            raise TypeError(msg)
        text = message.text if isinstance(message.text, str) else str(message.content)
        references = [r.to_dict() for r in self.predict(text, documents)]
        message.response_metadata = {**message.response_metadata, "references": references}
        return message

    @override
    def invoke(self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self._call_with_config(self._run, input, config)

    def _run(self, input: dict[str, Any]) -> Any:
        answers = input_value(input, self.answer_key, "ReferencePredictor", "the answer")
        documents = documents_from(input, self.documents_key, "ReferencePredictor")
        if isinstance(answers, list):
            return [self._annotate(answer, documents) for answer in answers]
        return self._annotate(answers, documents)
