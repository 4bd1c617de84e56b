"""Streaming citation middleware for LangChain RAG answers.

Example:
    >>> from langchain_core.documents import Document
    >>> from langchain_core.runnables import RunnableLambda
    >>> chain = manage_references(RunnableLambda(lambda _: "Yes[1](id=1)."),
    ...                           style=TextReferenceStyle())
    >>> chain.invoke({"documents": [Document("x", metadata={"source": "a.pdf"})]})
    'Yes[1].\\n\\n- [1] a.pdf\\n'
"""

from importlib import metadata

from langchain_refs._claims import (
    Claim,
    ClaimCheck,
    EvidenceSpan,
    LLMClaimChecker,
    LLMClaimExtractor,
    RuleBasedClaimExtractor,
    ScorerClaimChecker,
    aggregate,
)
from langchain_refs._embeddings import MiniLMEmbeddings
from langchain_refs._filters import LLMReferenceFilter, SimilarityReferenceFilter, format_reference_list
from langchain_refs._grounding import PredictedReference, ReferencePredictor, needs_reference, verify_citations
from langchain_refs._parser import (
    BRACKET_SYNTAX,
    DAGGER_SYNTAX,
    DEFAULT_MAX_HOLDBACK,
    ID_SYNTAX,
    CitationParser,
    Marker,
    MarkerSyntax,
    Text,
)
from langchain_refs._prompt import FORMAT_REFERENCES, format_documents
from langchain_refs._references import AnswerReferences, Citation, InvalidCitation, Reference
from langchain_refs._registry import SourceRegistry
from langchain_refs._runnable import REFERENCES_EVENT, CitationMiddleware, ReferencesCollector, manage_references
from langchain_refs._scoring import (
    CrossEncoderScorer,
    EmbeddingScorer,
    HybridScorer,
    LexicalScorer,
    LLMJudgeScorer,
)
from langchain_refs._sentences import EXTENDED_ABBREVIATIONS, SentenceSplitter, Span, split_sentences
from langchain_refs._session import ReferenceSession
from langchain_refs._styles import (
    EmptyReferenceStyle,
    HTMLReferenceStyle,
    MarkdownReferenceStyle,
    ReferenceStyle,
    TemplateReferenceStyle,
    TextReferenceStyle,
    safe_url,
    styles_directory,
)

try:
    __version__ = metadata.version(__package__ or __name__)
except metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = ""

__all__ = [
    "BRACKET_SYNTAX",
    "DAGGER_SYNTAX",
    "DEFAULT_MAX_HOLDBACK",
    "EXTENDED_ABBREVIATIONS",
    "FORMAT_REFERENCES",
    "ID_SYNTAX",
    "REFERENCES_EVENT",
    "AnswerReferences",
    "Citation",
    "CitationMiddleware",
    "CitationParser",
    "Claim",
    "ClaimCheck",
    "CrossEncoderScorer",
    "EmbeddingScorer",
    "EmptyReferenceStyle",
    "EvidenceSpan",
    "HTMLReferenceStyle",
    "HybridScorer",
    "InvalidCitation",
    "LLMClaimChecker",
    "LLMClaimExtractor",
    "LLMJudgeScorer",
    "LLMReferenceFilter",
    "LexicalScorer",
    "MarkdownReferenceStyle",
    "Marker",
    "MarkerSyntax",
    "MiniLMEmbeddings",
    "PredictedReference",
    "Reference",
    "ReferencePredictor",
    "ReferenceSession",
    "ReferenceStyle",
    "ReferencesCollector",
    "RuleBasedClaimExtractor",
    "ScorerClaimChecker",
    "SentenceSplitter",
    "SimilarityReferenceFilter",
    "SourceRegistry",
    "Span",
    "TemplateReferenceStyle",
    "Text",
    "TextReferenceStyle",
    "__version__",
    "aggregate",
    "format_documents",
    "format_reference_list",
    "manage_references",
    "needs_reference",
    "safe_url",
    "split_sentences",
    "styles_directory",
    "verify_citations",
]
