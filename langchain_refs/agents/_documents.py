"""The documents of an agent's thread: found in tool results, one stable id each.

Tools hand documents to the agent as the ``artifact`` of their
``ToolMessage`` (``create_retriever_tool(..., response_format=
"content_and_artifact")`` does; any tool can with `documents_tool_output`).
A document's id is its rank among the distinct documents of the thread, in
order of first retrieval. The ids are kept in the agent state (a list of
`ThreadDocuments.entries`, checkpointed with the thread), so a document keeps
its id after the messages that brought it are gone (summarized, trimmed) and
a new document never takes an id an earlier one had. A document is known by
its ``Document.id`` and a hash of its text when it has an id (two stores may
give two documents the same id: they stay two), else by a hash of its text
and metadata, so the same document retrieved twice (by two tool calls, in two
turns) keeps its id, and different documents never share one.

What the model reads of a tool result is its content as the middleware stack
left it (redacted, truncated...), with ``<document id=k>`` tags put around
the part of the content each document stands in (`show_tool_result`): the
artifact gives the documents' metadata, never their text back.

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

import bisect
import functools
import hashlib
import itertools
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from langchain_core.documents import Document
from langchain_core.messages import BaseMessage, ToolMessage

from langchain_refs.streaming import escape_document_tags, unescape_document_tags, writes_escaped_tags

__all__ = [
    "DEFAULT_MAX_DOCUMENT_TEXTS",
    "DocumentsFromTool",
    "ShownToolResult",
    "ThreadDocuments",
    "as_document",
    "clear_located",
    "document_key",
    "documents_tool_output",
    "show_tool_result",
    "tool_documents",
]

DEFAULT_MAX_DOCUMENT_TEXTS: Final = 500
"""How many documents of a thread keep their text in the agent state (the newest; older ones keep id and metadata)."""

DocumentsFromTool = Callable[[ToolMessage], Sequence[Document] | Document | None]
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
    `ReferencesMiddleware` numbers and shows the model with their ids. A
    dict with ``page_content`` (as JSON or a checkpointer gives one back)
    is taken as a document; anything else is a TypeError naming it.

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
    if isinstance(documents, (Document, str, Mapping)):
        msg = f"documents_tool_output takes a list of documents, got one {type(documents).__name__}: write [it]"
        raise TypeError(msg)
    if not isinstance(documents, Iterable):
        msg = f"documents_tool_output takes a list of documents, got {type(documents).__name__}"
        raise TypeError(msg)
    listed = []
    for position, item in enumerate(documents):
        document = as_document(item)
        if document is None:
            msg = f"documents_tool_output: documents[{position}] is a {type(item).__name__}, not a Document"
            raise TypeError(msg)
        listed.append(document)
    return "\n\n".join(d.page_content for d in listed), listed


def document_key(document: Document) -> str:
    """What identifies a document in a thread: its id and a hash of its text, else a hash of its text and metadata.

    The id alone is not enough: two vector stores (or two chunks of one file)
    may give different documents the same id. Its metadata is left out of the
    key of a document with an id, as a retriever may add a score to it on
    each retrieval.

    Example:
        >>> from langchain_core.documents import Document
        >>> document_key(Document("x", id="doc-7"))[:16]
        'id:doc-7:sha256:'
        >>> document_key(Document("x", id="doc-7")) != document_key(Document("y", id="doc-7"))
        True
        >>> document_key(Document("x")) == document_key(Document("x")) != document_key(Document("y"))
        True
    """
    if document.id:
        digest = hashlib.sha256(document.page_content.encode()).hexdigest()
        return f"id:{document.id}:sha256:{digest}"
    metadata = json.dumps(document.metadata, sort_keys=True, default=str, ensure_ascii=False)
    digest = hashlib.sha256(f"{document.page_content}\x00{metadata}".encode()).hexdigest()
    return f"sha256:{digest}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadDocuments:
    """The distinct documents of a thread, in order of first retrieval; id = 1-based rank.

    ``documents[k - 1]`` is the document with id ``k``; ``keys`` maps each
    `document_key` to its id. Made from the ids kept in the agent state
    (`from_entries`) and extended with the documents of the messages present
    (`with_messages`): ids never move and are never reused.

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
        return cls().with_messages(messages, documents_from)

    @classmethod
    def from_entries(cls, entries: Iterable[Mapping[str, Any]] | None) -> ThreadDocuments:
        """The thread as kept in the agent state: one entry per id, in id order (see `entries`).

        Example:
            >>> thread = ThreadDocuments.from_entries([{"key": "id:a", "page_content": "x", "metadata": {}}])
            >>> thread.keys["id:a"], thread.documents[0].page_content
            (1, 'x')
        """
        documents: list[Document] = []
        keys: dict[str, int] = {}
        for entry in entries or ():
            metadata = entry.get("metadata")
            documents.append(
                Document(
                    page_content=str(entry.get("page_content") or ""),
                    metadata=dict(metadata) if isinstance(metadata, Mapping) else {},
                    id=entry.get("id") if isinstance(entry.get("id"), str) else None,
                )
            )
            keys[str(entry["key"])] = len(documents)
        return cls(documents=tuple(documents), keys=keys)

    def with_messages(
        self, messages: Iterable[BaseMessage], documents_from: DocumentsFromTool | None = None
    ) -> ThreadDocuments:
        """The thread with the documents of ``messages`` it does not know yet, each under a new id.

        Example:
            >>> from langchain_core.documents import Document
            >>> known = ThreadDocuments.from_entries([{"key": document_key(Document("x")), "page_content": "x"}])
            >>> later = known.with_messages([ToolMessage("", tool_call_id="a", artifact=[Document("y")])])
            >>> [d.page_content for d in later.documents]
            ['x', 'y']
        """
        return self.with_documents(
            document
            for message in messages
            if isinstance(message, ToolMessage)
            for document in read_tool_documents(message, documents_from)
        )

    def with_documents(self, found: Iterable[Document]) -> ThreadDocuments:
        """The thread with those of ``found`` it does not know yet, each under a new id, in order.

        Example:
            >>> from langchain_core.documents import Document
            >>> [d.page_content for d in ThreadDocuments().with_documents([Document("x"), Document("x")]).documents]
            ['x']
        """
        documents = list(self.documents)
        keys = dict(self.keys)
        for document in found:
            key = document_key(document)
            if key not in keys:
                documents.append(document)
                keys[key] = len(documents)
        if len(documents) == len(self.documents):
            return self
        return ThreadDocuments(documents=tuple(documents), keys=keys)

    def id_of(self, document: Document) -> int:
        """The id of ``document`` in this thread.

        Example:
            >>> from langchain_core.documents import Document
            >>> ThreadDocuments.from_messages(
            ...     [ToolMessage("...", tool_call_id="a", artifact=[Document("x")])]).id_of(Document("x"))
            1
        """
        return self.keys[document_key(document)]

    def replaced(self, shown: Mapping[int, Document]) -> ThreadDocuments:
        """The thread with the documents of some ids replaced (by the text the model read of them).

        Example:
            >>> from langchain_core.documents import Document
            >>> thread = ThreadDocuments.from_messages([ToolMessage("", tool_call_id="a", artifact=[Document("x")])])
            >>> thread.replaced({1: Document("[REDACTED]")}).documents[0].page_content
            '[REDACTED]'
        """
        if not shown:
            return self
        documents = tuple(shown.get(k, d) for k, d in enumerate(self.documents, start=1))
        return ThreadDocuments(documents=documents, keys=self.keys)

    def entries(self, max_texts: int = DEFAULT_MAX_DOCUMENT_TEXTS) -> list[dict[str, Any]]:
        """The thread as plain data for the agent state: one entry per id, the newest ``max_texts`` with text.

        Older documents keep their key (their id is never reused) and metadata
        (a citation of them still names its source); their text is dropped.

        Example:
            >>> from langchain_core.documents import Document
            >>> thread = ThreadDocuments.from_messages(
            ...     [ToolMessage("", tool_call_id="a", artifact=[Document("x", id="a"), Document("y", id="b")])])
            >>> [(e["key"][:4], e["page_content"]) for e in thread.entries(max_texts=1)]
            [('id:a', ''), ('id:b', 'y')]
        """
        by_id = {k: key for key, k in self.keys.items()}
        first_text = len(self.documents) - max_texts
        return [
            {
                "key": by_id[k],
                "id": document.id,
                "page_content": document.page_content if k > first_text else "",
                "metadata": dict(document.metadata),
            }
            for k, document in enumerate(self.documents, start=1)
        ]


