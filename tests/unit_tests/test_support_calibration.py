"""What verify_citations gives the scorer, the scorers' own support thresholds, and long evidence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from langchain_refs import (
    AnswerReferences,
    Citation,
    CrossEncoderScorer,
    EmbeddingScorer,
    HybridScorer,
    LexicalScorer,
    Reference,
    ReferencePredictor,
    ReferencesCollector,
    SupportScorer,
    TextReferenceStyle,
    manage_references,
    verify_citations,
)
from langchain_refs.text import window_indices
from tests.unit_tests.fakes import ConstantCrossEncoder, str_chunks


def cited(text: str, positions: tuple[int, ...]) -> AnswerReferences:
    """An answer with one citation of ``text`` naming ``positions``."""
    citation = Citation(
        number=1, document_positions=positions, start=0, end=3, text_start=0, text_end=0, text=text, marker="[1]"
    )
    reference = Reference(number=1, source="s", title=None, document_positions=positions)
    return AnswerReferences(references=(reference,), citations=(citation,))


class Recorder(SupportScorer):
    """Scores every pair ``value`` and remembers the pairs it was asked about."""

    def __init__(self, value: float, *, support_threshold: float | None = None) -> None:
        self.value = value
        self.seen: list[tuple[str, str]] = []
        if support_threshold is not None:
            self.support_threshold = support_threshold

    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.seen += list(text_pairs)
        return [self.value] * len(text_pairs)


DOCS = [Document("One fact. Two facts. Three facts."), Document("Another page.")]


def test_verifier_reads_the_cited_documents_whole() -> None:
    """By default a citation is scored once, against its cited documents joined by a blank line."""
    scorer = Recorder(0.9)
    verify_citations(cited("A claim.", (2, 1, 2)), DOCS, scorer)
    assert scorer.seen == [("A claim.", "Another page.\n\nOne fact. Two facts. Three facts.")]


def test_verifier_windows_on_request() -> None:
    """With window=2 the citation is scored against each two-sentence window, as before."""
    scorer = Recorder(0.9)
    verify_citations(cited("A claim.", (1,)), DOCS, scorer, window=2)
    assert scorer.seen == [("A claim.", "One fact. Two facts."), ("A claim.", "Two facts. Three facts.")]


@pytest.mark.parametrize(
    ("own", "given", "supported"),
    [(0.7, None, False), (0.5, None, True), (0.7, 0.6, True), (None, None, True)],
)
def test_verifier_uses_the_scorers_threshold(own: float | None, given: float | None, supported: bool) -> None:
    """Without a threshold a citation is supported from the scorer's support_threshold (0.5 when it has none)."""
    scorer = Recorder(0.65, support_threshold=own)
    checked = verify_citations(cited("A claim.", (1,)), DOCS, scorer, threshold=given)
    assert checked.citations[0].supported is supported
    assert scorer.verify_citations(cited("A claim.", (1,)), DOCS, threshold=given).citations[0].supported is supported


@pytest.mark.parametrize(("own", "given", "supported"), [(0.7, None, False), (0.6, None, True), (0.7, 0.6, True)])
def test_manage_references_leaves_the_threshold_to_the_verifier(
    own: float, given: float | None, supported: bool
) -> None:
    """manage_references(verifier=...) judges at the scorer's own threshold unless support_threshold is given."""
    chain = manage_references(
        str_chunks(["A claim[1](id=1)."]),
        style=TextReferenceStyle(),
        verifier=Recorder(0.65, support_threshold=own),
        support_threshold=given,
    )
    collector = ReferencesCollector()
    chain.invoke({"documents": DOCS}, {"callbacks": [collector]})
    (citation,) = collector.answers[0].citations
    assert (citation.support, citation.supported) == (0.65, supported)


def test_a_verifier_that_needs_a_number_gets_one() -> None:
    """A verifier of one's own, typed threshold: float, gets its own support_threshold, else 0.5 — never None."""

    class Strict:
        def __init__(self) -> None:
            self.given: list[float] = []

        def verify_citations(self, references: AnswerReferences, documents: Any, *, threshold: float) -> Any:
            self.given.append(threshold + 0.0)  # would raise on None
            return references

    plain, own = Strict(), Strict()
    own.support_threshold = 0.8  # type: ignore[attr-defined]
    for verifier in (plain, own):
        chain = manage_references(str_chunks(["A claim[1](id=1)."]), style=TextReferenceStyle(), verifier=verifier)
        assert chain.invoke({"documents": DOCS}).startswith("A claim[1].")
    assert (plain.given, own.given) == ([0.5], [0.8])


