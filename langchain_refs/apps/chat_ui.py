"""The chat page of ``langchain-refs serve``: a conversation with cited, checkable answers (Starlette).

``create_app()`` serves the page (``/``), its assets (``/static/{name}``, the
one route of both pages' files, and ``/favicon.ico``, all inside the package:
it works offline) and
``POST /api/chat``, which takes ``{"question": ..., "conversation": ...}``
(a JSON body of at most 16 KB; ``conversation`` is the id a ``start`` event
gave, to continue that conversation) and answers with a stream of
Server-Sent Events. Every event's data is JSON, and it is data, never markup
(``<``, ``>`` and ``&`` are written as JSON ``\\u`` escapes, so no event holds
a markup character):

============== ===============================================================
event          data
============== ===============================================================
``start``      ``{"answer_id", "conversation"}``: first, once
``searching``  ``{"name"}``: the agent called a tool, which is running
               (``serve --agent``)
``tool``       ``{"name", "query", "found"}``: the tool's result came back,
               before the answer streams; ``{"name", "failed": true}`` before
               ``error`` for a tool that never answered (the run failed)
``token``      ``{"text"}``: the model's own words (Markdown source), with
               the citation markers taken out
``citation``   ``{"number", "index"}``: a citation chip where it stands in the
               text (``index`` counts the chips of the answer from 0)
``render``     ``{"blocks"}``: the answer so far as a tree of nodes, re-sent
               at most every 80 ms while it streams and once at its end
``references`` ``{"answer_id", "sources", "consulted", "chips", "invalid",
               "omitted_invalid"}``: after the last ``render``
``error``      ``{"message"}``: the run (or rendering the answer) failed;
               the stream ends here
``done``       ``{}``: the answer is complete
============== ===============================================================

A node of the ``render`` tree is a string (text, to be shown as text), a
citation ``{"cite": number, "index": i}``, or an element ``{"tag", "attrs",
"children"}`` whose tag is one of `ALLOWED_TAGS` and whose only attributes
are ``href`` on ``a`` (a URL `safe_url` allows) and ``start`` on ``ol``.
The Markdown is rendered on the server by markdown-it-py with raw HTML off:
``<b>`` in an answer is text. The page builds the tree with
``createElement``/``textContent``, never ``innerHTML``.

Whatever shape the model streams its content in (a string, a list of
strings, a list of ``{"type": "text", "text": ...}`` blocks), the server turns
it into text first; other blocks (reasoning, images, tool calls) are left
out. Each chip's entry in ``references.chips`` carries its citation's
passage (the words of the cited document that best support it: ``before``,
``excerpt``, ``after``) and, with a verifier, whether it is ``supported``.

A conversation's earlier turns go back to the model: the chain is shown each
earlier answer as plain text with its citations taken out (its numbers would
not name this turn's documents); the agent keeps its thread in a LangGraph
checkpointer, where `ReferencesMiddleware` shows the model its own earlier
markers (``history="raw"``: the thread's document ids stay true).

Example:
    >>> from starlette.testclient import TestClient
    >>> client = TestClient(create_app())
    >>> client.get("/").status_code, client.get("/favicon.ico").headers["content-type"]
    (200, 'image/svg+xml')
"""

from __future__ import annotations

import contextlib
import re
import secrets
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol, runtime_checkable
from urllib.parse import urlsplit

from langchain_core.documents import Document
from langchain_core.documents.base import BaseMedia
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import Runnable, RunnableGenerator
from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from typing_extensions import override

from langchain_refs.apps._content import content_text, reasoning_text
from langchain_refs.apps._errors import first_line
from langchain_refs.apps._web import STATIC, BodyError, page_response, read_json_body
from langchain_refs.apps.check.page import check_routes
from langchain_refs.apps.demo import ExtractiveChatModel, demo_context
from langchain_refs.apps.ui_stream import (
    AnswerText,
    QuestionTooLongError,
    ReferencesFound,
    ToolCallDelta,
    ToolResult,
    citation_numbers_style,
    drop_turns,
    held_turns,
    question_of,
    sse_data,
    stream_steps,
    turns_the_client_holds,
    ui_message_chunks,
    ui_message_response,
)
from langchain_refs.streaming import (
    AnswerReferences,
    CitationVerifier,
    ReferenceStyle,
    manage_references,
    safe_url,
)

__all__ = [
    "ALLOWED_TAGS",
    "STATIC",
    "ConversationStore",
    "InMemoryConversationStore",
    "chip",
    "content_text",
    "create_app",
    "markdown_tree",
]

ALLOWED_TAGS: Final = frozenset(
    "p h3 h4 h5 h6 ul ol li em strong s code pre blockquote a hr br table thead tbody tr th td".split()
)
"""The elements a ``render`` tree may hold: the one list, which the page is given (it refuses any other)."""

_PAGE = (Path(__file__).parent / "chat_ui.html").read_text(encoding="utf-8")

_MAX_BODY = 16_384
_MAX_QUESTION = 4_000
_RENDER_EVERY = 0.08  # seconds between two renders of a streaming answer
_CONTEXT = 160  # characters of the document shown around a passage
_CONVERSATIONS = 256  # conversations kept in memory (least recently used dropped)
_MAX_UI_BODY = 1_048_576  # useChat sends the whole conversation with each question
_TURNS = 12  # earlier turns the chain shows the model

