"""A small chat page that streams cited answers (the ``serve`` extra: Starlette).

``create_app()`` serves one page and ``GET /api/ask?q=...``, a Server-Sent
Events stream: ``token`` events carry HTML fragments of the answer (the model's
text HTML-escaped, each citation a whole ``<sup>`` footnote link), then one
``references`` event carries the structured references, from which the page
builds the list of sources with DOM calls — it never parses rendered text.

Example:
    >>> from starlette.testclient import TestClient
    >>> client = TestClient(create_app())
    >>> client.get("/").status_code
    200
"""

from __future__ import annotations

import html
import json
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.messages import AIMessageChunk
from langchain_core.runnables import Runnable, RunnableGenerator
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from typing_extensions import Self, override

from langchain_refs.apps.demo import ExtractiveChatModel, demo_context, demo_prompt
from langchain_refs.streaming import AnswerReferences, HTMLReferenceStyle, manage_references, safe_url

__all__ = ["create_app"]

_PAGE = (Path(__file__).parent / "chat_ui.html").read_text(encoding="utf-8")


class _InlineHTMLStyle(HTMLReferenceStyle):
    """HTML footnote links in the text; the page builds the list from data."""

    request_id = ""

    @override
    def for_answer(self, answer_id: str) -> Self:
        return super().for_answer(self.request_id)

    @override
    def format_all_references(self, refs: Any) -> str:
        return ""


def _escape_chunk(chunk: Any) -> Any:
    # The model's own words are text, not markup: escape them before citations
    # are rendered, so a hostile answer cannot inject HTML. Markers contain no
    # character that escaping changes.
    if isinstance(chunk, AIMessageChunk) and isinstance(chunk.content, str):
        return chunk.model_copy(update={"content": html.escape(chunk.content, quote=False)})
    return chunk


def _escape_text(chunks: Iterator[Any]) -> Iterator[Any]:
    for chunk in chunks:
        yield _escape_chunk(chunk)


async def _aescape_text(chunks: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for chunk in chunks:
        yield _escape_chunk(chunk)


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
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def create_app(
    *, model: Runnable[Any, Any] | None = None, documents: Sequence[Document] | None = None, k: int = 4
) -> Starlette:
    """The chat web app: the offline demo pipeline unless a model or documents are given.

    Example:
        >>> from starlette.testclient import TestClient
        >>> body = TestClient(create_app()).get("/api/ask", params={"q": "Which URLs become links?"}).text
        >>> "event: references" in body and body.rstrip().endswith("event: done\\ndata: {}")
        True
    """
    chat_model = model or ExtractiveChatModel(delay=0.0)
    escape = RunnableGenerator(_escape_text, _aescape_text)

    async def page(_: Request) -> Response:
        return HTMLResponse(_PAGE)

    async def ask(request: Request) -> Response:
        question = request.query_params.get("q", "").strip()
        if not question:
            return JSONResponse({"error": "ask a question with ?q=..."}, status_code=400)
        style = _InlineHTMLStyle()
        style.request_id = uuid.uuid4().hex[:8]
        chain = demo_context(documents, k=k) | manage_references(demo_prompt() | chat_model | escape, style=style)

        async def events() -> AsyncIterator[str]:
            yield _event("start", {"answer_id": style.request_id})
            references = AnswerReferences()
            async for chunk in chain.astream({"question": question}):
                if chunk.content:
                    yield _event("token", chunk.content)
                if "references" in chunk.response_metadata:
                    references = AnswerReferences.from_dict(chunk.response_metadata["references"])
            yield _event("references", {"answer_id": style.request_id, "sources": _sources(references)})
            yield _event("done", {})

        return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    return Starlette(routes=[Route("/", page), Route("/api/ask", ask)])
