"""The checking page in a real browser: headless Debian Chromium driven by Playwright.

Needs /usr/bin/chromium; without it (or without playwright) these tests are
skipped and say so. The screenshot in the README is made by an explicit
command, never by a test run:

    python -m tests.integration_tests.test_check_browser --screenshot
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from starlette.applications import Starlette

from langchain_refs.apps.check.page import CheckLimits, check_routes
from tests.integration_tests import browser_fixtures
from tests.integration_tests.browser_fixtures import (
    axe_missing,
    browser_missing,
    check,
    new_page,
    run_axe,
    serving,
)

pytestmark = browser_fixtures.skip_without_browser
browser = browser_fixtures.browser  # one Chromium for the module

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "check-page.png"

# Clear-cut claims: a date the first source contradicts, two sentences copied
# from the second source, and one about something no source mentions.
RESPONSE = (
    "The bridge opened in 1951. It is 503 metres long. It carries eight lanes of traffic. "
    "It was painted green by a famous artist."
)
SOURCES = ["The bridge opened in 1932.", "The bridge is 503 metres long. It carries eight lanes of traffic."]
QUESTION = "Tell me about the bridge."
# Written by hand.
CLAIMS = [
    "The bridge opened in 1951.",
    "It is 503 metres long.",
    "It carries eight lanes of traffic.",
    "It was painted green by a famous artist.",
]
LABELS = ["Contradiction", "Entailment", "Entailment", "Neutral"]
ICONS = {"Entailment": "\u2713", "Neutral": "?", "Contradiction": "\u2717"}
# (source shown, evidence highlighted as the best) for each claim; None: no evidence.
EVIDENCE: list[tuple[str, str] | None] = [
    ("Source 1", "The bridge opened in 1932."),
    ("Source 2", "The bridge is 503 metres long."),
    ("Source 2", "It carries eight lanes of traffic."),
    None,
]


def app() -> Starlette:
    return Starlette(routes=check_routes())


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serving(app()) as base:
        yield base


def best_evidence(page: Any) -> tuple[str, str] | None:
    """The source (its heading) and the text of the evidence highlighted as the best, or None."""
    marks = page.locator("#sources-shown mark.evidence.best")
    if marks.count() == 0:
        return None
    assert marks.count() == 1
    heading = marks.first.locator("xpath=ancestor::div[contains(@class,'source-shown')]/h4").inner_text()
    return heading, marks.first.inner_text()


def test_claims_are_labelled_in_place_and_evidence_shows_on_hover(browser: Any, url: str) -> None:
    """Each claim is highlighted in the response with its label; hovering one highlights its evidence."""
    with new_page(browser) as page:
        check(page, url, RESPONSE, SOURCES, QUESTION)
        marks = page.locator("#response-shown mark.claim")
        assert marks.count() == 4
        # Colour plus an icon and the word: read the word and the icon, not the colour.
        assert page.locator("#response-shown mark.claim .label-text").all_inner_texts() == LABELS
        assert page.locator("#response-shown mark.claim .icon").all_inner_texts() == [ICONS[x] for x in LABELS]
        assert page.locator("#claims .claim-text").all_inner_texts() == CLAIMS
        assert page.locator("#claims .label-text").all_inner_texts() == LABELS
        # The claims stand in place: the response reads whole around them.
        shown = page.evaluate(
            "() => { const root = document.getElementById('response-shown');"
            " const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT); let s = '';"
            " while (walk.nextNode()) { const t = walk.currentNode;"
            " if (!t.parentElement.closest('.badge')) s += t.data; }"
            " return s; }"
        )
        assert shown == RESPONSE
        classes = [marks.nth(i).get_attribute("class") for i in range(4)]
        assert classes == [f"claim claim-{x.lower()}" for x in LABELS]
        assert best_evidence(page) is None  # nothing before a claim is chosen
        for index, expected in enumerate(EVIDENCE):
            marks.nth(index).hover()
            assert best_evidence(page) == expected
            assert "active" in (marks.nth(index).get_attribute("class") or "")
        assert page.inner_text("#evidence-note") == "Claim 4 (Neutral): no passage of the sources supports it."
        assert page.dialogs == []


def test_keyboard_focus_and_tap_show_evidence(browser: Any, url: str) -> None:
    """Tab from claim to claim moves the evidence; tapping a claim in the list shows its evidence too."""
    with new_page(browser, width=390, height=844, touch=True) as page:
        check(page, url, RESPONSE, SOURCES)
        page.locator("#response-shown mark.claim").first.focus()
        assert best_evidence(page) == EVIDENCE[0]
        page.keyboard.press("Tab")
        assert best_evidence(page) == EVIDENCE[1]
        assert page.evaluate("document.activeElement.dataset.claim") == "1"
        page.locator("#claims button").nth(2).tap()
        assert best_evidence(page) == EVIDENCE[2]
        assert page.inner_text("#evidence-note") == "Claim 3 (Entailment): highlighted in Source 2."


def verdict(page: Any) -> list[str]:
    """The verdict's heading, then each label shown (icon and word), with its share under soft."""
    parts = page.locator("#verdict > .badge, #verdict .share")
    return [page.text_content("#verdict .verdict-name"), *(parts.nth(i).text_content() for i in range(parts.count()))]