@dataclass(frozen=True, slots=True, kw_only=True)
class ShownToolResult:
    """A tool result as the model reads it, and its documents as read.

    ``content`` is the tool message's content with ``<document id=k>`` tags;
    ``documents`` maps each id to its document with the text the model read
    (from the content) and the artifact's metadata and id.
    """

    content: str | list[Any]
    documents: Mapping[int, Document] = field(default_factory=dict)


def show_tool_result(content: str | list[Any], documents: Sequence[Document], ids: Sequence[int]) -> ShownToolResult:
    """A tool result's content with each of its documents tagged ``<document id=k>`` where it stands.

    The content wins: it is what the middleware stack left for the model
    (another middleware may have redacted or truncated it), so the tags go
    around the part of it each document stands in — found as is, else by
    aligning the document's words with the edited content (a snippet of a
    longer document is found too). In a JSON object or
    array (a tool's structured result) the tags go inside the strings that
    hold the documents, so that it stays valid JSON. When no document can be
    found in non-empty content, the whole content is tagged with all the ids
    (in blocks, from the first text block to the last); empty content (no
    text, or no block but blank text) is replaced by the documents
    themselves, and blocks with no text (an image) are followed by them.

    Example:
        >>> from langchain_core.documents import Document
        >>> docs = [Document("Mail ann@x.org for Paris."), Document("Lyon has silk.")]
        >>> shown = show_tool_result("Mail [REDACTED_EMAIL] for Paris.\\n\\nLyon has silk.", docs, [3, 4])
        >>> print(shown.content)
        <document id=3>
        Mail [REDACTED_EMAIL] for Paris.
        </document>
        <document id=4>
        Lyon has silk.
        </document>
        >>> shown.documents[3].page_content
        'Mail [REDACTED_EMAIL] for Paris.'
    """
    # A document's own text may not write a tag: it would lend its words another document's id. The model reads
    # the escaped copy; the documents as read are given back in their own words ("<document>"), which a reader
    # is shown (unless the content wrote "&lt;document" itself: then it stays as the model read it).
    as_written = not any(writes_escaped_tags(text) for text in _texts_of(content))
    # A document that writes "&lt;document" itself keeps it (its text may be what the model reads: empty content).
    own = frozenset(k for d, k in zip(documents, ids, strict=True) if writes_escaped_tags(d.page_content))
    content = tags_escaped(content)
    documents = [
        _as_read(d, escaped) if (escaped := escape_document_tags(d.page_content)) != d.page_content else d
        for d in documents
    ]
    if isinstance(content, str):
        text, shown = _tagged(content, documents, ids)
        return ShownToolResult(content=text, documents=_unescaped(shown, as_written, own))
    if all(text is not None and not text.strip() for text in map(_block_text, content)):
        # No block, or only blank text: empty content, replaced by the documents as for a str.
        text, shown = _tagged("", documents, ids)
        return ShownToolResult(content=[{"type": "text", "text": text}], documents=_unescaped(shown, as_written, own))
    blocks: list[Any] = []
    found: dict[int, Document] = {}
    texts: list[int] = []  # where the text blocks are
    for block in content:
        left = [(d, k) for d, k in zip(documents, ids, strict=True) if k not in found]
        block_text = _block_text(block)
        if block_text is not None:
            texts.append(len(blocks))
        if left and block_text is not None:
            tagged, shown = _tagged(block_text, [d for d, _ in left], [k for _, k in left], whole=False)
            found.update(shown)
            blocks.append(tagged if isinstance(block, str) else {**block, "text": tagged})
        else:
            blocks.append(block)
    written = [k for k in texts if (_block_text(blocks[k]) or "").strip()]
    if not written:
        # No text at all, only other blocks (an image, a file): the documents' own text follows them, tagged,
        # so that the model can cite what it was given.
        text, shown = _tagged("", documents, ids)
        return ShownToolResult(
            content=[*blocks, {"type": "text", "text": text}], documents=_unescaped(shown, as_written, own)
        )
    if not found:
        # No document found in the text (a tool that summarises what it found): as for a str, the text is
        # tagged whole with every id, from the first text block to the last, so that the model can cite it.
        first, last = written[0], written[-1]
        read = "\n".join(_block_text(blocks[k]) or "" for k in texts if first <= k <= last)
        opening, closing = _tag(ids, "\0").split("\0")
        blocks[first] = _with_text(blocks[first], opening + (_block_text(blocks[first]) or ""))
        blocks[last] = _with_text(blocks[last], (_block_text(blocks[last]) or "") + closing)
        found = {k: _as_read(d, read) for d, k in zip(documents, ids, strict=True)}
    return ShownToolResult(content=blocks, documents=_unescaped(found, as_written, own))


