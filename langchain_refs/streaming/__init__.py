"""The streaming wing: markers found mid-stream, renumbered by source, rendered and listed.

Pure parts (`CitationParser`, `SourceRegistry`) import neither LangChain nor
Jinja2; `ReferenceSession` is the one object the sync and async paths share;
`manage_references` wraps any Runnable (a `ReferencesRunnable`). It stands
on the text layer (the passage behind each citation). Nothing here imports the grounding or
apps wings: a verifier reaches the session through the `CitationVerifier`
protocol.

Example:
    >>> from langchain_refs.streaming import CitationParser
    >>> CitationParser().feed("Paris[1](id=2).")
    [Text(text='Paris'), Marker(raw='[1](id=2)', ids=(2,), malformed=(), syntax='id'), Text(text='.')]
"""

from importlib.machinery import EXTENSION_SUFFIXES
from typing import TYPE_CHECKING, Any, Final

import langchain_refs.streaming._parser as _parser_module
from langchain_refs.streaming._chunks import (
    ChunkRewriter,
    OutputVersion,
    join_text_runs,
    merge_chunks,
    whole_answer,
    without_added_indices,
)
from langchain_refs.streaming._parser import (
    BRACKET_SYNTAX,
    DAGGER_SYNTAX,
    DEFAULT_MAX_HOLDBACK,
    ID_SYNTAX,
    CitationParser,
    Event,
    Marker,
    MarkerSyntax,
    SyntaxName,
    Text,
    built_in_syntax,
    checked_max_holdback,
    marker_syntaxes,
)
from langchain_refs.streaming._passages import attach_passages, passage_scorer, scored_at_close
from langchain_refs.streaming._prompt import (
    FORMAT_REFERENCES,
    citation_instructions,
    escape_document_tags,
    format_documents,
    unescape_document_tags,
    writes_escaped_tags,
)
from langchain_refs.streaming._protocols import (
    CitationVerifier,
    checked_flag,
    checked_support_threshold,
    checked_whole_number,
    support_threshold_of,
)
from langchain_refs.streaming._provider_content import standard_content, with_refusal
from langchain_refs.streaming._references import (
    AnswerContext,
    AnswerReferences,
    Citation,
    ConsultedSource,
    InvalidCitation,
    Passage,
    Reference,
)
from langchain_refs.streaming._registry import SourceRegistry
from langchain_refs.streaming._runnable import (
    REFERENCES_EVENT,
    ReferencesCollector,
    ReferencesRunnable,
    manage_references,
    old_name,
)
from langchain_refs.streaming._session import CitationRenderer, ReferenceSession
from langchain_refs.streaming._styles import (
    EmptyReferenceStyle,
    HTMLReferenceStyle,
    MarkdownReferenceStyle,
    ReferenceStyle,
    SourceKey,
    StyleChoice,
    TemplateReferenceStyle,
    TextReferenceStyle,
    choose_style,
    safe_url,
    source_key_function,
    styles_directory,
)

__all__ = [
    "BRACKET_SYNTAX",
    "COMPILED",
    "DAGGER_SYNTAX",
    "DEFAULT_MAX_HOLDBACK",
    "FORMAT_REFERENCES",
    "ID_SYNTAX",
    "REFERENCES_EVENT",
    "AnswerContext",
    "AnswerReferences",
    "ChunkRewriter",
    "Citation",
    "CitationParser",
    "CitationRenderer",
    "CitationVerifier",
    "ConsultedSource",
    "EmptyReferenceStyle",
    "Event",
    "HTMLReferenceStyle",
    "InvalidCitation",
    "MarkdownReferenceStyle",
    "Marker",
    "MarkerSyntax",
    "OutputVersion",
    "Passage",
    "Reference",
    "ReferenceSession",
    "ReferenceStyle",
    "ReferencesCollector",
    "ReferencesRunnable",
    "SourceKey",
    "SourceRegistry",
    "StyleChoice",
    "SyntaxName",
    "TemplateReferenceStyle",
    "Text",
    "TextReferenceStyle",
    "attach_passages",
    "built_in_syntax",
    "checked_flag",
    "checked_max_holdback",
    "checked_support_threshold",
    "checked_whole_number",
    "choose_style",
    "citation_instructions",
    "escape_document_tags",
    "format_documents",
    "join_text_runs",
    "manage_references",
    "marker_syntaxes",
    "merge_chunks",
    "passage_scorer",
    "safe_url",
    "scored_at_close",
    "source_key_function",
    "standard_content",
    "styles_directory",
    "support_threshold_of",
    "unescape_document_tags",
    "whole_answer",
    "with_refusal",
    "without_added_indices",
    "writes_escaped_tags",
]


COMPILED: Final[bool] = (_parser_module.__file__ or "").endswith(tuple(EXTENSION_SUFFIXES))
"""True in the build whose streaming core mypyc compiled (an extension module), False in pure Python."""


if TYPE_CHECKING:
    # The old name, as type checkers see it; a misspelt name stays an error to them (no `__getattr__` seen).
    CitationMiddleware = ReferencesRunnable
else:

    def __getattr__(name: str) -> Any:
        """``CitationMiddleware``, the old name of `ReferencesRunnable`, with a ``DeprecationWarning``."""
        return old_name(__name__, name)