@pytest.mark.parametrize("first", ["strict", "soft", "major"])
def test_verdict_is_right_for_each_aggregator(browser: Any, url: str, first: str) -> None:
    """The verdict follows the aggregator, whether chosen before checking or changed after."""
    # Hand-computed from the four labels: one Contradiction, two Entailment, one Neutral.
    expected = {
        "strict": ["Verdict (strict):", "\u2717Contradiction"],
        "major": ["Verdict (major):", "\u2713Entailment"],  # two of four; the others one each
        "soft": [
            "Verdict (soft):",
            "\u2713Entailment0.500 (50%)",
            "?Neutral0.250 (25%)",
            "\u2717Contradiction0.250 (25%)",
        ],
    }
    with new_page(browser) as page:
        check(page, url, RESPONSE, SOURCES, aggregator=first)
        assert verdict(page) == expected[first]
        for method in ("strict", "soft", "major"):
            page.select_option("#aggregator", method)
            assert verdict(page) == expected[method]


HOSTILE_RESPONSE = (
    'The bridge <img src=x onerror="window.__xss=1;alert(1)"> opened in 1932. '
    "Its name is <script>window.__xss=2</script> great. "
    'Click <a href="javascript&#58;window.__xss=3">here</a> or javascript&colon;alert(4) now.'
)
HOSTILE_SOURCES = [
    "The bridge <img src=y onerror=window.__xss=5> opened in 1932.",
    '<svg onload="window.__xss=6"></svg> <iframe srcdoc="<script>parent.__xss=7</script>"></iframe> '
    '<a href="&#x6A;avascript:alert(8)">Its name is great.</a>',
]
HOSTILE_QUESTION = '"><img src=q onerror=alert(9)><style>body{display:none}</style>'


@pytest.mark.parametrize("bypass_csp", [False, True], ids=["with-csp", "without-csp"])
def test_hostile_input_runs_no_script(browser: Any, url: str, bypass_csp: bool) -> None:
    """HTML and script in the response, sources and question show as text and run nothing, even without the CSP."""
    with new_page(browser, bypass_csp=bypass_csp) as page:
        check(page, url, HOSTILE_RESPONSE, HOSTILE_SOURCES, HOSTILE_QUESTION)
        claims = page.locator("#response-shown mark.claim").count()
        assert claims >= 3  # the hostile text is in the claims, and each is hovered
        for index in range(claims):
            page.locator("#response-shown mark.claim").nth(index).hover()
        page.wait_for_timeout(200)  # give an injected onerror or onload the time to fire
        assert page.evaluate("[window.__xss, window.parent.__xss]") == [None, None]
        assert page.dialogs == []
        # Only the page's own elements: no element the input wrote.
        tags = set(page.eval_on_selector_all("#result *", "els => els.map(e => e.tagName.toLowerCase())"))
        assert tags <= {"h2", "h3", "h4", "p", "div", "span", "mark", "ol", "li", "button"}
        assert page.query_selector_all("a[href^='javascript'], a[href*='avascript']") == []
        assert page.inner_text("#response-shown").count("<script>window.__xss=2</script>") == 1
        shown_sources = page.inner_text("#sources-shown")
        assert HOSTILE_SOURCES[0] in shown_sources
        assert HOSTILE_SOURCES[1] in shown_sources
        assert page.is_visible("body")