def _texts_of(content: str | list[Any]) -> list[str]:
    """The texts of a message's content: a str, or its text blocks'."""
    if isinstance(content, str):
        return [content]
    return [text for text in map(_block_text, content) if text is not None]


def _unescaped(shown: dict[int, Document], as_written: bool, own: frozenset[int]) -> dict[int, Document]:
    """The documents as read with their document tags in their own words again (`unescape_document_tags`).

    Not when the content wrote an escaped tag itself (``as_written`` False), nor for a document (its id in
    ``own``) whose own text does.
    """
    if not as_written:
        return shown
    return {
        k: d if k in own or (text := unescape_document_tags(d.page_content)) == d.page_content else _as_read(d, text)
        for k, d in shown.items()
    }


def answer_sources(message: ToolMessage, records: Sequence[Mapping[str, Any]]) -> list[Document]:
    """The sources another agent's answer cites, as documents, when a tool result is that answer.

    A deep agent's subagent with its own `ReferencesMiddleware` hands its
    parent its rewritten answer as the ``task`` tool's result, and its record
    (one of ``records``, the state's ``references``) joins the parent's state.
    The record is that answer's when each of its claims stands in the
    result's text (of several, the one with the most claims, then the
    latest). Each source it cites is one document: its source and title as
    metadata, the passages cited of it (else the claims citing it) as its
    text, so that the parent's answer can cite it too. None for any other
    result.

    Example:
        >>> record = {"message_id": "sub-1", "references": [{"number": 1, "source": "p.html", "title": "Paris"}],
        ...           "citations": [{"number": 1, "text": "Paris is the capital",
        ...                          "passage": {"excerpt": "Paris is the capital of France."}}]}
        >>> found = answer_sources(ToolMessage("Paris is the capital[1].", tool_call_id="t"), [record])
        >>> found[0].page_content, found[0].metadata
        ('Paris is the capital of France.', {'source': 'p.html', 'title': 'Paris'})
    """
    text = message.text
    # Of the records whose claims all stand in the text, the one with the most (a later answer citing part of
    # the same is no match for the whole); of two alike, the latest.
    best: tuple[int, int, list[Mapping[str, Any]]] | None = None
    for position, record in enumerate(records):
        citations = [c for c in record.get("citations") or () if isinstance(c, Mapping)]
        claims = [c.get("text") for c in citations]
        if not claims or not all(isinstance(claim, str) and claim.strip() and claim in text for claim in claims):
            continue
        if best is None or (len(set(claims)), position) >= best[:2]:
            best = (len(set(claims)), position, citations)
    if best is None:
        return []
    record = records[best[1]]
    passages: dict[Any, list[str]] = {}
    for citation in best[2]:
        passage = citation.get("passage")
        excerpt = passage.get("excerpt") if isinstance(passage, Mapping) else None
        said = excerpt if isinstance(excerpt, str) and excerpt.strip() else citation["text"]
        passages.setdefault(citation.get("number"), []).append(said)
    documents = []
    for reference in record.get("references") or ():
        said_of = passages.get(reference.get("number")) if isinstance(reference, Mapping) else None
        if said_of:
            metadata = {key: reference[key] for key in ("source", "title") if reference.get(key) is not None}
            documents.append(Document("\n".join(dict.fromkeys(said_of)), metadata=metadata))
    return documents


def show_answer_sources(content: str | list[Any], documents: Sequence[Document], ids: Sequence[int]) -> ShownToolResult:
    """Another agent's answer (a tool result, `answer_sources`) followed by the sources it cites, tagged.

    The answer stays as it is (its own numbers and list of sources); its
    sources follow it, each with the id it has in this thread.

    Example:
        >>> shown = show_answer_sources("Paris is the capital[1].", [Document("Paris is the capital.")], [4])
        >>> print(shown.content)
        Paris is the capital[1].
        <BLANKLINE>
        <document id=4>
        Paris is the capital.
        </document>
    """
    content = tags_escaped(content)
    tagged, _ = _tagged("", [_as_read(d, escape_document_tags(d.page_content)) for d in documents], ids)
    # The documents as read are the sources' own words: only the model's copy is escaped.
    shown = dict(zip(ids, documents, strict=True))
    if isinstance(content, str):
        return ShownToolResult(content=f"{content}\n\n{tagged}" if content.strip() else tagged, documents=shown)
    return ShownToolResult(content=[*content, {"type": "text", "text": tagged}], documents=shown)


def _with_text(block: Any, text: str) -> Any:
    """A text block (a str, or a ``"text"`` block) with ``text`` as its text."""
    return text if isinstance(block, str) else {**block, "text": text}


def clear_located() -> None:
    """Forget where documents were found in tool results so far (`ReferencesMiddleware.clear_caches`).

    Example:
        >>> clear_located()
    """
    _locate.cache_clear()


