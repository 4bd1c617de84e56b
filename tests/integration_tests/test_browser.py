"""The chat UI in a real browser: headless Debian Chromium driven by Playwright.

Needs /usr/bin/chromium (Debian's `chromium` package; `.ci/run` installs it). No
browser is ever downloaded. Without it these tests are skipped, and say so.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document

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

if not CHROMIUM.exists():
    pytest.skip(
        "BROWSER TESTS SKIPPED: /usr/bin/chromium is missing (apt-get install chromium); "
        "the chat UI was NOT checked in a browser",
        allow_module_level=True,
    )
playwright_sync = pytest.importorskip(
    "playwright.sync_api", reason="BROWSER TESTS SKIPPED: the playwright package is not installed"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _serve(documents: list[Document] | None) -> Iterator[str]:
    import uvicorn

    from langchain_refs.apps.chat_ui import create_app
    from langchain_refs.apps.demo import ExtractiveChatModel

    port = _free_port()
    # A small delay between tokens, so the page really receives a stream.
    app = create_app(model=ExtractiveChatModel(delay=0.005), documents=documents)
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


@pytest.fixture
def browser_page() -> Iterator[Any]:
    with playwright_sync.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        page = browser.new_page(viewport={"width": 900, "height": 640})
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.dialogs = dialogs  # type: ignore[attr-defined]
        try:
            yield page
        finally:
            browser.close()


def ask(page: Any, url: str, question: str) -> None:
    page.goto(url)
    page.fill("#question", question)
    page.click("button[type=submit]")
    page.wait_for_function("document.getElementById('status').textContent === 'done'", timeout=30_000)


def test_chat_ui_streams_cited_answer(browser_page: Any) -> None:
    """A typed question streams an answer whose footnotes link to the listed sources."""
    page = browser_page
    for url in _serve(None):
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
        # A footnote click scrolls to its entry.
        page.click("#answer sup.citation a")
        assert page.evaluate("location.hash") == footnotes[0]
        SCREENSHOT.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=True)


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
    for url in _serve(hostile):
        ask(page, url, "What is the answer?")
        assert page.query_selector_all("img") == []
        assert page.query_selector_all("a[href^='javascript']") == []
        assert "<img src=x onerror=alert(1)>" in page.inner_text("#answer")
        assert '<img src=y onerror="alert(3)">' in page.inner_text("#sources")
        assert page.dialogs == []
