"""The chat UI in a real browser: headless Debian Chromium driven by Playwright (one browser for the module).

Needs /usr/bin/chromium (Debian's `chromium` package; `.ci/run` installs it) and,
for the accessibility test, axe-core from `npm ci` in this folder. No browser
and no script is ever downloaded by a test. Without them the tests are
skipped, and say so.

The screenshots in docs/ (1280 px and a 390x844 phone) are made by an explicit command, never by a test run:

    python -m tests.integration_tests.test_browser --screenshot
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessageChunk
from langchain_core.runnables import RunnableGenerator

from tests.integration_tests import browser_fixtures
from tests.integration_tests.browser_fixtures import (
    axe_missing,
    browser_missing,
    chromium,
    new_page,
    run_axe,
    serving,
    skip_without_browser,
)
from tests.unit_tests.fakes import streaming_model

pytestmark = skip_without_browser
browser = browser_fixtures.browser  # the module's one Chromium (a fixture)

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "chat-ui.png"
PHONE_SCREENSHOT = SCREENSHOT.with_name("chat-ui-phone.png")

# One hostile answer, streamed in every content shape a chat model may use: a
# string, a list of strings, text blocks, and blocks that are not text.
HOSTILE_CHUNKS: list[Any] = [
    'Numbers <img src=x onerror="window.__xss=1;alert(1)"> are shared',
    ["[1](id", "=1). ", "<img src=y onerror=window.__xss=2>", "<script>window.__xss=3</script>"],
    [{"type": "text", "text": " Tags & <img src=z onerror=window.__xss=4>"}, {"type": "reasoning", "reasoning": "r"}],
    [{"type": "image_url", "image_url": {"url": "javascript:window.__xss=5"}}, {"type": "text", "text": " end[2]"}],
    [{"type": "text", "text": "(id=2). [x](javascript:window.__xss=6) [y](java&#115;cript:window.__xss=7)"}],
    [{"type": "tool_use", "name": "t", "input": {}}, " <javascript&#58;window.__xss=8>"],
]
# Written by hand: what the reader must see (a chip shows its number; a link Markdown refuses stays its
# source text, character references decoded as CommonMark says).
HOSTILE_SHOWN = (
    'Numbers <img src=x onerror="window.__xss=1;alert(1)"> are shared1. <img src=y onerror=window.__xss=2>'
    "<script>window.__xss=3</script> Tags & <img src=z onerror=window.__xss=4> end2."
    " [x](javascript:window.__xss=6) [y](javascript:window.__xss=7) <javascript:window.__xss=8>"
)
XSS_FLAGS = "[window.__xss, window.__xss2, window.__xss3]"

HOSTILE_DOCUMENTS = [
    Document(
        "The answer is <img src=x onerror=window.__xss2=1> here.",
        metadata={"source": "javascript&#58;window.__xss3=1", "title": '<img src=y onerror="window.__xss2=2">'},
    ),
    Document(
        "The answer is also here, <script>window.__xss2=3</script>.",
        metadata={"source": "&#x6A;avascript:window.__xss3=2", "title": "<b>bold</b> & <i>x</i>"},
    ),
    Document("The answer is right here.", metadata={"source": "https://ok.org/a", "title": "Fine & dandy"}),
]


def create(**options: Any) -> Any:
    from langchain_refs.apps.chat_ui import create_app
    from langchain_refs.apps.demo import ExtractiveChatModel

    if "model" not in options and not options.get("agent"):
        options["model"] = ExtractiveChatModel(delay=0.001)  # a real stream, token by token
    return create_app(**options)


def ask(page: Any, question: str, *, turns: int = 1, typed: bool = False) -> None:
    """Put a question in the box (``typed``: key by key) and press Enter, then wait for the complete answer."""
    from playwright.sync_api import expect

    page.locator("#question").focus()
    if typed:
        page.keyboard.type(question)
    else:
        page.locator("#question").fill(question)
    page.keyboard.press("Enter")
    expect(page.locator(".turn")).to_have_count(turns)
    # A selector wait, not wait_for_function: the page's CSP forbids the eval that one needs.
    page.wait_for_selector("body[data-state=done]", timeout=30_000)
    assert page.locator("#status").inner_text() == "done"


def href_ok(href: str) -> bool:
    """An oracle for link targets: http(s), mailto or a same-page relative link."""
    return href.startswith(("http://", "https://", "mailto:", "/", "#"))


def test_two_turn_conversation_by_keyboard(browser: Any) -> None:
    """Two questions typed and sent with Enter: both turns stay, each with its chips and source cards."""
    from playwright.sync_api import expect

    with serving(create()) as url, new_page(browser) as page:
        page.goto(url)
        expect(page.locator("#send")).to_be_enabled()
        ask(page, "How are sources numbered?", typed=True)
        ask(page, "Which URLs become links?", turns=2, typed=True)
        turns = page.locator(".turn")
        assert turns.nth(0).locator(".question").inner_text() == "How are sources numbered?"
        assert turns.nth(1).locator(".question").inner_text() == "Which URLs become links?"
        first = turns.nth(0).locator(".answer-body").inner_text()
        assert first.startswith("Chunks that come from the same source share one citation number")
        assert turns.nth(1).locator(".answer-body").inner_text().startswith("Only http, https, mailto")
        assert turns.nth(0).locator(".chip").count() == 3
        chip = turns.nth(0).locator(".chip").first
        assert chip.get_attribute("aria-label") == "source 1: Renumbering by source"
        assert chip.evaluate("e => e.tagName") == "BUTTON"
        cards = turns.nth(0).locator(".source-card")
        assert cards.nth(0).locator(".source-number").inner_text() == "1"
        assert (
            cards.nth(0).locator("a.source-title").get_attribute("href") == "https://langchain-refs.dev/docs/numbering"
        )
        assert "langchain-refs.dev" in cards.nth(0).inner_text()
        assert "cited" in cards.nth(0).inner_text()
        consulted = turns.nth(0).locator(".consulted")
        assert consulted.inner_text().startswith("Also consulted, not cited:")
        # The fourth document BM25 finds in the demo corpus for this question.
        assert consulted.locator("a").all_inner_texts() == ["The prompt sentence"]
        # Focus stays in the question box, so the next question can be typed at once.
        assert page.evaluate("document.activeElement.id") == "question"
        assert page.dialogs == []


def test_markdown_list_and_code_fence_are_elements(browser: Any) -> None:
    """A streamed Markdown answer shows a list and a code fence as elements; a marker in the fence stays literal."""
    answer = ["**Steps**[1](id=1):\n\n- one\n- two[2](", "id=2)\n\n```python\nprint([1](id=1))\n```\n"]
    with serving(create(model=streaming_model(answer))) as url, new_page(browser) as page:
        page.goto(url)
        ask(page, "How are sources numbered?")
        body = page.locator(".answer-body")
        assert body.locator("strong").inner_text() == "Steps"
        assert body.locator("ul > li").all_inner_texts() == ["one", "two2"]
        assert body.locator("pre > code").inner_text() == "print([1](id=1))\n"
        assert body.locator(".chip").all_inner_texts() == ["1", "2"]
        assert "**" not in body.inner_text()
        assert "```" not in body.inner_text()


def test_hover_tap_and_focus_open_the_passage_card(browser: Any) -> None:
    """Hover, click and keyboard focus each open a card whose highlighted passage is the cited document's text."""
    from playwright.sync_api import expect

    from langchain_refs.apps.demo import load_corpus

    texts = {d.metadata["title"]: d.page_content for d in load_corpus()}
    with serving(create()) as url, new_page(browser) as page:
        page.goto(url)
        ask(page, "How are sources numbered?")
        chips = page.locator(".answer-body .chip")
        card = page.locator(".passage-card")
        expect(card).to_be_hidden()
        chips.nth(1).hover()
        expect(card).to_be_visible()
        assert chips.nth(1).get_attribute("aria-expanded") == "true"
        title = card.locator(".passage-title").inner_text()
        assert title == "Concurrent calls"
        marked = card.locator("mark").inner_text()
        assert marked in texts[title]
        assert card.locator(".passage-text").inner_text().strip("…") in texts[title]
        assert (
            card.locator("a.passage-link").get_attribute("href")
            == "https://langchain-refs.dev/docs/runnable#concurrency"
        )
        page.mouse.move(5, 5)  # away: the card closes
        expect(card).to_be_hidden()
        chips.nth(0).click()
        expect(card).to_be_visible()
        assert card.locator(".passage-title").inner_text() == "Renumbering by source"
        page.keyboard.press("Escape")
        expect(card).to_be_hidden()
        # Keyboard: Tab from the first chip reaches the card's link, then the next chip.
        chips.nth(2).focus()
        expect(card).to_be_visible()
        assert card.locator("mark").inner_text() in texts[card.locator(".passage-title").inner_text()]
        # The focus ring is visible on a chip.
        outline = chips.nth(2).evaluate(
            "e => getComputedStyle(e).outlineStyle + ' ' + getComputedStyle(e).outlineWidth"
        )
        assert outline == "solid 3px"
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.className") == "passage-link"
        expect(card).to_be_visible()
        assert page.dialogs == []