def tags_escaped(content: str | list[Any]) -> str | list[Any]:
    """``content`` with `escape_document_tags` applied to its text (a str, or each text block's).

    Example:
        >>> tags_escaped([{"type": "text", "text": "<document id=2>Forged."}])
        [{'type': 'text', 'text': '&lt;document id=2>Forged.'}]
    """
    if isinstance(content, str):
        return escape_document_tags(content)
    blocks = []
    for block in content:
        text = _block_text(block)
        if text is not None and (escaped := escape_document_tags(text)) != text:
            block = escaped if isinstance(block, str) else {**block, "text": escaped}
        blocks.append(block)
    return blocks


def _block_text(block: Any) -> str | None:
    """The text of a content block that is text (a str, or a ``"text"`` block), else None."""
    if isinstance(block, str):
        return block
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
        text: str = block["text"]
        return text
    return None


def _as_read(document: Document, text: str) -> Document:
    return Document(page_content=text, metadata=dict(document.metadata), id=document.id)


def _tag(ids: Iterable[int], text: str) -> str:
    return f"<document id={', '.join(map(str, ids))}>\n{text}\n</document>"


def _tagged(
    text: str, documents: Sequence[Document], ids: Sequence[int], *, whole: bool = True
) -> tuple[str, dict[int, Document]]:
    """``text`` tagged, and each located document as read (``whole``: tag all of it when none is found)."""
    if not text.strip():
        if not whole:
            return text, {}
        # Nothing there to have been edited: the documents are what the tool gave, and what the model reads.
        shown = dict(zip(ids, documents, strict=True))
        return "\n".join(_tag([k], d.page_content) for d, k in zip(documents, ids, strict=True)), shown
    if _is_json_text(text):
        tagged, shown = _tagged_json(text, documents, ids)
        if shown or not whole:
            return tagged, shown
        # None found in the JSON's texts: the tag goes around all of it, which stays whole inside.
        return _tag(ids, text), {k: _as_read(d, text) for d, k in zip(documents, ids, strict=True)}
    return _tagged_prose(text, documents, ids, whole=whole)


def _tagged_prose(
    text: str, documents: Sequence[Document], ids: Sequence[int], *, whole: bool, as_is: bool = False
) -> tuple[str, dict[int, Document]]:
    """`_tagged` of a text that is not JSON: the tags go around the parts the documents stand in.

    ``as_is``: only the documents whose text stands in it unchanged (`_locate`).
    """
    spans = _locate(text, tuple([d.page_content for d in documents]), as_is=as_is)
    # In the order they stand in the text (a tool may write its documents in another order).
    located = sorted(
        ((span, k, d) for span, k, d in zip(spans, ids, documents, strict=True) if span is not None),
        key=lambda found: found[0][0],
    )
    if not located:
        if not whole:
            return text, {}
        return _tag(ids, text), {k: _as_read(d, text) for d, k in zip(documents, ids, strict=True)}
    pieces: list[str] = []
    shown: dict[int, Document] = {}
    cursor = 0
    for position, ((start, end), k, document) in enumerate(located):
        between = text[cursor:start]
        if between.strip():
            pieces.append(between)
        elif position:
            pieces.append("\n")
        pieces.append(_tag([k], text[start:end]))
        shown[k] = _as_read(document, text[start:end])
        cursor = end
    if text[cursor:].strip():
        pieces.append(text[cursor:])
    return "".join(pieces), shown


# A JSON string token (in JSON, a double quote outside a string only ever opens one) and whether a colon
# follows it (then it is a key).
_JSON_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*"(\s*:)?', re.DOTALL)


def _is_json_text(text: str) -> bool:
    """Whether ``text`` is a JSON object or array (a tool's structured result, a structured answer).

    Example:
        >>> _is_json_text('{"summary": "Paris[1](id=1)."}'), _is_json_text("[Paris](p.html)")
        (True, False)
    """
    if not text.lstrip().startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python reads
        return False
    return True