def test_a_plain_cross_encoder_verifies_at_one_half() -> None:
    """A cross-encoder with no support_threshold attribute is judged at 0.5."""

    assert verify_citations(cited("A claim.", (1,)), DOCS, ConstantCrossEncoder(0.5)).citations[0].supported is True


def test_blank_cited_document_gives_no_evidence() -> None:
    """A cited document of only whitespace is not sent to the scorer: support 0."""
    scorer = Recorder(0.9)
    checked = verify_citations(cited("A claim.", (1,)), [Document("   ")], scorer)
    assert (checked.citations[0].support, scorer.seen) == (0.0, [])


def test_thresholds_of_the_scorers() -> None:
    """Each scorer carries a threshold; a given one wins; a hybrid's is the weighted mean of its parts'."""
    lexical = LexicalScorer(support_threshold=0.4)
    plain = CrossEncoderScorer(Recorder(0.1))
    assert (lexical.support_threshold, plain.support_threshold) == (0.4, 0.5)
    assert HybridScorer([(lexical, 3.0), (plain, 1.0)]).support_threshold == pytest.approx((3 * 0.4 + 0.5) / 4)
    assert HybridScorer([(lexical, 1.0)], support_threshold=0.8).support_threshold == 0.8


class FirstWords(Embeddings):
    """Reads only the first 40 characters of a text, as a model truncating at its token limit does.

    The vector says whether "paris" is among what was read.
    """

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] if "paris" in text[:40].lower() else [0.0, 1.0] for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


LONG = "Lyon is a city on the Rhône. " * 6 + "Paris is the capital of France."


def test_embedding_scorer_reads_all_of_long_evidence() -> None:
    """A supporting sentence past the model's reach still counts: the evidence is embedded in windows."""
    claim = "Paris is the capital."
    assert EmbeddingScorer(FirstWords(), window=None).score([(claim, LONG)]) == [0.0]
    assert EmbeddingScorer(FirstWords()).score([(claim, LONG)]) == [1.0]


def test_embedding_pieces_are_cut_to_max_chars() -> None:
    """A window longer than max_chars is cut at spaces; nothing is lost and no piece is longer."""
    scorer = EmbeddingScorer(FirstWords(), max_chars=10)
    assert scorer.pieces("aaaa bbbb cccc dddd.") == ("aaaa bbbb", "cccc dddd.")


class CountsWords(FirstWords):
    """Says a text has one token per word and reads at most three."""

    max_length = 3

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        return [len(text.split()) for text in texts]


def test_embedding_pieces_fit_the_models_token_limit() -> None:
    """Embeddings that count tokens get pieces halved at spaces until each fits their max_length."""
    assert EmbeddingScorer(CountsWords()).pieces("a b c d e f g") == ("a b c", "d e", "f g")


def test_calibrated_defaults() -> None:
    """The defaults the dev-split rule chose: lexical 0.5, embeddings 0.71, their 50/50 hybrid (0.5 + 0.71) / 2."""
    embedding = EmbeddingScorer(FirstWords())
    assert (LexicalScorer().support_threshold, embedding.support_threshold) == (0.5, 0.71)
    hybrid = HybridScorer([(LexicalScorer(), 0.5), (embedding, 0.5)])
    assert hybrid.support_threshold == pytest.approx(0.605)
    assert EmbeddingScorer(FirstWords(), support_threshold=0.6).support_threshold == 0.6


def test_embedding_windows_side_by_side_or_overlapping() -> None:
    """By default windows stand side by side (the last ends at the last sentence); stride=1 overlaps them."""
    text = "A a. B b. C c."
    assert EmbeddingScorer(FirstWords()).pieces(text) == ("A a. B b.", "B b. C c.")
    assert EmbeddingScorer(FirstWords(), window=1).pieces(text) == ("A a.", "B b.", "C c.")
    assert EmbeddingScorer(FirstWords(), window=3, stride=1).pieces(text + " D d.") == (
        "A a. B b. C c.",
        "B b. C c. D d.",
    )
    assert EmbeddingScorer(FirstWords(), window=2).pieces(text + " D d.") == ("A a. B b.", "C c. D d.")