def test_a_chip_under_an_open_card_can_be_hovered_and_clicked(browser: Any) -> None:
    """A card opened by hovering a chip lets the pointer through to the chip it covers; a click pins the card.

    Found in use: hovering a chip opened a card over the next line, and the
    chip there could be neither hovered nor clicked until the card closed.
    """
    from playwright.sync_api import expect

    # Short sentences, each cited: chips on every line of a narrow answer, one below another.
    sentence = "Numbers follow the order of first citation in the answer[{n}](id={n}). "
    model = streaming_model(["".join(sentence.format(n=1 + k % 4) for k in range(8))])
    with serving(create(model=model)) as url, new_page(browser, width=700, height=900) as page:
        page.goto(url)
        ask(page, "How are sources numbered?")
        chips = page.locator(".answer-body .chip")
        card = page.locator(".passage-card")
        covered = None
        for index in range(chips.count() - 1):
            chips.nth(index).hover()
            expect(card).to_be_visible()
            box = card.bounding_box()
            for below in range(index + 1, chips.count()):
                at = chips.nth(below).bounding_box()
                x, y = at["x"] + at["width"] / 2, at["y"] + at["height"] / 2
                if box["x"] <= x <= box["x"] + box["width"] and box["y"] <= y <= box["y"] + box["height"]:
                    covered = (index, below, x, y)
                    break
            if covered:
                break
        assert covered is not None, "no chip lies under an open card: the layout no longer tests this"
        index, below, x, y = covered
        page.mouse.move(x, y)  # from the open card's chip straight to the chip under its card
        expect(chips.nth(below)).to_have_attribute("aria-expanded", "true")
        assert chips.nth(index).get_attribute("aria-expanded") == "false"
        # A click pins the card: the pointer can go into it, and its link takes the click.
        chips.nth(below).click()
        link = card.locator("a.passage-link")
        link_box = link.bounding_box()
        page.mouse.move(link_box["x"] + 5, link_box["y"] + link_box["height"] / 2, steps=5)
        page.wait_for_timeout(400)  # longer than the delay before a card left by the pointer closes
        expect(card).to_be_visible()
        hit = page.evaluate(
            f"document.elementFromPoint({link_box['x'] + 5}, {link_box['y'] + link_box['height'] / 2})"
            ".closest('a') !== null"
        )
        assert hit
        page.mouse.move(5, 5)
        page.mouse.click(5, 5)  # a click elsewhere closes a pinned card
        expect(card).to_be_hidden()