# Each citation number is rendered between two private-use characters around a
# secret: the server cuts the styled stream at these marks. Marks in the
# model's own words are replaced first (chain) or do not match the secret
# (agent), so a model or a document cannot fake a citation. The chips of the
# Markdown source (`chip`) hold the secret too: Markdown decodes a character
# reference (``&#xE000;``) into a mark after the model's marks were replaced.
_OPEN, _CLOSE = "\ue000", "\ue001"
_SECRET = secrets.token_hex(8)
_MARK = re.compile(f"{_OPEN}{_SECRET}([0-9]{{1,9}}){_CLOSE}")
_CHIP = re.compile(f"{_OPEN}{_SECRET}c([0-9]{{1,9}}){_CLOSE}")
_ENCODED_CHIP = re.compile(f"%EE%80%80{_SECRET}c[0-9]{{1,9}}%EE%80%81", re.IGNORECASE)
_STRAY = str.maketrans({_OPEN: "\ufffd", _CLOSE: "\ufffd", "\x00": "\ufffd"})  # NUL: as CommonMark does

_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


class _MarkedCitations(ReferenceStyle):
    """Each citation as its number between two secret marks; no list (the page builds it from data)."""

    @override
    def format_reference(self, ref: int, media: BaseMedia) -> str:
        return f"{_OPEN}{_SECRET}{ref}{_CLOSE}"

    @override
    def format_all_references(self, refs: list[tuple[int, BaseMedia]]) -> str:
        return ""


def _as_text(chunk: Any, stray: dict[int, str] | None) -> Any:
    # Before citations are rendered: every content shape becomes plain text, the model's own marks (and NUL)
    # replaced by ``stray`` when the style writes marks (None: kept); the model's reasoning, if any, goes
    # along as reasoning_content (the UI message stream shows it).
    if isinstance(chunk, BaseMessage):
        text = content_text(chunk.content)
        update: dict[str, Any] = {"content": text if stray is None else text.translate(stray)}
        reasoning = reasoning_text(chunk)
        if reasoning:
            update["additional_kwargs"] = {**chunk.additional_kwargs, "reasoning_content": reasoning}
        return chunk.model_copy(update=update)
    if isinstance(chunk, str):
        return chunk if stray is None else chunk.translate(stray)
    return chunk


