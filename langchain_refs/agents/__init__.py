"""The agents wing: citations in ``langchain.agents.create_agent`` and LangGraph streams.

Needs the ``agents`` extra (``langchain`` and ``langgraph``); stands on the
streaming and grounding wings, and nothing but the package's top level (lazily)
and the apps import it.

`ReferencesMiddleware` is the ``AgentMiddleware``: tools hand it documents
(``ToolMessage.artifact``; `documents_tool_output` for your own tools), it
gives each an id stable for the thread, shows the model what to cite and
wraps the model in a `ReferencesChatModel`, whose answers stream rewritten
in every stream mode.

Example:
    >>> from langchain_refs.agents import ReferencesMiddleware
    >>> ReferencesMiddleware().history
    'raw'
"""

from langchain_refs.agents._chat_model import MODEL_TEXT_KEY, ReferencesChatModel, unannotated
from langchain_refs.agents._citations import Passage, best_passages, standard_citations
from langchain_refs.agents._documents import (
    DocumentsFromTool,
    ThreadDocuments,
    as_document,
    document_key,
    documents_tool_output,
    tool_documents,
)
from langchain_refs.agents._middleware import CitationLeakWarning, History, ReferencesMiddleware, ReferencesState

__all__ = [
    "MODEL_TEXT_KEY",
    "CitationLeakWarning",
    "DocumentsFromTool",
    "History",
    "Passage",
    "ReferencesChatModel",
    "ReferencesMiddleware",
    "ReferencesState",
    "ThreadDocuments",
    "as_document",
    "best_passages",
    "document_key",
    "documents_tool_output",
    "standard_citations",
    "tool_documents",
    "unannotated",
]
