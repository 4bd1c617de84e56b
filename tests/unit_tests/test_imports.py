"""The public names: pinned, so adding or removing one is a decision."""

from __future__ import annotations

from pathlib import Path

import langchain_refs

ROOT = Path(__file__).resolve().parents[2]


def test_public_names() -> None:
    """__all__ is pinned: adding or removing a public name is a decision."""
    assert langchain_refs.__all__ == [
        "BRACKET_SYNTAX",
        "DAGGER_SYNTAX",
        "DEFAULT_MAX_HOLDBACK",
        "EXTENDED_ABBREVIATIONS",
        "FORMAT_REFERENCES",
        "ID_SYNTAX",
        "REFERENCES_EVENT",
        "AnswerContext",
        "AnswerReferences",
        "Citation",
        "CitationLeakWarning",
        "CitationMiddleware",
        "CitationParser",
        "CitationVerifier",
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
        "ReferencesChatModel",
        "ReferencesCollector",
        "ReferencesMiddleware",
        "ReferencesState",
        "RuleBasedClaimExtractor",
        "ScorerClaimChecker",
        "SentenceSplitter",
        "SimilarityReferenceFilter",
        "SourceRegistry",
        "Span",
        "SupportScorer",
        "TemplateReferenceStyle",
        "Text",
        "TextReferenceStyle",
        "__version__",
        "aggregate",
        "documents_tool_output",
        "format_documents",
        "format_reference_list",
        "manage_references",
        "needs_reference",
        "safe_url",
        "split_sentences",
        "styles_directory",
        "verify_citations",
    ]


def test_drop_in_names_of_langchain_references() -> None:
    """Every name langchain-references 0.2.x exports exists here."""
    for name in [
        "ReferenceStyle",
        "EmptyReferenceStyle",
        "TextReferenceStyle",
        "HTMLReferenceStyle",
        "MarkdownReferenceStyle",
        "manage_references",
        "FORMAT_REFERENCES",
    ]:
        assert hasattr(langchain_refs, name)


def test_runtime_dependencies_are_lean() -> None:
    """The base install needs langchain-core, regex and jinja2 only: no langchain-community."""
    from importlib import metadata

    from packaging.requirements import Requirement

    requirements = [Requirement(r) for r in metadata.requires("langchain-refs") or []]
    runtime = sorted(r.name for r in requirements if r.marker is None)
    assert runtime == ["jinja2", "langchain-core", "regex", "typing-extensions"]
