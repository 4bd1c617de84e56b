"""Claim-level checking of a response against its references, RefChecker-style.

A response is broken into claims (sub-sentences, or knowledge triplets when an
LLM extracts them); each claim is checked against the references and labelled
``Entailment``, ``Neutral`` or ``Contradiction``; the labels are aggregated
(``strict``, ``soft`` or ``major``). A response that makes no claim is
``Abstain``.

The offline checker is built on the grounding scorers: a claim is Entailment
when its best-supporting reference window reaches a threshold, Neutral
otherwise, and Contradiction only where a real signal exists — the window
covers the claim's words well but states other numbers or dates, or negates
what the claim affirms (or the reverse). It never guesses a contradiction.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Literal

from langchain_core.cross_encoders import BaseCrossEncoder
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from langchain_refs.grounding._llm import ModelReply, ask_model
from langchain_refs.grounding._scoring import LexicalScorer
from langchain_refs.text import SentenceSplitter, Span, sentence_windows

__all__ = [
    "ABSTAIN",
    "CONTRADICTION",
    "ENTAILMENT",
    "NEUTRAL",
    "Claim",
    "ClaimCheck",
    "EvidenceSpan",
    "LLMClaimChecker",
    "LLMClaimExtractor",
    "RuleBasedClaimExtractor",
    "ScorerClaimChecker",
    "aggregate",
]

logger = logging.getLogger("langchain_refs")

ENTAILMENT: Final = "Entailment"
NEUTRAL: Final = "Neutral"
CONTRADICTION: Final = "Contradiction"
ABSTAIN: Final = "Abstain"
LABELS: Final = (ENTAILMENT, NEUTRAL, CONTRADICTION)

Aggregator = Literal["strict", "soft", "major"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Claim:
    """One checkable statement of a response.

    ``text`` is the claim; ``triplet`` is ``(head, relation, tail)`` when an
    LLM extracted knowledge triplets; ``start``/``end`` locate it in the
    response when it is a piece of it (None for a paraphrase).

    Example:
        >>> Claim(text="Paris is in France", start=0, end=18)
        Claim(text='Paris is in France', triplet=None, start=0, end=18)
    """

    text: str
    triplet: tuple[str, str, str] | None = None
    start: int | None = None
    end: int | None = None

    def to_json(self) -> str | list[str]:
        """RefChecker's shape: the triplet as a list, else the text.

        Example:
            >>> Claim(text="a b c", triplet=("a", "b", "c")).to_json()
            ['a', 'b', 'c']
        """
        return list(self.triplet) if self.triplet else self.text

    @classmethod
    def from_json(cls, value: Any) -> Claim:
        """Read a claim written by `to_json` (or by RefChecker).

        Example:
            >>> Claim.from_json(["Paris", "capital of", "France"]).text
            'Paris capital of France'
        """
        if isinstance(value, list | tuple) and len(value) == 3 and all(isinstance(v, str) for v in value):
            head, relation, tail = value
            return cls(text=f"{head} {relation} {tail}", triplet=(head, relation, tail))
        if isinstance(value, str):
            return cls(text=value)
        msg = f"a claim is a string or a [head, relation, tail] triplet, got {value!r}"
        raise ValueError(msg)


@dataclass(frozen=True, slots=True, kw_only=True)
class EvidenceSpan:
    """Where in which reference a claim is supported (or contradicted).

    Example:
        >>> EvidenceSpan(reference=0, start=4, end=9, score=0.8)
        EvidenceSpan(reference=0, start=4, end=9, score=0.8)
    """

    reference: int
    start: int
    end: int
    score: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimCheck:
    """The verdict on one claim, with the evidence it rests on.

    Example:
        >>> ClaimCheck(label="Neutral", score=0.2).to_dict()
        {'label': 'Neutral', 'score': 0.2, 'evidence': []}
    """

    label: str
    score: float
    evidence: tuple[EvidenceSpan, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data.

        Example:
            >>> ClaimCheck(label="Entailment", score=1.0).to_dict()["label"]
            'Entailment'
        """
        return {"label": self.label, "score": self.score, "evidence": [asdict(e) for e in self.evidence]}


