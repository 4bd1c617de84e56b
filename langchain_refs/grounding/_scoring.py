"""Scorers: how well a piece of evidence supports a claim, in [0, 1].

Every scorer is a ``langchain_core.cross_encoders.BaseCrossEncoder``: a batch of
``(claim, evidence)`` pairs in, one score per pair out. So any cross-encoder a
user already has plugs in here (wrap it in `CrossEncoderScorer` to squash its
logits into [0, 1]), and ours plug into LangChain's rerankers
(``CrossEncoderReranker(model=LexicalScorer())``).

Offline there is no entailment model: no PyPI package ships a cross-encoder or
an NLI model. `LexicalScorer` (the default) measures how much of the claim the
evidence covers; `EmbeddingScorer` measures semantic closeness with any
LangChain ``Embeddings``. Neither understands negation or contradiction; for
that, use `LLMJudgeScorer` with a chat model or a real cross-encoder.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any, Final

from langchain_core.cross_encoders import BaseCrossEncoder
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field
from typing_extensions import override

from langchain_refs.grounding._llm import ModelReply, ask_model, checked_chat_model
from langchain_refs.grounding._verifier import SupportScorer
from langchain_refs.streaming import checked_support_threshold, support_threshold_of
from langchain_refs.text import LexicalSupport, sentence_windows, split_sentences

# The lexical engine's settings: a `LexicalScorer` has each as an attribute, read at each call.
_LEXICAL_SETTINGS: Final = tuple(f.name for f in fields(LexicalSupport))

__all__ = [
    "CrossEncoderScorer",
    "EmbeddingScorer",
    "HybridScorer",
    "LLMJudgeScorer",
    "LexicalScorer",
]


def _unit(value: float) -> float:
    """``value`` clamped into [0, 1]; NaN counts as 0 (no evidence of support)."""
    return 0.0 if math.isnan(value) else max(0.0, min(1.0, value))


def _threshold(value: object) -> float:
    """A scorer's ``support_threshold``, checked when it is given: a number from 0 to 1."""
    return checked_support_threshold(value, none_means=None)


def _logistic(value: float) -> float:
    """The logistic function, without overflow at either end; NaN counts as 0."""
    if math.isnan(value):
        return 0.0
    if value >= 0:
        return 1.0 / (1.0 + math.exp(-value))
    exp = math.exp(value)
    return exp / (1.0 + exp)


class LexicalScorer(SupportScorer):
    """Weighted coverage of the claim's content words and phrases by the evidence.

    A claim word counts fully when the evidence has it (after light stemming),
    partly when the evidence has a word sharing its first five letters; numbers
    and names weigh more than common words, and pairs of adjacent claim words
    found together in the evidence add a phrase bonus. Long evidence is read as
    windows of ``window`` sentences: the score is the best window's, blended
    with the whole evidence's. Numbers in the claim missing from the evidence
    pull the score down. No model, no download.

    The work is done by the text layer's `LexicalSupport` (pure Python, which
    the streaming wing's passage finder uses too); this class makes it a
    ``BaseCrossEncoder`` and a citation verifier. The options are read at
    each call, so changing an attribute takes effect at once.

    ``support_threshold`` (0.5 by default) is where `verify_citations` calls
    a citation supported. The rule (the threshold maximising macro-F1 of
    attributable vs not attributable on the AttributionBench development
    split, each claim scored against its cited references as
    `verify_citations` does; see ``bench/eval_grounding.py``) puts it at
    0.51, with macro-F1 0.687 against 0.685 at 0.50: one grid step, within
    noise, so the long-standing 0.5 stays.

    Example:
        >>> scorer = LexicalScorer()
        >>> supported, unsupported = scorer.score([
        ...     ("Paris is the capital of France.", "Paris has been the capital of France since 987."),
        ...     ("Paris is the capital of France.", "Lyon is known for its food."),
        ... ])
        >>> supported > 0.8 > 0.2 > unsupported
        True
    """

    support_threshold = 0.5

    def __init__(
        self,
        *,
        window: int = 2,
        phrase_weight: float = 0.25,
        whole_weight: float = 0.5,
        number_penalty: float = 0.7,
        rarity_weight: float = 1.0,
        min_batch_for_rarity: int = 5,
        support_threshold: float | None = None,
    ) -> None:
        if support_threshold is not None:
            self.support_threshold = _threshold(support_threshold)
        self.rarity_weight = rarity_weight
        self.min_batch_for_rarity = min_batch_for_rarity
        self.window = window
        self.phrase_weight = phrase_weight
        self.whole_weight = whole_weight
        self.number_penalty = number_penalty
        self.support  # noqa: B018 -- the engine checks the settings now, not at the first score

    @property
    def support(self) -> LexicalSupport:
        """The engine with this scorer's current options.

        Example:
            >>> LexicalScorer(window=3).support.window
            3
        """
        return LexicalSupport(**{name: getattr(self, name) for name in _LEXICAL_SETTINGS})

    @override
    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        return self.support.score(text_pairs)


