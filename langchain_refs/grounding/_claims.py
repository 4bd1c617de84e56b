"""Claim-level checking of a response against its references, RefChecker-style.

A response is broken into claims (sub-sentences, or knowledge triplets when an
LLM extracts them); each claim is checked against the references and labelled
``Entailment``, ``Neutral`` or ``Contradiction``; the labels are aggregated
(``strict``, ``soft`` or ``major``). A response that makes no claim is
``Abstain``.

The offline checker is built on the grounding scorers: a claim is Entailment
when its best-supporting reference window reaches a threshold, Neutral
otherwise, and Contradiction only where the best window says the same thing
with one slot changed:

- a number: the claim states a number the window does not, and the window
  states another number of the same kind (a year or not) between the same
  words ("opened in 1951" against "opened in 1932"); citation markers such
  as "[3]" are not numbers;
- a negation: one of them negates a phrase (the next few content words of a
  "not", "never", "no"... up to the end of its clause; "not only" or "no
  doubt" negates nothing) that the other states un-negated, two of its words
  at least;

and in both cases the window covers the rest of the claim well, and the claim
has three content words or numbers at least. It never guesses a
contradiction. A bare answer ("Neil Alden Armstrong") is a claim; the offline
checker reads it as the answer to its question when one is given.
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

from langchain_refs.grounding._guards import (
    CITATION_MARKER,
    DEFAULT_GUARDS,
    NEGATIONS,
    NOT_NEGATING,
    SCOPE_ENDS,
    GuardFinding,
    MeaningGuards,
    checked_guards,
    negates_the_reason,
    negating_verb,
    number_guard,
    says_negated,
)
from langchain_refs.grounding._llm import ModelReply, ask_model, checked_chat_model
from langchain_refs.grounding._scoring import LexicalScorer
from langchain_refs.grounding._verifier import checked_scorer
from langchain_refs.streaming import checked_support_threshold, checked_whole_number
from langchain_refs.text import DEFAULT_SPLITTER, STOP_WORDS, SentenceSplitter, Span, fold, sentence_windows, stem

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

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            msg = f"Claim: text must be a text (str), got {type(self.text).__name__}"
            raise TypeError(msg)

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

    ``guard`` is the meaning guard that kept the claim from Entailment (None
    when none fired): its reason says what the sources say instead, and the
    claim's first evidence span is the source sentence that says it (when
    there is one).

    Example:
        >>> ClaimCheck(label="Neutral", score=0.2).to_dict()
        {'label': 'Neutral', 'score': 0.2, 'evidence': []}
    """

    label: str
    score: float
    evidence: tuple[EvidenceSpan, ...] = field(default=())
    guard: GuardFinding | None = None

    def to_dict(self, *, guard: bool = False) -> dict[str, Any]:
        """JSON-ready data, as the ``check`` command writes it.

        ``guard=True`` adds ``"guard"``: the guard's name, reason, the claim's
        and the source's value, or None when no guard fired (the checking
        page's answer has it; the command's output keeps its columns).

        Example:
            >>> ClaimCheck(label="Entailment", score=1.0).to_dict()["label"]
            'Entailment'
            >>> ClaimCheck(label="Entailment", score=1.0).to_dict(guard=True)["guard"] is None
            True
        """
        data: dict[str, Any] = {
            "label": self.label,
            "score": self.score,
            "evidence": [asdict(e) for e in self.evidence],
        }
        if guard:
            g = self.guard
            data["guard"] = (
                None
                if g is None
                else {"name": g.guard, "reason": g.reason, "claim_value": g.claim_value, "source_value": g.source_value}
            )
        return data


# A whitespace run is tried from its start only: retrying inside it made a long run quadratic.
_CLAUSE = re.compile(r";\s+|,\s+(?:and|but|while|whereas|although)\s+|(?<!\s)\s+(?:but|whereas)\s+")
_WORDS = re.compile(r"\w+")
# The most sentences a quotation left open joins to the one it opened in.
_QUOTE_JOINS: Final = 3
# Double quotation marks that open (after a space, a bracket or the start) and that close (before one, or punctuation).
_OPENING_QUOTE = re.compile(r"(?:^|(?<=[\s(\[]))[\"\u201c]")
_CLOSING_QUOTE = re.compile(r"[\"\u201d](?=[\s.,;:!?)\]]|$)")
# A sentence of fewer words is a fragment to the sentence rules (as for `needs_reference`).
_SENTENCE_WORDS = 4
# Short replies that answer nothing: greetings, thanks, assent, headings, "no idea".
_NOT_AN_ANSWER = re.compile(
    r"^\W*(?:#|(?:hi|hello|hey|thanks|thank you|you're welcome|sure|of course|great question|ok|okay|"
    r"bye|goodbye|cheers|no idea|not sure|unknown|n/a)\b)",
    re.IGNORECASE,
)


