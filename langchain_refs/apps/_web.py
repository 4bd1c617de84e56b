"""What the app's two pages (chat and checking) share: one policy, one route for their files, one page answer.

Both pages are served with the same Content-Security-Policy: scripts only
with the page's fresh nonce (each page loads one module script, which
imports the shared DOM helpers, ``static/dom.js``, under the same nonce),
styles and images only from the app, no plugins, no ``<base>``, forms
posted only to the app, and no framing. Nothing differs between them:
neither page has an inline style or script, both fetch only their own
origin's API.

Their APIs read a request's JSON body one way (`read_json_body`): sent as
JSON, read no further than a limit, UTF-8, parsed, or one line saying why not.

Their files (scripts, stylesheets, the icon) come from one route,
``/static/{name}``, which serves the files of ``static/`` by name only: no
path from the request reaches the file system, and each file carries its
type, ``nosniff`` and ``no-cache``.

Example:
    >>> content_security_policy("abc").split("; ")[:2]
    ["default-src 'self'", "script-src 'nonce-abc'"]
    >>> sorted(STATIC_FILES)[:3]
    ['app.css', 'chat.css', 'chat.js']
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from langchain_refs.apps._errors import json_int, utf8_problem, utf8_text

__all__ = [
    "NOSNIFF",
    "STATIC",
    "STATIC_FILES",
    "BodyError",
    "check_size",
    "content_security_policy",
    "page_response",
    "read_json_body",
    "static_route",
]

STATIC: Final = Path(__file__).parent / "static"
"""The pages' files: stylesheets (``app.css`` is both pages' base), scripts and the icon."""

_TYPES: Final = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
STATIC_FILES: Final = {path.name: (_TYPES[path.suffix], path) for path in STATIC.iterdir() if path.suffix in _TYPES}
"""Each file ``/static/{name}`` serves: its type and its path (read once per request: edits show on reload)."""

NOSNIFF: Final = {"X-Content-Type-Options": "nosniff"}


def content_security_policy(nonce: str) -> str:
    """The Content-Security-Policy of both pages, for one page load's ``nonce``.

    Example:
        >>> "style-src 'self';" in content_security_policy("abc")
        True
    """
    return (
        f"default-src 'self'; script-src 'nonce-{nonce}'; style-src 'self'; img-src 'self'; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )


def page_response(page: str, **values: str) -> HTMLResponse:
    """``page`` with a fresh nonce and each ``{{name}}`` filled in, under the pages' policy.

    The values go in as they are: each is a constant of the app or markup it
    escaped itself.

    Example:
        >>> answer = page_response('<body data-mode="{{mode}}"><script nonce="{{nonce}}"></script>', mode="chain")
        >>> nonce = answer.headers["content-security-policy"].split("'nonce-")[1].split("'")[0]
        >>> answer.body.decode() == f'<body data-mode="chain"><script nonce="{nonce}"></script>'
        True
    """
    nonce = secrets.token_urlsafe(16)
    text = page.replace("{{nonce}}", nonce)
    for name, value in values.items():
        text = text.replace("{{" + name + "}}", value)
    return HTMLResponse(text, headers={"Content-Security-Policy": content_security_policy(nonce), **NOSNIFF})


async def _static(request: Request) -> Response:
    found = STATIC_FILES.get(request.path_params["name"])
    if found is None:
        return Response("not found", status_code=404, media_type="text/plain")
    kind, path = found
    return Response(path.read_bytes(), media_type=kind, headers={"Cache-Control": "no-cache", **NOSNIFF})


def static_route() -> Route:
    """The one route of the pages' files, ``GET /static/{name}``.

    Example:
        >>> from starlette.applications import Starlette
        >>> from starlette.testclient import TestClient
        >>> client = TestClient(Starlette(routes=[static_route()]))
        >>> client.get("/static/app.css").status_code, client.get("/static/_web.py").status_code
        (200, 404)
    """
    return Route("/static/{name}", _static, methods=["GET"])


class BodyError(Exception):
    """A request body an API refuses: the HTTP status and the one line that says why.

    Example:
        >>> error = BodyError("the body is not UTF-8 (byte 0xe9 at offset 3)")
        >>> error.status, str(error)
        (400, 'the body is not UTF-8 (byte 0xe9 at offset 3)')
    """

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _read_json(text: str) -> Any:
    """JSON text as `json.loads` reads it, an integer too long refused in the sender's words (`json_int`)."""
    return json.loads(text, parse_int=json_int)