class EmbeddingScorer(SupportScorer):
    """Cosine similarity of claim and evidence embeddings, mapped to [0, 1].

    Works with any LangChain ``Embeddings``. ``floor`` and ``ceiling`` are the
    cosine values mapped to 0 and 1 (unrelated sentences rarely fall below
    0.1 with sentence-transformer models).

    Sentence-embedding models read a few hundred tokens at most (MiniLM:
    256) and drop the rest, so long evidence is never embedded whole: it is
    read as windows of ``window`` sentences, a new window every ``stride``
    sentences (by default ``window``: side by side, the last one ending at
    the last sentence), any window longer than ``max_chars`` characters is cut at spaces
    into pieces of at most that length, and the score is the best piece's.
    When the embeddings say how long a text may be (``max_length`` and
    ``token_counts(texts)``, as `MiniLMEmbeddings` does), a piece still
    longer than that is halved at a space until it fits (text dense in
    tokens, such as URLs or other scripts). Every part of the evidence
    counts. ``window=None`` embeds the evidence as it is (a model of your own
    that reads long texts).

    ``support_threshold`` (0.71 by default, on the [0, 1] scale after the
    floor/ceiling mapping: a cosine of 0.668) is where `verify_citations`
    calls a citation supported: the threshold maximising macro-F1 of
    attributable vs not attributable on the AttributionBench development
    split, with MiniLM (`MiniLMEmbeddings`), each claim scored against its
    cited references as `verify_citations` does (see
    ``bench/eval_grounding.py``; at 0.5, 80% of the claims counted as
    supported). Another embedding model wants its own: pass it.

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> scorer = EmbeddingScorer(DeterministicFakeEmbedding(size=8))
        >>> scorer.score([("same text", "same text")])
        [1.0]
    """

    support_threshold = 0.71

    def __init__(
        self,
        embeddings: Embeddings,
        *,
        floor: float = 0.1,
        ceiling: float = 0.9,
        cache_size: int = 200_000,
        window: int | None = 2,
        stride: int | None = None,
        max_chars: int = 800,
        support_threshold: float | None = None,
    ) -> None:
        if not floor < ceiling:
            msg = f"floor must be below ceiling, got floor={floor!r} and ceiling={ceiling!r}"
            raise ValueError(msg)
        if window is not None and window < 1:
            msg = f"window must be at least one sentence (or None), got {window!r}"
            raise ValueError(msg)
        if max_chars < 1:
            msg = f"max_chars must be at least 1, got {max_chars!r}"
            raise ValueError(msg)
        if stride is not None and stride < 1:
            msg = f"stride must be at least one sentence (or None), got {stride!r}"
            raise ValueError(msg)
        self.embeddings = embeddings
        self.floor = floor
        self.ceiling = ceiling
        self.window = window
        # Side-by-side windows embed half as many texts as overlapping ones; on the AttributionBench
        # development split the 50/50 hybrid's AUROC is the same (0.773 both ways).
        self.stride = stride
        self.max_chars = max_chars
        if not callable(getattr(embeddings, "embed_documents", None)):
            msg = f"EmbeddingScorer needs LangChain Embeddings (embed_documents), got {type(embeddings).__name__}"
            raise TypeError(msg)
        if support_threshold is not None:
            self.support_threshold = _threshold(support_threshold)
        # Evidence is scored again and again against new claims: embed each text once.
        self.cache_size = cache_size
        self._vectors: dict[str, array[float]] = {}
        self._pieces: dict[str, tuple[str, ...]] = {}

    def pieces(self, evidence: str) -> tuple[str, ...]:
        """The parts of ``evidence`` that are embedded: sentence windows, none longer than ``max_chars``.

        Example:
            >>> from langchain_core.embeddings import DeterministicFakeEmbedding
            >>> EmbeddingScorer(DeterministicFakeEmbedding(size=8)).pieces("One. Two. Three. Four. Five.")
            ('One. Two.', 'Three. Four.', 'Four. Five.')
        """
        found = self._pieces.get(evidence)
        if found is None:
            if len(self._pieces) >= self.cache_size:
                self._pieces.clear()
            found = _pieces(evidence, self.window, self.stride or self.window, self.max_chars)
            limit = getattr(self.embeddings, "max_length", None)
            counts = getattr(self.embeddings, "token_counts", None)
            if self.window is not None and isinstance(limit, int) and callable(counts):
                found = _fit(found, limit, counts)
            self._pieces[evidence] = found
        return found

    @override
    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        pieces = {evidence: self.pieces(evidence) for _, evidence in text_pairs}
        wanted = {claim for claim, _ in text_pairs} | {p for found in pieces.values() for p in found}
        missing = sorted(wanted - self._vectors.keys())
        if missing:
            if len(self._vectors) + len(missing) > self.cache_size:
                self._vectors.clear()
            embedded = self.embeddings.embed_documents(missing)
            # Compact doubles: a cache of lists of floats would take eight times the memory.
            self._vectors.update((t, array("d", v)) for t, v in zip(missing, embedded, strict=True))
        vectors = self._vectors
        scores = []
        for claim, evidence in text_pairs:
            a = vectors[claim]
            norm_a = math.sqrt(sum(x * x for x in a))
            best = 0.0 if not pieces[evidence] else -math.inf
            for piece in pieces[evidence]:
                b = vectors[piece]
                norm = norm_a * math.sqrt(sum(y * y for y in b))
                cosine = sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0
                best = max(best, cosine)
            scores.append(_unit((best - self.floor) / (self.ceiling - self.floor)))
        return scores