# A whitespace run is tried from its start only: retrying inside it made a long run quadratic.
_CLAUSE = re.compile(r";\s+|,\s+(?:and|but|while|whereas|although)\s+|(?<!\s)\s+(?:but|whereas)\s+")
_WORDS = re.compile(r"\w+")


class RuleBasedClaimExtractor:
    """Offline sub-sentence claims: sentences, cut again at clause boundaries.

    A sentence is cut at semicolons and at ", and" / ", but" / "while" joins
    when both halves have at least ``min_words`` words. Sentences that make
    no claim (greetings, headings, "I could not find...") are left out.

    Example:
        >>> [c.text for c in RuleBasedClaimExtractor().extract(
        ...     "Hello! Paris is the capital of France, and it has two million inhabitants.")]
        ['Paris is the capital of France', 'it has two million inhabitants.']
    """

    def __init__(self, *, min_words: int = 3, splitter: SentenceSplitter | None = None) -> None:
        self.min_words = min_words
        self.splitter = splitter or SentenceSplitter()

    def extract(self, response: str, question: str | None = None) -> list[Claim]:
        """The claims of one response, with their offsets in it.

        Example:
            >>> RuleBasedClaimExtractor().extract("I could not find this in the documents.")
            []
        """
        from langchain_refs.grounding._predictor import needs_reference

        claims = []
        for sentence in self.splitter.split(response):
            if not needs_reference(sentence.text):
                continue
            for piece in self._clauses(sentence):
                claims.append(Claim(text=piece.text, start=piece.start, end=piece.end))
        return claims

    def extract_batch(
        self, responses: Sequence[str], questions: Sequence[str | None] | None = None
    ) -> list[list[Claim]]:
        """`extract` for several responses.

        Example:
            >>> len(RuleBasedClaimExtractor().extract_batch(["A b c d.", "E f g h."]))
            2
        """
        return [self.extract(r) for r in responses]

    def _clauses(self, sentence: Span) -> list[Span]:
        pieces: list[Span] = []
        start = 0
        text = sentence.text
        # Words are counted by where they start: a cut begins and ends outside any word,
        # so the words between two offsets are those starting between them. Counting
        # this way, rather than re-reading the rest of the sentence at every cut, keeps
        # a sentence of many clauses linear.
        starts = [word.start() for word in _WORDS.finditer(text)]
        for cut in _CLAUSE.finditer(text):
            left = bisect.bisect_left(starts, cut.start()) - bisect.bisect_left(starts, start)
            right = len(starts) - bisect.bisect_left(starts, cut.end())
            if left >= self.min_words and right >= self.min_words:
                pieces.append(
                    Span(start=sentence.start + start, end=sentence.start + cut.start(), text=text[start : cut.start()])
                )
                start = cut.end()
        pieces.append(Span(start=sentence.start + start, end=sentence.end, text=text[start:]))
        return pieces


class _Triplets(BaseModel):
    claims: list[list[str]] = Field(description="knowledge triplets [head, relation, tail]")


class _SubSentences(BaseModel):
    claims: list[str] = Field(description="short standalone factual claims")


_EXTRACT_PROMPTS = {
    "triplet": (
        "Extract the factual claims of the RESPONSE as knowledge triplets [head, relation, tail]. "
        'Answer with JSON only: {"claims": [["head", "relation", "tail"], ...]}. '
        'Use {"claims": []} when the response makes no factual claim.'
    ),
    "subsentence": (
        "Split the RESPONSE into short standalone factual claims, each understandable alone. "
        'Answer with JSON only: {"claims": ["claim", ...]}. Use {"claims": []} when it makes no factual claim.'
    ),
}