@pytest.mark.parametrize("bypass_csp", [False, True], ids=["with-csp", "without-csp"])
def test_hostile_answer_in_every_content_shape_runs_no_script(browser: Any, bypass_csp: bool) -> None:
    """A hostile answer as a string, strings or blocks shows literally and runs nothing, even without the CSP."""
    model = streaming_model(HOSTILE_CHUNKS)
    with new_page(browser, bypass_csp=bypass_csp) as page, serving(create(model=model)) as url:
        page.goto(url)
        ask(page, "How are sources numbered?")
        page.wait_for_timeout(200)  # give an injected onerror or onload the time to fire
        assert page.evaluate(XSS_FLAGS) == [None, None, None]
        assert page.dialogs == []
        assert page.locator(".answer-body").inner_text() == HOSTILE_SHOWN
        assert "[object Object]" not in page.inner_text("body")
        # The answer holds a paragraph and chips only (each chip in the page's own glue span, which keeps it
        # on the line of its word and full stop): no element the model wrote.
        tags = page.eval_on_selector_all(
            ".answer-body *", "els => els.map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : ''))"
        )
        assert tags == ["p", "span.cite-glue", "button.chip", "span.cite-glue", "button.chip"]


@pytest.mark.parametrize("bypass_csp", [False, True], ids=["with-csp", "without-csp"])
def test_hostile_titles_and_sources_run_no_script(browser: Any, bypass_csp: bool) -> None:
    """Hostile titles, document text and entity-encoded javascript: sources show as text, in cards too."""
    from playwright.sync_api import expect

    with new_page(browser, bypass_csp=bypass_csp) as page, serving(create(documents=HOSTILE_DOCUMENTS)) as url:
        page.goto(url)
        ask(page, "What is the answer?")
        chips = page.locator(".answer-body .chip")
        for index in range(chips.count()):
            chips.nth(index).hover()
            expect(page.locator(".passage-card")).to_be_visible()
        page.wait_for_timeout(200)
        assert page.evaluate(XSS_FLAGS) == [None, None, None]
        assert page.dialogs == []
        assert page.query_selector_all("img, script:not([src]), b, i") == []
        hrefs = page.eval_on_selector_all("a", "els => els.map(e => e.getAttribute('href'))")
        assert hrefs
        assert all(href_ok(href) for href in hrefs), hrefs
        sources = page.locator(".sources").inner_text()
        assert '<img src=y onerror="window.__xss2=2">' in sources
        assert "<b>bold</b> & <i>x</i>" in sources
        assert "<script>window.__xss2=3</script>" in page.locator(".answer-body").inner_text()