def _fit(pieces: tuple[str, ...], limit: int, counts: Callable[[list[str]], list[int]]) -> tuple[str, ...]:
    """``pieces``, each one over ``limit`` tokens halved at a space (or in the middle) until it fits."""
    found: list[str] = []
    pending = list(pieces)
    while pending:
        lengths = counts(pending)
        halves: list[str] = []
        for piece, length in zip(pending, lengths, strict=True):
            if length <= limit or len(piece) < 2:
                found.append(piece)
                continue
            middle = len(piece) // 2
            cut = piece.rfind(" ", 0, middle + 1)
            cut = cut if cut > 0 else middle
            halves += [piece[:cut], piece[cut:].lstrip()]
        pending = [h for h in halves if h]
    return tuple(found)


def _pieces(text: str, window: int | None, stride: int | None, max_chars: int) -> tuple[str, ...]:
    """``text`` as windows of ``window`` sentences every ``stride``, each cut at spaces to at most ``max_chars``."""
    if window is None or stride is None:
        return (text,)
    spans = sentence_windows(split_sentences(text), window, stride)
    windows = [text[start:end] for start, end in spans] or [text]
    found: list[str] = []
    for piece in windows:
        while len(piece) > max_chars:
            # Cut at the last space before the limit (or at the limit when a word is longer).
            cut = piece.rfind(" ", 0, max_chars + 1)
            cut = cut if cut > 0 else max_chars
            found.append(piece[:cut])
            piece = piece[cut:].lstrip()
        found.append(piece)
    return tuple(found)


class CrossEncoderScorer(SupportScorer):
    """Any LangChain cross-encoder, its scores squashed into [0, 1].

    For a local model, e.g. ``HuggingFaceCrossEncoder(model_name="/path/to/model")``
    from langchain-community. ``logits=True`` sends every score through a
    logistic function, ``logits=False`` clamps every score into [0, 1]. The
    default (None) decides per batch: a batch whose scores are all in [0, 1]
    passes unchanged, any other goes through the logistic function — so a
    logit model whose scores of one batch happen to fall in [0, 1] is read as
    probabilities: say which your model gives. A NaN score counts as 0.
    ``support_threshold`` is 0.5 unless you give your model's own (nothing
    here knows what your model's scores mean).

    Example:
        >>> class Logits(BaseCrossEncoder):
        ...     def score(self, text_pairs): return [4.0 for _ in text_pairs]
        >>> round(CrossEncoderScorer(Logits()).score([("a", "b")])[0], 3)
        0.982
    """

    def __init__(
        self, cross_encoder: BaseCrossEncoder, *, logits: bool | None = None, support_threshold: float = 0.5
    ) -> None:
        if not callable(getattr(cross_encoder, "score", None)):
            msg = f"CrossEncoderScorer needs a cross-encoder (score(pairs)), got {type(cross_encoder).__name__}"
            raise TypeError(msg)
        self.support_threshold = _threshold(support_threshold)
        self.cross_encoder = cross_encoder
        self.logits = logits

    @override
    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        raw = [float(s) for s in self.cross_encoder.score(list(text_pairs))]
        logits = self.logits if self.logits is not None else not all(0.0 <= s <= 1.0 for s in raw)
        return [_logistic(s) if logits else _unit(s) for s in raw]