@pytest.mark.parametrize(
    ("own", "labels"),
    [
        # 0.55 was partially_grounded when "grounded" started at a fixed 0.6.
        (None, ["grounded", "grounded", "partially_grounded", "not_grounded"]),
        (0.71, ["grounded", "partially_grounded", "partially_grounded", "not_grounded"]),
    ],
)
def test_predictor_labels_follow_the_scorers_threshold(own: float | None, labels: list[str]) -> None:
    """By default "grounded" starts at the scorer's support_threshold and "partially_grounded" at 0.7 of it."""
    predictor = ReferencePredictor(scorer=Recorder(0.0, support_threshold=own))
    # 0.5 * 0.7 = 0.35 and 0.71 * 0.7 = 0.497, written out by hand.
    assert [predictor.label(s) for s in (0.75, 0.55, 0.498, 0.34)] == labels


def test_predictor_labels_for_a_cross_encoder_without_a_threshold() -> None:
    """A plain LangChain cross-encoder (no support_threshold, or None) labels from 0.5 and 0.35."""

    class Unset(ConstantCrossEncoder):
        support_threshold = None

    for kind in (ConstantCrossEncoder, Unset):
        predictor = ReferencePredictor(scorer=kind(0.0))
        assert [predictor.label(s) for s in (0.5, 0.35, 0.34)] == ["grounded", "partially_grounded", "not_grounded"]
        # Supported from 0.5 exactly.
        assert verify_citations(cited("A claim.", (1,)), DOCS, kind(0.5)).citations[0].supported is True
        assert verify_citations(cited("A claim.", (1,)), DOCS, kind(0.49)).citations[0].supported is False


def test_predictor_labels_given_win() -> None:
    """label_thresholds given are used as they are, whatever the scorer's threshold."""
    predictor = ReferencePredictor(scorer=Recorder(0.0, support_threshold=0.9), label_thresholds={"yes": 0.2})
    assert (predictor.label(0.3), predictor.label(0.1)) == ("yes", "not_grounded")


class Table(SupportScorer):
    """Scores each evidence text from a table (0 for any other); remembers the evidence it was asked about."""

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table
        self.seen: list[str] = []

    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.seen += [evidence for _, evidence in text_pairs]
        return [self.table.get(evidence, 0.0) for _, evidence in text_pairs]


# Own scores Ann 0.6, Bob 0.5, Cy 0, Dee 0.55; each in its context (a sentence either side) as listed.
# Ranked by 0.7 own + 0.3 in context, by hand: Bob 0.65, Ann 0.6, Dee 0.55, Cy 0.15.
PAGE = "Ann. Bob. Cy. Dee."
TABLE = {
    "Ann.": 0.6,
    "Bob.": 0.5,
    "Cy.": 0.0,
    "Dee.": 0.55,
    "Ann. Bob.": 0.6,
    "Ann. Bob. Cy.": 1.0,
    "Bob. Cy. Dee.": 0.5,
    "Cy. Dee.": 0.55,
}


def predicted(predictor: ReferencePredictor) -> list[tuple[str, float, str]]:
    return [
        (PAGE[r.document_start_idx : r.document_end_idx], r.score, r.label)
        for r in predictor.predict("Who?", [Document(PAGE)])
    ]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        # The context ranks; the score and the label are the window's own.
        ({}, [("Bob.", 0.5, "grounded")]),
        ({"context_weight": 0.0}, [("Ann.", 0.6, "grounded")]),
        ({"context_sentences": 0}, [("Ann.", 0.6, "grounded")]),
        # Ranked by context alone: Bob 1.0 first.
        ({"context_weight": 1.0}, [("Bob.", 0.5, "grounded")]),
        # With a threshold, the windows whose own score reaches it, in ranked order.
        ({"threshold": 0.52}, [("Ann.", 0.6, "grounded"), ("Dee.", 0.55, "grounded")]),
        (
            {"threshold": 0.0},
            [
                ("Bob.", 0.5, "grounded"),
                ("Ann.", 0.6, "grounded"),
                ("Dee.", 0.55, "grounded"),
                ("Cy.", 0.0, "not_grounded"),
            ],
        ),
        (
            {"threshold": 0.0, "context_weight": 0.0},
            [
                ("Ann.", 0.6, "grounded"),
                ("Dee.", 0.55, "grounded"),
                ("Bob.", 0.5, "grounded"),
                ("Cy.", 0.0, "not_grounded"),
            ],
        ),
    ],
)
def test_predictor_ranks_windows_with_their_neighbours(
    options: dict[str, float], expected: list[tuple[str, float, str]]
) -> None:
    """A window is ranked by context_weight of its score in context; what it reports is its own."""
    assert predicted(ReferencePredictor(scorer=Table(TABLE), verifiability=None, **options)) == expected


