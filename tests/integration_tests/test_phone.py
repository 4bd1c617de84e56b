"""The chat page on a phone (Debian Chromium at 390x844, touch) and at 1280 px: one test per fault once seen.

Each test streams an answer through the real page and measures what a reader
sees (boxes, lines, scroll position), with documents and answers written
here. Needs /usr/bin/chromium and playwright, and for the accessibility test
axe-core from ``npm ci`` in this folder; without them the tests are skipped,
and say so. ``python -m tests.integration_tests.test_browser --screenshot``
writes the screenshots in docs/ at both widths.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from langchain_core.documents import Document

from tests.integration_tests import browser_fixtures
from tests.integration_tests.browser_fixtures import axe_missing, new_page, run_axe, serving, skip_without_browser
from tests.integration_tests.test_browser import ask, create
from tests.unit_tests.fakes import streaming_model

pytestmark = skip_without_browser
browser = browser_fixtures.browser  # the module's one Chromium (a fixture)

PHONE = {"width": 390, "height": 844, "touch": True}
LINE_HEIGHT = "parseFloat(getComputedStyle(e).lineHeight)"  # an element's line height, in JavaScript

DOCUMENTS = [
    Document(
        "Intro words that say little. The key fact is that chips stay small in the line.",
        metadata={"source": "https://docs.example.org/chips", "title": "Chips"},
    ),
    Document("Alpha beta gamma delta.", metadata={"source": "https://a.example.org/alpha", "title": "Alpha"}),
    Document("Beta gamma delta epsilon.", metadata={"source": "https://b.example.org/beta", "title": "Beta"}),
    Document("Gamma delta epsilon zeta.", metadata={"source": "https://c.example.org/gamma", "title": "Gamma"}),
]
# A long answer whose sentences each end in a chip and a full stop: at some width a line
# ends right at a chip, where a line break before the full stop could fall.
LONG_ANSWER = " ".join(
    f"Sentence {word} has a citation at its end[1](id=1)." for word in "one two three four five six seven eight".split()
)


QUESTIONS = ["How are sources numbered?", "Which URLs become links?", "How are sources numbered?"]


def ask_slowly(page: Any, question: str) -> None:
    """Put a question in the box and press Enter, without waiting for the answer."""
    page.locator("#question").fill(question)
    page.keyboard.press("Enter")


def test_a_chip_is_small_in_its_line_and_its_tap_area_is_larger(browser: Any) -> None:
    """On a phone, lines with a chip are as tall as lines without; a tap 18 px above a chip still opens it."""
    from playwright.sync_api import expect

    app = create(model=streaming_model([LONG_ANSWER]), documents=DOCUMENTS, k=1)
    with serving(app) as url, new_page(browser, **PHONE) as page:
        page.goto(url)
        ask(page, "What is the key fact about chips?")
        # The top of every line of the answer (text and chips), by the text's own boxes.
        tops = page.locator(".answer-body p").evaluate(
            """p => { const range = document.createRange(); range.selectNodeContents(p);
               const bottoms = [...range.getClientRects()].map(r => Math.round(r.bottom));
               return [...new Set(bottoms)].sort((a, b) => a - b); }"""
        )
        steps = {b - a for a, b in itertools.pairwise(tops) if b - a > 4}
        assert len(tops) >= 6
        assert max(steps) - min(steps) <= 2, f"line spacing varies: {sorted(steps)}"
        chip = page.locator(".answer-body .chip").nth(2)
        box = chip.bounding_box()
        assert box["height"] <= 24
        page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2 - 18)
        expect(page.locator(".passage-card")).to_be_visible()
        assert chip.get_attribute("aria-expanded") == "true"


def test_no_line_break_comes_between_a_chip_and_its_full_stop(browser: Any) -> None:
    """At every width from 200 to 390 px, each chip stands on the line of the word before it and of its full stop."""
    app = create(model=streaming_model([LONG_ANSWER]), documents=DOCUMENTS, k=1)
    with serving(app) as url, new_page(browser, **PHONE) as page:
        page.goto(url)
        ask(page, "What is the key fact about chips?")
        broken = page.locator(".answer-body").evaluate(
            """body => {
              const broken = [];
              const line = (rect) => Math.round(rect.top + rect.height / 2);
              for (let width = 200; width <= 390; width += 2) {
                body.style.width = width + 'px';
                for (const chip of body.querySelectorAll('.chip')) {
                  const c = chip.getBoundingClientRect();
                  // The character after the chip and the one before it, wherever they are in the DOM.
                  const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
                  let before = null, after = null, seen = false;
                  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                    if (chip.contains(node)) { seen = true; continue; }
                    if (!node.data.length) continue;
                    if (!seen) before = node; else { after = node; break; }
                  }
                  for (const [node, at] of [[before, before && before.data.length - 1], [after, 0]]) {
                    if (!node || /\\s/.test(node.data[at])) continue;
                    const range = document.createRange(); range.setStart(node, at); range.setEnd(node, at + 1);
                    const r = range.getBoundingClientRect();
                    if (r.bottom < c.top || r.top > c.bottom) broken.push([width, node.data[at]]);
                  }
                }
              }
              body.style.width = '';
              return broken;
            }"""
        )
        assert broken == []


def test_no_stray_space_stands_where_a_citation_was_dropped(browser: Any) -> None:
    """A citation of a document that does not exist leaves no space before the full stop it stood before."""
    answer = ["Chips stay small [1](id=9). The key fact is", " that chips stay small [1](id=1). Done [2](id=7)"]
    app = create(model=streaming_model(answer), documents=DOCUMENTS, k=1)
    with serving(app) as url, new_page(browser, **PHONE) as page:
        page.goto(url)
        ask(page, "What is the key fact about chips?")
        # Written by hand: the dropped citations' spaces go, the model's space before a kept chip stays.
        text = page.locator(".answer-body").inner_text()
        assert text == "Chips stay small. The key fact is that chips stay small 1. Done"


def test_the_streaming_cursor_stands_after_the_last_word(browser: Any) -> None:
    """While an answer streams, the cursor is on the line of the last word, right after it; then it goes."""
    from langchain_refs.apps.demo import ExtractiveChatModel

    with serving(create(model=ExtractiveChatModel(delay=0.05))) as url, new_page(browser, **PHONE) as page:
        page.goto(url)
        ask_slowly(page, "How are sources numbered?")
        page.wait_for_selector(".answer-body p")
        where = page.evaluate(
            """() => {
              const cursor = document.querySelector('.answer-body .cursor');
              if (!cursor) return null;
              const walker = document.createTreeWalker(document.querySelector('.answer-body'), NodeFilter.SHOW_TEXT);
              let last = null;
              for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                if (!cursor.contains(node) && node.data.trim()) last = node;
              }
              const range = document.createRange();
              const end = last.data.trimEnd().length;
              range.setStart(last, end - 1); range.setEnd(last, end);
              const word = range.getBoundingClientRect(), mark = cursor.getBoundingClientRect();
              return {same_line: Math.abs((word.top + word.bottom) / 2 - (mark.top + mark.bottom) / 2) < 6,
                      after: mark.left >= word.right - 1};
            }"""
        )
        assert where == {"same_line": True, "after": True}
        page.wait_for_selector("body[data-state=done]", timeout=30_000)
        assert page.locator(".answer-body .cursor").count() == 0


def test_the_conversation_follows_the_stream_and_never_hides_an_answer(browser: Any) -> None:
    """After each of three questions on a phone, the new answer's end is above the composer, the page at its end."""
    with serving(create()) as url, new_page(browser, **PHONE) as page:
        page.goto(url)
        for turn, question in enumerate(QUESTIONS):
            ask(page, question, turns=turn + 1)
            seen = page.evaluate(
                """() => {
                  const answers = document.querySelectorAll('.turn');
                  const last = answers[answers.length - 1].getBoundingClientRect();
                  const composer = document.querySelector('.composer-bar').getBoundingClientRect();
                  const root = document.documentElement;
                  return {answer_above_composer: last.bottom <= composer.top,
                          at_end: window.innerHeight + window.scrollY >= root.scrollHeight - 2};
                }"""
            )
            assert seen == {"answer_above_composer": True, "at_end": True}, (turn, seen)


