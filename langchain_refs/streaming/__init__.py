"""The streaming wing: markers found mid-stream, renumbered by source, rendered and listed.

Pure parts (`CitationParser`, `SourceRegistry`) import neither LangChain nor
Jinja2; `ReferenceSession` is the one object the sync and async paths share;
`manage_references` wraps any Runnable. Nothing here imports the grounding or
apps wings: a verifier reaches the session through the `CitationVerifier`
protocol.

Example:
    >>> from langchain_refs.streaming import CitationParser
    >>> CitationParser().feed("Paris[1](id=2).")
    [Text(text='Paris'), Marker(raw='[1](id=2)', ids=(2,), malformed=(), syntax='id'), Text(text='.')]
"""

from langchain_refs.streaming._parser import (
    BRACKET_SYNTAX,
    DAGGER_SYNTAX,
    DEFAULT_MAX_HOLDBACK,
    ID_SYNTAX,
    CitationParser,
    Event,
    Marker,
    MarkerSyntax,
    Text,
)
from langchain_refs.streaming._prompt import FORMAT_REFERENCES, format_documents
from langchain_refs.streaming._references import AnswerContext, AnswerReferences, Citation, InvalidCitation, Reference
from langchain_refs.streaming._registry import SourceRegistry
from langchain_refs.streaming._runnable import (
    REFERENCES_EVENT,
    CitationMiddleware,
    ReferencesCollector,
    manage_references,
)
from langchain_refs.streaming._session import CitationVerifier, ReferenceSession
from langchain_refs.streaming._styles import (
    EmptyReferenceStyle,
    HTMLReferenceStyle,
    MarkdownReferenceStyle,
    ReferenceStyle,
    TemplateReferenceStyle,
    TextReferenceStyle,
    safe_url,
    source_key_function,
    styles_directory,
)

__all__ = [
    "BRACKET_SYNTAX",
    "DAGGER_SYNTAX",
    "DEFAULT_MAX_HOLDBACK",
    "FORMAT_REFERENCES",
    "ID_SYNTAX",
    "REFERENCES_EVENT",
    "AnswerContext",
    "AnswerReferences",
    "Citation",
    "CitationMiddleware",
    "CitationParser",
    "CitationVerifier",
    "EmptyReferenceStyle",
    "Event",
    "HTMLReferenceStyle",
    "InvalidCitation",
    "MarkdownReferenceStyle",
    "Marker",
    "MarkerSyntax",
    "Reference",
    "ReferenceSession",
    "ReferenceStyle",
    "ReferencesCollector",
    "SourceRegistry",
    "TemplateReferenceStyle",
    "Text",
    "TextReferenceStyle",
    "format_documents",
    "manage_references",
    "safe_url",
    "source_key_function",
    "styles_directory",
]