def test_refused_request_says_why_and_focus_goes_to_the_result(browser: Any, url: str) -> None:
    """A response over the limit shows the server's one line; a checked one moves focus to the result."""
    from playwright.sync_api import expect

    with new_page(browser) as page:
        page.goto(url + "check")
        page.fill("#response", "a" * 20_001)
        page.click("#check")
        expected = "Not checked: 'response' is 20,001 characters; the limit is 20,000"
        expect(page.locator("#status")).to_have_text(expected)
        assert not page.is_visible("#result")
        assert page.is_enabled("#check")
        check(page, url, RESPONSE, SOURCES)
        assert page.evaluate("document.activeElement.id") == "result-title"


class Unreachable(FakeListChatModel):
    """A chat model whose every call fails, as one behind a dead network does."""

    def _call(self, *args: Any, **kwargs: Any) -> str:
        raise ConnectionError("network is unreachable")


def test_a_model_that_is_down_is_said_so(browser: Any) -> None:
    """With the model checker and the model down, the status says the calls failed, not a bare "done"."""
    from playwright.sync_api import expect

    with (
        serving(Starlette(routes=check_routes(model=Unreachable(responses=["unused"])))) as base,
        new_page(browser) as page,
    ):
        page.goto(base + "check")
        page.fill("#response", RESPONSE)
        page.fill("#source-1", SOURCES[0])
        page.select_option("#checker", "model")
        page.click("#check")
        status = page.locator("#status")
        expect(status).to_contain_text("done, but ", timeout=20_000)
        expect(status).to_contain_text("failed and counted as no claims or Neutral: ")
        expect(status).to_contain_text("ConnectionError('network is unreachable')")


def test_sources_are_added_and_removed(browser: Any, url: str) -> None:
    """Source boxes can be added and removed; the rest are numbered again, and the last one stays."""
    with new_page(browser) as page:
        page.goto(url + "check")
        page.click("#add-source")
        page.click("#add-source")
        page.fill("#source-1", "one")
        page.fill("#source-2", "two")
        page.fill("#source-3", "three")
        page.click("button[aria-label='Remove source 2']")
        assert page.locator("#source-boxes label").all_inner_texts() == ["Source 1", "Source 2"]
        assert [page.input_value(f"#source-{n}") for n in (1, 2)] == ["one", "three"]
        page.click("button[aria-label='Remove source 1']")
        assert page.locator("#source-boxes textarea").count() == 1
        assert not page.is_visible("button[aria-label='Remove source 1']")  # the last box cannot go


def test_no_more_source_boxes_than_the_server_takes(browser: Any) -> None:
    """At the limit (CheckLimits.references) the add button is disabled and says so; removing one enables it."""
    with new_page(browser) as page, serving(Starlette(routes=check_routes(limits=CheckLimits(references=3)))) as base:
        page.goto(base + "check")
        add = page.locator("#add-source")
        add.click()
        add.click()
        assert page.locator("#source-boxes textarea").count() == 3
        assert add.is_disabled()
        assert add.inner_text() == "At most 3 sources"
        add.click(force=True)  # a click on the disabled button adds nothing
        assert page.locator("#source-boxes textarea").count() == 3
        page.click("button[aria-label='Remove source 3']")
        assert add.is_enabled()
        assert add.inner_text() == "Add a source"


