"""Which URLs may become links: `safe_url`, the one rule every style, annotation and page applies.

A URL becomes a link only when, read the way a Markdown renderer and then a
browser read it, it has no scheme (a relative URL) or the scheme http, https
or mailto. Here, below the styles and the references, so that both use it.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
import urllib.parse
from typing import Any, Final

__all__ = ["URL_SCHEME", "safe_url"]

_SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
URL_SCHEME: Final = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]*:")
"""A URL's scheme and its colon, at the start."""
_PATH_START = re.compile(r"[/?#]")
# What may hide inside a scheme: browsers drop tab and newline anywhere and
# strip leading C0 controls and spaces; to be safe, any whitespace, control
# (C0, DEL, C1) or invisible format character (soft hyphen, zero-width and
# bidi marks, BOM) is ignored when judging a URL.
_IGNORED = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]+")
# What a browser strips from both ends of a URL: C0 controls and space.
_URL_EDGES = "".join(map(chr, range(0x21)))
# A Markdown renderer decodes character references once and a browser may
# decode once more; a few rounds also catch double encodings.
_DECODE_ROUNDS = 3
# Judging a URL costs a few passes over it: remember recent short ones (a
# source is cited many times per answer).
_CACHED_URL_LENGTH = 2048


@functools.lru_cache(maxsize=1024)
def _cached_link_allowed(url: str) -> bool:
    return _link_allowed(url)


def _link_allowed(url: str) -> bool:
    """Whether ``url``, as a renderer and a browser read it, has no scheme or a safe one."""
    probe = url
    for _ in range(_DECODE_ROUNDS):
        # Character references (named, decimal, hex, with or without ";"),
        # then percent-encoding: whatever a reader might decode.
        decoded = urllib.parse.unquote(html.unescape(probe))
        if decoded == probe:
            break
        probe = decoded
    # Compatibility forms (fullwidth letters, colons) read as plain ones.
    probe = _IGNORED.sub("", unicodedata.normalize("NFKC", probe))
    if not probe:
        return False
    path_start = _PATH_START.search(probe)
    head = probe if path_start is None else probe[: path_start.start()]
    if ":" not in head:
        return True  # relative: no scheme at all
    scheme = URL_SCHEME.match(head)
    return scheme is not None and scheme[0][:-1].lower() in _SAFE_SCHEMES


def safe_url(value: Any) -> str | None:
    """``value`` if it may become a link: an http, https, mailto or relative URL.

    The decision is made on the URL as a Markdown renderer and a browser read
    it: HTML character references (``&#58;``, ``&colon;``, ``&Tab;``, with or
    without ``;``) and percent-encoding are decoded, whitespace and control
    characters anywhere are ignored, and the scheme's case does not matter.
    A relative URL is one with no ``:`` before its first ``/``, ``?`` or
    ``#``. Anything else (``javascript:``, ``data:``, ``vbscript:``,
    ``file:``, an undecidable URL) gives None: no link, the text is shown.
    The URL returned is the one given, with the C0 controls and spaces a
    browser strips from its ends removed.

    Example:
        >>> safe_url("https://a.org/x"), safe_url("b.pdf"), safe_url("javascript&#58;alert(1)")
        ('https://a.org/x', 'b.pdf', None)
    """
    if value is None:
        return None
    url = str(value).strip(_URL_EDGES)
    if not url:
        return None
    allowed = _cached_link_allowed(url) if len(url) <= _CACHED_URL_LENGTH else _link_allowed(url)
    return url if allowed else None
