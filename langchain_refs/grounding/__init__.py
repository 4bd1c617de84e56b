"""The grounding wing: sentences, support scorers, predicted references, verifier, filters, claims.

It stands on the text layer (sentences, words, the lexical engine) and the
streaming wing's data (`AnswerReferences`), and never on the apps wing.

Example:
    >>> from langchain_refs.grounding import LexicalScorer
    >>> LexicalScorer().score([("Paris is in France", "Paris is a city in France.")])[0] > 0.5
    True
"""

from langchain_refs.grounding._claims import (
    Claim,
    ClaimCheck,
    EvidenceSpan,
    LLMClaimChecker,
    LLMClaimExtractor,
    RuleBasedClaimExtractor,
    ScorerClaimChecker,
    aggregate,
)
from langchain_refs.grounding._embeddings import MiniLMEmbeddings
from langchain_refs.grounding._filters import LLMReferenceFilter, SimilarityReferenceFilter, format_reference_list
from langchain_refs.grounding._guards import (
    ANTONYMS,
    GuardFinding,
    MeaningGuards,
    antonym_guard,
    hedge_guard,
    name_guard,
    number_guard,
    polarity_guard,
    role_guard,
)
from langchain_refs.grounding._llm import is_failed_call, recorded_model_failures
from langchain_refs.grounding._predictor import PredictedReference, ReferencePredictor, needs_reference
from langchain_refs.grounding._scoring import (
    CrossEncoderScorer,
    EmbeddingScorer,
    HybridScorer,
    LexicalScorer,
    LLMJudgeScorer,
)
from langchain_refs.grounding._verifier import (
    GUARD_FROM,
    GUARD_PENALTY,
    SupportScorer,
    citation_findings,
    verify_citations,
)

# Re-exported from the text layer, where they moved: these names stay public here.
from langchain_refs.text import (
    EXTENDED_ABBREVIATIONS,
    SentenceSplitter,
    Span,
    content_words,
    sentence_windows,
    split_sentences,
)

__all__ = [
    "ANTONYMS",
    "EXTENDED_ABBREVIATIONS",
    "GUARD_FROM",
    "GUARD_PENALTY",
    "Claim",
    "ClaimCheck",
    "CrossEncoderScorer",
    "EmbeddingScorer",
    "EvidenceSpan",
    "GuardFinding",
    "HybridScorer",
    "LLMClaimChecker",
    "LLMClaimExtractor",
    "LLMJudgeScorer",
    "LLMReferenceFilter",
    "LexicalScorer",
    "MeaningGuards",
    "MiniLMEmbeddings",
    "PredictedReference",
    "ReferencePredictor",
    "RuleBasedClaimExtractor",
    "ScorerClaimChecker",
    "SentenceSplitter",
    "SimilarityReferenceFilter",
    "Span",
    "SupportScorer",
    "aggregate",
    "antonym_guard",
    "citation_findings",
    "content_words",
    "format_reference_list",
    "hedge_guard",
    "is_failed_call",
    "name_guard",
    "needs_reference",
    "number_guard",
    "polarity_guard",
    "recorded_model_failures",
    "role_guard",
    "sentence_windows",
    "split_sentences",
    "verify_citations",
]