def test_the_conversation_stays_where_the_reader_scrolled_up_to(browser: Any) -> None:
    """A reader who scrolls up while an answer streams is left there: the page does not jump to the end."""
    from langchain_refs.apps.demo import ExtractiveChatModel

    with serving(create(model=ExtractiveChatModel(delay=0.03))) as url, new_page(browser, **PHONE) as page:
        page.goto(url)
        ask(page, "How are sources numbered?")
        ask_slowly(page, "Which URLs become links?")
        page.wait_for_selector(".turn:nth-child(2) .answer-body p")
        page.evaluate("window.scrollTo(0, 0)")
        page.wait_for_selector("body[data-state=done]", timeout=30_000)
        assert page.evaluate("window.scrollY") == 0


def test_the_agent_shows_searching_while_its_tool_runs(browser: Any) -> None:
    """serve --agent: the tool step reads "searching…" from the call until the result, then what was found."""
    pytest.importorskip("langgraph", reason="AGENT MODE NOT TESTED: the agents extra is not installed")
    from langchain_refs.apps.demo.agent import AgentDemoChatModel

    # Both events may arrive in one read and change the step within one task: the text a step
    # held before is taken from the removed text node, so a state that lasted no frame still counts.
    record = """new MutationObserver((records) => {
        const seen = (window.__steps = window.__steps || []);
        const push = (text) => { if (seen[seen.length - 1] !== text) seen.push(text); };
        for (const r of records) {
          if (r.target.classList && r.target.classList.contains('tool-step')) {
            for (const node of r.removedNodes) push(node.textContent);
          }
        }
        for (const step of document.querySelectorAll('.tool-step')) push(step.textContent);
      }).observe(document, {subtree: true, childList: true, characterData: true});"""
    app = create(agent=True, model=AgentDemoChatModel(delay=0.003))
    with serving(app) as url, new_page(browser, bypass_csp=True, **PHONE) as page:
        page.add_init_script(record)
        page.goto(url)
        ask(page, "How are sources numbered?")
        steps = page.evaluate("window.__steps")
    assert steps == ["searching…", "searched: How are sources numbered? — 4 documents"]


