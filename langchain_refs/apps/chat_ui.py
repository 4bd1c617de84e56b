"""A small chat page that streams cited answers (the ``serve`` extra: Starlette).

``create_app()`` serves one page and ``GET /api/ask?q=...``, a Server-Sent
Events stream of data, never of markup:

- ``start``: ``{"answer_id": ...}``;
- ``text``: a JSON string, the model's own words as plain text (``<``, ``>``
  and ``&`` written as JSON escapes, so no event holds a markup character);
- ``citation``: ``{"number": n}``, one footnote, where it stands in the text;
- ``references``: the cited sources (number, title, URL if safe, document positions);
- ``done``: ``{}``.

Whatever shape the model streams its content in (a string, a list of
strings, a list of ``{"type": "text", "text": ...}`` blocks), the server turns
it into text first; other blocks (reasoning, images, tool calls) are left
out. The page adds text with text nodes and builds footnotes and the list of
sources with DOM calls: no text from the model or a document is ever parsed
as HTML, so a hostile answer or title shows literally and runs nothing. The
page also carries a Content-Security-Policy that lets only its own script run.

Example:
    >>> from starlette.testclient import TestClient
    >>> client = TestClient(create_app())
    >>> client.get("/").status_code
    200
"""

from __future__ import annotations

import json
import re
import secrets
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.documents.base import BaseMedia
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableGenerator
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from typing_extensions import override

from langchain_refs.apps._content import content_text
from langchain_refs.apps.demo import ExtractiveChatModel, demo_context, demo_prompt
from langchain_refs.streaming import AnswerReferences, ReferenceStyle, manage_references, safe_url

__all__ = ["content_text", "create_app"]

_PAGE = (Path(__file__).parent / "chat_ui.html").read_text(encoding="utf-8")

# Brackets each citation number in the styled stream, so the server can cut
# the stream into text and citation events. It is taken out of the model's
# own words first, so a model cannot fake a citation.
_MARK = "\x00"
_CITATION = re.compile(f"{_MARK}(\\d+){_MARK}")


class _MarkedCitations(ReferenceStyle):
    """Each citation as its number between two marks; no list (the page builds it from data)."""

    @override
    def format_reference(self, ref: int, media: BaseMedia) -> str:
        return f"{_MARK}{ref}{_MARK}"

    @override
    def format_all_references(self, refs: list[tuple[int, BaseMedia]]) -> str:
        return ""


def _as_text(chunk: Any) -> Any:
    # Before citations are rendered: every content shape becomes plain text,
    # without the mark that brackets citations.
    if isinstance(chunk, BaseMessage):
        return chunk.model_copy(update={"content": content_text(chunk.content).replace(_MARK, "\ufffd")})
    if isinstance(chunk, str):
        return chunk.replace(_MARK, "\ufffd")
    return chunk


def _texts(chunks: Iterator[Any]) -> Iterator[Any]:
    for chunk in chunks:
        yield _as_text(chunk)


async def _atexts(chunks: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for chunk in chunks:
        yield _as_text(chunk)


class _Pieces:
    """Cuts the styled stream into text and citation events (a citation is never cut in two, but be safe)."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str) -> Iterator[str]:
        text = self._held + text
        if text.count(_MARK) % 2:  # a citation begun, not ended: wait for its end
            cut = text.rindex(_MARK)
            text, self._held = text[:cut], text[cut:]
        else:
            self._held = ""
        for index, piece in enumerate(_CITATION.split(text)):
            if index % 2:
                yield _event("citation", {"number": int(piece)})
            elif piece:
                yield _event("text", piece)

    def close(self) -> Iterator[str]:
        if self._held:  # cannot happen with whole citations; shown as text rather than lost
            yield _event("text", self._held.replace(_MARK, "\ufffd"))
            self._held = ""


def _sources(references: AnswerReferences) -> list[dict[str, Any]]:
    return [
        {
            "number": r.number,
            "title": r.title or r.source or "untitled document",
            "url": safe_url(r.source),
            "documents": list(r.document_positions),
        }
        for r in references.references
    ]


def _event(name: str, data: Any) -> str:
    # json.dumps escapes every line break, so data stays on its one "data:" line;
    # < > & are escaped too (they occur only inside JSON strings, where \uXXXX
    # means the same text), so no event carries a character of markup even to a
    # client that forgets to parse it as JSON.
    payload = json.dumps(data, ensure_ascii=False)
    payload = payload.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    return f"event: {name}\ndata: {payload}\n\n"


def create_app(
    *, model: Runnable[Any, Any] | None = None, documents: Sequence[Document] | None = None, k: int = 4
) -> Starlette:
    """The chat web app: the offline demo pipeline unless a model or documents are given.

    Example:
        >>> from starlette.testclient import TestClient
        >>> body = TestClient(create_app()).get("/api/ask", params={"q": "Which URLs become links?"}).text
        >>> "event: citation" in body and body.rstrip().endswith("event: done\\ndata: {}")
        True
    """
    chat_model = model or ExtractiveChatModel(delay=0.0)
    as_text = RunnableGenerator(_texts, _atexts)

    async def page(_: Request) -> Response:
        nonce = secrets.token_urlsafe(16)
        policy = (
            f"default-src 'self'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
            "img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'"
        )
        return HTMLResponse(_PAGE.replace("{{nonce}}", nonce), headers={"Content-Security-Policy": policy})

    async def ask(request: Request) -> Response:
        question = request.query_params.get("q", "").strip()
        if not question:
            return JSONResponse({"error": "ask a question with ?q=..."}, status_code=400)
        answer_id = uuid.uuid4().hex[:8]
        answer = manage_references(demo_prompt() | chat_model | as_text, style=_MarkedCitations())
        chain = demo_context(documents, k=k) | answer

        async def events() -> AsyncIterator[str]:
            yield _event("start", {"answer_id": answer_id})
            references = AnswerReferences()
            pieces = _Pieces()
            async for chunk in chain.astream({"question": question}):
                # A chat model gives message chunks; a chain ending in a parser gives str.
                text = chunk if isinstance(chunk, str) else content_text(getattr(chunk, "content", ""))
                for event in pieces.feed(text):
                    yield event
                metadata = getattr(chunk, "response_metadata", None) or {}
                if "references" in metadata:
                    references = AnswerReferences.from_dict(metadata["references"])
            for event in pieces.close():
                yield event
            yield _event("references", {"answer_id": answer_id, "sources": _sources(references)})
            yield _event("done", {})

        return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    return Starlette(routes=[Route("/", page), Route("/api/ask", ask)])
