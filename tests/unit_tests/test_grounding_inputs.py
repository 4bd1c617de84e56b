"""Wrong inputs to the grounding wing: each refused with an error naming it, when given (a hand-written table).

Before, each of these gave a quiet wrong result: a str of references read
letter by letter, texts as documents scored 0, a model's name logged as an
unreadable reply, an unknown label aggregated to Entailment, a threshold no
score can reach calling everything unsupported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_refs import (
    AnswerReferences,
    Citation,
    LexicalScorer,
    Reference,
    ReferencePredictor,
    manage_references,
    verify_citations,
)
from langchain_refs.grounding import (
    Claim,
    ClaimCheck,
    CrossEncoderScorer,
    EmbeddingScorer,
    LLMClaimChecker,
    LLMClaimExtractor,
    LLMJudgeScorer,
    LLMReferenceFilter,
    RuleBasedClaimExtractor,
    ScorerClaimChecker,
    SimilarityReferenceFilter,
    aggregate,
    citation_findings,
)
from tests.unit_tests.fakes import str_chunks

TOWER = "The tower opened in 1889."
REFS = AnswerReferences(
    references=(Reference(number=1, source="a", title=None, document_positions=(1,)),),
    citations=(
        Citation(number=1, document_positions=(1,), start=0, end=0, text_start=0, text_end=0, text=TOWER, marker="[1]"),
    ),
)

WRONG: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("a label in lower case", lambda: aggregate(["contradiction"]), ValueError,
     r"unknown label 'contradiction': the labels are Entailment, Neutral, Contradiction"),
    ("one label, not a list", lambda: aggregate("Entailment"), TypeError, r"takes a list of labels .* got str"),
    ("references as one str", lambda: ScorerClaimChecker().check(Claim(text=TOWER), TOWER), TypeError,
     r"references must be a list of texts, got one str: write \['The tower opened in 1889.'\]"),
    ("a Document among the references", lambda: ScorerClaimChecker().check(Claim(text=TOWER), [Document(TOWER)]),
     TypeError, r"references\[0\] must be a text \(str\), got Document \(a Document: give its page_content\)"),
    ("a claim as a str", lambda: ScorerClaimChecker().check_batch([TOWER], [TOWER]),  # type: ignore[list-item]
     TypeError, r"claims\[0\] must be a Claim, got str: write Claim\(text=...\)"),
    ("a claim given to check as a str", lambda: ScorerClaimChecker().check(TOWER, [TOWER]),  # type: ignore[arg-type]
     TypeError, r"^check: claim must be a Claim, got str: write Claim\(text=...\)"),
    ("a str of references given to check", lambda: ScorerClaimChecker().check(Claim(text=TOWER), TOWER), TypeError,
     r"^check: references must be a list of texts"),
    ("a label threshold past 1", lambda: ReferencePredictor(label_thresholds={"grounded": 5}), ValueError,
     r"label_thresholds\['grounded'\] must be a number from 0 to 1 \(scores' scale\), got 5"),
    ("responses as one str", lambda: RuleBasedClaimExtractor().extract_batch("It rains a lot."), TypeError,
     r"responses must be a list of texts, got one str"),
    ("texts as documents", lambda: verify_citations(REFS, [TOWER], LexicalScorer()), ValueError,
     r"documents\[0\] is a str, expected a Document .*; a text becomes one with Document\(text\)"),
    ("a threshold past 1", lambda: verify_citations(REFS, [Document(TOWER)], LexicalScorer(), threshold=50),
     ValueError, r"threshold must be a number from 0 to 1 \(scores' scale\), got 50"),
    ("a threshold as a word", lambda: verify_citations(REFS, [Document(TOWER)], LexicalScorer(), threshold="high"),
     TypeError, r"threshold must be a number from 0 to 1 \(None: the scorer's own\), got str 'high'"),
    ("guards=True", lambda: verify_citations(REFS, [Document(TOWER)], LexicalScorer(), guards=True),
     TypeError, r"guards must be a MeaningGuards"),
    ("a scorer's threshold past 1", lambda: LexicalScorer(support_threshold=5), ValueError,
     r"support_threshold must be a number from 0 to 1"),
    ("a checker's threshold past 1", lambda: ScorerClaimChecker(threshold=40), ValueError,
     r"threshold must be a number from 0 to 1"),
    ("a filter's threshold past 1", lambda: SimilarityReferenceFilter(threshold=5), ValueError,
     r"threshold must be a number from 0 to 1"),
    ("a predictor's threshold past 1", lambda: ReferencePredictor(threshold=5), ValueError,
     r"threshold must be a number from 0 to 1"),
    ("a window of no sentence", lambda: LexicalScorer(window=0), ValueError,
     r"window must be a whole number of sentences, at least 1, got 0"),
    ("a penalty as a word", lambda: LexicalScorer(number_penalty="x"), TypeError,  # type: ignore[arg-type]
     r"number_penalty must be a number, got str 'x'"),
    ("a weight that is not a number", lambda: LexicalScorer(phrase_weight=float("nan")), ValueError,
     r"phrase_weight must be a finite number, got nan"),
    ("a filter's documents_key as a number", lambda: SimilarityReferenceFilter(documents_key=3), TypeError,  # type: ignore[arg-type]
     r"^documents_key must be the input's key \(a str\) holding the documents, got int$"),
    ("a predictor's documents_key as a number", lambda: ReferencePredictor(documents_key=3), TypeError,  # type: ignore[arg-type]
     r"^documents_key must be the input's key \(a str\) holding the documents, got int$"),
    ("a batch size as a word", lambda: LexicalScorer(min_batch_for_rarity="5"), TypeError,  # type: ignore[arg-type]
     r"min_batch_for_rarity must be a whole number of pairs, got str '5'"),
    ("documents as one str", lambda: ReferencePredictor().predict(TOWER, TOWER), ValueError,  # type: ignore[arg-type]
     r"ReferencePredictor.predict: documents must be a list of Document/BaseMedia, got str"),
    ("a judge given a model's name", lambda: LLMJudgeScorer("openai:gpt-4o-mini"), TypeError,  # type: ignore[arg-type]
     r"LLMJudgeScorer needs a chat model, not its name: build it with init_chat_model\('openai:gpt-4o-mini'\)"),
    ("a filter given a model's name", lambda: LLMReferenceFilter("openai:gpt-4o"), TypeError,  # type: ignore[arg-type]
     r"LLMReferenceFilter needs a chat model, not its name"),
    ("a checker given None", lambda: LLMClaimChecker(None), TypeError,  # type: ignore[arg-type]
     r"LLMClaimChecker needs a chat model \(a LangChain BaseChatModel\), got NoneType"),
    ("an extractor given a model's name", lambda: LLMClaimExtractor("x:y"), TypeError,  # type: ignore[arg-type]
     r"LLMClaimExtractor needs a chat model, not its name"),
    ("a cross-encoder of None", lambda: CrossEncoderScorer(None), TypeError,  # type: ignore[arg-type]
     r"CrossEncoderScorer needs a cross-encoder \(score\(pairs\)\), got NoneType"),
    ("embeddings of None", lambda: EmbeddingScorer(None), TypeError,  # type: ignore[arg-type]
     r"EmbeddingScorer needs LangChain Embeddings \(embed_documents\), got NoneType"),
    ("a verifier given as its class", lambda: manage_references(str_chunks(["x"]), verifier=LexicalScorer),
     TypeError, r"verifier must be a scorer, not the class LexicalScorer: write LexicalScorer\(\)"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "call", "error", "message"), WRONG, ids=[case for case, *_ in WRONG])
def test_a_wrong_input_is_refused_with_its_name(
    case: str, call: Callable[[], Any], error: type[Exception], message: str
) -> None:
    """Each wrong input of the table gets its error and message, when it is given."""
    with pytest.raises(error, match=message):
        call()


def test_aggregate_takes_the_checks_a_checker_gives() -> None:
    """ClaimChecks aggregate by their labels: one contradicted claim makes the strict verdict Contradiction."""
    checks = [ClaimCheck(label="Entailment", score=0.9), ClaimCheck(label="Contradiction", score=0.8)]
    assert aggregate(checks) == "Contradiction"
    assert aggregate(checks, "soft") == {"Entailment": 0.5, "Neutral": 0.0, "Contradiction": 0.5}


def test_citation_findings_with_the_guards_off_finds_nothing() -> None:
    """guards=None, as verify_citations takes it: no guard runs, so none fires (the number guard would)."""
    wrong = replace(REFS, citations=(replace(REFS.citations[0], text="The tower opened in 1902."),))
    assert citation_findings(wrong, [Document(TOWER)])[0] is not None
    assert citation_findings(wrong, [Document(TOWER)], guards=None) == (None,)


def test_the_similarity_filter_follows_its_scorers_threshold() -> None:
    """threshold=None (the default) is the scorer's own support_threshold, as verify_citations takes it."""
    assert SimilarityReferenceFilter().threshold == LexicalScorer.support_threshold == 0.5
    embedded = SimilarityReferenceFilter(embeddings=DeterministicFakeEmbedding(size=8))
    assert embedded.threshold == EmbeddingScorer.support_threshold == 0.71