def _tagged_json(text: str, documents: Sequence[Document], ids: Sequence[int]) -> tuple[str, dict[int, Document]]:
    """`_tagged` of a JSON text: each document tagged inside the string value it stands in, the JSON kept valid.

    Each string value is read (its escapes undone) and tagged as prose would
    be; one that changes is written back as a JSON string, the rest of the
    text left as it was. A document is read from the value, so its passages
    hold no JSON escape. A value that is a document's text is matched by
    look-up; the documents a value holds as they stand are found next (a near
    copy never takes an exact one's place); the edited ones then, each value
    read with the next few documents in the artifact's order (results listed
    as found: a result of many documents costs its length, not its length
    times their number), and those still not found are looked for in every
    value.

    Example:
        >>> docs = [Document("Rome is old.\\nIt has seven hills.")]
        >>> tagged, shown = _tagged_json('[{"text": "Rome is old.\\\\nIt has seven hills."}]', docs, [2])
        >>> json.loads(tagged)[0]["text"]
        '<document id=2>\\nRome is old.\\nIt has seven hills.\\n</document>'
        >>> shown[2].page_content
        'Rome is old.\\nIt has seven hills.'
    """
    values = [(token, json.loads(token.group())) for token in _JSON_STRING.finditer(text) if token.group(1) is None]
    shown: dict[int, Document] = {}
    # Per value (its index) tagged: the tagged text, and the ids found in it.
    tagged_values: dict[int, tuple[str, list[int]]] = {}
    everything = dict(zip(ids, documents, strict=True))
    # The common shape first, in one look-up per value: a value that is a document's text (a list of results).
    by_text: dict[str, list[int]] = {}
    for k, document in everything.items():
        by_text.setdefault(document.page_content, []).append(k)
    for index, (_, value) in enumerate(values):
        same = by_text.get(value)
        if same:
            k = same.pop(0)
            tagged, found = _tagged_prose(value, [everything[k]], [k], whole=False)
            shown.update(found)
            tagged_values[index] = (tagged, list(found))

    freed: list[int] = []

    def read_again(index: int, value: str, candidates: list[int], *, as_is: bool) -> None:
        """``value`` tagged with ``candidates`` and the documents found in it before (all placed in one pass)."""
        before = tagged_values.get(index, ("", []))[1]
        here = [*before, *candidates]
        tagged, found = _tagged_prose(value, [everything[k] for k in here], here, whole=False, as_is=as_is)
        if found:
            # A document found there before and not now (another took its place) is looked for again.
            for k in before:
                if k not in found:
                    del shown[k]
                    freed.append(k)
            shown.update(found)
            tagged_values[index] = (tagged, list(found))

    # Found as is: each document left, in the values that may hold it whole. Such a value holds every pair of its
    # words: the values holding its rarest pair are the only ones asked (each a search in C of its first
    # characters before it is placed), so that a result of many documents costs its length.
    # Each value's words (casefolded, as `_words_of` reads a document's), read once for every stage.
    value_words = [[word.casefold() for word in _WORD.findall(value)] for _, value in values]
    word_sets = [frozenset(words) for words in value_words]
    holding: dict[tuple[str, str], list[int]] = {}
    for index, words in enumerate(value_words):
        for pair in set(itertools.pairwise(words)):
            holding.setdefault(pair, []).append(index)
    asked: dict[int, list[int]] = {}
    for k in ids:
        if k in shown:
            continue
        pairs = _pairs_of(everything[k].page_content)
        where = min((holding.get(pair, []) for pair in pairs), key=len) if pairs else range(len(values))
        for index in where:
            asked.setdefault(index, []).append(k)
    for index in sorted(asked):
        value = values[index][1]
        candidates = [
            k
            for k in asked[index]
            if k not in shown
            and len(everything[k].page_content) <= len(value)
            and everything[k].page_content[:_HEAD] in value
        ]
        if candidates:
            read_again(index, value, candidates, as_is=True)
    # Edited (another middleware redacted, cut or re-spaced them): first in the artifact's order, each value
    # with the next few documents not found yet (results listed as the tool found them: linear), then every
    # value with any document left that may stand in it (`_may_stand_in`).
    at = 0
    for index, (_, value) in enumerate(values):
        while at < len(ids) and ids[at] in shown:
            at += 1
        window = [k for k in ids[at : at + _IN_ORDER_WINDOW] if k not in shown]
        if window and index not in tagged_values:
            window = [k for k in window if _may_stand_in(_words_of(everything[k].page_content), word_sets[index])]
            if window:
                read_again(index, value, window, as_is=False)
    for _ in range(_ROUNDS):
        # Again while a value read again gave a document up (an excerpt found in a longer one's edited copy, which
        # then took its place): it may stand in a value read before.
        freed.clear()
        for index, (_, value) in enumerate(values):
            left = [k for k in ids if k not in shown]
            if not left:
                break
            candidates = [k for k in left if _may_stand_in(_words_of(everything[k].page_content), word_sets[index])]
            if candidates:
                read_again(index, value, candidates, as_is=False)
        if not freed:
            break
    pieces: list[str] = []
    cursor = 0
    for index, (token, _) in enumerate(values):
        if index in tagged_values:
            written = json.dumps(tagged_values[index][0], ensure_ascii=token.group().isascii())
            pieces += [text[cursor : token.start()], written]
            cursor = token.end()
    pieces.append(text[cursor:])
    return "".join(pieces), shown


@functools.lru_cache(maxsize=256)
def _locate(text: str, pieces: tuple[str, ...], *, as_is: bool = False) -> tuple[tuple[int, int] | None, ...]:
    """Where each piece stands in ``text``: found as is (whole words, the longest first), else `_aligned`.

    ``as_is``: found as is only (None for the others).

    Cached: every model call of a thread shows the model each of its tool
    results again, unchanged, and finding documents in an edited result is
    the costly part (a long thread would pay it for every result at every
    call). 256 results: a few long threads' worth.

    The longest piece takes its place first, each at the first place no piece
    took before: a document whose text is part of another's (an excerpt beside
    the full page) is then found where it stands alone, whatever order the
    tool wrote them in, never inside the longer one.

    Example:
        >>> _locate("A b.\\n\\n[X] c d.\\n\\nE.", ("A b.", "Mo c d.", "E."))
        ((0, 4), (6, 14), (16, 18))
        >>> _locate("Paris is big. It is old.\\n\\nParis is big.", ("Paris is big.", "Paris is big. It is old."))
        ((26, 39), (0, 24))
    """
    spans: list[tuple[int, int] | None] = [None] * len(pieces)
    taken: list[tuple[int, int]] = []  # in the text's order
    # Of two pieces alike in length, the artifact's first takes the first place (sorted is stable).
    for index in sorted(range(len(pieces)), key=lambda index: -len(pieces[index])):
        if pieces[index].strip():
            span = _free_occurrence(text, pieces[index], taken)
            if span is not None:
                spans[index] = span
                bisect.insort(taken, span)
    left = [index for index, span in enumerate(spans) if span is None and pieces[index].strip()]
    # A piece found as is that is part of one not found so (an excerpt, and its full page redacted) may
    # stand inside that one's edited copy: it moves to a place where the other's words do not go on around it.
    for index, span in enumerate(spans):
        if span is None:
            continue
        piece = pieces[index]
        longer = [pieces[j] for j in left if piece in pieces[j]]
        if longer and _inside_copy(text, span, piece, longer):
            taken.remove(span)

            def inside(at: int, end: int, piece: str = piece, longer: list[str] = longer) -> bool:
                return _inside_copy(text, (at, end), piece, longer)

            moved = _free_occurrence(text, piece, taken, inside)
            spans[index] = moved
            if moved is not None:
                bisect.insort(taken, moved)
            else:
                left.append(index)
    if left and not as_is:
        placed = _aligned(text, _Words.of(text), [pieces[index] for index in left], taken)
        for index, span in zip(left, placed, strict=True):
            spans[index] = span
    return tuple(spans)


def _inside_copy(text: str, span: tuple[int, int], piece: str, longer: Sequence[str]) -> bool:
    """Whether ``piece``, found at ``span``, has around it the words one of ``longer`` has around it (their copy).

    Example:
        >>> _inside_copy("A b. C d.", (0, 4), "A b.", ["A b. C d e."])
        True
    """
    # The word either side (read in a few dozen characters: the cost stays that of the piece, not of the text).
    before = _WORD.findall(text[max(0, span[0] - 80) : span[0]])[-1:]
    after = _WORD.findall(text[span[1] : span[1] + 80])[:1]
    for whole in longer:
        at = whole.find(piece)
        around_before = _WORD.findall(whole[max(0, at - 80) : at])[-1:]
        around_after = _WORD.findall(whole[at + len(piece) : at + len(piece) + 80])[:1]
        if (around_after and [w.casefold() for w in around_after] == [w.casefold() for w in after]) or (
            around_before and [w.casefold() for w in around_before] == [w.casefold() for w in before]
        ):
            return True
    return False