def _plain_texts(*, marks: bool) -> RunnableGenerator[Any, Any]:
    """The model's chunks as plain text (`_as_text`); with ``marks`` (the page's style), its own marks replaced.

    The UI message stream's style writes no mark, so a private-use character or a NUL the model wrote
    reaches that client as written.
    """
    stray = _STRAY if marks else None

    def texts(chunks: Iterator[Any]) -> Iterator[Any]:
        for chunk in chunks:
            yield _as_text(chunk, stray)

    async def atexts(chunks: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for chunk in chunks:
            yield _as_text(chunk, stray)

    return RunnableGenerator(texts, atexts)


def _event(name: str, data: Any) -> str:
    return f"event: {name}\ndata: {sse_data(data)}\n\n"


# -- Markdown as data -----------------------------------------------------------


def chip(index: int) -> str:
    """The token `markdown_tree` reads as the ``index``-th citation of an answer (no text can write one).

    Example:
        >>> markdown_tree("Paris" + chip(0), [3])
        [{'tag': 'p', 'attrs': {}, 'children': ['Paris', {'cite': 3, 'index': 0}]}]
    """
    return f"{_OPEN}{_SECRET}c{index}{_CLOSE}"


def markdown_tree(source: str, numbers: Sequence[int] = ()) -> list[Any]:
    """Markdown rendered as a tree of data nodes (see the module header); raw HTML stays text.

    ``source`` may hold chips (`chip`: the i-th citation of the answer, whose
    number is ``numbers[i]``): in prose they become ``{"cite": number,
    "index": i}``, inside code they read ``[number]``. Markdown nested deeper
    than Python's recursion goes (hundreds of ``*`` around a word) is one
    paragraph of its text, its chips kept.

    Example:
        >>> markdown_tree("**Paris**" + chip(0) + " <b>", [1])
        [{'tag': 'p', 'attrs': {}, 'children': [{'tag': 'strong', 'attrs': {}, 'children': ['Paris']}, \
{'cite': 1, 'index': 0}, ' <b>']}]
    """
    try:
        return _children(SyntaxTreeNode(_MARKDOWN.parse(source)), numbers)
    except RecursionError:  # markdown-it-py's tree, and this one, are built by recursion
        return [_element("p", _text(source, numbers))]


def _children(node: SyntaxTreeNode, numbers: Sequence[int]) -> list[Any]:
    out: list[Any] = []
    for child in node.children:
        out.extend(_node(child, numbers))
    return out


def _element(tag: str, children: list[Any], attrs: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"tag": tag, "attrs": attrs or {}, "children": children}


def _number(numbers: Sequence[int], index: int) -> int:
    return numbers[index] if 0 <= index < len(numbers) else 0


def _text(content: str, numbers: Sequence[int]) -> list[Any]:
    out: list[Any] = []
    for position, piece in enumerate(_CHIP.split(content)):
        if position % 2:
            out.append({"cite": _number(numbers, int(piece)), "index": int(piece)})
        elif piece:
            out.append(piece.translate(_STRAY))  # a mark Markdown decoded from a character reference: no chip
    return out


def _code(content: str, numbers: Sequence[int]) -> str:
    return _CHIP.sub(lambda m: f"[{_number(numbers, int(m[1]))}]", content).translate(_STRAY)


def _node(node: SyntaxTreeNode, numbers: Sequence[int]) -> list[Any]:
    kind = node.type
    if kind == "text":
        return _text(node.content, numbers)
    if kind in ("inline", "image"):  # an image shows its alt text: nothing is loaded
        return _children(node, numbers)
    if kind == "paragraph":
        children = _children(node, numbers)
        return children if node.hidden else [_element("p", children)]  # tight lists hide their paragraphs
    if kind == "heading":  # the page's own h1/h2 come first: an answer's headings start at h3
        return [_element(f"h{min(int(node.tag[1]) + 2, 6)}", _children(node, numbers))]
    if kind in ("fence", "code_block"):
        return [_element("pre", [_element("code", [_code(node.content, numbers)])])]
    if kind == "code_inline":
        return [_element("code", [_code(node.content, numbers)])]
    if kind == "softbreak":
        return ["\n"]
    if kind == "hardbreak":
        return [_element("br", [])]
    if kind == "link":
        # A citation inside a link's destination is no part of it (Markdown percent-encodes its marks there);
        # the secret never reaches the page: a destination still holding it gets no link.
        destination = _ENCODED_CHIP.sub("", _CHIP.sub("", str(node.attrs.get("href", ""))))
        href = safe_url(destination) if _SECRET not in destination else None
        children = _children(node, numbers)
        return [_element("a", children, {"href": href})] if href else children
    if kind == "ordered_list":
        start = node.attrs.get("start")
        return [_element("ol", _children(node, numbers), {"start": int(start)} if start is not None else None)]
    tag = {"bullet_list": "ul", "list_item": "li", "blockquote": "blockquote", "hr": "hr", "em": "em"}.get(kind)
    tag = tag or {"strong": "strong", "s": "s", "table": "table", "thead": "thead", "tbody": "tbody"}.get(kind)
    tag = tag or {"tr": "tr", "th": "th", "td": "td"}.get(kind)
    if tag is not None:
        return [_element(tag, _children(node, numbers))]
    # Anything else (raw HTML cannot occur with html off): its text, as text.
    return [_code(node.content, numbers)] if node.content else _children(node, numbers)


# -- One answer as it streams ----------------------------------------------------


@dataclass(kw_only=True)
class _Answer:
    """Cuts the styled stream of one answer into events and keeps its Markdown source."""

    source: str = ""  # Markdown with chips (`chip`)
    plain: str = ""  # the model's words, citations taken out (the history of the chain)
    numbers: list[int] = field(default_factory=list)
    offsets: dict[int, int] = field(default_factory=dict)  # output offset of a chip -> its index
    held: str = ""
    consumed: int = 0  # characters of the styled output before ``held``
    places: list[tuple[int, int]] = field(default_factory=list)  # (output offset, source index) of each run of words

    def feed(self, styled: str) -> Iterator[str]:
        text = self.held + styled
        cut = text.rfind(_OPEN)
        tail = text[cut:] if cut >= 0 else ""
        self.held = tail if tail and _CLOSE not in tail and _may_become_mark(tail) else ""
        text = text[: len(text) - len(self.held)]
        position = 0
        for match in _MARK.finditer(text):
            yield from self._words(text[position : match.start()], self.consumed + position)
            index = len(self.numbers)
            self.numbers.append(int(match[1]))
            self.offsets[self.consumed + match.start()] = index
            self.source += chip(index)
            yield _event("citation", {"number": int(match[1]), "index": index})
            position = match.end()
        yield from self._words(text[position:], self.consumed + position)
        self.consumed += len(text)

    def close(self) -> Iterator[str]:
        held, self.held = self.held, ""  # a mark begun and never ended: shown as text, not lost
        yield from self._words(held, self.consumed)

    def drop_spaces_before(self, offsets: Iterable[int]) -> None:
        """Where a citation was dropped (at these output offsets), the space the model wrote before it goes too.

        Only before punctuation, a space or the end: ``big [1](id=9).`` reads ``big.``, not ``big .``.
        """
        for offset in sorted(set(offsets), reverse=True):
            runs = [(start, index) for start, index in self.places if start <= offset]
            if not runs:
                continue
            start, index = runs[-1]
            at = min(index + offset - start, len(self.source))
            if at < len(self.source) and self.source[at] not in _AFTER_DROPPED:
                continue
            cut = at
            while cut > 0 and self.source[cut - 1] in " \t":
                cut -= 1
            self.source = self.source[:cut] + self.source[at:]

    def _words(self, text: str, offset: int) -> Iterator[str]:
        if text:
            text = text.translate(_STRAY)
            self.places.append((offset, len(self.source)))
            self.source += text
            self.plain += text
            yield _event("token", {"text": text})

    def render(self) -> str:
        return _event("render", {"blocks": markdown_tree(self.source, self.numbers)})


_AFTER_DROPPED = frozenset(".,;:!?)]} \t\n")


def _may_become_mark(tail: str) -> bool:
    body = tail[1:]
    if len(body) <= len(_SECRET):
        return _SECRET.startswith(body)
    return body.startswith(_SECRET) and body[len(_SECRET) :].isdigit()


def _domain(url: str | None) -> str | None:
    """The host a browser opens for ``url``, shown beside its source (no ``www.``); None where that is not sure.

    Python reads a few URLs otherwise than a browser does (the WHATWG URL
    standard): to a browser a backslash is a slash (``https://evil.example\\@a.org``
    opens evil.example), a percent-encoded host is decoded, and a host in
    another script is mapped by rules (UTS #46) Python's ``idna`` codec does
    not follow. Such a URL shows no domain rather than one its link may not
    open, or a look-alike of another.

    Example:
        >>> _domain("https://www.a.org/x"), _domain("https://evil.example\\\\@a.org/"), _domain("https://\\u0430pple.com")
        ('a.org', None, None)
    """
    if not url or "\\" in url:
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    if not host or "%" in host or not host.isascii():
        return None
    return host.removeprefix("www.")


def _card_source(title: str | None, source: str | None, *, number: int | None = None) -> dict[str, Any]:
    url = safe_url(source)
    return {
        **({"number": number} if number is not None else {}),
        "title": title or source or "untitled document",
        "url": url,
        "domain": _domain(url),
    }


def _references(
    answer: _Answer, references: AnswerReferences, documents: Sequence[Document], answer_id: str
) -> dict[str, Any]:
    """The ``references`` event: sources, consulted sources, each chip's citation and passage, invalid ones."""
    sources = []
    titles = {}
    excerpts: dict[int, str] = {}
    for c in references.citations:  # a card's snippet: the passage of its first citation that has one
        if c.passage is not None:
            excerpts.setdefault(c.number, c.passage.excerpt)
    for r in references.references:
        card = _card_source(r.title, r.source, number=r.number)
        card["excerpt"] = excerpts.get(r.number)
        supported = [c.supported for c in references.citations if c.number == r.number and c.supported is not None]
        card.update(
            cited=True,
            documents=list(r.document_positions),
            supported=all(supported) if supported else None,
            # Cited once rightly and once wrongly: neither "supported" nor "not supported".
            mixed=True in supported and False in supported,
        )
        titles[r.number] = card["title"]
        sources.append(card)
    chips: list[dict[str, Any] | None] = [None] * len(answer.numbers)
    for citation in references.citations:
        index = answer.offsets.get(citation.start)
        if index is None or chips[index] is not None:  # one chip may stand for adjacent citations: the first
            continue
        chips[index] = {
            "index": index,
            "number": citation.number,
            "title": titles.get(citation.number, ""),
            "supported": citation.supported,
            "support": citation.support,
            "reason": citation.unsupported_reason,
            "passage": _passage(citation.passage, documents),
        }
    return {
        "answer_id": answer_id,
        "sources": sources,
        "consulted": [{**_card_source(s.title, s.source), "cited": False} for s in references.consulted],
        "chips": [
            chip or {"index": i, "number": answer.numbers[i], "title": titles.get(answer.numbers[i], "")}
            for i, chip in enumerate(chips)
        ],
        "invalid": [{"marker": i.marker, "reason": i.reason} for i in references.invalid_citations],
        "omitted_invalid": references.omitted_invalid_citations,
    }


def _passage(passage: Any, documents: Sequence[Document]) -> dict[str, str] | None:
    if passage is None:
        return None
    before = after = ""
    position = passage.document_position
    if 1 <= position <= len(documents):
        text = documents[position - 1].page_content
        if text[passage.document_start : passage.document_end] == passage.excerpt:
            start = max(0, passage.document_start - _CONTEXT)
            if start:  # the context starts at a word, never mid-word
                space = text.find(" ", start, passage.document_start)
                start = space + 1 if space >= 0 else passage.document_start
            before = ("…" if start else "") + text[start : passage.document_start]
            end = passage.document_end + _CONTEXT
            if end < len(text):  # and ends at one
                space = text.rfind(" ", passage.document_end, end)
                end = space if space >= 0 else passage.document_end
            after = text[passage.document_end : end] + ("…" if end < len(text) else "")
    return {"before": before, "excerpt": passage.excerpt, "after": after}


# -- Conversations ---------------------------------------------------------------


@runtime_checkable
class ConversationStore(Protocol):
    """Where the chain mode of the chat app keeps each conversation's earlier turns.

    A turn is ``(question, answer)``, the answer as plain text with its
    citations taken out. ``turns`` gives ``None`` for a conversation the store
    does not hold (never begun, or forgotten); ``save`` replaces a
    conversation's turns (the app keeps at most the last 12). Give
    ``create_app(conversation_store=...)`` one backed by a database or a file
    and conversations survive a restart; `InMemoryConversationStore` is the
    default. Both methods are called on the server's event loop: keep them quick.

    Example:
        >>> isinstance(InMemoryConversationStore(), ConversationStore)
        True
    """

    def turns(self, conversation: str) -> Sequence[tuple[str, str]] | None:
        """The turns of a conversation, oldest first; None if the store does not hold it."""
        ...

    def save(self, conversation: str, turns: Sequence[tuple[str, str]]) -> None:
        """Keep these turns as the conversation's (an empty list opens a new conversation)."""
        ...


class InMemoryConversationStore:
    """The default `ConversationStore`: at most ``max_conversations``, the least recently used dropped.

    Nothing else grows per conversation: a dropped conversation is gone (its
    id, too); ``on_forget`` (if given) is called with its id, e.g. to delete
    the agent's thread from its checkpointer.

    Example:
        >>> store = InMemoryConversationStore(max_conversations=1)
        >>> store.save("a", [("Q?", "A.")]); store.save("b", [])
        >>> store.turns("a"), store.turns("b")
        (None, ())
    """

    def __init__(self, *, max_conversations: int = 256, on_forget: Callable[[str], object] | None = None) -> None:
        if max_conversations < 1:
            msg = f"max_conversations must be at least 1, got {max_conversations}"
            raise ValueError(msg)
        self.max_conversations = max_conversations
        self._on_forget = on_forget
        self._turns: OrderedDict[str, tuple[tuple[str, str], ...]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._turns)

    def turns(self, conversation: str) -> tuple[tuple[str, str], ...] | None:
        """The turns of a conversation (it becomes the most recently used), None if not held."""
        turns = self._turns.get(conversation)
        if turns is not None:
            self._turns.move_to_end(conversation)
        return turns

    def save(self, conversation: str, turns: Sequence[tuple[str, str]]) -> None:
        """Keep the turns (the conversation becomes the most recently used); drop the oldest past the bound."""
        self._turns[conversation] = tuple(turns)
        self._turns.move_to_end(conversation)
        while len(self._turns) > self.max_conversations:
            forgotten = self._turns.popitem(last=False)[0]
            if self._on_forget is not None:
                self._on_forget(forgotten)


class _CheckpointedThreads:
    """The agent's conversations as its checkpointer holds them: a thread it has is a conversation to continue."""

    def __init__(self, checkpointer: Any) -> None:
        self._checkpointer = checkpointer

    def turns(self, conversation: str) -> tuple[tuple[str, str], ...] | None:
        found = self._checkpointer.get_tuple({"configurable": {"thread_id": conversation}})
        return () if found is not None else None  # the turns themselves are the thread's messages

    def save(self, conversation: str, turns: Sequence[tuple[str, str]]) -> None:
        """Nothing to do: the agent writes the thread when it answers."""


def _open(store: ConversationStore, wanted: Any) -> str:
    """The conversation to continue: ``wanted`` if the store holds it, else a new one."""
    if isinstance(wanted, str) and store.turns(wanted) is not None:
        return wanted
    conversation = uuid.uuid4().hex
    store.save(conversation, [])
    return conversation


def _history(store: ConversationStore, conversation: str) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    for question, answer in (store.turns(conversation) or [])[-_TURNS:]:
        messages += [HumanMessage(question), AIMessage(answer)]
    return messages


def _add_turn(store: ConversationStore, conversation: str, question: str, answer: str) -> None:
    turns = store.turns(conversation)
    if turns is not None:  # not when it was dropped while the answer streamed
        store.save(conversation, [*turns[-_TURNS + 1 :], (question, answer)])


def _chat_prompt() -> ChatPromptTemplate:
    return ChatPromptTemplate.from_messages(
        [
            ("system", "Answer the question from the documents only. {format_references}"),
            MessagesPlaceholder("history"),
            ("human", "{context}\n\nQuestion: {question}"),
        ]
    )


# -- The app ------------------------------------------------------------------------


_TAGS = " ".join(sorted(ALLOWED_TAGS))


def _page(request: Request) -> Response:
    return page_response(_PAGE, mode="agent" if request.app.state.agent else "chain", tags=_TAGS)


async def _json_body(request: Request, limit: int, *, refuse_lone_surrogates: bool = True) -> Any:
    """The request's JSON, or the 4xx response with the one line that says why not (`read_json_body`)."""
    try:
        return await read_json_body(request, limit, refuse_lone_surrogates=refuse_lone_surrogates)
    except BodyError as error:
        return JSONResponse({"error": str(error)}, status_code=error.status)


async def _question(request: Request) -> tuple[str, Any] | Response:
    data = await _json_body(request, _MAX_BODY)
    if isinstance(data, Response):
        return data
    question = data.get("question") if isinstance(data, dict) else None
    if not isinstance(question, str) or not question.strip():
        return JSONResponse({"error": 'send a JSON body {"question": "..."}'}, status_code=400)
    if len(question) > _MAX_QUESTION:
        return JSONResponse({"error": f"the question is over {_MAX_QUESTION} characters"}, status_code=413)
    conversation = data.get("conversation")
    if conversation is not None and not isinstance(conversation, str):
        # Not a new conversation in silence: the earlier turns would be lost from the model's context.
        message = f"conversation must be the id the server gave (a string), got {type(conversation).__name__}"
        return JSONResponse({"error": message}, status_code=400)
    return question.strip(), conversation


def create_app(
    *,
    model: Runnable[Any, Any] | None = None,
    documents: Sequence[Document] | None = None,
    k: int = 4,
    agent: bool = False,
    verifier: CitationVerifier | None = None,
    check_model: BaseChatModel | None = None,
    conversation_store: ConversationStore | None = None,
    checkpointer: Any = None,
    allowed_hosts: Sequence[str] | None = None,
    ai7_fields: bool = False,
) -> Starlette:
    """The chat web app: the offline demo pipeline unless a model or documents are given.

    The app also serves the checking page, ``/check``, and its API,
    ``POST /api/check`` (`langchain_refs.apps.check.page`), and
    ``POST /api/ui-stream``: the same answers as the AI SDK's UI message
    stream (`langchain_refs.apps.ui_stream`), for a ``useChat`` front end; it
    takes the body ``useChat`` sends (at most 1 MB: the client sends the whole
    conversation) and keeps each chat's earlier turns under its id (the
    turns ``useChat`` dropped, by ``regenerate()`` or an edited question, are
    dropped there too).

    Args:
        model: the chat model (default: the offline extractive demo model;
            with ``agent``, its tool-calling variant).
        documents: the corpus to retrieve from (default: the demo corpus).
        k: documents retrieved per question.
        agent: answer with the offline agent demo (`build_demo_agent`, needs
            the ``agents`` extra): its tool step shows before the answer.
        verifier: checks each citation once the answer is complete (e.g.
            ``LexicalScorer()``; not with ``agent``, a ValueError);
            unsupported citations are marked on the page.
        check_model: a chat model the checking page offers as extractor and
            checker, beside the offline one (``serve --model`` passes its model).
        conversation_store: where the chain keeps earlier turns (default: an
            `InMemoryConversationStore` of 256 conversations); not with
            ``agent`` (a ValueError: the agent keeps its threads in its checkpointer).
        checkpointer: with ``agent``, the LangGraph checkpointer that keeps
            its threads (any saver: a persistent one and conversations survive
            a restart; all its threads are kept). Default: an in-memory saver
            holding the 256 most recently used conversations.
        allowed_hosts: the host names requests may be sent to (their ``Host``
            header; Starlette's ``TrustedHostMiddleware``): any other gets a
            400 (under ``/api/``, the one line of JSON of the API's other
            errors). A web page whose name an attacker points at this machine
            (DNS rebinding) then cannot use the app, nor the model key it runs
            with. ``serve`` on a loopback address allows the loopback names
            and its own. Default: any host.
        ai7_fields: ``POST /api/ui-stream`` also sends the fields only the
            ``ai`` 7 client reads (`ui_message_chunks`): ``text-end``'s
            citations and ``finish``'s ``finishReason``. Default: the stream
            ``ai`` 5, 6 and 7 all read.

    Example:
        >>> from starlette.testclient import TestClient
        >>> body = TestClient(create_app()).post("/api/chat", json={"question": "Which URLs become links?"}).text
        >>> "event: citation" in body and body.rstrip().endswith("event: done\\ndata: {}")
        True
    """
    if agent and verifier is not None:
        msg = "a verifier checks the chain's answers; the agent mode cannot take one"
        raise ValueError(msg)
    if agent and conversation_store is not None:
        msg = "the agent keeps its conversations in its LangGraph checkpointer; a conversation store is for the chain"
        raise ValueError(msg)
    if checkpointer is not None and not agent:
        msg = "a checkpointer keeps the agent's threads; the chain takes a conversation_store"
        raise ValueError(msg)
    style = _MarkedCitations()
    ui_style = citation_numbers_style()
    store: ConversationStore
    if agent:
        from langgraph.checkpoint.memory import InMemorySaver

        from langchain_refs.apps.demo.agent import AgentDemoChatModel, build_demo_agent

        if checkpointer is None:
            checkpointer = InMemorySaver()
            # The turns live in the checkpointer: the store only bounds how many threads it keeps.
            store = InMemoryConversationStore(max_conversations=_CONVERSATIONS, on_forget=checkpointer.delete_thread)
        else:
            store = _CheckpointedThreads(checkpointer)
        agent_model = model if model is not None else AgentDemoChatModel(delay=0.0)
        graphs = [
            build_demo_agent(style=s, model=agent_model, documents=documents, k=k, checkpointer=checkpointer)
            for s in (style, ui_style)
        ]
        run = _agent_run(graphs[0])
        ui_run = _agent_ui_run(graphs[1], store)
    else:
        store = conversation_store if conversation_store is not None else InMemoryConversationStore()
        chat_model = model or ExtractiveChatModel(delay=0.0)
        chains = [
            manage_references(_chat_prompt() | chat_model | _plain_texts(marks=s is style), style=s, verifier=verifier)
            for s in (style, ui_style)
        ]
        context = demo_context(documents, k=k)
        run = _chain_run(context, chains[0], store)
        ui_run = _chain_ui_run(context, chains[1], store)

    async def chat(request: Request) -> Response:
        asked = await _question(request)
        if isinstance(asked, Response):
            return asked
        question, wanted = asked
        conversation = _open(store, wanted)
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(_events(run, question, conversation), media_type="text/event-stream", headers=headers)

    async def ui_stream(request: Request) -> Response:
        # The conversation useChat sends back holds what the server streamed: a file name that is not UTF-8
        # comes back with its lone surrogate ("\udce9"). Only the question and the chat id refuse one (question_of):
        # the earlier messages are only compared, never written.
        body = await _json_body(request, _MAX_UI_BODY, refuse_lone_surrogates=False)
        if isinstance(body, Response):
            return body
        try:
            chat_id, question = question_of(body)
        except ValueError as error:
            status = 413 if isinstance(error, QuestionTooLongError) else 400
            return JSONResponse({"error": str(error)}, status_code=status)
        held = turns_the_client_holds(body)
        chunks = ui_message_chunks(ui_run(question, f"ui-{chat_id}", held), ai7_fields=ai7_fields)
        return ui_message_response(chunks)

    async def favicon(_: Request) -> Response:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    app = Starlette(
        routes=[
            Route("/", _page),
            Route("/api/chat", chat, methods=["POST"]),
            Route("/api/ui-stream", ui_stream, methods=["POST"]),
            Route("/favicon.ico", favicon),
            # The checking page's routes bring the one route of both pages' files, /static/{name}.
            *check_routes(model=check_model),
        ],
        exception_handlers={HTTPException: _http_error},
        middleware=[] if allowed_hosts is None else [Middleware(_TrustedHosts, allowed_hosts=allowed_hosts)],
    )
    app.state.agent = agent
    return app


async def _http_error(request: Request, exception: Exception) -> Response:
    """Starlette's own errors (no such route, a method the route does not take): JSON with one line under /api/."""
    error = exception if isinstance(exception, HTTPException) else HTTPException(500)  # registered for HTTPException
    path = request.url.path
    if not path.startswith("/api/"):
        return PlainTextResponse(str(error.detail), status_code=error.status_code, headers=error.headers)
    if error.status_code == 405 and error.headers and "Allow" in error.headers:
        message = f"{request.method} is not taken at {path}: send {error.headers['Allow']}"
    elif error.status_code == 404:
        message = f"no endpoint at {path}"
    else:
        message = str(error.detail)
    return JSONResponse({"error": message}, status_code=error.status_code, headers=error.headers)


_HOST_PASSED: Final = "langchain_refs.host_passed"  # the key `_TrustedHosts` asks Starlette's middleware to set


class _TrustedHosts:
    """Starlette's `TrustedHostMiddleware`, its refusal under /api/ the one line of JSON of the API's other errors.

    Which hosts pass stays Starlette's to say (its own middleware asks, with
    an app that only notes the host passed): only the answer changes, so that
    a client of the API reads ``{"error": ...}`` naming the host, not a line
    of text. A page keeps Starlette's answer.
    """

    def __init__(self, app: ASGIApp, allowed_hosts: Sequence[str]) -> None:
        self.app = TrustedHostMiddleware(app, allowed_hosts=allowed_hosts)
        self._gate = TrustedHostMiddleware(_note_host_passed, allowed_hosts=allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/api/"):
            asked = dict(scope)
            await self._gate(asked, receive, _unsent)
            if not asked.get(_HOST_PASSED):
                host = Headers(scope=scope).get("host")
                message = f"this server does not answer to the host {host}" if host else "the request names no host"
                await JSONResponse({"error": message}, status_code=400)(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def _note_host_passed(scope: Scope, receive: Receive, send: Send) -> None:
    scope[_HOST_PASSED] = True


async def _unsent(message: Message) -> None:
    """Where Starlette's own refusal goes when `_TrustedHosts` answers instead: nowhere."""


# A run yields ("text", styled text), ("searching", data), ("tool", data),
# ("references", (AnswerReferences, documents)).
_Run = Any


async def _events(run: _Run, question: str, conversation: str) -> AsyncIterator[str]:
    answer_id = uuid.uuid4().hex[:8]
    yield _event("start", {"answer_id": answer_id, "conversation": conversation})
    answer = _Answer()
    references, documents = AnswerReferences(), []
    last_render = 0.0
    searching: list[str] = []  # the tools running: each gets its "tool" event, also when the run fails
    try:
        async for kind, value in run(question, conversation, answer):
            if kind in ("searching", "tool"):
                if kind == "searching":
                    searching.append(value["name"])
                elif value["name"] in searching:
                    searching.remove(value["name"])
                yield _event(kind, value)
            elif kind == "references":
                references, documents = value
            else:
                for event in answer.feed(value):
                    yield event
                # Re-rendering the whole answer costs its length: at most every 80 ms.
                if answer.source and time.monotonic() - last_render >= _RENDER_EVERY:
                    last_render = time.monotonic()
                    yield answer.render()
        for event in answer.close():
            yield event
        answer.drop_spaces_before(invalid.offset for invalid in references.invalid_citations)
        ending = [answer.render(), _event("references", _references(answer, references, documents, answer_id))]
    except Exception as error:  # the model, a tool or the rendering failed: say so on the page, in one line
        for name in searching:  # the page's "searching…" step ends
            yield _event("tool", {"name": name, "failed": True})
        shown = None
        if answer.source:  # the words streamed since the last render stay on the page (it draws renders only)
            with contextlib.suppress(Exception):  # unless rendering them is what failed
                shown = answer.render()
        if shown is not None:
            yield shown
        yield _event("error", {"message": f"{type(error).__name__}: {first_line(error)}"})
        return
    for event in ending:
        yield event
    yield _event("done", {})


def _chain_run(context: Runnable[Any, Any], answer_chain: Runnable[Any, Any], store: ConversationStore) -> _Run:
    async def run(question: str, conversation: str, answer: _Answer) -> AsyncIterator[tuple[str, Any]]:
        inputs = await context.ainvoke({"question": question})
        inputs["history"] = _history(store, conversation)
        references = None
        try:
            async for step in stream_steps(answer_chain.astream(inputs)):
                if isinstance(step, AnswerText):
                    yield "text", step.text
                elif isinstance(step, ReferencesFound):
                    references = step.references
        finally:
            # Also when the reader stopped the answer: what they saw is what the model said.
            _add_turn(store, conversation, question, answer.plain)
        if references is not None:
            yield "references", (references, inputs["documents"])

    return run


def _chain_ui_run(context: Runnable[Any, Any], answer_chain: Runnable[Any, Any], store: ConversationStore) -> Any:
    """The chain's answer as a cited stream for `ui_message_chunks`; the turn is kept under the chat's id.

    The turns the client dropped (``earlier``: `turns_the_client_holds`) are dropped from the store first.
    """

    async def run(question: str, conversation: str, earlier: Sequence[str] | None) -> AsyncIterator[Any]:
        turns = store.turns(conversation)
        if turns is None:
            store.save(conversation, [])
        elif earlier is not None:
            store.save(conversation, turns[: held_turns([q for q, _ in turns], earlier)])
        inputs = await context.ainvoke({"question": question})
        inputs["history"] = _history(store, conversation)
        text: list[str] = []
        references: AnswerReferences | None = None
        try:
            async for chunk in answer_chain.astream(inputs):
                yield chunk
                text.append(chunk if isinstance(chunk, str) else content_text(chunk.content))
                data = getattr(chunk, "response_metadata", {}).get("references")
                references = AnswerReferences.from_dict(data) if isinstance(data, dict) else references
        finally:
            # Also when the reader stopped the answer or the model failed: what they saw, its citations taken out.
            answer = _without_citations("".join(text), references, len(inputs["documents"]))
            _add_turn(store, conversation, question, answer)

    return run


# A citation as `citation_numbers_style` writes it, in the text of the UI message stream.
_CITATION_NUMBER = re.compile(r"\[([1-9][0-9]{0,8})\]")


def _without_citations(text: str, references: AnswerReferences | None, documents: int) -> str:
    """The UI stream's answer with its citations cut out (the chain's history: its numbers name no document next turn).

    A complete answer's references say where each citation stands. An answer
    cut short (the reader stopped it, the model failed) has none: they come
    with its last chunk. Its citations are then each ``[n]`` that can number
    one of the ``documents`` it was shown, as `citation_numbers_style` writes
    them; such a number the model wrote itself goes too, only from a turn it
    never finished.

    Example:
        >>> _without_citations("Paris is big[1]. It is in list[7]", None, 4)
        'Paris is big. It is in list[7]'
    """
    if references is None:
        return _CITATION_NUMBER.sub(lambda number: "" if int(number[1]) <= documents else number[0], text)
    kept, position = [], 0
    for citation in sorted(references.citations, key=lambda c: c.start):
        if citation.start >= position:
            kept.append(text[position : citation.start])
            position = citation.end
    return "".join([*kept, text[position:]])


def _agent_run(graph: Any) -> _Run:
    from langchain_refs.agents import ThreadDocuments

    async def run(question: str, conversation: str, answer: _Answer) -> AsyncIterator[tuple[str, Any]]:
        config = {"configurable": {"thread_id": conversation}}
        inputs = {"messages": [{"role": "user", "content": question}]}
        references = None
        async for step in stream_steps(graph.astream(inputs, config, stream_mode="messages")):
            if isinstance(step, ToolCallDelta) and step.name:
                yield "searching", {"name": step.name}
            elif isinstance(step, ToolResult):
                query = step.arguments.get("query", "") if isinstance(step.arguments, dict) else step.arguments
                yield "tool", {"name": step.name, "query": str(query), "found": len(step.documents or ())}
            elif isinstance(step, AnswerText):
                yield "text", step.text
            elif isinstance(step, ReferencesFound):
                references = step.references
        state = await graph.aget_state(config)
        messages = state.values.get("messages", [])
        thread = ThreadDocuments.from_messages(messages)
        if references is not None:
            # "Also consulted" lists this turn's retrievals only: the middleware chose them.
            yield "references", (references, list(thread.documents))

    return run


def _agent_ui_run(graph: Any, store: ConversationStore) -> Any:
    """The agent's answer as a cited stream for `ui_message_chunks`, on the thread of the chat's id.

    The turns the client dropped (``earlier``: `turns_the_client_holds`) are removed from the thread first.
    """

    async def run(question: str, conversation: str, earlier: Sequence[str] | None) -> AsyncIterator[Any]:
        config = {"configurable": {"thread_id": conversation}}
        if store.turns(conversation) is None:
            store.save(conversation, [])
        elif earlier is not None:
            await drop_turns(graph, config, earlier)
        inputs = {"messages": [{"role": "user", "content": question}]}
        async for item in graph.astream(inputs, config, stream_mode="messages"):
            yield item

    return run