def test_equal_ranks_go_to_the_higher_own_score() -> None:
    """Every window in context holds the match (context_weight=1 ranks them equal): the match itself wins."""
    table = {"Xavier.": 1.0, "Ann. Xavier.": 1.0, "Ann. Xavier. Bob.": 1.0, "Xavier. Bob.": 1.0}
    predictor = ReferencePredictor(scorer=Table(table), verifiability=None, context_weight=1.0)
    (ref,) = predictor.predict("Who?", [Document("Ann. Xavier. Bob.")])
    assert (ref.document_start_idx, ref.document_end_idx, ref.score) == (5, 12, 1.0)


def test_context_of_windows_with_a_stride() -> None:
    """Windows of two sentences every two (the last one ending at the last sentence), each widened by one."""
    scorer = Table({})
    predictor = ReferencePredictor(
        scorer=scorer, verifiability=None, document_window_size=2, document_window_stride=2, threshold=0.0
    )
    predictor.predict("Who?", [Document("S1. S2. S3. S4. S5.")])
    windows, contexts = ["S1. S2.", "S3. S4.", "S4. S5."], ["S1. S2. S3.", "S2. S3. S4. S5.", "S3. S4. S5."]
    assert scorer.seen == windows + contexts


def test_context_never_crosses_documents() -> None:
    """A window's context is drawn from its own document only: one-sentence documents are scored once."""
    scorer = Table({"Xavier.": 1.0})
    refs = ReferencePredictor(scorer=scorer, threshold=0.0, verifiability=None).predict(
        "Who?", [Document("Ann."), Document("Xavier.")]
    )
    assert [(r.document_position, r.score) for r in refs] == [(2, 1.0), (1, 0.0)]
    assert scorer.seen == ["Ann.", "Xavier."]


def test_score_label_and_threshold_see_the_same_number() -> None:
    """A score a hair under 0.5 is kept as 0.5: its label is grounded and a threshold of 0.5 keeps it."""
    predictor = ReferencePredictor(scorer=Table({"Ann.": 0.49999999999}), verifiability=None, threshold=0.5)
    (ref,) = predictor.predict("Who?", [Document("Ann.")])
    assert (ref.score, ref.label) == (0.5, "grounded")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"context_sentences": -1}, "context_sentences must be 0 or more, got -1"),
        ({"context_weight": 1.5}, "context_weight must be from 0 to 1, got 1.5"),
    ],
)
def test_predictor_context_options_are_checked(options: dict[str, float], message: str) -> None:
    """Context options out of range are refused at construction, naming the option."""
    with pytest.raises(ValueError, match=message):
        ReferencePredictor(**options)


@pytest.mark.parametrize(("size", "stride"), [(0, 1), (-1, 1), (1, 0), (2, -1)])
def test_window_indices_refuse_empty_windows_and_strides(size: int, stride: int) -> None:
    """A window of fewer than one span, or a stride of fewer than one, is refused by name."""
    with pytest.raises(ValueError, match=f"got size={size} and stride={stride}"):
        window_indices(3, size, stride)


@pytest.mark.parametrize(
    ("count", "size", "stride", "expected"),
    [
        (0, 2, 1, []),
        (1, 3, 1, [(0, 0)]),
        (4, 2, 1, [(0, 1), (1, 2), (2, 3)]),
        (5, 2, 2, [(0, 1), (2, 3), (3, 4)]),
        # A stride past the size skips spans 1 and 2; the last window still ends at the last span.
        (5, 1, 3, [(0, 0), (3, 3), (4, 4)]),
    ],
)
def test_window_indices_by_hand(count: int, size: int, stride: int, expected: list[tuple[int, int]]) -> None:
    """First and last span of each window, written out by hand."""
    assert window_indices(count, size, stride) == expected