def _free_occurrence(
    text: str, piece: str, taken: Sequence[tuple[int, int]], avoid: Callable[[int, int], bool] | None = None
) -> tuple[int, int] | None:
    """Where ``piece`` first stands in ``text`` without overlapping a span of ``taken`` (in order; None: nowhere).

    ``avoid``: places not to take (``avoid(start, end)`` true), though free.
    """
    at = _find_whole(text, piece, 0)
    while at >= 0:
        end = at + len(piece)
        # The spans either side of it (they do not overlap one another): the one starting before it must end first.
        after = bisect.bisect_left(taken, (end, -1))
        free = (after == 0 or taken[after - 1][1] <= at) and (after == len(taken) or taken[after][0] >= end)
        if free and (avoid is None or not avoid(at, end)):
            return at, end
        at = _find_whole(text, piece, at + 1)
    return None


def _find_whole(text: str, piece: str, start: int) -> int:
    """Where ``piece`` first stands in ``text`` from ``start`` on, not inside a word (-1: nowhere).

    Example:
        >>> _find_whole("We restart the art class.", "art", 0)
        15
    """
    at = text.find(piece, start)
    while at >= 0:
        end = at + len(piece)
        inside = (at > 0 and text[at - 1].isalnum() and piece[0].isalnum()) or (
            end < len(text) and text[end].isalnum() and piece[-1].isalnum()
        )
        if not inside:
            return at
        at = text.find(piece, at + 1)
    return -1


def _aligned(
    text: str, words: _Words, pieces: Sequence[str], taken: Sequence[tuple[int, int]]
) -> list[tuple[int, int] | None]:
    """The pieces (edited, cut, re-spaced) located in ``text`` outside the ``taken`` spans, by their word pairs.

    Each piece's anchors are the longest chain of its pairs of consecutive
    words that stand in the text in the same order, cut where the text puts
    more than an edit's words between two (the part with the most anchors
    stays). The pieces then take their places in turn, the one with the most
    anchors first (of two alike, the one more of which is found): where two
    share words (a template, a licence, two versions of one text), the one the
    text holds more of has the place, whatever order the tool wrote them in.
    Each is widened over a cut word, and over its first and last few words when
    only those are missing (an edit there), never across a line break nor into
    its neighbours. A piece is located when the words found make half of it, or,
    for a snippet of a longer document, a dozen words or more making half the
    span they cover. The cost grows with the words of the pieces and of the text.

    Example:
        >>> text = "[1] Mail [REDACTED_EMAIL] for Paris.\\n[2] Lyon has silk and"
        >>> _aligned(text, _Words.of(text), ["Mail ann@x.org for Paris.", "Lyon has silk and more."], [])
        [(4, 36), (41, 58)]
    """
    taken_words = [-1] * len(words.words)  # -2: a word of a span found as is
    for start, stop in taken:
        for position in range(bisect.bisect_right(words.ends, start), bisect.bisect_left(words.starts, stop)):
            taken_words[position] = -2  # every word it overlaps
    piece_words = [_words_of(piece) for piece in pieces]
    candidates = []
    text_pairs = words.pairs.keys()
    for k, piece in enumerate(piece_words):
        # A piece that shares no pair of words with the text has no anchor there (one test in C, where many
        # pieces face a short text: a JSON result's strings, each against every document).
        if text_pairs.isdisjoint(_pairs_of(pieces[k])):
            continue
        anchors = _longest_chain(words.anchors(piece, taken_words))
        if anchors:
            core = _Core.of(anchors, piece)
            candidates.append((-len(core.anchors), -core.share(words), k, core))
    owner = list(taken_words)  # the piece each word of the text is given to (-1: none)
    cores: dict[int, _Core] = {}
    for _, _, k, core in sorted(candidates, key=lambda candidate: candidate[:3]):
        # Words given before (to a piece placed first, or found as is) split its anchors: the stretch with the most
        # stays, and must still hold the piece.
        stretches: list[list[tuple[int, int]]] = [[]]
        for anchor in core.anchors:
            if stretches[-1] and any(owner[j] != -1 for j in range(stretches[-1][-1][1], anchor[1] + 2)):
                stretches.append([])
            if owner[anchor[1]] == -1 and owner[anchor[1] + 1] == -1:
                stretches[-1].append(anchor)
        stretch = max(stretches, key=len)
        if len(stretch) < len(core.anchors):
            if not stretch:
                continue
            core = _Core.of(stretch, piece_words[k])
            if not core.plausible(words):
                continue
        cores[k] = core
        for position in range(core.first, core.last + 1):
            owner[position] = k
    found: list[tuple[int, int] | None] = [None] * len(pieces)
    for _ in range(3):  # a piece widening finds not there gives its words back, and the others widen again
        found = _widened_in_place(text, words, taken_words, cores, len(pieces))
        missing = [k for k in cores if found[k] is None]
        if not missing:
            break
        for k in missing:
            del cores[k]
    return found


def _widened_in_place(
    text: str, words: _Words, taken_words: Sequence[int], cores: Mapping[int, _Core], count: int
) -> list[tuple[int, int] | None]:
    """Each placed piece's span, widened in the text's order within its neighbours (pieces placed, spans found)."""
    owner = list(taken_words)
    for k, core in cores.items():
        for position in range(core.first, core.last + 1):
            owner[position] = k
    found: list[tuple[int, int] | None] = [None] * count
    floor = 0
    for k, core in sorted(cores.items(), key=lambda item: item[1].first):
        ceiling_word = core.last + 1
        while ceiling_word < len(owner) and owner[ceiling_word] in (-1, k):
            ceiling_word += 1
        floor_word = core.first
        while floor_word > 0 and owner[floor_word - 1] in (-1, k):
            floor_word -= 1
        span = core.widened(words, text, floor_word, ceiling_word)
        if span is None:
            continue
        first, last = words.starts[span[0]], words.ends[span[1]]
        ceiling = words.starts[ceiling_word] if ceiling_word < len(owner) else len(text)
        low = max(floor, words.ends[floor_word - 1] if floor_word > 0 else 0)
        # Whole words and the marks around them (a redacted "[EMAIL]."), within what is this piece's.
        while first > low and not text[first - 1].isspace():
            first -= 1
        while last < ceiling and not text[last].isspace():
            last += 1
        found[k] = (first, last)
        floor = last
        for position in range(span[0], span[1] + 1):
            owner[position] = k
    return found


