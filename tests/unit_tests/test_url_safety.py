"""No script links: hostile sources through the Markdown and HTML styles, read as a browser reads them.

The oracle is this file's own small reading of a URL (the WHATWG URL parser's
first steps), not `safe_url`: Markdown output is rendered by a real CommonMark
renderer (markdown-it-py, with its own link filter switched off, as many
renderers ship), HTML output is parsed by `html.parser`, and every ``href``
and ``src`` is checked.
"""

from __future__ import annotations

import html.parser
import re
import uuid

import pytest
from langchain_core.documents import Document
from markdown_it import MarkdownIt

from langchain_refs import HTMLReferenceStyle, MarkdownReferenceStyle, ReferenceStyle, manage_references, safe_url
from tests.unit_tests.fakes import str_chunks

# Sources that must never become a link target.
HOSTILE_URLS = [
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    " javascript:alert(1)",
    "\x01javascript:alert(1)",
    "\x00javascript:alert(1)",
    "\x1f\x20javascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "java\rscript:alert(1)",
    "javascript&#58;alert(1)",
    "javascript&#058;alert(1)",
    "javascript&#58alert(1)",
    "javascript&#x3A;alert(1)",
    "javascript&#X3a;alert(1)",
    "javascript&#x3Aprompt(1)",
    "javascript&colon;alert(1)",
    "&#x6A;avascript:alert(1)",
    "&#106;avascript:alert(1)",
    "&#0000106avascript:alert(1)",
    "java&Tab;script:alert(1)",
    "java&NewLine;script:alert(1)",
    "jav&#x09;ascript:alert(1)",
    "jav&#10;ascript:alert(1)",
    "&amp;#106;avascript:alert(1)",
    "javascript%3Aalert(1)",
    "%6Aavascript:alert(1)",
    "javascript\\:alert(1)",
    "java&#92;script:alert(1)",
    "\u2028javascript:alert(1)",
    "\u00a0javascript:alert(1)",
    "java\u200bscript:alert(1)",
    "\ufeffjavascript:alert(1)",
    "\uff4a\uff41\uff56\uff41\uff53\uff43\uff52\uff49\uff50\uff54\uff1aalert(1)",  # fullwidth
    "javascript:alert(1)//https://ok.org/",
    "vbscript:msgbox(1)",
    "livescript:alert(1)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "data&colon;text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "<javascript:alert(1)>",
    "x)](javascript:alert(1)",
]

# Relative sources that try to break out of the link or the attribute: they
# may be links, but must stay inside them.
BREAKOUTS = [
    'x" onmouseover="alert(1)',
    "x'><script>alert(1)</script>",
    "script",
    "img src=x onerror=alert(1)",
    "a)<img src=x onerror=alert(1)>",
    "b>",
]

# Sources that must stay links.
SAFE_URLS = [
    "https://ok.org/a?b=1&c=2",
    "http://ok.org/x",
    "HTTPS://OK.ORG/",
    "mailto:someone@ok.org",
    "docs/page.html#part",
    "/abs/path.pdf",
    "#fragment",
    "?q=1",
    "//ok.org/protocol-relative",
    "page.html?a=javascript:alert(1)",
    "https://ok.org/a&#58;b",
]

ALLOWED_SCHEMES = frozenset({"http", "https", "mailto"})
ALLOWED_TAGS = frozenset({"p", "ul", "ol", "li", "a", "sup", "strong", "em", "span", "code"})
_C0_AND_SPACE = "".join(map(chr, range(0x21)))


def browser_scheme(href: str) -> str | None:
    """The scheme a browser reads in an href (decoded attribute), or None for a relative URL.

    As the WHATWG URL parser: strip leading and trailing C0 controls and
    spaces, remove every tab and newline, then an ASCII letter followed by
    letters, digits, ``+``, ``-`` or ``.`` up to a ``:`` is the scheme,
    compared lower-case.
    """
    url = re.sub(r"[\t\n\r]", "", href.strip(_C0_AND_SPACE))
    match = re.match(r"([A-Za-z][A-Za-z0-9+\-.]*):", url)
    return None if match is None else match[1].lower()