def _is_bare(text: str) -> bool:
    """A claim too short to be a sentence: a bare answer such as "Neil Alden Armstrong"."""
    return len(_WORDS.findall(CITATION_MARKER.sub(" ", text))) < _SENTENCE_WORDS


def _in_context(claim: str, question: str | None) -> str:
    """The text to check: a bare answer reads as the answer to its question, any other claim as itself.

    Example:
        >>> _in_context("1951", "When did the bridge open?"), _in_context("It opened in 1951.", "When?")
        ('When did the bridge open 1951', 'It opened in 1951.')
    """
    if question and question.strip() and _is_bare(claim):
        # Without the question mark: "When did the bridge open 1951" keeps "open" next to the year.
        return f"{question.strip().rstrip('?!.')} {claim.strip()}"
    return claim


def _texts(values: object, name: str, owner: str) -> Sequence[str]:
    """``values`` when it is a list of texts, else an error naming ``name`` (a lone text is not read letter by letter).

    Example:
        >>> _texts("The tower opened in 1889.", "references", "check")
        Traceback (most recent call last):
        ...
        TypeError: check: references must be a list of texts, got one str: write ['The tower opened in 1889.']
    """
    if isinstance(values, str):
        shown = values if len(values) <= 40 else values[:37] + "..."
        msg = f"{owner}: {name} must be a list of texts, got one str: write [{shown!r}]"
        raise TypeError(msg)
    if not isinstance(values, Sequence):
        msg = f"{owner}: {name} must be a list of texts, got {type(values).__name__}"
        raise TypeError(msg)
    for position, value in enumerate(values):
        if not isinstance(value, str):
            hint = " (a Document: give its page_content)" if hasattr(value, "page_content") else ""
            msg = f"{owner}: {name}[{position}] must be a text (str), got {type(value).__name__}{hint}"
            raise TypeError(msg)
    return values


def _claim(value: object, where: str) -> Claim:
    """``value`` when it is a `Claim`, else a TypeError naming ``where`` (and how to make one of a text)."""
    if not isinstance(value, Claim):
        hint = ": write Claim(text=...)" if isinstance(value, str) else ""
        msg = f"{where} must be a Claim, got {type(value).__name__}{hint}"
        raise TypeError(msg)
    return value


def _text(value: object, name: str, owner: str, *, optional: bool = False) -> None:
    """Nothing when ``value`` is a text (or None, when ``optional``), else a TypeError naming ``name``.

    Example:
        >>> _text(5, "question", "check", optional=True)
        Traceback (most recent call last):
        ...
        TypeError: check: question must be a text (str) or None, got int
    """
    if isinstance(value, str) or (optional and value is None):
        return
    msg = f"{owner}: {name} must be a text (str){' or None' if optional else ''}, got {type(value).__name__}"
    raise TypeError(msg)


def _claims(values: object, owner: str) -> Sequence[Claim]:
    """``values`` when it is a list of `Claim`, else an error naming the first that is not one."""
    if isinstance(values, (str, Claim)) or not isinstance(values, Sequence):
        msg = f"{owner}: claims must be a list of Claim, got {type(values).__name__}"
        raise TypeError(msg)
    for position, value in enumerate(values):
        _claim(value, f"{owner}: claims[{position}]")
    return values