def _longest_chain(found: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest chain of ``found`` (a piece's word, the text's word) rising in both: patience sorting.

    ``found`` is in the order of the piece's words, the text's latest first at
    each, so that the chain takes one anchor per word of the piece.

    Example:
        >>> _longest_chain([(0, 5), (0, 1), (1, 2), (2, 9), (2, 3)])
        [(0, 1), (1, 2), (2, 3)]
    """
    tails: list[int] = []  # the last text word of the best chain of each length
    ends: list[int] = []  # its anchor
    before: list[int] = []
    for index, (_, j) in enumerate(found):
        length = bisect.bisect_left(tails, j)
        if length == len(tails):
            tails.append(j)
            ends.append(index)
        else:
            tails[length] = j
            ends[length] = index
        before.append(ends[length - 1] if length else -1)
    chain: list[tuple[int, int]] = []
    index = ends[-1] if ends else -1
    while index >= 0:
        chain.append(found[index])
        index = before[index]
    chain.reverse()
    return chain


# Word pairs standing more often than this in a gap anchor nothing (too common to tell where a piece is).
_MAX_PAIR_REPEATS: Final = 8
# More words than this between two anchors in the text: they are two places, not one piece.
_MAX_WORDS_BETWEEN: Final = 24
# More words than this left out of the piece, and more put in by the text, between two anchors: two places too.
_MAX_WORDS_REPLACED: Final = 4
# How many of a piece's first or last words may be missing around its anchors, edited in place.
_EDGE_WORDS: Final = 8
# A snippet of a longer document: at least this many of its words, making most of the span they cover.
_MIN_SNIPPET_WORDS: Final = 12

_WORD: Final = re.compile(r"\w+")


@functools.lru_cache(maxsize=1024)
def _words_of(piece: str) -> tuple[str, ...]:
    """The words of a document's text, casefolded (kept: a thread's documents are aligned again at each call)."""
    return tuple(word.casefold() for word in _WORD.findall(piece))


@functools.lru_cache(maxsize=1024)
def _pairs_of(piece: str) -> frozenset[tuple[str, str]]:
    """The pairs of consecutive words of a document's text (`_words_of`), as a set."""
    return frozenset(itertools.pairwise(_words_of(piece)))


