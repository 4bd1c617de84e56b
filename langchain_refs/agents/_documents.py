"""The documents of an agent's thread: found in tool results, one stable id each.

Tools hand documents to the agent as the ``artifact`` of their
``ToolMessage`` (``create_retriever_tool(..., response_format=
"content_and_artifact")`` does; any tool can with `documents_tool_output`).
Every model call of the agent scans the whole thread in order, so the ids
need no state of their own: a document's id is its rank among the distinct
documents of the thread, in order of first retrieval. A document is known by
its ``Document.id`` when it has one, else by a hash of its text and metadata,
so the same document retrieved twice (by two tool calls, in two turns) keeps
its id, and documents of different tool calls never share one.

Example:
    >>> from langchain_core.documents import Document
    >>> from langchain_core.messages import ToolMessage
    >>> paris = Document("Paris is in France.", metadata={"source": "paris.html"})
    >>> lyon = Document("Lyon is in France.", metadata={"source": "lyon.html"})
    >>> thread = ThreadDocuments.from_messages([
    ...     ToolMessage("...", tool_call_id="a", artifact=[paris]),
    ...     ToolMessage("...", tool_call_id="b", artifact=[lyon, paris]),
    ... ])
    >>> [thread.id_of(d) for d in (paris, lyon)]
    [1, 2]
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.documents import Document
from langchain_core.messages import BaseMessage, ToolMessage

__all__ = [
    "DocumentsFromTool",
    "ThreadDocuments",
    "as_document",
    "document_key",
    "documents_tool_output",
    "tool_documents",
]

DocumentsFromTool = Callable[[ToolMessage], Sequence[Document] | None]
"""Finds the documents in a tool's result (None: use the default reading)."""


def as_document(item: Any) -> Document | None:
    """``item`` as a `Document`: a Document, or the dict a checkpointer gives back for one.

    A checkpointer stores artifacts as plain data, so after a round trip the
    documents of earlier turns come back as ``{"page_content": ..., "metadata":
    ..., "id": ...}`` dicts. Anything else is not a document (None).

    Example:
        >>> as_document({"type": "Document", "page_content": "x", "metadata": {"source": "a"}, "id": None})
        Document(metadata={'source': 'a'}, page_content='x')
        >>> as_document("x") is None
        True
    """
    if isinstance(item, Document):
        return item
    if isinstance(item, Mapping) and isinstance(item.get("page_content"), str):
        metadata = item.get("metadata")
        return Document(
            page_content=item["page_content"],
            metadata=dict(metadata) if isinstance(metadata, Mapping) else {},
            id=item.get("id") if isinstance(item.get("id"), str) else None,
        )
    return None


def tool_documents(message: ToolMessage) -> list[Document]:
    """The documents a tool returned as its artifact (the default reading).

    The artifact may be a list of documents (or of their checkpointed dicts),
    one document, or a dict holding such a list under ``"documents"`` (for
    tools whose artifact carries more than documents).

    Example:
        >>> from langchain_core.documents import Document
        >>> message = ToolMessage("...", tool_call_id="a", artifact={"documents": [Document("x")]})
        >>> [d.page_content for d in tool_documents(message)]
        ['x']
    """
    artifact = message.artifact
    if isinstance(artifact, Mapping) and "page_content" not in artifact:
        artifact = artifact.get("documents")
    if artifact is None or isinstance(artifact, (str, bytes)):
        return []
    items: Iterable[Any] = [artifact] if isinstance(artifact, (Document, Mapping)) else artifact
    if not isinstance(items, Iterable):
        return []
    return [d for d in map(as_document, items) if d is not None]


def documents_tool_output(documents: Iterable[Document]) -> tuple[str, list[Document]]:
    """What a ``content_and_artifact`` tool returns to hand documents to the agent.

    The content is the documents' text (what the model reads when the
    middleware is not there); the artifact is the documents, which
    `ReferencesMiddleware` numbers and shows the model with their ids.

    Example:
        >>> from langchain_core.documents import Document
        >>> from langchain_core.tools import tool
        >>> @tool(response_format="content_and_artifact")
        ... def lookup(query: str) -> tuple[str, list[Document]]:
        ...     '''Look a word up.'''
        ...     return documents_tool_output([Document(f"{query} is a word.")])
        >>> message = lookup.invoke({"type": "tool_call", "id": "c1", "name": "lookup", "args": {"query": "cat"}})
        >>> message.content, [d.page_content for d in message.artifact]
        ('cat is a word.', ['cat is a word.'])
    """
    listed = list(documents)
    return "\n\n".join(d.page_content for d in listed), listed


def document_key(document: Document) -> str:
    """What identifies a document in a thread: its id, else a hash of its text and metadata.

    Example:
        >>> from langchain_core.documents import Document
        >>> document_key(Document("x", id="doc-7"))
        'id:doc-7'
        >>> document_key(Document("x")) == document_key(Document("x")) != document_key(Document("y"))
        True
    """
    if document.id:
        return f"id:{document.id}"
    metadata = json.dumps(document.metadata, sort_keys=True, default=str, ensure_ascii=False)
    digest = hashlib.sha256(f"{document.page_content}\x00{metadata}".encode()).hexdigest()
    return f"sha256:{digest}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadDocuments:
    """The distinct documents of a thread, in order of first retrieval; id = 1-based rank.

    ``documents[k - 1]`` is the document with id ``k``; ``keys`` maps each
    `document_key` to its id.

    Example:
        >>> from langchain_core.documents import Document
        >>> thread = ThreadDocuments.from_messages(
        ...     [ToolMessage("...", tool_call_id="a", artifact=[Document("x"), Document("x")])])
        >>> len(thread.documents)
        1
    """

    documents: tuple[Document, ...] = ()
    keys: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def from_messages(
        cls, messages: Iterable[BaseMessage], documents_from: DocumentsFromTool | None = None
    ) -> ThreadDocuments:
        """Every document of every tool result in ``messages``, first retrieval first.

        Example:
            >>> ThreadDocuments.from_messages([]).documents
            ()
        """
        documents: list[Document] = []
        keys: dict[str, int] = {}
        for message in messages:
            if not isinstance(message, ToolMessage):
                continue
            for document in read_tool_documents(message, documents_from):
                key = document_key(document)
                if key not in keys:
                    documents.append(document)
                    keys[key] = len(documents)
        return cls(documents=tuple(documents), keys=keys)

    def id_of(self, document: Document) -> int:
        """The id of ``document`` in this thread.

        Example:
            >>> from langchain_core.documents import Document
            >>> ThreadDocuments.from_messages(
            ...     [ToolMessage("...", tool_call_id="a", artifact=[Document("x")])]).id_of(Document("x"))
            1
        """
        return self.keys[document_key(document)]


def read_tool_documents(message: ToolMessage, documents_from: DocumentsFromTool | None = None) -> list[Document]:
    """The documents of one tool result: ``documents_from``'s answer, else `tool_documents`.

    Example:
        >>> read_tool_documents(ToolMessage("plain text", tool_call_id="a"))
        []
    """
    if documents_from is not None:
        found = documents_from(message)
        if found is not None:
            return [d for d in map(as_document, found) if d is not None]
    return tool_documents(message)