async def read_json_body(
    request: Request, limit: int, read_json: Callable[[str], Any] = _read_json, *, refuse_lone_surrogates: bool = True
) -> Any:
    """The request's body read as JSON by ``read_json``, or a `BodyError` saying why not.

    415 unless it is sent as JSON (a page of another site can send text and
    forms without asking first); 413 as soon as it is over ``limit`` bytes (a
    large upload is never held in memory); 400 when it is not UTF-8 or not
    JSON that Python can read (nested too deep, an integer too long), when it
    holds a lone surrogate (``"\\ud800"``: valid JSON, but no answer could
    write it back), or when the client disconnected before sending all of it.

    ``refuse_lone_surrogates=False`` takes a body that carries back what the
    server sent, which may hold one: ``useChat`` sends the whole conversation
    with each question, the escape ``\\udce9`` of a file name that is not
    UTF-8 (`sse_data`) in it. Its reader refuses one where it must write it
    (`question_of`: the question, the chat id).

    Example:
        >>> import asyncio
        >>> from starlette.requests import Request
        >>> async def receive():
        ...     return {"type": "http.request", "body": b'{"question": 1', "more_body": False}
        >>> scope = {"type": "http", "method": "POST", "headers": [(b"content-type", b"application/json")]}
        >>> try:
        ...     asyncio.run(read_json_body(Request(scope, receive), 100))
        ... except BodyError as error:
        ...     print(error.status, error)
        400 the body is not valid JSON (Expecting ',' delimiter at line 1, column 15)
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        msg = "send the body as JSON, with Content-Type: application/json"
        raise BodyError(msg, 415)
    declared = request.headers.get("content-length", "")
    if declared.isdigit():
        check_size("the body", int(declared), limit, "bytes")
    data = bytearray()
    try:
        async for chunk in request.stream():  # stops reading as soon as the body is too long
            data += chunk
            check_size("the body", len(data), limit, "bytes")
    except ClientDisconnect:  # the client left mid-upload: an answer nobody reads, not a traceback in the terminal
        msg = "the client left before sending the whole body"
        raise BodyError(msg) from None
    try:
        text = utf8_text(bytes(data))
    except ValueError as error:
        msg = f"the body is not UTF-8 ({error})"
        raise BodyError(msg) from None
    try:
        body = read_json(text)
    except json.JSONDecodeError as error:
        msg = f"the body is not valid JSON ({error.msg} at line {error.lineno}, column {error.colno})"
        raise BodyError(msg) from None
    except RecursionError:
        msg = "cannot read the body's JSON: nested too deeply to read"
        raise BodyError(msg) from None
    except ValueError as error:  # an integer too long (`json_int`'s message, or the reader's)
        msg = f"cannot read the body's JSON: {str(error).splitlines()[0]}"
        raise BodyError(msg) from None
    problem = utf8_problem(json.dumps(body, ensure_ascii=False)) if refuse_lone_surrogates else None
    if problem is not None:  # a "\ud800" escape, anywhere: nothing downstream could write it (nor stream it)
        msg = f"the body {problem}"
        raise BodyError(msg)
    return body


def check_size(what: str, size: int, limit: int, unit: str) -> None:
    """A 413 `BodyError` naming ``what`` and both sizes when ``size`` is over ``limit``.

    Example:
        >>> check_size("'claims'", 3, 5, "claims")
        >>> check_size("'claims'", 7, 5, "claims")
        Traceback (most recent call last):
        ...
        langchain_refs.apps._web.BodyError: 'claims' is 7 claims; the limit is 5
    """
    if size > limit:
        msg = f"{what} is {size:,} {unit}; the limit is {limit:,}"
        raise BodyError(msg, 413)