class LLMClaimExtractor:
    """Claims extracted by any chat model, as triplets or sub-sentences, in batches.

    Uses structured output when the model supports it and tolerant JSON
    reading when not. A reply that cannot be read is logged and gives no
    claims for that response; the batch goes on.

    Example:
        >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
        >>> model = FakeListChatModel(responses=['{"claims": [["Paris", "capital of", "France"]]}'])
        >>> LLMClaimExtractor(model).extract("Paris is the capital of France.")[0].triplet
        ('Paris', 'capital of', 'France')
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        claim_format: Literal["triplet", "subsentence"] = "triplet",
        max_concurrency: int = 4,
    ) -> None:
        if claim_format not in _EXTRACT_PROMPTS:
            msg = f"claim_format must be 'triplet' or 'subsentence', got {claim_format!r}"
            raise ValueError(msg)
        self.model = model
        self.claim_format = claim_format
        self.max_concurrency = max_concurrency

    def extract(self, response: str, question: str | None = None) -> list[Claim]:
        """The claims of one response.

        Example:
            >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
            >>> LLMClaimExtractor(FakeListChatModel(responses=["sorry"])).extract("x")
            []
        """
        return self.extract_batch([response], [question])[0]

    def extract_batch(
        self, responses: Sequence[str], questions: Sequence[str | None] | None = None
    ) -> list[list[Claim]]:
        """The claims of several responses, asked in one batch.

        Example:
            >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
            >>> model = FakeListChatModel(responses=['{"claims": ["A is B."]}', '{"claims": []}'])
            >>> [len(c) for c in LLMClaimExtractor(model, claim_format="subsentence").extract_batch(["a", "b"])]
            [1, 0]
        """
        questions = questions or [None] * len(responses)
        prompts = [
            [
                SystemMessage(_EXTRACT_PROMPTS[self.claim_format]),
                HumanMessage((f"QUESTION: {q}\n\n" if q else "") + f"RESPONSE: {r}"),
            ]
            for r, q in zip(responses, questions, strict=True)
        ]
        read: list[list[Claim]] = ask_model(
            self.model,
            prompts,
            schema=_Triplets if self.claim_format == "triplet" else _SubSentences,
            read=_read_claims,
            default=[],
            name="claim extractor",
            max_concurrency=self.max_concurrency,
        )
        return [_located(claims, response) for claims, response in zip(read, responses, strict=True)]


def _read_claims(reply: ModelReply) -> list[Claim]:
    """The claims of ``{"claims": [...]}`` or of a bare list."""
    items = reply.data["claims"] if isinstance(reply.data, dict) else reply.data
    if not isinstance(items, list):
        msg = "no list of claims"
        raise ValueError(msg)
    return [Claim.from_json(item) for item in items]


def _located(claims: list[Claim], response: str) -> list[Claim]:
    """The claims with their offsets in ``response`` where they are a piece of it."""
    located = []
    for claim in claims:
        start = response.find(claim.text)
        located.append(
            Claim(text=claim.text, triplet=claim.triplet, start=start, end=start + len(claim.text))
            if start != -1
            else claim
        )
    return located


_NEGATION = re.compile(r"\b(?:not|no|never|none|neither|nor|cannot|without)\b|n't\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


class ScorerClaimChecker:
    """The offline checker: grounding scores, plus contradiction only on real signals.

    Args:
        scorer: any scorer (default `LexicalScorer`).
        threshold: the support a claim needs to be Entailment.
        contradiction_overlap: how well a window must cover the claim's other
            words before disagreeing numbers or negation count as a contradiction.
        window: reference sentences per window.

    Example:
        >>> checker = ScorerClaimChecker()
        >>> reference = "The tower is 330 metres tall. It opened in 1889."
        >>> [checker.check(Claim(text=t), [reference]).label for t in
        ...  ["The tower opened in 1889.", "The tower is 300 metres tall.", "The tower is painted red."]]
        ['Entailment', 'Contradiction', 'Neutral']
    """

    def __init__(
        self,
        scorer: BaseCrossEncoder | None = None,
        *,
        threshold: float = 0.4,
        contradiction_overlap: float = 0.7,
        window: int = 1,
        splitter: SentenceSplitter | None = None,
    ) -> None:
        self.scorer = scorer or LexicalScorer()
        self.threshold = threshold
        self.contradiction_overlap = contradiction_overlap
        self.window = window
        self.splitter = splitter or SentenceSplitter()

    def _windows(self, references: Sequence[str]) -> list[tuple[int, int, int, str]]:
        windows: list[tuple[int, int, int, str]] = []
        for index, reference in enumerate(references):
            spans = sentence_windows(self.splitter.split(reference), self.window, 1) or [(0, len(reference))]
            windows.extend((index, start, end, reference[start:end]) for start, end in spans)
        return windows

    def check(self, claim: Claim, references: Sequence[str], question: str | None = None) -> ClaimCheck:
        """The verdict on one claim against all references.

        Example:
            >>> ScorerClaimChecker().check(Claim(text="Water is wet."), []).label
            'Neutral'
        """
        return self._check(claim, self._windows(references))

    def _check(self, claim: Claim, windows: list[tuple[int, int, int, str]]) -> ClaimCheck:
        if not windows:
            return ClaimCheck(label=NEUTRAL, score=0.0)
        scores = self.scorer.score([(claim.text, text) for *_, text in windows])
        order = sorted(range(len(windows)), key=lambda i: -scores[i])
        best = order[0]
        evidence = tuple(
            EvidenceSpan(reference=windows[i][0], start=windows[i][1], end=windows[i][2], score=round(scores[i], 6))
            for i in order[:3]
            if scores[i] > 0
        )
        for i in order[:1]:
            if self._contradicts(claim.text, windows[i][3]):
                spans = (
                    EvidenceSpan(
                        reference=windows[i][0], start=windows[i][1], end=windows[i][2], score=round(scores[i], 6)
                    ),
                )
                return ClaimCheck(label=CONTRADICTION, score=round(scores[best], 6), evidence=spans)
        label = ENTAILMENT if scores[best] >= self.threshold else NEUTRAL
        return ClaimCheck(label=label, score=round(scores[best], 6), evidence=evidence)

    def _contradicts(self, claim: str, evidence: str) -> bool:
        """Numbers or negation disagree in a window that otherwise covers the claim."""
        plain_claim = _NEGATION.sub(" ", _NUMBER.sub(" ", claim))
        plain_evidence = _NEGATION.sub(" ", _NUMBER.sub(" ", evidence))
        overlap = LexicalScorer(number_penalty=1.0).score([(plain_claim, plain_evidence)])[0]
        if overlap < self.contradiction_overlap:
            return False
        claim_numbers = set(_NUMBER.findall(claim))
        evidence_numbers = set(_NUMBER.findall(evidence))
        if claim_numbers and evidence_numbers and not claim_numbers & evidence_numbers:
            return True
        return bool(_NEGATION.search(claim)) != bool(_NEGATION.search(evidence))

    def check_batch(
        self, claims: Sequence[Claim], references: Sequence[str], question: str | None = None
    ) -> list[ClaimCheck]:
        """`check` for each claim of one response.

        Example:
            >>> len(ScorerClaimChecker().check_batch([Claim(text="a"), Claim(text="b")], ["a"]))
            2
        """
        # Every claim is checked against the same windows: split each reference once.
        windows = self._windows(references)
        return [self._check(claim, windows) for claim in claims]


class _Verdict(BaseModel):
    label: Literal["Entailment", "Neutral", "Contradiction"]


_CHECK_PROMPT = (
    "You check a CLAIM against REFERENCE text. Answer Entailment if the reference supports the claim, "
    "Contradiction if it contradicts it, Neutral if it does neither. "
    'Answer with JSON only: {"label": "Entailment" | "Neutral" | "Contradiction"}.'
)


class LLMClaimChecker:
    """Any chat model checks each claim: Entailment, Neutral or Contradiction.

    Structured output where the model has it, tolerant reading otherwise; an
    unreadable reply is logged and counts as Neutral.

    Example:
        >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
        >>> model = FakeListChatModel(responses=['{"label": "Contradiction"}', "Entailment."])
        >>> [c.label for c in LLMClaimChecker(model).check_batch([Claim(text="a"), Claim(text="b")], ["r"])]
        ['Contradiction', 'Entailment']
    """

    def __init__(self, model: BaseChatModel, *, max_concurrency: int = 4) -> None:
        self.model = model
        self.max_concurrency = max_concurrency

    def check(self, claim: Claim, references: Sequence[str], question: str | None = None) -> ClaimCheck:
        """The verdict on one claim.

        Example:
            >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
            >>> LLMClaimChecker(FakeListChatModel(responses=["?"])).check(Claim(text="a"), ["r"]).label
            'Neutral'
        """
        return self.check_batch([claim], references, question)[0]

    def check_batch(
        self, claims: Sequence[Claim], references: Sequence[str], question: str | None = None
    ) -> list[ClaimCheck]:
        """The verdicts on the claims of one response, asked in one batch.

        Example:
            >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
            >>> LLMClaimChecker(FakeListChatModel(responses=["x"])).check_batch([], ["r"])
            []
        """
        reference = "\n\n".join(references)
        prompts = [
            [
                SystemMessage(_CHECK_PROMPT),
                HumanMessage(
                    (f"QUESTION: {question}\n\n" if question else "") + f"REFERENCE: {reference}\n\nCLAIM: {c.text}"
                ),
            ]
            for c in claims
        ]
        labels = ask_model(
            self.model,
            prompts,
            schema=_Verdict,
            read=_read_label,
            default=NEUTRAL,
            name="claim checker",
            max_concurrency=self.max_concurrency,
        )
        return [ClaimCheck(label=label, score=0.0) for label in labels]


def _read_label(reply: ModelReply) -> str:
    """``{"label": ...}``, or the one label named in the text."""
    if isinstance(reply.data, dict) and reply.data.get("label") in LABELS:
        return str(reply.data["label"])
    found = [label for label in LABELS if re.search(rf"\b{label}\b", reply.text, re.IGNORECASE)]
    if len(found) != 1:
        msg = "no label" if not found else f"several labels: {found}"
        raise ValueError(msg)
    return found[0]


def aggregate(labels: Sequence[str], method: Aggregator = "strict") -> str | dict[str, float]:
    """Combine claim labels into a response label, as RefChecker defines it.

    ``strict``: Contradiction if any claim is contradicted, else Neutral if any
    is neutral, else Entailment. ``soft``: the share of each label.
    ``major``: the most frequent label (ties go to the worse one). No claims:
    Abstain (``soft`` gives ``{"Abstain": 1.0}``).

    Example:
        >>> labels = ["Entailment", "Neutral", "Entailment"]
        >>> aggregate(labels, "strict"), aggregate(labels, "major")
        ('Neutral', 'Entailment')
        >>> aggregate(labels, "soft")
        {'Entailment': 0.667, 'Neutral': 0.333, 'Contradiction': 0.0}
        >>> aggregate([], "soft")
        {'Abstain': 1.0}
    """
    if method not in ("strict", "soft", "major"):
        msg = f"aggregator must be strict, soft or major, got {method!r}"
        raise ValueError(msg)
    if not labels:
        return {ABSTAIN: 1.0} if method == "soft" else ABSTAIN
    counts = Counter(labels)
    if method == "soft":
        return {label: round(counts[label] / len(labels), 3) for label in LABELS}
    if method == "strict":
        for label in (CONTRADICTION, NEUTRAL):
            if counts[label]:
                return label
        return ENTAILMENT
    # Ties go to the worse label: Contradiction, then Neutral.
    return max((CONTRADICTION, NEUTRAL, ENTAILMENT), key=lambda label: counts[label])
