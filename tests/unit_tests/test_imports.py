"""The public names: pinned, so adding or removing one is a decision."""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

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


@contextlib.contextmanager
def fresh_import(blocked: tuple[str, ...] = ()) -> Iterator[Any]:
    """langchain_refs imported anew, with ``blocked`` packages made unimportable while the block runs.

    sys.modules is put back exactly as it was afterwards, so later tests see the same module objects.
    """
    saved = dict(sys.modules)
    try:
        for name in list(sys.modules):
            if name.split(".")[0] in ("langchain_refs", "langchain", "langgraph"):
                del sys.modules[name]
        for name in blocked:
            sys.modules[name] = None  # type: ignore[assignment]
        yield importlib.import_module("langchain_refs")
    finally:
        for name in set(sys.modules) - set(saved):
            del sys.modules[name]
        sys.modules.update(saved)


def test_import_does_not_import_langchain_agents() -> None:
    """import langchain_refs leaves langchain.agents and langgraph alone: the agent names load lazily."""
    with fresh_import() as module:
        imported = set(sys.modules)
        assert "ReferencesMiddleware" in module.__all__
    assert "langchain.agents" not in imported
    assert not [name for name in imported if name.split(".")[0] == "langgraph"]


def test_import_works_without_the_agents_extra() -> None:
    """Without langchain and langgraph the package imports; an agent name says how to install the extra."""
    with fresh_import(blocked=("langchain", "langgraph")) as module:
        assert module.manage_references is not None
        assert not {"ReferencesMiddleware", "ReferencesChatModel", "documents_tool_output"} & set(module.__all__)
        with pytest.raises(ImportError, match=r'needs the agents extra .*pip install -e "\.\[agents\]"'):
            _ = module.ReferencesMiddleware
        with pytest.raises(AttributeError, match="no attribute 'NoSuchName'"):
            _ = module.NoSuchName


def test_agent_names_are_the_agents_wing_objects() -> None:
    """The lazy top-level names are the very objects of langchain_refs.agents."""
    pytest.importorskip("langchain.agents")
    import langchain_refs.agents

    for name in ("CitationLeakWarning", "ReferencesChatModel", "ReferencesMiddleware", "ReferencesState"):
        assert getattr(langchain_refs, name) is getattr(langchain_refs.agents, name)
    assert langchain_refs.documents_tool_output is langchain_refs.agents.documents_tool_output
