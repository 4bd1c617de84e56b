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
        "COMPILED",
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
        "CitationParser",
        "CitationVerifier",
        "Claim",
        "ClaimCheck",
        "ConsultedSource",
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
        "Passage",
        "PredictedReference",
        "Reference",
        "ReferencePredictor",
        "ReferenceSession",
        "ReferenceStyle",
        "ReferencesChatModel",
        "ReferencesCollector",
        "ReferencesMiddleware",
        "ReferencesRunnable",
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
        "citation_instructions",
        "documents_tool_output",
        "format_documents",
        "format_reference_list",
        "manage_references",
        "needs_reference",
        "safe_url",
        "source_key_function",
        "split_sentences",
        "styles_directory",
        "verify_citations",
    ]


def test_public_names_are_sorted() -> None:
    """__all__ is sorted (constants, classes, functions, as ruff sorts them), so a new name has one place."""
    import langchain_refs.streaming
    import langchain_refs.text

    for module in (langchain_refs, langchain_refs.streaming, langchain_refs.text):
        names = list(module.__all__)
        assert names == sorted(names, key=lambda n: (not n.isupper(), not n[:1].isupper(), n)), module.__name__


@pytest.mark.parametrize(
    "module_name", ["langchain_refs", "langchain_refs.streaming", "langchain_refs.streaming._runnable"]
)
def test_old_runnable_name_warns_and_is_the_new_class(module_name: str) -> None:
    """CitationMiddleware is still importable: the very ReferencesRunnable class, with a DeprecationWarning."""
    module = importlib.import_module(module_name)
    with pytest.warns(DeprecationWarning, match="CitationMiddleware is now ReferencesRunnable"):
        old = module.CitationMiddleware
    assert old is langchain_refs.ReferencesRunnable
    assert "CitationMiddleware" not in getattr(module, "__all__", ())


def test_from_import_of_the_old_name_warns() -> None:
    """``from langchain_refs import CitationMiddleware`` works and warns; isinstance checks still hold."""
    from langchain_core.runnables import RunnableLambda

    with pytest.warns(DeprecationWarning, match="ReferencesRunnable"):
        from langchain_refs import CitationMiddleware  # type: ignore[attr-defined]
    assert isinstance(langchain_refs.manage_references(RunnableLambda(str)), CitationMiddleware)


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