def test_unsupported_and_invalid_citations_are_shown(browser: Any) -> None:
    """With a verifier, an unsupported chip says so; a citation of no document is a discreet warning."""
    from langchain_refs.streaming import AnswerReferences

    class NothingSupported:
        def verify_citations(self, references: AnswerReferences, documents: Any, *, threshold: float) -> Any:
            citations = tuple(replace(c, support=0.1, supported=False) for c in references.citations)
            return replace(references, citations=citations)

    model = streaming_model(["Numbers are shared[1](id=1). Odd[2](id=99)."])
    with serving(create(model=model, verifier=NothingSupported())) as url, new_page(browser) as page:
        page.goto(url)
        ask(page, "How are sources numbered?")
        chip = page.locator(".answer-body .chip")
        assert chip.count() == 1
        assert "unsupported" in (chip.get_attribute("class") or "")
        assert (chip.get_attribute("aria-label") or "").endswith("(not supported by the source)")
        chip.hover()
        assert "not supported" in page.locator(".passage-card").inner_text()
        warning = page.locator(".turn .warning").inner_text()
        # One sentence, its reasons after a colon: no parentheses inside parentheses.
        assert warning == "⚠ 1 citation named no document and was left out: no document 99 (4 given)."


def test_a_mixed_source_and_the_reason_a_citation_is_unsupported(browser: Any) -> None:
    """A source cited rightly and wrongly reads "mixed", never a green "cited"; the wrong chip's card says why."""
    from langchain_refs.streaming import AnswerReferences

    class SecondWrong:
        def verify_citations(self, references: AnswerReferences, documents: Any, *, threshold: float) -> Any:
            citations = tuple(
                replace(c, support=0.9, supported=True)
                if i == 0
                else replace(c, support=0.4, supported=False, unsupported_reason="the sources say 2, not 3")
                for i, c in enumerate(references.citations)
            )
            return replace(references, citations=citations)

    model = streaming_model(["Numbers are shared[1](id=1). There are 3 of them[2](id=1)."])
    with serving(create(model=model, verifier=SecondWrong())) as url, new_page(browser) as page:
        page.goto(url)
        ask(page, "How are sources numbered?")
        chips = page.locator(".answer-body .chip")
        assert chips.count() == 2
        chips.nth(1).hover()
        card = page.locator(".passage-card")
        assert card.locator(".label-unsupported").inner_text() == "✗ not supported by this source"
        assert card.locator(".passage-reason").inner_text() == "the sources say 2, not 3"
        meta = page.locator(".source-card .source-meta").first
        assert "mixed" in meta.inner_text()
        assert meta.locator(".label-supported").count() == 0