class RuleBasedClaimExtractor:
    """Offline sub-sentence claims: sentences, cut again at clause boundaries.

    A sentence is cut at semicolons and at ", and" / ", but" / "while" joins
    when both halves have at least ``min_words`` words. Sentences that make
    no claim (greetings, headings, "I could not find...") are left out.

    A bare answer is a claim too. When no sentence of the response makes a
    claim, each fragment of fewer than four words that is not a greeting,
    thanks or heading ("Neil Alden Armstrong", "1969.", "Yes.") becomes one,
    as written. The claim stays the answer's own words (its offsets slice the
    response); the checkers read it with the question, when one is given.

    Example:
        >>> [c.text for c in RuleBasedClaimExtractor().extract(
        ...     "Hello! Paris is the capital of France, and it has two million inhabitants.")]
        ['Paris is the capital of France', 'it has two million inhabitants.']
        >>> RuleBasedClaimExtractor().extract("Neil Alden Armstrong", "Who first walked on the Moon?")
        [Claim(text='Neil Alden Armstrong', triplet=None, start=0, end=20)]
    """

    def __init__(self, *, min_words: int = 3, splitter: SentenceSplitter | None = None) -> None:
        self.min_words = min_words
        self.splitter = splitter or DEFAULT_SPLITTER

    def extract(self, response: str, question: str | None = None) -> list[Claim]:
        """The claims of one response, with their offsets in it.

        Example:
            >>> RuleBasedClaimExtractor().extract("I could not find this in the documents.")
            []
        """
        from langchain_refs.grounding._predictor import needs_reference

        _text(response, "response", "extract")
        _text(question, "question", "extract", optional=True)
        claims = []
        fragments = []
        for sentence in self._sentences(response):
            if not needs_reference(sentence.text):
                if _WORDS.search(sentence.text) and not _NOT_AN_ANSWER.match(sentence.text) and _is_bare(sentence.text):
                    fragments.append(sentence)
                continue
            for piece in self._clauses(sentence):
                claims.append(Claim(text=piece.text, start=piece.start, end=piece.end))
        if claims or not fragments:
            return claims
        # No sentence makes a claim, but the response answers: "Neil Alden Armstrong" is a claim.
        return [Claim(text=f.text, start=f.start, end=f.end) for f in fragments]

    def extract_batch(
        self, responses: Sequence[str], questions: Sequence[str | None] | None = None
    ) -> list[list[Claim]]:
        """`extract` for several responses.

        Example:
            >>> len(RuleBasedClaimExtractor().extract_batch(["A b c d.", "E f g h."]))
            2
        """
        _texts(responses, "responses", "extract_batch")
        questions = questions or [None] * len(responses)
        return [self.extract(r, q) for r, q in zip(responses, questions, strict=True)]

    def _sentences(self, response: str) -> list[Span]:
        """The splitter's sentences, a sentence that ends inside quotation marks joined to the next.

        "The A.V. Club" must not end a sentence at "A.V.": a sentence whose
        quotation marks open more often than they close goes on, on the same
        line and for at most `_QUOTE_JOINS` more sentences (a quotation mark
        left open must not make the rest of the response one claim).
        """
        sentences: list[Span] = []
        open_quote = False
        joins = 0
        for sentence in self.splitter.split(response):
            if (
                open_quote
                and sentences
                and joins < _QUOTE_JOINS
                and "\n" not in response[sentences[-1].end : sentence.start]
            ):
                start = sentences[-1].start
                sentence = Span(start=start, end=sentence.end, text=response[start : sentence.end])
                sentences[-1] = sentence
                joins += 1
            else:
                sentences.append(sentence)
                joins = 0
            text = sentence.text
            open_quote = ('"' in text or "\u201c" in text) and len(_OPENING_QUOTE.findall(text)) > len(
                _CLOSING_QUOTE.findall(text)
            )
        return sentences

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
        "When the response is a bare answer to the QUESTION (a name, a date, yes or no), state what it claims "
        "as the answer to that question. "
        'Answer with JSON only: {"claims": [["head", "relation", "tail"], ...]}. '
        'Use {"claims": []} when the response makes no factual claim.'
    ),
    "subsentence": (
        "Split the RESPONSE into short standalone factual claims, each understandable alone. "
        "When the response is a bare answer to the QUESTION (a name, a date, yes or no), state what it claims "
        "as the answer to that question. "
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
        self.model = checked_chat_model(model, "LLMClaimExtractor")
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
        _texts(responses, "responses", "extract_batch")
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
    """The claims with their offsets in ``response`` where they are a piece of it.

    A model copies a piece of the response loosely: other spaces or line
    breaks, another case, a final mark added or dropped. A claim is found
    with those differences allowed, searched first after the claim before it
    (claims come in the response's order, and a claim said twice is found
    twice), then from the start. A claim not found (a paraphrase, a triplet)
    keeps no offsets.
    """
    located = []
    after = 0
    for claim in claims:
        pattern = _loose_pattern(claim.text) if claim.triplet is None else None
        found = (pattern.search(response, after) or pattern.search(response)) if pattern else None
        if found:
            located.append(Claim(text=claim.text, triplet=claim.triplet, start=found.start(), end=found.end()))
            after = found.end()
        else:
            located.append(Claim(text=claim.text, triplet=claim.triplet))
    return located


_END_MARKS = ".!?;,"


def _loose_pattern(text: str) -> re.Pattern[str] | None:
    """The claim's words in order, any whitespace between them, any case, its final mark optional."""
    words = text.strip().rstrip(_END_MARKS).split()
    if not words:
        return None
    # Literal words joined by whitespace runs: each search stays linear in the response.
    body = r"\s+".join(re.escape(word) for word in words)
    return re.compile(rf"{body}[{re.escape(_END_MARKS)}]?", re.IGNORECASE)


# "can't", "wasn't", "don\u2019t": a contracted "not" becomes the word.
_CONTRACTED_NOT = re.compile(r"n['\u2019]t\b")
# A number (with thousands separators or decimals), a word, or a mark that ends a clause.
_TOKEN = re.compile(r"(\d+(?:[.,]\d+)*)|([a-z]+)|([,;:.!?()\u2013\u2014\[\]])")
# How far a negation reaches: its next few content words, within its clause and a few tokens.
_SCOPE_WORDS = 4
_SCOPE_REACH = 8
# How far an anchor of a number may stand from it, in words.
_ANCHOR_REACH = 2
# The fewest content words and numbers a claim needs before anything can contradict it.
_MIN_CONTRADICTED_WORDS = 3
_PLAIN = re.compile(rf"\b(?:{'|'.join(sorted(NEGATIONS))})\b|\d+(?:[.,]\d+)*")


@dataclass(frozen=True, slots=True, kw_only=True)
class _Number:
    """A number stated in a text, with the content words next to it (its slot)."""

    value: str
    year: bool
    before: str | None
    after: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class _Reading:
    """What the contradiction rule reads in a text: its words, numbers and negated phrases."""

    words: frozenset[str]
    numbers: tuple[_Number, ...]
    negated: tuple[frozenset[str], ...]


def _read(text: str) -> _Reading:
    """Content words (stemmed), numbers with their anchors, and the words each negation covers."""
    folded = _CONTRACTED_NOT.sub(" not", fold(CITATION_MARKER.sub(" ", text)))
    # Each token: ("n", value) number, ("w", stem) content word, ("s", word) stop word, ("|", mark) clause mark.
    tokens: list[tuple[str, str]] = []
    matches = list(_TOKEN.finditer(folded))
    found = [m.group() for m in matches]
    for i, (number, word, mark) in enumerate(m.groups() for m in matches):
        if number:
            tokens.append(("n", number.replace(",", "")))
        elif word:
            following, after, then = (found[i + k] if i + k < len(found) else None for k in (1, 2, 3))
            if word in NEGATIONS or negating_verb(word, following, after, then) is not None:
                tokens.append(("c", word))
            else:
                tokens.append(("s", word) if word in STOP_WORDS else ("w", stem(word)))
        else:
            tokens.append(("|", mark))
    words = frozenset(value for kind, value in tokens if kind == "w")
    numbers = tuple(
        _Number(
            value=value,
            year=len(value) == 4 and value.isdigit() and value[0] in "12",
            before=_anchor(tokens, i, -1),
            after=_anchor(tokens, i, 1),
        )
        for i, (kind, value) in enumerate(tokens)
        if kind == "n"
    )
    negated = []
    for i, (kind, _) in enumerate(tokens):
        # "not only X but also Y" affirms X, and "no doubt X" asserts it.
        if kind != "c" or (i + 1 < len(tokens) and tokens[i + 1][1] in NOT_NEGATING):
            continue
        scope: list[str] = []
        # At most _SCOPE_REACH tokens are looked at: a run of cues ("not not not ...") stays linear.
        for j, (other, word) in enumerate(tokens[i + 1 : i + 1 + _SCOPE_REACH], start=i + 1):
            # Another clause's word ("because", "unless": as written, a content word is kept stemmed) ends the
            # scope, unless it comes first after a "not" that negates the reason ("not because of X").
            if (
                other == "|"
                or len(scope) == _SCOPE_WORDS
                or (
                    found[j] in SCOPE_ENDS
                    and (
                        scope
                        or not negates_the_reason(
                            found[i], found[i - 1] if i else None, found[i + 1] if i + 1 < len(found) else None
                        )
                    )
                )
            ):
                break
            if other == "w":
                scope.append(word)
        if scope:
            negated.append(frozenset(scope))
    return _Reading(words=words, numbers=numbers, negated=tuple(negated))


def _negated_cover(claim: _Reading, evidence: _Reading, text: str) -> bool:
    """The words the window shares with the claim stand mostly inside its negations, and the claim negates none.

    Too little to call a contradiction ("Red." against "The tower is not
    painted red."), but no support either. A claim that says a negated word in
    one word ("illegal" for "not legal", ``text`` being the claim) negates it too.
    """
    shared = claim.words & evidence.words
    if not shared or claim.negated:
        return False
    negated = frozenset().union(*evidence.negated)
    if any(says_negated(word, text) for word in negated):
        return False
    return 2 * len(shared & negated) >= len(shared)


def _plain(text: str) -> str:
    """The text without citation markers, numbers and negations: what must match for a contradiction."""
    return _PLAIN.sub(" ", _CONTRACTED_NOT.sub(" not", fold(CITATION_MARKER.sub(" ", text))))


def _anchor(tokens: list[tuple[str, str]], at: int, step: int) -> str | None:
    """The nearest content word within reach of the number at ``at``, on one side, inside its clause."""
    i = at + step
    for _ in range(_ANCHOR_REACH):
        if not 0 <= i < len(tokens) or tokens[i][0] in ("|", "n"):
            return None
        if tokens[i][0] == "w":
            return tokens[i][1]
        i += step
    return None


def _numbers_disagree(claim: _Reading, evidence: _Reading) -> bool:
    """A number of the claim is not in the evidence, which states another number in the same slot.

    Same slot: a number of the same kind (a year, or not) whose anchors agree
    with the claim number's — every side where both have an anchor agrees,
    and at least one such side exists. "opened in 1951" against "opened in
    1932" disagrees; "won the cup in 2019" against "its record in 2018" does not.
    """
    stated = {n.value for n in evidence.numbers}
    # The evidence's slots indexed by one anchor, holding the other: a lookup per claim
    # number instead of a comparison with every number of the window.
    afters: dict[tuple[bool, str], set[str | None]] = {}
    befores: dict[tuple[bool, str], set[str | None]] = {}
    for other in evidence.numbers:
        if other.before:
            afters.setdefault((other.year, other.before), set()).add(other.after)
        if other.after:
            befores.setdefault((other.year, other.after), set()).add(other.before)
    for number in claim.numbers:
        if number.value in stated:
            continue
        # Same word before; the words after agree, or one of them has none.
        after = afters.get((number.year, number.before), set()) if number.before else set()
        if after and (number.after is None or None in after or number.after in after):
            return True
        # Same word after; the words before agree, or one of them has none.
        before = befores.get((number.year, number.after), set()) if number.after else set()
        if before and (number.before is None or None in before or number.before in before):
            return True
    return False


def _negation_flips(negating: _Reading, affirming: _Reading) -> bool:
    """A phrase that ``negating`` negates is stated, un-negated, by ``affirming``.

    The phrase is found when the affirming text has two of its content words
    (or its only one); it is un-negated when no negation of the affirming text
    covers those words.
    """
    for scope in negating.negated:
        found = scope & affirming.words
        if len(found) >= min(2, len(scope)) and not any(found & other for other in affirming.negated):
            return True
    return False


class ScorerClaimChecker:
    """The offline checker: grounding scores, plus contradiction only on real signals.

    Each claim is scored against every window of every reference and, with
    ``together`` (the default), against all the references joined: a claim
    whose parts stand in different references is supported by them together.
    The claim's score is the best of these; its evidence spans are the best
    windows, each with its own score. Contradiction when the best window
    states the claim with a number or a negation changed (see the module's
    header), unless the meaning guards, which read the claim's numbers and
    negations as it means them ("over 1,000", "not uncommon"), accept it and
    only the claim negates; else Entailment when the claim's score reaches ``threshold`` and
    the words the best window shares with the claim do not stand mostly
    inside its own negations; else Neutral.

    The default ``threshold`` of 0.4 was chosen on the development splits of
    AttributionBench and WiCE with `LexicalScorer`: of the thresholds 0.20,
    0.25, ... 0.80, it gives the best mean of the two sets' macro-F1 of the
    aggregated verdict (AttributionBench alone peaks near 0.55, WiCE near
    0.35; ``python bench/eval_claims.py --sweep`` prints the table). Choose it
    again when the scorer changes.

    A bare answer (fewer than four words) with a question is scored as the
    question followed by the answer, and also as the answer alone; the lower
    score counts, so the window must name the answer, not just echo the question.

    Then the meaning guards (`MeaningGuards`: numbers, names, polarity,
    antonyms) hold the claim to what it asserts, against all the
    references joined: when one
    fires the label is its label (Contradiction when a source states the
    same thing with the value changed, Neutral when the value is missing),
    ``guard`` says why, and the first evidence span is the source sentence
    holding the source's value.

    Args:
        scorer: any scorer (default `LexicalScorer`).
        threshold: the support a claim needs to be Entailment.
        contradiction_overlap: how well a window must cover the claim's other
            words before disagreeing numbers or negation count as a contradiction.
        window: reference sentences per window.
        together: also score each claim against all the references joined.
        splitter: how references are cut into sentences.
        guards: the meaning guards (None or ``MeaningGuards.off()``: the score alone).

    Example:
        >>> checker = ScorerClaimChecker()
        >>> reference = "The tower is 330 metres tall. It opened in 1889."
        >>> [checker.check(Claim(text=t), [reference]).label for t in
        ...  ["The tower opened in 1889.", "The tower is 300 metres tall.", "The tower is painted red."]]
        ['Entailment', 'Contradiction', 'Neutral']
        >>> checker.check(Claim(text="The tower opened in 1902."), [reference]).guard.reason
        'the sources say 1889, not 1902'
    """

    def __init__(
        self,
        scorer: BaseCrossEncoder | None = None,
        *,
        threshold: float = 0.4,
        contradiction_overlap: float = 0.7,
        window: int = 1,
        together: bool = True,
        splitter: SentenceSplitter | None = None,
        guards: MeaningGuards | None = DEFAULT_GUARDS,
    ) -> None:
        self.guards = checked_guards(guards, "ScorerClaimChecker")
        overlap = contradiction_overlap
        if isinstance(overlap, bool) or not isinstance(overlap, (int, float)) or not 0 <= overlap <= 1:
            msg = f"ScorerClaimChecker: contradiction_overlap must be a number from 0 to 1, got {overlap!r}"
            raise TypeError(msg) if not isinstance(overlap, (int, float)) else ValueError(msg)
        checked_whole_number(window, "ScorerClaimChecker: window", "sentences")
        if scorer is not None:
            checked_scorer(scorer, "ScorerClaimChecker")
        self.scorer = scorer or LexicalScorer()
        self.threshold = checked_support_threshold(threshold, option="threshold", none_means=None)
        self.contradiction_overlap = contradiction_overlap
        self.window = window
        self.together = together
        self.splitter = splitter or DEFAULT_SPLITTER

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
        _claim(claim, "check: claim")
        _texts(references, "references", "check")
        _text(question, "question", "check", optional=True)
        return self.check_batch([claim], references, question)[0]

    def _check(
        self,
        claim: Claim,
        windows: list[tuple[int, int, int, str]],
        together: str,
        question: str | None,
        starts: list[int],
    ) -> ClaimCheck:
        if not windows:
            return ClaimCheck(label=NEUTRAL, score=0.0)
        # A citation marker is no part of what the claim says: "[3]" read as a number the
        # evidence lacks costs the claim the scorer's missing-number penalty.
        said = CITATION_MARKER.sub("", claim.text).strip() or claim.text
        text = _in_context(said, question)
        texts = [window for *_, window in windows]
        if self.together:
            texts.append(together)
        scores = self.scorer.score([(text, evidence) for evidence in texts])
        if text != said:
            # A bare answer is supported when the window backs the answer to that question and
            # names the answer itself: the question's words alone ("first ... walk on the Moon")
            # must not carry a wrong answer ("Buzz Aldrin").
            alone = self.scorer.score([(said, evidence) for evidence in texts])
            scores = [min(a, b) for a, b in zip(scores, alone, strict=True)]
        support = max(scores)
        scores = scores[: len(windows)]
        order = sorted(range(len(windows)), key=lambda i: -scores[i])
        best = order[0]
        spans = [
            EvidenceSpan(reference=windows[i][0], start=windows[i][1], end=windows[i][2], score=round(scores[i], 6))
            for i in order[:3]
        ]
        claim_reading, window_reading = _read(text), _read(windows[best][3])
        finding = self.guards.check(text, together) if self.guards is not None else None
        # The guards read the claim's numbers and its own negations as it means them ("over 1,000",
        # "not uncommon", "failed to"): when they accept it, the window's rule is left only the sources
        # negating what the claim affirms.
        accepted = self.guards is not None and finding is None
        contradicted = self._contradicts(text, claim_reading, windows[best][3], window_reading, guarded=accepted)
        supported = support >= self.threshold and not _negated_cover(claim_reading, window_reading, text)
        # The window's own contradiction outranks a guard that only misses the value.
        if finding is not None and not (contradicted and finding.label == NEUTRAL):
            return self._guarded(finding, support, spans, starts)
        if contradicted:
            return ClaimCheck(label=CONTRADICTION, score=round(support, 6), evidence=(spans[0],))
        return ClaimCheck(
            label=ENTAILMENT if supported else NEUTRAL,
            score=round(support, 6),
            evidence=tuple(span for span in spans if span.score > 0),
        )

    @staticmethod
    def _guarded(finding: GuardFinding, support: float, spans: list[EvidenceSpan], starts: list[int]) -> ClaimCheck:
        """The verdict a guard gives: its label, its reason, and first among the spans the source sentence it read."""
        evidence = [span for span in spans if span.score > 0]
        if finding.start is not None and finding.end is not None:
            # The guard read the references joined by blank lines: back to one reference's offsets.
            reference = bisect.bisect_right(starts, finding.start) - 1
            start, end = finding.start - starts[reference], finding.end - starts[reference]
            # Never past the reference's own end (the joined text goes on with a blank line and the next one).
            following = starts[reference + 1] - 2 if reference + 1 < len(starts) else None
            end = min(end, following - starts[reference]) if following is not None else end
            located = EvidenceSpan(reference=reference, start=start, end=end, score=round(support, 6))
            evidence = [located, *(e for e in evidence if (e.reference, e.start, e.end) != (reference, start, end))]
        return ClaimCheck(label=finding.label, score=round(support, 6), evidence=tuple(evidence[:3]), guard=finding)

    def _contradicts(
        self, claim: str, claim_reading: _Reading, evidence: str, evidence_reading: _Reading, *, guarded: bool = False
    ) -> bool:
        """The window states the claim with one slot changed: another number, or the negation flipped.

        Three conditions, all needed: the claim has at least three content
        words and numbers (a fragment such as "South Africa" contradicts nothing); a
        number of the claim meets another number in the same slot of the
        window, or a phrase one of them negates is stated un-negated by the
        other; and the window covers the rest of the claim — its words with
        numbers, negations and citation markers set aside — at least
        ``contradiction_overlap``. ``guarded``: the meaning guards accepted the
        claim against all the references; the window's numbers are then read
        as the number guard reads them (a bound such as "over 1,000" allowed
        for), and a negation of the claim's own is the polarity guard's ("not
        uncommon", "failed to"): only the window negating what the claim
        affirms is left to this rule's reading.
        """
        if len(claim_reading.words) + len(claim_reading.numbers) < _MIN_CONTRADICTED_WORDS:
            return False
        if guarded:
            found = number_guard(claim, evidence)
            signal = _negation_flips(evidence_reading, claim_reading) or (
                found is not None and found.label == CONTRADICTION
            )
        else:
            signal = (
                _numbers_disagree(claim_reading, evidence_reading)
                or _negation_flips(claim_reading, evidence_reading)
                or _negation_flips(evidence_reading, claim_reading)
            )
        if not signal:
            return False
        overlap = LexicalScorer(number_penalty=1.0).score([(_plain(claim), _plain(evidence))])[0]
        return overlap >= self.contradiction_overlap

    def check_batch(
        self, claims: Sequence[Claim], references: Sequence[str], question: str | None = None
    ) -> list[ClaimCheck]:
        """`check` for each claim of one response.

        Example:
            >>> len(ScorerClaimChecker().check_batch([Claim(text="a"), Claim(text="b")], ["a"]))
            2
        """
        _claims(claims, "check_batch")
        _text(question, "question", "check_batch", optional=True)
        _texts(references, "references", "check_batch")
        # Every claim is checked against the same windows: split each reference once.
        windows = self._windows(references)
        together = "\n\n".join(references)
        # Where each reference starts in the joined text.
        starts = [sum(len(r) + 2 for r in references[:i]) for i in range(len(references))]
        return [self._check(claim, windows, together, question, starts) for claim in claims]


class _Verdict(BaseModel):
    label: Literal["Entailment", "Neutral", "Contradiction"]
    references: list[int] = Field(default_factory=list, description="numbers of the references the label rests on")


_CHECK_PROMPT = (
    "You check a CLAIM against numbered REFERENCES. Answer Entailment if the references support the claim, "
    "Contradiction if they contradict it, Neutral if they do neither. Name the numbers of the references "
    "your answer rests on (none for Neutral). "
    'Answer with JSON only: {"label": "Entailment" | "Neutral" | "Contradiction", "references": [1]}.'
)


class LLMClaimChecker:
    """Any chat model checks each claim: Entailment, Neutral or Contradiction.

    Structured output where the model has it, tolerant reading otherwise; an
    unreadable reply is logged and counts as Neutral. The references are
    shown numbered; those the model names as the ground of its label become
    the claim's evidence spans (whole references: a model gives no offsets),
    numbers that name no reference are left out. A model gives no graded
    support: the score is 1.0 for Entailment, 0.0 otherwise.

    Example:
        >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
        >>> model = FakeListChatModel(responses=['{"label": "Contradiction", "references": [1]}', "Entailment."])
        >>> checks = LLMClaimChecker(model).check_batch([Claim(text="a"), Claim(text="b")], ["r"])
        >>> [(c.label, c.score, len(c.evidence)) for c in checks]
        [('Contradiction', 0.0, 1), ('Entailment', 1.0, 0)]
    """

    def __init__(self, model: BaseChatModel, *, max_concurrency: int = 4) -> None:
        self.model = checked_chat_model(model, "LLMClaimChecker")
        self.max_concurrency = max_concurrency

    def check(self, claim: Claim, references: Sequence[str], question: str | None = None) -> ClaimCheck:
        """The verdict on one claim.

        Example:
            >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
            >>> LLMClaimChecker(FakeListChatModel(responses=["?"])).check(Claim(text="a"), ["r"]).label
            'Neutral'
        """
        _claim(claim, "check: claim")
        _texts(references, "references", "check")
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
        _claims(claims, "check_batch")
        _text(question, "question", "check_batch", optional=True)
        _texts(references, "references", "check_batch")
        numbered = "\n\n".join(f"REFERENCE [{n}]: {text}" for n, text in enumerate(references, start=1))
        prompts = [
            [
                SystemMessage(_CHECK_PROMPT),
                HumanMessage((f"QUESTION: {question}\n\n" if question else "") + f"{numbered}\n\nCLAIM: {c.text}"),
            ]
            for c in claims
        ]
        verdicts: list[tuple[str, list[int]]] = ask_model(
            self.model,
            prompts,
            schema=_Verdict,
            read=_read_verdict,
            default=(NEUTRAL, []),
            name="claim checker",
            max_concurrency=self.max_concurrency,
        )
        checks = []
        for label, named in verdicts:
            score = 1.0 if label == ENTAILMENT else 0.0
            # Each named reference once, in the model's order; numbers past the list are dropped.
            indexes = dict.fromkeys(n - 1 for n in named if 1 <= n <= len(references))
            evidence = tuple(EvidenceSpan(reference=i, start=0, end=len(references[i]), score=score) for i in indexes)
            checks.append(ClaimCheck(label=label, score=score, evidence=evidence))
        return checks


def _read_verdict(reply: ModelReply) -> tuple[str, list[int]]:
    """The label, and the reference numbers named with it (whole numbers only; anything else is ignored)."""
    label = _read_label(reply)
    named = reply.data.get("references") if isinstance(reply.data, dict) else None
    numbers = [n for n in named if isinstance(n, int) and not isinstance(n, bool)] if isinstance(named, list) else []
    return label, numbers


def _read_label(reply: ModelReply) -> str:
    """``{"label": ...}`` (any case), or the one label named in the text."""
    if isinstance(reply.data, dict) and isinstance(reply.data.get("label"), str):
        named = reply.data["label"].strip().lower()
        for label in LABELS:
            if named == label.lower():
                return label
    found = [label for label in LABELS if re.search(rf"\b{label}\b", reply.text, re.IGNORECASE)]
    if len(found) != 1:
        msg = "no label" if not found else f"several labels: {found}"
        raise ValueError(msg)
    return found[0]


def aggregate(labels: Sequence[str | ClaimCheck], method: Aggregator = "strict") -> str | dict[str, float]:
    """Combine claim labels into a response label, as RefChecker defines it.

    ``strict``: Contradiction if any claim is contradicted, else Neutral if any
    is neutral, else Entailment. ``soft``: the share of each label.
    ``major``: the most frequent label (ties go to the worse one). No claims:
    Abstain (``soft`` gives ``{"Abstain": 1.0}``). ``labels`` are the labels
    (``Entailment``, ``Neutral``, ``Contradiction``) or the `ClaimCheck`
    values a checker gives; any other label is a ValueError naming it.

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
    if isinstance(labels, str) or not isinstance(labels, Sequence):
        msg = f"aggregate() takes a list of labels or ClaimChecks, got {type(labels).__name__}"
        raise TypeError(msg)
    labels = [label.label if isinstance(label, ClaimCheck) else label for label in labels]
    unknown = [label for label in labels if label not in LABELS]
    if unknown:
        msg = f"aggregate(): unknown label {unknown[0]!r}: the labels are {', '.join(LABELS)} (or ClaimChecks)"
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