class _Judgement(BaseModel):
    """How well the evidence supports the claim."""

    score: float = Field(description="0 = not supported at all, 1 = fully supported by the evidence alone")


_JUDGE_PROMPT = (
    "You check citations. Given a CLAIM and EVIDENCE, answer how well the evidence alone supports the "
    'claim, as JSON {"score": x} with x from 0 (not supported or contradicted) to 1 (fully supported).'
)


def _read_score(reply: ModelReply) -> float:
    """The judge's score: ``{"score": x}`` or a bare number, clamped into [0, 1]; NaN is unreadable."""
    value: Any = reply.data.get("score") if isinstance(reply.data, dict) else reply.text.strip()
    score = float(value)
    if math.isnan(score):
        msg = "the score is not a number"
        raise ValueError(msg)
    return max(0.0, min(1.0, score))


class LLMJudgeScorer(SupportScorer):
    """A chat model judges each pair; structured output where the model has it.

    A reply that cannot be read as a score (or reads as NaN) counts as
    ``default`` and is logged once, so one bad reply never stops a batch;
    numbers outside [0, 1] are clamped into it. See `ask_model` for the policy
    all the LLM-backed parts share. ``support_threshold`` is 0.5: the middle
    of the scale the prompt asks the model to use (not measured here: the
    development data is judged offline only).

    Example:
        >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
        >>> judge = LLMJudgeScorer(FakeListChatModel(responses=['{"score": 0.9}', 'no idea']), max_concurrency=1)
        >>> judge.score([("a", "b"), ("c", "d")])
        [0.9, 0.0]
    """

    def __init__(
        self, model: BaseChatModel, *, default: float = 0.0, max_concurrency: int = 4, support_threshold: float = 0.5
    ) -> None:
        self.support_threshold = _threshold(support_threshold)
        if not 0.0 <= default <= 1.0:
            msg = f"default must be a score in [0, 1], got {default!r}"
            raise ValueError(msg)
        self.model = checked_chat_model(model, "LLMJudgeScorer")
        self.default = default
        self.max_concurrency = max_concurrency

    @override
    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        prompts = [
            [SystemMessage(_JUDGE_PROMPT), HumanMessage(f"CLAIM: {claim}\n\nEVIDENCE: {evidence}")]
            for claim, evidence in text_pairs
        ]
        return ask_model(
            self.model,
            prompts,
            schema=_Judgement,
            read=_read_score,
            default=self.default,
            name="judge",
            max_concurrency=self.max_concurrency,
        )


class HybridScorer(SupportScorer):
    """A weighted mean of several scorers.

    Each scorer's scores are clamped into [0, 1] first (NaN counts as 0), so
    a cross-encoder giving logits should be wrapped in `CrossEncoderScorer`.
    Weights are finite, non-negative, and at least one is positive.
    ``support_threshold`` defaults to the same weighted mean of the scorers'
    own thresholds (0.5 for a scorer without one): for 50/50 lexical and
    MiniLM embeddings that is 0.605, where the rule the other scorers follow
    (the macro-F1 maximum on the AttributionBench development split) gives
    0.64.

    Example:
        >>> class Const(BaseCrossEncoder):
        ...     def __init__(self, v): self.v = v
        ...     def score(self, text_pairs): return [self.v] * len(text_pairs)
        >>> HybridScorer([(Const(1.0), 0.5), (Const(0.0), 0.5)]).score([("a", "b")])
        [0.5]
    """

    def __init__(
        self, scorers: Sequence[tuple[BaseCrossEncoder, float]], *, support_threshold: float | None = None
    ) -> None:
        weights = [weight for _, weight in scorers]
        if not weights or not all(0 <= w < math.inf for w in weights) or not sum(weights) > 0:
            msg = "HybridScorer needs (scorer, weight) pairs with finite non-negative weights, one of them positive"
            raise ValueError(msg)
        self.scorers = list(scorers)
        if support_threshold is None:
            total = sum(weights)
            support_threshold = sum(w * support_threshold_of(s) for s, w in scorers) / total
        self.support_threshold = _threshold(support_threshold)

    @override
    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        pairs = list(text_pairs)
        total = sum(weight for _, weight in self.scorers)
        combined = [0.0] * len(pairs)
        for scorer, weight in self.scorers:
            for i, value in enumerate(scorer.score(pairs)):
                combined[i] += weight * _unit(value) / total
        # Rounding may step a hair past 1.
        return [min(1.0, value) for value in combined]