class SlowModel:
    """Streams 400 words, 20 ms apart, asynchronously; records how many it sent and whether the stream was closed."""

    def __init__(self) -> None:
        self.sent = 0
        self.closed = threading.Event()

    def runnable(self) -> RunnableGenerator[Any, Any]:
        async def astream(inputs: AsyncIterator[Any]) -> AsyncIterator[AIMessageChunk]:
            async for _ in inputs:
                pass
            try:
                for index in range(400):
                    await asyncio.sleep(0.02)
                    self.sent += 1
                    yield AIMessageChunk(content=f"word{index} ")
            finally:
                self.closed.set()

        def stream(_: Iterator[Any]) -> Iterator[AIMessageChunk]:
            raise NotImplementedError  # the server streams asynchronously
            yield  # pragma: no cover

        return RunnableGenerator(stream, astream)


def test_stop_ends_the_answer_and_the_run(browser: Any) -> None:
    """Send is disabled while streaming; Stop aborts the stream, the server's run stops, the partial answer stays."""
    from playwright.sync_api import expect

    model = SlowModel()
    with serving(create(model=model.runnable())) as url, new_page(browser) as page:
        page.goto(url)
        page.fill("#question", "Tell me everything")
        page.press("#question", "Enter")
        expect(page.locator(".answer-body")).to_contain_text("word3")
        expect(page.locator("#send")).to_be_disabled()
        expect(page.locator("#stop")).to_be_enabled()
        page.click("#stop")
        expect(page.locator("#status")).to_have_text("stopped")
        assert model.closed.wait(5), "the server kept running the model after Stop"
        assert model.sent < 400
        expect(page.locator("#send")).to_be_enabled()
        expect(page.locator("#stop")).to_be_disabled()
        assert page.locator(".answer-body").inner_text().startswith("word0 word1 word2")
        assert "incomplete" in page.locator(".turn .warning").inner_text()


def tap_targets(page: Any) -> list[dict[str, Any]]:
    """Every visible link, button and field outside running text, with the size it takes taps on, in CSS pixels.

    A chip stays small in its line: its ``::before`` area takes the taps (its size counts). The
    links of the "also consulted" line are inline links in a sentence (WCAG 2.5.8's exception).
    """
    script = """() => [...document.querySelectorAll('a, button, input, [tabindex]')]
        .filter(e => !e.closest('.answer-body p a, .answer-body li a, .consulted a') && e.getClientRects().length)
        .map(e => { const r = e.getBoundingClientRect(), area = getComputedStyle(e, '::before');
          const extra = e.classList.contains('chip') && area.content !== 'none';
          const width = Math.max(r.width, extra ? parseFloat(area.width) : 0);
          const height = Math.max(r.height, extra ? parseFloat(area.height) : 0);
          return {what: (e.className || e.tagName) + ' ' + e.textContent.trim().slice(0, 20),
                  width: Math.round(width * 10) / 10, height: Math.round(height * 10) / 10}; })"""
    targets: list[dict[str, Any]] = page.evaluate(script)
    return targets


def test_mobile_viewport_tap_targets(browser: Any) -> None:
    """On a 390x844 touch screen a tap opens the card, and every tap target is at least 44x44 px."""
    from playwright.sync_api import expect

    with serving(create()) as url, new_page(browser, width=390, height=844, touch=True) as page:
        page.goto(url)
        ask(page, "How are sources numbered?")
        page.locator(".answer-body .chip").first.tap()
        expect(page.locator(".passage-card")).to_be_visible()
        card = page.locator(".passage-card").bounding_box()
        assert card["x"] >= 0
        assert card["x"] + card["width"] <= 390
        page.locator(".skip-link").focus()  # shown only when focused: measured then
        targets = tap_targets(page)
        assert len(targets) >= 12
        small = [t for t in targets if t["width"] < 44 or t["height"] < 44]
        assert small == [], small
        assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the phone
        print("tap targets at 390x844:", sorted({(t["width"], t["height"]) for t in targets}))


