"""Shared Playwright helpers for the browser tests: Debian Chromium, a page that records dialogs, a served app.

Needs /usr/bin/chromium (Debian's `chromium` package; `.ci/run` installs it). No
browser is ever downloaded. Without it (or without the playwright package) a
test module that sets ``pytestmark = skip_without_browser`` is skipped and says
so loudly.

Use from a test module:

    from tests.integration_tests import browser_fixtures
    from tests.integration_tests.browser_fixtures import new_page, serving, skip_without_browser

    pytestmark = skip_without_browser
    browser = browser_fixtures.browser  # the fixture, bound in the module (an import would trip ruff's F811)

    def test_x(browser):
        with serving(create_app()) as url, new_page(browser) as page:
            page.goto(url)
            ...
            assert page.dialogs == []

Binding ``browser`` in a module makes it that module's fixture: one
Chromium per module (launching it is most of a browser test's time). The
accessibility check needs a page made with ``bypass_csp=True``: the CSP
(rightly) blocks the script Playwright injects.
"""

from __future__ import annotations

import importlib.util
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "AXE",
    "CHROMIUM",
    "FLAGS",
    "axe_missing",
    "browser",
    "browser_missing",
    "chromium",
    "new_page",
    "run_axe",
    "serving",
    "skip_without_browser",
]

CHROMIUM = Path("/usr/bin/chromium")
# axe-core, installed by `npm ci` in this folder (package.json pins it); never fetched by a test.
AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not CHROMIUM.exists():
        return (
            "BROWSER TESTS SKIPPED: /usr/bin/chromium is missing (apt-get install chromium); "
            "the pages were NOT checked in a browser"
        )
    if importlib.util.find_spec("playwright") is None:
        return "BROWSER TESTS SKIPPED: the playwright package is not installed (pip install -e '.[test]')"
    return None


def axe_missing() -> str | None:
    """Why the accessibility check cannot run here, or None when it can."""
    if not AXE.exists():
        return (
            f"ACCESSIBILITY NOT CHECKED: {AXE} is missing; run "
            "`(cd tests/integration_tests && npm ci --no-audit --no-fund)` to install axe-core"
        )
    return None


skip_without_browser = pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """An ASGI app on a free local port, served by uvicorn in a thread; yields its base URL (ends with /)."""
    import uvicorn

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            msg = "the test server did not start"
            raise RuntimeError(msg)
        time.sleep(0.02)
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
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@contextmanager
def new_page(
    browser: Any, *, bypass_csp: bool = False, width: int = 1000, height: int = 700, touch: bool = False
) -> Iterator[Any]:
    """A page of its own (fresh cookies and storage) that records every dialog (alert, confirm) in ``page.dialogs``."""
    context = browser.new_context(
        viewport={"width": width, "height": height}, bypass_csp=bypass_csp, has_touch=touch, is_mobile=touch
    )
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.dialogs = dialogs
    try:
        yield page
    finally:
        context.close()


def run_axe(page: Any) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it stands (injected from node_modules; CSP bypass needed)."""
    page.add_script_tag(path=str(AXE))
    result: list[dict[str, Any]] = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' '))}))"
    )
    return result


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the whole test module."""
    with chromium() as launched:
        yield launched


def check(page: Any, url: str, response: str, sources: list[str], question: str = "", aggregator: str = "") -> None:
    """Fill the form as a user does (one source box per source) and wait for the result."""
    from playwright.sync_api import expect

    page.goto(url + "check")
    page.fill("#response", response)
    for index, text in enumerate(sources):
        if index:
            page.click("#add-source")
        page.fill(f"#source-{index + 1}", text)
    if question:
        page.fill("#question", question)
    if aggregator:
        page.select_option("#aggregator", aggregator)
    page.click("#check")
    # A locator wait, not wait_for_function: the page's CSP forbids the eval that one needs.
    expect(page.locator("#status")).to_have_text("done", timeout=20_000)