class _Links(html.parser.HTMLParser):
    """Every tag, attribute and link target of an HTML fragment, decoded as a browser decodes them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[str] = []
        self.targets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for key, value in attrs:
            self.attributes.append(key)
            if key in ("href", "src") and value is not None:
                self.targets.append(value)


def links(fragment: str) -> _Links:
    parser = _Links()
    parser.feed(fragment)
    parser.close()
    return parser


def permissive_markdown() -> MarkdownIt:
    """A CommonMark renderer that links whatever the Markdown says (no scheme filter of its own)."""
    renderer = MarkdownIt("commonmark")
    renderer.validateLink = lambda url: True  # type: ignore[method-assign]
    return renderer


def render(style: ReferenceStyle, sources: list[str], titled: bool) -> str:
    documents = [
        Document(f"doc {i}", metadata={"source": s, "title": f"T{i}"} if titled else {"source": s})
        for i, s in enumerate(sources, start=1)
    ]
    answer = " ".join(f"Claim {i}[{i}](id={i})." for i in range(1, len(sources) + 1))
    chain = manage_references(str_chunks([answer]), style=style)
    result: str = chain.invoke({"documents": documents}, {"run_id": uuid.UUID(int=7)})
    return result


def assert_only_safe_links(found: _Links) -> None:
    for target in found.targets:
        assert browser_scheme(target) in (None, *ALLOWED_SCHEMES), target
    assert set(found.tags) <= ALLOWED_TAGS, found.tags
    assert not [a for a in found.attributes if a.startswith("on")]


def test_oracle_reads_urls_as_a_browser() -> None:
    """The test's own URL reading finds hidden schemes and leaves relative URLs alone."""
    assert browser_scheme("\x01 Java\tScript:x") == "javascript"
    assert browser_scheme("java\x01script:x") is None
    assert browser_scheme("docs/a:b") is None
    assert browser_scheme("mailto:x@y") == "mailto"


@pytest.mark.parametrize("titled", [True, False])
def test_markdown_style_makes_no_script_link(titled: bool) -> None:
    """Rendered by CommonMark, the Markdown style's output links no hostile source."""
    found = links(permissive_markdown().render(render(MarkdownReferenceStyle(), HOSTILE_URLS, titled)))
    assert_only_safe_links(found)
    assert found.targets == []


@pytest.mark.parametrize("titled", [True, False])
def test_html_style_makes_no_script_link(titled: bool) -> None:
    """Parsed as HTML, the HTML style's output links no hostile source (only its own #ref- anchors)."""
    found = links(render(HTMLReferenceStyle(), HOSTILE_URLS, titled))
    assert_only_safe_links(found)
    assert all(t.startswith("#ref-") for t in found.targets)


@pytest.mark.parametrize("titled", [True, False])
def test_breakouts_stay_inside_their_links(titled: bool) -> None:
    """Sources with quotes, brackets or tag names add no tag or attribute in Markdown or HTML output."""
    assert_only_safe_links(links(permissive_markdown().render(render(MarkdownReferenceStyle(), BREAKOUTS, titled))))
    assert_only_safe_links(links(render(HTMLReferenceStyle(), BREAKOUTS, titled)))


@pytest.mark.parametrize("titled", [True, False])
def test_markdown_style_still_links_safe_sources(titled: bool) -> None:
    """http, https, mailto and relative sources become links in the rendered Markdown."""
    found = links(permissive_markdown().render(render(MarkdownReferenceStyle(), SAFE_URLS, titled)))
    assert_only_safe_links(found)
    # Each source is linked from its citation and from the list.
    assert len(found.targets) == 2 * len(SAFE_URLS)
    assert {browser_scheme(t) for t in found.targets} == {None, "http", "https", "mailto"}


def test_html_style_still_links_safe_sources() -> None:
    """http, https, mailto and relative sources become links in the HTML list."""
    found = links(render(HTMLReferenceStyle(), SAFE_URLS, titled=True))
    assert_only_safe_links(found)
    assert [t for t in found.targets if not t.startswith("#ref-")] == SAFE_URLS


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_safe_url_refuses_hostile(url: str) -> None:
    """safe_url gives no link for a source a renderer or browser could read as a script."""
    assert safe_url(url) is None


@pytest.mark.parametrize("url", SAFE_URLS)
def test_safe_url_keeps_safe(url: str) -> None:
    """safe_url keeps http, https, mailto and relative URLs as given."""
    assert safe_url(url) == url


def test_standard_citation_annotations_carry_no_script_url() -> None:
    """The ``Citation`` annotations a UI links (``<a href=url>``): a hostile source gives no url, a safe one its own."""
    from langchain_core.messages import AIMessageChunk

    from tests.unit_tests.fakes import message_chunks

    sources = [*HOSTILE_URLS, *SAFE_URLS]
    documents = [Document(f"doc {i}", metadata={"source": s}) for i, s in enumerate(sources, start=1)]
    answer = " ".join(f"Claim {i}[{i}](id={i})." for i in range(1, len(sources) + 1))
    chain = manage_references(message_chunks([answer]), output_version="v1")
    message = None
    for chunk in chain.stream({"documents": documents}):
        message = chunk if message is None else message + chunk
    assert isinstance(message, AIMessageChunk)
    annotations = [
        a for block in message.content_blocks if block["type"] == "text" for a in block.get("annotations", [])
    ]
    assert len(annotations) == len(sources)
    for annotation in annotations[: len(HOSTILE_URLS)]:
        assert "url" not in annotation, annotation
    assert [a["url"] for a in annotations[len(HOSTILE_URLS) :]] == SAFE_URLS
    assert all(browser_scheme(a["url"]) in (None, *ALLOWED_SCHEMES) for a in annotations if "url" in a)