@pytest.mark.skipif(axe_missing() is not None, reason=axe_missing() or "")
def test_axe_finds_no_serious_or_critical_violation(browser: Any) -> None:
    """axe-core reports no serious or critical violation on load, after an answer, and with a card open."""
    # The CSP would block the injected axe script: it is bypassed for axe alone.
    with serving(create()) as url, new_page(browser, bypass_csp=True) as page:
        page.goto(url)
        found = {"load": run_axe(page)}
        ask(page, "How are sources numbered?")
        found["answer"] = run_axe(page)
        page.locator(".answer-body .chip").first.focus()
        found["card"] = run_axe(page)
        for moment, violations in found.items():
            print(f"axe-core, {moment}:", [(v["id"], v["impact"], len(v["nodes"])) for v in violations] or "none")
        serious = {
            moment: [v for v in violations if v["impact"] in ("serious", "critical")]
            for moment, violations in found.items()
        }
        assert serious == {"load": [], "answer": [], "card": []}


@pytest.mark.skipif(
    importlib.util.find_spec("langgraph") is None,
    reason="AGENT MODE NOT TESTED IN THE BROWSER: the agents extra (langchain, langgraph) is not installed",
)
def test_agent_mode_shows_the_tool_step(browser: Any) -> None:
    """serve --agent: the search step shows above the answer, which is cited with passage cards."""
    from playwright.sync_api import expect

    from langchain_refs.apps.demo.agent import AgentDemoChatModel

    with serving(create(agent=True, model=AgentDemoChatModel(delay=0.003))) as url, new_page(browser) as page:
        page.goto(url)
        assert page.locator("body").get_attribute("data-mode") == "agent"
        ask(page, "How are sources numbered?")
        turn = page.locator(".turn")
        children = turn.evaluate("t => [...t.children].map(c => c.className)")
        assert children[:3] == ["question", "tool-step", "answer"]
        assert turn.locator(".tool-step").inner_text() == "searched: How are sources numbered? — 4 documents"
        assert turn.locator(".answer-body").inner_text().startswith("Chunks that come from the same source")
        turn.locator(".chip").first.hover()
        expect(page.locator(".passage-card mark")).to_have_text(
            "Chunks that come from the same source share one citation number."
        )


def make_screenshot() -> None:
    """Write docs/chat-ui.png (1280 px wide) and docs/chat-ui-phone.png (390x844): two turns, a passage card open."""
    missing = browser_missing()
    if missing is not None:
        raise SystemExit(missing.replace("BROWSER TESTS SKIPPED", "NO SCREENSHOT"))
    with chromium() as launched:
        with new_page(launched, width=1280, height=900) as page, serving(create()) as url:
            page.goto(url)
            ask(page, "How are sources numbered?")
            ask(page, "Which URLs become links?", turns=2)
            page.locator("#question").blur()
            page.mouse.move(0, 0)
            height = page.evaluate("document.documentElement.scrollHeight")
            page.set_viewport_size({"width": 1280, "height": height + 40})
            page.locator(".turn").nth(1).locator(".chip").first.hover()
            page.wait_for_timeout(150)
            SCREENSHOT.parent.mkdir(exist_ok=True)
            page.screenshot(path=str(SCREENSHOT))
        # The phone as a reader holds it: the screen after the second answer, its chip tapped.
        with new_page(launched, width=390, height=844, touch=True) as page, serving(create()) as url:
            page.goto(url)
            ask(page, "How are sources numbered?")
            ask(page, "Which URLs become links?", turns=2)
            page.locator("#question").blur()
            page.locator(".turn").nth(1).locator(".chip").first.tap()
            page.wait_for_timeout(150)
            page.screenshot(path=str(PHONE_SCREENSHOT))
    print(f"wrote {SCREENSHOT} and {PHONE_SCREENSHOT}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--screenshot"]:
        raise SystemExit("usage: python -m tests.integration_tests.test_browser --screenshot")
    make_screenshot()
