"""The chat UI in a real browser: headless Debian Chromium driven by Playwright.

Needs /usr/bin/chromium (Debian's `chromium` package; `.ci/run` installs it). No
browser is ever downloaded. Without it these tests are skipped, and say so.

The screenshot in the README is made by an explicit command, never by a test run:

    python -m tests.integration_tests.test_browser --screenshot
"""

from __future__ import annotations

import importlib.util
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.runnables import Runnable

from tests.unit_tests.fakes import streaming_model

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "chat-ui.png"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _missing() -> str | None:
    if not CHROMIUM.exists():
        return (
            "BROWSER TESTS SKIPPED: /usr/bin/chromium is missing (apt-get install chromium); "
            "the chat UI was NOT checked in a browser"
        )
    if importlib.util.find_spec("playwright") is None:
        return "BROWSER TESTS SKIPPED: the playwright package is not installed (pip install -e '.[test]')"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")

# One hostile answer, streamed in every content shape a chat model may use: a
# string, a list of strings, text blocks, and blocks that are not text.
HOSTILE_CHUNKS: list[Any] = [
    'Numbers <img src=x onerror="window.__xss=1;alert(1)"> are shared',
    ["[1](id", "=1). ", "<img src=y onerror=window.__xss=2>", "<script>window.__xss=3</script>"],
    [{"type": "text", "text": " Tags & <img src=z onerror=window.__xss=4>"}, {"type": "reasoning", "reasoning": "r"}],
    [{"type": "image_url", "image_url": {"url": "javascript:window.__xss=5"}}, {"type": "text", "text": " end[2]"}],
    [{"type": "text", "text": "(id=2)."}, {"type": "tool_use", "name": "t", "input": {}}],
]
# Written by hand: what the reader must see (a footnote shows as its number).
HOSTILE_SHOWN = (
    'Numbers <img src=x onerror="window.__xss=1;alert(1)"> are shared1. <img src=y onerror=window.__xss=2>'
    "<script>window.__xss=3</script> Tags & <img src=z onerror=window.__xss=4> end2."
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serving(documents: list[Document] | None = None, model: Runnable[Any, Any] | None = None) -> Iterator[str]:
    """The chat UI on a free local port, in a thread; yields its URL."""
    import uvicorn

    from langchain_refs.apps.chat_ui import create_app
    from langchain_refs.apps.demo import ExtractiveChatModel

    port = _free_port()
    # A small delay between tokens, so the page really receives a stream.
    app = create_app(model=model or ExtractiveChatModel(delay=0.005), documents=documents)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the chat UI server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def chromium() -> Iterator[Any]:
    """Headless Debian Chromium, driven by Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def new_page(browser: Any, *, bypass_csp: bool = False) -> Iterator[Any]:
    """A page of its own (fresh cookies and storage) that records every dialog (alert, confirm) it is shown."""
    context = browser.new_context(viewport={"width": 900, "height": 640}, bypass_csp=bypass_csp)
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.dialogs = dialogs
    try:
        yield page
    finally:
        context.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # One browser for the module: launching it is most of a test's time.
    with chromium() as launched:
        yield launched


@pytest.fixture
def browser_page(browser: Any) -> Iterator[Any]:
    with new_page(browser) as page:
        yield page


def ask(page: Any, url: str, question: str) -> None:
    from playwright.sync_api import expect

    page.goto(url)
    page.fill("#question", question)
    page.click("button[type=submit]")
    # A locator wait, not wait_for_function: the page's CSP forbids the eval that one needs.
    expect(page.locator("#status")).to_have_text("done", timeout=30_000)


def test_chat_ui_streams_cited_answer(browser_page: Any) -> None:
    """A typed question streams an answer whose footnotes link to the listed sources."""
    page = browser_page
    with serving() as url:
        ask(page, url, "How are sources numbered?")
        answer = page.inner_text("#answer")
        assert answer.startswith("Chunks that come from the same source share one citation number")
        footnotes = page.eval_on_selector_all("#answer sup.citation a", "els => els.map(e => e.getAttribute('href'))")
        entries = page.eval_on_selector_all("#sources li", "els => els.map(e => e.id)")
        links = page.eval_on_selector_all("#sources li a", "els => els.map(e => e.getAttribute('href'))")
        assert footnotes
        assert {href[1:] for href in footnotes} <= set(entries)
        assert len(entries) == len(links) == 3
        assert links[0] == "https://langchain-refs.dev/docs/numbering"
        assert page.inner_text("#sources li") == "Renumbering by source"
        # Each footnote's tooltip is its source's title, set from the data.
        assert page.get_attribute("#answer sup.citation a", "title") == "Renumbering by source"
        # A footnote click scrolls to its entry.
        page.click("#answer sup.citation a")
        assert page.evaluate("location.hash") == footnotes[0]


def test_chat_ui_is_safe_with_hostile_metadata(browser_page: Any) -> None:
    """Hostile titles, text and URLs neither run script nor become javascript: links."""
    hostile = [
        Document(
            "The answer is <img src=x onerror=alert(1)> here.",
            metadata={"source": "javascript:alert(2)", "title": '<img src=y onerror="alert(3)">'},
        ),
        Document("The answer is also here.", metadata={"source": "https://ok.org/a", "title": "Fine & dandy"}),
    ]
    page = browser_page
    with serving(hostile) as url:
        ask(page, url, "What is the answer?")
        assert page.query_selector_all("img") == []
        assert page.query_selector_all("a[href^='javascript']") == []
        assert "<img src=x onerror=alert(1)>" in page.inner_text("#answer")
        assert '<img src=y onerror="alert(3)">' in page.inner_text("#sources")
        assert page.dialogs == []


@pytest.mark.parametrize("bypass_csp", [False, True], ids=["with-csp", "without-csp"])
def test_hostile_answer_in_every_content_shape_runs_no_script(browser: Any, bypass_csp: bool) -> None:
    """A hostile answer as a string, strings or blocks shows literally and runs nothing, even without the CSP."""
    with new_page(browser, bypass_csp=bypass_csp) as page, serving(model=streaming_model(HOSTILE_CHUNKS)) as url:
        ask(page, url, "How are sources numbered?")
        page.wait_for_timeout(200)  # give an injected onerror or onload the time to fire
        assert page.evaluate("window.__xss") is None
        assert page.dialogs == []
        assert page.inner_text("#answer") == HOSTILE_SHOWN
        assert "[object Object]" not in page.inner_text("body")
        # The answer holds text and footnotes only: no element the model wrote.
        tags = page.eval_on_selector_all("#answer *", "els => els.map(e => e.tagName.toLowerCase())")
        assert tags == ["sup", "a", "sup", "a"]


def make_screenshot() -> None:
    """Write docs/chat-ui.png: the demo answering a question, as the README shows it."""
    missing = _missing()
    if missing is not None:
        raise SystemExit(missing.replace("BROWSER TESTS SKIPPED", "NO SCREENSHOT"))
    with chromium() as browser, new_page(browser) as page, serving() as url:
        ask(page, url, "How are sources numbered?")
        page.click("#answer sup.citation a")
        SCREENSHOT.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=True)
    print(f"wrote {SCREENSHOT}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--screenshot"]:
        raise SystemExit("usage: python -m tests.integration_tests.test_browser --screenshot")
    make_screenshot()