@dataclass(frozen=True, slots=True)
class _Words:
    """The words of a text (casefolded), where each starts and ends, and where each pair of them stands."""

    words: tuple[str, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    pairs: Mapping[tuple[str, str], list[int]]

    @classmethod
    def of(cls, text: str) -> _Words:
        matches = list(_WORD.finditer(text))
        words = tuple(m.group().casefold() for m in matches)
        pairs: dict[tuple[str, str], list[int]] = {}
        for position, pair in enumerate(itertools.pairwise(words)):
            pairs.setdefault(pair, []).append(position)
        return cls(words, tuple(m.start() for m in matches), tuple(m.end() for m in matches), pairs)

    def anchors(self, piece: Sequence[str], owner: Sequence[int]) -> list[tuple[int, int]]:
        """Where each pair of ``piece``'s words stands in the text among words no one was given (``owner`` -1).

        (the piece's word, the text's word), in the order of the piece's words,
        the text's latest first at each (as `_longest_chain` reads them); pairs
        standing more than a few times anchor nothing.
        """
        found: list[tuple[int, int]] = []
        for i, pair in enumerate(itertools.pairwise(piece)):
            positions = self.pairs.get(pair)
            if positions and len(positions) <= _MAX_PAIR_REPEATS:
                found.extend((i, j) for j in reversed(positions) if owner[j] == -1 and owner[j + 1] == -1)
        return found

    def line_break_between(self, text: str, left: int, right: int) -> bool:
        """Whether a line break stands between word ``left`` and word ``right`` (left < right)."""
        return "\n" in text[self.ends[left] : self.starts[right]]


@dataclass(frozen=True, slots=True)
class _Core:
    """A piece's densest part of its anchors: (the piece's word, the text's word) of each, in order."""

    piece: Sequence[str]
    anchors: tuple[tuple[int, int], ...]

    @classmethod
    def of(cls, anchors: Sequence[tuple[int, int]], piece: Sequence[str]) -> _Core:
        # Cut where the text has more than an edit's words of its own between two anchors: two places, of which
        # the part with the most anchors is the piece's.
        best: list[tuple[int, int]] = []
        part = list(anchors[:1])
        for (i, j), anchor in itertools.pairwise(anchors):
            piece_skips, text_skips = anchor[0] - i - 2, anchor[1] - j - 2
            if text_skips > _MAX_WORDS_BETWEEN or min(piece_skips, text_skips) > _MAX_WORDS_REPLACED:
                best = part if len(part) > len(best) else best
                part = []
            part.append(anchor)
        return cls(piece, tuple(part if len(part) >= len(best) else best))

    @property
    def first(self) -> int:
        """The text's word it starts at."""
        return self.anchors[0][1]

    @property
    def last(self) -> int:
        """The text's word it ends at (its last pair's second word)."""
        return self.anchors[-1][1] + 1

    def share(self, words: _Words) -> float:
        """How much of the piece its anchors find (of two pieces alike, the text is more the one it holds more of)."""
        return len(self._covered(self.anchors, words)) / len(self.piece)

    def _covered(self, anchors: Sequence[tuple[int, int]], words: _Words) -> set[int]:
        """The piece's words ``anchors`` find, and between two of them those in the few words of the text there."""
        piece = self.piece
        covered = {i + k for i, _ in anchors for k in (0, 1)}
        for (i, j), (next_i, next_j) in itertools.pairwise(anchors):
            if 2 < next_i - i <= 2 * _MAX_WORDS_BETWEEN and next_j - j > 2:
                between = set(words.words[j + 2 : next_j])
                covered |= {k for k in range(i + 2, next_i) if piece[k] in between}
        return covered

    def plausible(self, words: _Words) -> bool:
        """Whether its anchors alone find enough of the piece (`_enough`) to count as a place the text holds it."""
        span = self.anchors[-1][1] + 2 - self.anchors[0][1]
        return _enough(len(self._covered(self.anchors, words)), len(self.piece), span)

    def widened(self, words: _Words, text: str, floor: int, ceiling: int) -> tuple[int, int] | None:
        """Its first and last words in the text, widened within ``floor`` to ``ceiling`` (excluded); None: not here.

        ``floor`` and ``ceiling`` bound the words no other piece was given around
        its anchors (`_widened_in_place`).
        """
        piece = self.piece
        covered = self._covered(self.anchors, words)
        (piece_first, first), (piece_last, last) = self.anchors[0], self.anchors[-1]
        piece_last, last = piece_last + 1, last + 1  # the last pair's second word
        # The piece going on word for word past its last anchor (pairs too common to anchor).
        while piece_last + 1 < len(piece) and last + 1 < ceiling and piece[piece_last + 1] == words.words[last + 1]:
            piece_last, last = piece_last + 1, last + 1
            covered.add(piece_last)
        # A snippet cut inside a word: the part of it that is there (its start at the end, its end at the start).
        if (
            piece_last + 1 < len(piece)
            and last + 1 < ceiling
            and piece[piece_last + 1].startswith(words.words[last + 1])
            and not words.line_break_between(text, last, last + 1)
        ):
            piece_last, last = piece_last + 1, last + 1
            covered.add(piece_last)
        if (
            piece_first > 0
            and first > floor
            and piece[piece_first - 1].endswith(words.words[first - 1])
            and not words.line_break_between(text, first - 1, first)
        ):
            piece_first, first = piece_first - 1, first - 1
            covered.add(piece_first)
        # The piece's first or last few words missing around its anchors: the text's words there, on their line and
        # short of the next piece, are them edited (one of the piece's own words there, else all, if no more).
        missing = piece_first
        if 0 < missing <= _EDGE_WORDS:
            start = first
            while start > floor and not words.line_break_between(text, start - 1, start):
                start -= 1
            near = range(max(start, first - missing - 2), first)
            same = next((k for k in near if words.words[k] in set(piece[:piece_first])), None)
            if same is not None:
                covered |= {i for i in range(piece_first) if piece[i] == words.words[same]}
                first = same
            elif first - start <= missing:
                first = start
        missing = len(piece) - 1 - piece_last
        if 0 < missing <= _EDGE_WORDS:
            stop = last
            while stop + 1 < ceiling and not words.line_break_between(text, stop, stop + 1):
                stop += 1
            near = range(min(stop, last + missing + 2), last, -1)
            same = next((k for k in near if words.words[k] in set(piece[piece_last + 1 :])), None)
            if same is not None:
                covered |= {i for i in range(piece_last + 1, len(piece)) if piece[i] == words.words[same]}
                last = same
            elif stop - last <= missing:
                last = stop
        return (first, last) if _enough(len(covered), len(piece), last - first + 1) else None


# How many of the next documents in the artifact's order a JSON result's value is first read with, once the
# documents found as they stand are placed.
_IN_ORDER_WINDOW: Final = 3
# How much of a document's start is looked for in a value before the document itself is.
_HEAD: Final = 40
# How many times a JSON result's values are read again for the documents one gave up.
_ROUNDS: Final = 3


def _may_stand_in(piece: Sequence[str], words: frozenset[str]) -> bool:
    """Whether a piece (its words) may be located in a text whose words are ``words``: `_enough` of it there.

    Every word `_aligned` counts as found is one of the text's, so a piece
    fewer of whose words (counted where they stand in it) are the text's than
    `_enough` asks is never located there.

    Example:
        >>> _may_stand_in(("paris", "is", "big"), frozenset({"paris", "is", "old"}))
        True
        >>> _may_stand_in(("paris", "is", "big"), frozenset({"https", "example", "org"}))
        False
    """
    if words.isdisjoint(piece):
        return False
    present = sum(map(words.__contains__, piece))
    return present * 2 >= len(piece) or present >= _MIN_SNIPPET_WORDS


def _enough(matched: int, length: int, span: int) -> bool:
    """Whether ``matched`` of a piece's ``length`` words, over ``span`` words of the text, locate it.

    Half its words; or, for a snippet of a longer document, a dozen words or
    more making half of the span they cover.
    """
    return matched * 2 >= length or (matched >= _MIN_SNIPPET_WORDS and matched * 2 >= span)


def read_tool_documents(message: ToolMessage, documents_from: DocumentsFromTool | None = None) -> list[Document]:
    """The documents of one tool result: ``documents_from``'s answer, else `tool_documents`; none of an error.

    A result with ``status="error"`` (the tool raised, or another middleware
    reported its failure) holds none: ``documents_from`` is not asked.

    Example:
        >>> read_tool_documents(ToolMessage("plain text", tool_call_id="a"))
        []
    """
    if message.status == "error":
        # A tool that failed (or `ToolErrorMiddleware`'s message for it): its text is the error, no document.
        return []
    if documents_from is not None:
        found = documents_from(message)
        if found is not None:
            # One document, as a tool's artifact may be one; else read once (a generator too).
            one = isinstance(found, (Document, Mapping)) or not isinstance(found, Iterable)
            documents = []
            for item in [found] if one else found:
                document = as_document(item)
                if document is None:
                    msg = (
                        f"documents_from gave a {type(item).__name__} for tool {message.name or ''!r}: it must "
                        f"return Documents (or None to read the tool's artifact)"
                    )
                    raise TypeError(msg)
                documents.append(document)
            return documents
    return tool_documents(message)