def test_phone_targets_and_focus_are_usable(browser: Any, url: str) -> None:
    """On a 390x844 phone every control is at least 44 px each way, and focus is visible."""
    with new_page(browser, width=390, height=844, touch=True) as page:
        check(page, url, RESPONSE, SOURCES)
        page.click("#add-source")
        controls = "a, button:visible, select, input"
        boxes = page.eval_on_selector_all(
            controls,
            "els => els.map(e => { const r = e.getBoundingClientRect();"
            " return [e.id || e.textContent.trim().slice(0, 20), r.width, r.height]; })",
        )
        assert len(boxes) >= 10
        small = [box for box in boxes if box[1] < 44 or box[2] < 44]
        assert small == []
        assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the phone
        page.focus("#check")
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Tab")  # focus from the keyboard shows the ring
        outline = page.eval_on_selector("#check", "e => getComputedStyle(e).outlineStyle")
        assert outline == "solid"


def test_claims_and_evidence_after_emoji_mark_the_right_words(browser: Any, url: str) -> None:
    """A flag and an emoji before a claim or a passage (UTF-16 pairs in JavaScript): marks hold the right words."""
    response = "The \U0001f1eb\U0001f1f7 bridge \U0001f600 opened in 1951. It is 503 metres long."
    sources = ["The bridge \U0001f309 opened in 1932.", "Bridges \U0001f309 are old. The bridge is 503 metres long."]
    with new_page(browser) as page:
        check(page, url, response, sources)
        marks = page.locator("#response-shown mark.claim")
        # Written by hand: the words of each claim, without its badge.
        shown = marks.evaluate_all("marks => marks.map(m => m.firstChild.data)")
        assert shown == ["The \U0001f1eb\U0001f1f7 bridge \U0001f600 opened in 1951.", "It is 503 metres long."]
        marks.nth(0).hover()
        assert best_evidence(page) == ("Source 1", "The bridge \U0001f309 opened in 1932.")
        marks.nth(1).hover()
        assert best_evidence(page) == ("Source 2", "The bridge is 503 metres long.")


LONG_URL = (  # no place a browser breaks a line (no hyphen, no "?"), and wider than the column even at 1280 px
    "https://example.org/reports/2024_annual_report_of_the_national_statistics_office_on_population_housing"
    "_employment_and_transport_final_version.pdf"
)


@pytest.mark.parametrize("width", [390, 1280])
def test_a_claim_holding_a_long_url_never_makes_the_page_scroll_sideways(browser: Any, url: str, width: int) -> None:
    """A claim whose text holds a long URL wraps in the list of claims: the page is never wider than the window."""
    response = f"Paris is in France. See {LONG_URL} for the executor. The tower opened in 1889."
    source = f"Paris is in France. {LONG_URL} explains the executor. The tower opened in 1889."
    with new_page(browser, width=width, height=844, touch=width < 500) as page:
        check(page, url, response, [source])
        assert any(LONG_URL in text for text in page.locator("#claims .claim-text").all_inner_texts())
        assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.skipif(axe_missing() is not None, reason=axe_missing() or "")
def test_axe_finds_no_serious_violation(browser: Any, url: str) -> None:
    """axe-core reports no serious or critical violation on load and with a result shown."""
    with new_page(browser, bypass_csp=True) as page:
        page.goto(url + "check")
        on_load = [v for v in run_axe(page) if v["impact"] in ("serious", "critical")]
        check(page, url, RESPONSE, SOURCES)
        page.locator("#response-shown mark.claim").first.hover()
        with_result = [v for v in run_axe(page) if v["impact"] in ("serious", "critical")]
        assert on_load == []
        assert with_result == []


@contextmanager
def _screenshot_page() -> Iterator[Any]:
    with browser_fixtures.chromium() as launched, new_page(launched, width=1000, height=700) as page:
        yield page


def make_screenshot() -> None:
    """Write docs/check-page.png: the clear-cut example checked, the contradicted claim's evidence shown."""
    missing = browser_missing()
    if missing is not None:
        raise SystemExit(missing.replace("BROWSER TESTS SKIPPED", "NO SCREENSHOT"))
    with _screenshot_page() as page, serving(app()) as base:
        check(page, base, RESPONSE, SOURCES, QUESTION)
        page.locator("#response-shown mark.claim").first.hover()
        SCREENSHOT.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=True)
    print(f"wrote {SCREENSHOT}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--screenshot"]:
        raise SystemExit("usage: python -m tests.integration_tests.test_check_browser --screenshot")
    make_screenshot()
