"""Streaming citation middleware for LangChain RAG answers.

Example:
    >>> from langchain_core.documents import Document
    >>> from langchain_core.runnables import RunnableLambda
    >>> chain = manage_references(RunnableLambda(lambda _: "Yes[1](id=1)."),
    ...                           style=TextReferenceStyle())
    >>> chain.invoke({"documents": [Document("x", metadata={"source": "a.pdf"})]})
    'Yes[1].\\n\\n- [1] a.pdf\\n'

The agent names (`ReferencesMiddleware`, `ReferencesChatModel`,
`ReferencesState`, `CitationLeakWarning`, `documents_tool_output`) come from
``langchain_refs.agents``, which needs the ``agents`` extra (langchain and
langgraph). They are imported lazily, on first use, so ``import
langchain_refs`` never imports ``langchain.agents`` and works without the
extra; they are listed in ``__all__`` only when the extra is installed, so
``from langchain_refs import *`` works either way.

`COMPILED` says which build is running: True when the streaming core (the
parser, the source registry, the session, the references, the chunk
rewriter and the passage finder with the words it reads) was compiled with
mypyc, in the wheel built with
``HATCH_BUILD_HOOK_ENABLE_MYPYC=1 python -m build``; False for pure Python,
which ``pip install -e .`` and the ``py3-none-any`` wheel give. Both builds
behave the same and pass the same tests; the compiled one is faster.

    >>> type(COMPILED)
    <class 'bool'>
"""

from importlib import metadata, util
from typing import TYPE_CHECKING, Any

from langchain_refs.grounding import (
    EXTENDED_ABBREVIATIONS,
    Claim,
    ClaimCheck,
    CrossEncoderScorer,
    EmbeddingScorer,
    EvidenceSpan,
    HybridScorer,
    LexicalScorer,
    LLMClaimChecker,
    LLMClaimExtractor,
    LLMJudgeScorer,
    LLMReferenceFilter,
    MiniLMEmbeddings,
    PredictedReference,
    ReferencePredictor,
    RuleBasedClaimExtractor,
    ScorerClaimChecker,
    SentenceSplitter,
    SimilarityReferenceFilter,
    Span,
    SupportScorer,
    aggregate,
    format_reference_list,
    needs_reference,
    split_sentences,
    verify_citations,
)
from langchain_refs.streaming import (
    BRACKET_SYNTAX,
    COMPILED,
    DAGGER_SYNTAX,
    DEFAULT_MAX_HOLDBACK,
    FORMAT_REFERENCES,
    ID_SYNTAX,
    REFERENCES_EVENT,
    AnswerContext,
    AnswerReferences,
    Citation,
    CitationParser,
    CitationVerifier,
    ConsultedSource,
    EmptyReferenceStyle,
    HTMLReferenceStyle,
    InvalidCitation,
    MarkdownReferenceStyle,
    Marker,
    MarkerSyntax,
    Passage,
    Reference,
    ReferencesCollector,
    ReferenceSession,
    ReferencesRunnable,
    ReferenceStyle,
    SourceRegistry,
    TemplateReferenceStyle,
    Text,
    TextReferenceStyle,
    citation_instructions,
    format_documents,
    manage_references,
    safe_url,
    source_key_function,
    styles_directory,
)
from langchain_refs.streaming._runnable import old_name

try:
    __version__ = metadata.version(__package__ or __name__)
except metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = ""

_AGENT_NAMES = frozenset(
    {"CitationLeakWarning", "ReferencesChatModel", "ReferencesMiddleware", "ReferencesState", "documents_tool_output"}
)


if TYPE_CHECKING:
    # The names `__getattr__` gives, as type checkers see them (the agents extra installed): a misspelt
    # name stays an error to them, as no `__getattr__` is seen.
    from langchain_refs.agents import (
        CitationLeakWarning,
        ReferencesChatModel,
        ReferencesMiddleware,
        ReferencesState,
        documents_tool_output,
    )

    CitationMiddleware = ReferencesRunnable
else:

    def __getattr__(name: str) -> Any:
        """The agent names, imported on first use (they need the ``agents`` extra); ``CitationMiddleware``, old."""
        if name in _AGENT_NAMES:
            try:
                import langchain_refs.agents
            except ImportError as error:
                msg = (
                    f"langchain_refs.{name} needs the agents extra (langchain and langgraph): "
                    f'in a clone of langchain-refs run pip install -e ".[agents]" ({error})'
                )
                raise ImportError(msg) from error
            return getattr(langchain_refs.agents, name)
        return old_name(__name__, name)


def _agents_installed() -> bool:
    # find_spec of a top-level name looks for the package without importing it.
    return all(util.find_spec(package) is not None for package in ("langchain", "langgraph"))


__all__ = [
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
if not _agents_installed():
    __all__ = [name for name in __all__ if name not in _AGENT_NAMES]
