"""The checking page tells the truth (issue 21), in a real browser: headless Debian Chromium driven by Playwright.

A claim that is not supported says why (the guard's reason, with the source's
value), its evidence is never shown in the colour of support, and a source
that backs one claim and not another reads as mixed. Skipped, and saying so,
without /usr/bin/chromium or playwright.
"""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette

from langchain_refs.apps.check.page import check_routes
from tests.integration_tests import browser_fixtures
from tests.integration_tests.browser_fixtures import check, new_page, serving

pytestmark = browser_fixtures.skip_without_browser
browser = browser_fixtures.browser  # one Chromium for the module

# The issue's own example: three claims a reader catches at once, and one that is right.
SOURCES = ["The Eiffel Tower, in Paris, is 330 metres tall.", "The Louvre museum is in Paris."]
RESPONSE = (
    "The Louvre museum is in London. The Eiffel Tower is 450 metres tall. "
    "The Eiffel Tower is not 330 metres tall. The Louvre museum is in Paris."
)
# Written by hand: each claim's label, and the reason the page shows (None: supported, no reason).
EXPECTED = [
    ("Contradiction", "the sources say Paris, not London"),
    ("Contradiction", "the sources say 330 metres, not 450 metres"),
    ("Contradiction", 'the sources state it without the negation: "The Eiffel Tower, in Paris, is 330 metres tall."'),
    ("Entailment", None),
]


@pytest.fixture(scope="module")
def url() -> Any:
    with serving(Starlette(routes=check_routes())) as base:
        yield base


def best_mark(page: Any) -> Any:
    """The passage highlighted as the best evidence of the active claim."""
    marks = page.locator("#sources-shown mark.evidence.best")
    assert marks.count() == 1
    return marks.first


def background(locator: Any) -> str:
    return str(locator.evaluate("e => getComputedStyle(e).backgroundColor"))


def test_each_unsupported_claim_says_why(browser: Any, url: str) -> None:
    """The claims list and the evidence note give the guard's reason with the source's value."""
    with new_page(browser) as page:
        check(page, url, RESPONSE, SOURCES)
        labels = page.locator("#response-shown mark.claim .label-text").all_inner_texts()
        assert labels == [label for label, _ in EXPECTED]
        items = page.locator("#claims .claim-item")
        for index, (_, why) in enumerate(EXPECTED):
            shown = items.nth(index).locator(".why")
            assert shown.all_inner_texts() == ([why] if why else [])
        page.locator("#response-shown mark.claim").nth(1).hover()
        assert page.inner_text("#evidence-note") == (
            "Claim 2 (Contradiction): the sources say 330 metres, not 450 metres (Source 1, highlighted)."
        )
        assert best_mark(page).inner_text() == SOURCES[0]
        page.locator("#response-shown mark.claim").nth(0).hover()
        assert best_mark(page).inner_text() == SOURCES[1]
        assert page.dialogs == []


def test_unsupported_evidence_is_never_in_the_colour_of_support(browser: Any, url: str) -> None:
    """A supported claim's passage takes the support colour; every unsupported claim's passage another one."""
    with new_page(browser) as page:
        check(page, url, RESPONSE, SOURCES)
        claims = page.locator("#response-shown mark.claim")
        claims.nth(3).hover()
        supported = best_mark(page)
        assert "evidence-entailment" in (supported.get_attribute("class") or "")
        support_colour = background(supported)
        assert support_colour == background(claims.nth(3))  # the colour of a supported claim itself
        for index in range(3):
            claims.nth(index).hover()
            mark = best_mark(page)
            assert "evidence-entailment" not in (mark.get_attribute("class") or "")
            assert background(mark) != support_colour


def test_a_source_cited_rightly_and_wrongly_reads_as_mixed(browser: Any, url: str) -> None:
    """A source backing one claim and not another reads as mixed; one backing only wrong claims, as no support."""
    with new_page(browser) as page:
        check(page, url, RESPONSE, SOURCES)
        statuses = page.locator("#sources-shown .source-status").all_inner_texts()
        assert statuses == [
            "Supports none of the 2 claims it is closest to.",
            "Mixed: supports 1 claim, does not support 1 claim.",
        ]
        assert page.locator("#sources-shown .status-mixed").count() == 1