def test_source_cards_show_the_cited_passage_and_the_domain(browser: Any) -> None:
    """A source card shows one line of its citation's passage (not the page's first words) and the domain."""
    answer = ["The key fact is that chips stay small in the line[1](id=1)."]
    app = create(model=streaming_model(answer), documents=DOCUMENTS, k=1)
    with serving(app) as url, new_page(browser, **PHONE) as page:
        page.goto(url)
        ask(page, "What is the key fact about chips?")
        card = page.locator(".source-card")
        snippet = card.locator(".source-snippet")
        assert snippet.inner_text() == "The key fact is that chips stay small in the line."
        assert "docs.example.org" in card.inner_text()
        one_line = snippet.evaluate(
            "e => e.getBoundingClientRect().height < 1.5 * parseFloat(getComputedStyle(e).lineHeight)"
        )
        assert one_line


ORCHARD = [
    Document("Apples are red.", metadata={"source": "https://apples.example.org/red", "title": "Red apples"}),
    Document("Apples and pears grow on trees.", metadata={"source": "https://trees.example.org/", "title": "Orchards"}),
    Document("Pears are green.", metadata={"source": "https://pears.example.org/green", "title": "Green pears"}),
    Document("Plums are purple, pears and apples are not.", metadata={"source": "plums.pdf", "title": "Plums"}),
    Document("Fruit: apples, pears, plums.", metadata={"source": "https://fruit.example.org/", "title": "Fruit"}),
]


@pytest.mark.parametrize("width", [1280, 390])
def test_also_consulted_is_one_compact_line_that_wraps(browser: Any, width: int) -> None:
    """Four sources given, not cited: lines of text that wrap only where the column ends, not a 44 px row each."""
    app = create(model=streaming_model(["Apples are red[1](id=1)."]), documents=ORCHARD, k=5)
    with serving(app) as url, new_page(browser, width=width, height=844, touch=width < 500) as page:
        page.goto(url)
        ask(page, "apples pears plums red")
        consulted = page.locator(".consulted")
        assert sorted(consulted.locator("a").all_inner_texts()) == ["Fruit", "Green pears", "Orchards", "Plums"]
        # The lines it takes, and the fewest it could: its text on one line, cut at the column's width.
        lines, fewest = consulted.evaluate(
            f"""e => {{
              const copy = e.cloneNode(true);
              copy.style.cssText = 'position: absolute; white-space: nowrap; width: max-content';
              e.parentElement.append(copy);
              const natural = copy.getBoundingClientRect().width;
              copy.remove();
              return [e.getBoundingClientRect().height / {LINE_HEIGHT},
                      Math.ceil(natural / e.getBoundingClientRect().width)];
            }}"""
        )
        assert consulted.evaluate(f"e => {LINE_HEIGHT}") < 32  # lines of text, not 44 px rows
        assert fewest <= round(lines) <= fewest + 1, (lines, fewest)


def test_also_consulted_lists_this_turns_sources_only(browser: Any) -> None:
    """In an agent's second turn, "also consulted" names what that turn's search found, not the first turn's."""
    pytest.importorskip("langgraph", reason="AGENT MODE NOT TESTED: the agents extra is not installed")
    from tests.unit_tests.agent_fakes import ScriptedToolModel, say, search

    # By hand: "red" finds Red apples only (id 1); "green pears" finds Green pears (id 2, two words),
    # Orchards and Plums (one word each, ids 3 and 4).
    script = [
        search("red", tool="search_docs"),
        say("Apples are red[1](id=1)."),
        search("green pears", tool="search_docs", first_id=2),
        say("Pears are green[1](id=2)."),
    ]
    app = create(agent=True, model=ScriptedToolModel(script=script), documents=ORCHARD[:4], k=3)
    with serving(app) as url, new_page(browser) as page:
        page.goto(url)
        ask(page, "Which apples are red?")
        ask(page, "Which pears are green?", turns=2)
        second = page.locator(".turn").nth(1)
        assert second.locator(".source-card .source-title").all_inner_texts() == ["Green pears"]
        assert sorted(second.locator(".consulted .consulted-item").all_inner_texts()) == [
            "Orchards (trees.example.org)",
            "Plums",
        ]


