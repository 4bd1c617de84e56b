"""What the app's two pages (chat and checking) share: one policy, one route for their files, one page answer.

Both pages are served with the same Content-Security-Policy: scripts only
with the page's fresh nonce (each page loads one module script, which
imports the shared DOM helpers, ``static/dom.js``, under the same nonce),
styles and images only from the app, no plugins, no ``<base>``, forms
posted only to the app, and no framing. Nothing differs between them:
neither page has an inline style or script, both fetch only their own
origin's API.

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

import secrets
from pathlib import Path
from typing import Final

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

__all__ = ["NOSNIFF", "STATIC", "STATIC_FILES", "content_security_policy", "page_response", "static_route"]

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