@pytest.mark.parametrize("width", [390, 1280])
def test_the_composer_and_the_conversation_share_one_column_and_the_placeholder_fits(browser: Any, width: int) -> None:
    """The question box lines up with the conversation's edges, and its placeholder is shown whole."""
    with serving(create()) as url, new_page(browser, width=width, height=844, touch=width < 500) as page:
        page.goto(url)
        ask(page, "How are sources numbered?")
        edges = page.evaluate(
            """() => {
              const box = (selector) => document.querySelector(selector).getBoundingClientRect();
              const column = box('.conversation'), composer = box('.composer');
              return [Math.round(column.left - composer.left), Math.round(column.right - composer.right)];
            }"""
        )
        assert edges == [0, 0]
        fits = page.locator("#question").evaluate(
            """input => { const style = getComputedStyle(input);
                const context = document.createElement('canvas').getContext('2d');
                context.font = style.font;
                const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
                return context.measureText(input.placeholder).width <= room; }"""
        )
        assert fits


@pytest.mark.skipif(axe_missing() is not None, reason=axe_missing() or "")
@pytest.mark.parametrize("width", [390, 1280])
def test_axe_finds_no_violation_on_either_page_at_either_width(browser: Any, width: int) -> None:
    """axe-core: no violation of any impact on the chat page (load, answer, card open) and the checking page."""
    found = {}
    with (
        serving(create()) as url,
        new_page(browser, bypass_csp=True, width=width, height=844, touch=width < 500) as page,
    ):
        page.goto(url)
        found["chat, load"] = run_axe(page)
        ask(page, "How are sources numbered?")
        found["chat, answer"] = run_axe(page)
        page.locator(".answer-body .chip").first.focus()
        found["chat, card"] = run_axe(page)
        page.goto(url + "check")
        found["check, load"] = run_axe(page)
    assert {moment: violations for moment, violations in found.items() if violations} == {}


# Wide content, written here: a code line of 150 characters, a table of five columns, and long titles
# (of a cited source and of a source "also consulted") made of ordinary words.
WIDE_CODE_LINE = ("total = " + " + ".join(f"value_{n:02d}" for n in range(20)))[:150]
WIDE_ANSWER = [
    "The key fact is that chips stay small in the line[1](id=1).\n\n",
    f"```python\n{WIDE_CODE_LINE}\n```\n\n",
    "| Column one | Column two | Column three | Column four | Column five |\n",
    "|---|---|---|---|---|\n",
    "| configuration | documentation | renumbering | verification | streaming |\n",
]
LONG_TITLE = "Configuring the renumbering of citations in streamed answers across conversations"
WIDE_DOCUMENTS = [
    Document(DOCUMENTS[0].page_content, metadata={"source": "https://docs.example.org/chips", "title": LONG_TITLE}),
    Document(
        "Chips come in many sizes.", metadata={"source": "https://a.example.org/chips", "title": f"Also {LONG_TITLE}"}
    ),
]


@pytest.mark.parametrize("width", [360, 390])
def test_the_page_never_scrolls_sideways_on_a_phone(browser: Any, width: int) -> None:
    """A long code line and a wide table scroll in their own box, long titles wrap: the page is never wider."""
    assert len(WIDE_CODE_LINE) == 150
    app = create(model=streaming_model(WIDE_ANSWER), documents=WIDE_DOCUMENTS, k=2)
    with serving(app) as url, new_page(browser, bypass_csp=True, width=width, height=844, touch=True) as page:
        page.goto(url)
        ask(page, "What is the key fact about chips?")
        assert page.locator(".answer-body pre").count() == 1
        assert page.locator(".answer-body table th").count() == 5
        assert page.locator(".consulted-item").count() == 1
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        # The code and the table are not cut short: they scroll inside their own box.
        scrolls = page.evaluate(
            """() => [...document.querySelectorAll('.answer-body pre, .answer-body .table-scroll')]
                .map(e => [getComputedStyle(e).overflowX, e.scrollWidth > e.clientWidth])"""
        )
        assert scrolls == [["auto", True], ["auto", True]]
        if axe_missing() is None:  # a box that scrolls is reached from the keyboard too
            assert run_axe(page) == []
