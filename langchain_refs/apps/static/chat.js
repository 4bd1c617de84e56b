// The chat page of langchain-refs serve. Everything from the server is data: text goes in
// as text nodes, elements are built with createElement from a fixed list of tags, links only
// to URLs the browser itself reads as http(s) or mailto. Nothing is ever parsed as HTML.
// A module script (strict): the DOM helpers come from dom.js, the allowed tags from the server.
import { el } from "./dom.js";

(() => {
  // The server's list (ALLOWED_TAGS in chat_ui.py), given to the page: the one source of it.
  const TAGS = new Set((document.body.dataset.tags || "").split(" ").filter(Boolean));
  const LINKABLE = new Set(["http:", "https:", "mailto:"]);
  const form = document.getElementById("ask");
  const input = document.getElementById("question");
  const send = document.getElementById("send");
  const stop = document.getElementById("stop");
  const status = document.getElementById("status");
  const conversationList = document.getElementById("conversation");
  let conversation = null;
  let running = null; // the AbortController of the answer streaming now

  // The URL as the browser itself reads it: a link only to http, https or mailto.
  function linkTarget(url) {
    if (typeof url !== "string" || url === "") return null;
    try {
      const parsed = new URL(url, document.baseURI);
      return LINKABLE.has(parsed.protocol) ? parsed.href : null;
    } catch {
      return null;
    }
  }

  function externalLink(href, className, text) {
    const link = el("a", className, text);
    link.href = href;
    link.target = "_blank";
    link.rel = "noopener noreferrer";
    return link;
  }

  // -- the answer tree -------------------------------------------------------

  function build(node, turn) {
    if (typeof node === "string") return document.createTextNode(node);
    if (node === null || typeof node !== "object") return document.createTextNode("");
    if ("cite" in node) return chip(turn, Number(node.index), Number(node.cite));
    const children = Array.isArray(node.children) ? node.children : [];
    const tag = String(node.tag);
    const attrs = node.attrs && typeof node.attrs === "object" ? node.attrs : {};
    let element;
    if (!TAGS.has(tag)) {
      element = document.createDocumentFragment(); // an unknown tag: its children only
    } else if (tag === "a") {
      const href = linkTarget(attrs.href);
      element = href ? externalLink(href, "") : document.createElement("span");
    } else {
      element = document.createElement(tag);
      if (tag === "ol" && Number.isInteger(attrs.start)) element.start = attrs.start;
    }
    appendChildren(element, children, turn);
    if (element instanceof HTMLTableElement) {
      // A wide table scrolls in a box of its own (a table cannot be narrower than its cells), never the page.
      const box = el("div", "table-scroll");
      box.append(element);
      box.tabIndex = 0; // a box that scrolls can be scrolled from the keyboard
      return box;
    }
    if (tag === "pre") element.tabIndex = 0; // a long code line scrolls in its box: from the keyboard too
    return element;
  }

  const isCite = (node) => node !== null && typeof node === "object" && "cite" in node;
  const LEADING_PUNCTUATION = /^[.,;:!?)\]}»”’…]+/;

  // A chip is glued to the word before it and the punctuation after it (one unbreakable
  // run), so a line never breaks between "links", its chip and the full stop.
  function appendChildren(element, children, turn) {
    const queue = children.slice();
    for (let i = 0; i < queue.length; i++) {
      if (!isCite(queue[i])) {
        element.append(build(queue[i], turn));
        continue;
      }
      const glue = el("span", "cite-glue");
      const last = element.lastChild;
      if (last && last.nodeType === Node.TEXT_NODE) {
        const word = /\S+$/.exec(last.data);
        if (word) {
          last.data = last.data.slice(0, word.index);
          glue.append(document.createTextNode(word[0]));
        }
      }
      glue.append(build(queue[i], turn));
      while (i + 1 < queue.length && isCite(queue[i + 1])) glue.append(build(queue[++i], turn));
      const next = queue[i + 1];
      const punctuation = typeof next === "string" ? LEADING_PUNCTUATION.exec(next) : null;
      if (punctuation) {
        glue.append(document.createTextNode(punctuation[0]));
        queue[i + 1] = next.slice(punctuation[0].length); // the rest stays the next child
      }
      element.append(glue);
    }
  }

  function chip(turn, index, number) {
    const button = el("button", "chip", number);
    button.type = "button";
    button.dataset.index = String(index);
    button.dataset.number = String(number);
    button.setAttribute("aria-expanded", "false");
    button.setAttribute("aria-label", "source " + number);
    decorateChip(turn, button);
    return button;
  }

  function decorateChip(turn, button) {
    const data = turn.chips ? turn.chips[Number(button.dataset.index)] : null;
    if (!data) return;
    let label = "source " + Number(data.number) + ": " + String(data.title || "untitled");
    if (data.supported === false) {
      button.classList.add("unsupported");
      label += " (not supported by the source)";
    }
    button.setAttribute("aria-label", label);
    button.setAttribute("aria-controls", turn.card.id);
  }

  // -- the passage card ------------------------------------------------------

  let closeTimer = 0;

  // A card opened by the pointer resting on its chip is a preview: the pointer goes through it to the
  // text and chips it covers (the chip on the next line among them). A click, a tap or the keyboard
  // pins it: then it takes the pointer (its link can be clicked) and stays until closed.
  function openCard(turn, button, pinned) {
    clearTimeout(closeTimer);
    const data = turn.chips ? turn.chips[Number(button.dataset.index)] : null;
    if (!data) return;
    const card = turn.card;
    const shown = !card.hidden && button.getAttribute("aria-expanded") === "true";
    if (shown && !pinned) return; // already open for this chip: the pointer moving on it changes nothing
    card.classList.toggle("preview", !pinned);
    if (shown) return;
    for (const other of document.querySelectorAll(".chip[aria-expanded='true']")) {
      if (other !== button) other.setAttribute("aria-expanded", "false");
    }
    for (const card of document.querySelectorAll(".passage-card")) {
      if (card !== turn.card) card.hidden = true;
    }
    fillCard(card, data, turn.sources.get(Number(data.number)));
    button.after(card); // right after its chip: Tab goes from the chip into the card
    card.hidden = false;
    button.setAttribute("aria-expanded", "true");
    place(turn, button, card);
  }

  function place(turn, button, card) {
    const box = turn.answer.getBoundingClientRect();
    const at = button.getBoundingClientRect();
    const width = card.offsetWidth;
    const left = Math.max(0, Math.min(at.left - box.left - 12, box.width - width));
    card.style.left = left + "px";
    // Below the chip unless the composer bar would hide it: then on the side with more room,
    // scrolling inside the card if it is still too tall (scrolling the page would move the chip away).
    card.style.maxHeight = "";
    const bottom = document.querySelector(".composer-bar").getBoundingClientRect().top;
    const below = bottom - at.bottom - 12;
    const room = at.top - 12;
    const above = card.offsetHeight > below && room > below;
    card.style.maxHeight = Math.max(120, above ? room : below) + "px";
    card.style.top = (above ? at.top - box.top - 6 - card.offsetHeight : at.bottom - box.top + 6) + "px";
  }

  let refocusing = false; // focus going back to a chip after Escape must not open its card again

  function closeCards(toChip) {
    const inCard = document.activeElement && document.activeElement.closest(".passage-card");
    for (const card of document.querySelectorAll(".passage-card")) card.hidden = true;
    for (const button of document.querySelectorAll(".chip[aria-expanded='true']")) {
      button.setAttribute("aria-expanded", "false");
      if (toChip && inCard) {
        refocusing = true;
        button.focus();
        refocusing = false;
      }
    }
  }

  function fillCard(card, data, source) {
    const head = el("p", "passage-head");
    head.append(el("span", "passage-number", "[" + Number(data.number) + "]"));
    head.append(el("span", "passage-title", data.title || "untitled"));
    if (source && source.domain) head.append(el("span", "passage-domain", source.domain));
    card.setAttribute("aria-label", "Source " + Number(data.number) + ": " + String(data.title || "untitled"));
    const parts = [head];
    if (data.supported === true) parts.push(el("p", "label label-supported", "✓ supported by this passage"));
    if (data.supported === false) {
      parts.push(el("p", "label label-unsupported", "✗ not supported by this source"));
      // Its own line: a label does not wrap, and a reason is a sentence.
      if (typeof data.reason === "string" && data.reason) parts.push(el("p", "passage-reason", data.reason));
    }
    const passage = data.passage;
    if (passage && typeof passage.excerpt === "string") {
      const quote = el("blockquote", "passage-text");
      quote.append(document.createTextNode(String(passage.before || "")));
      quote.append(el("mark", "", passage.excerpt));
      quote.append(document.createTextNode(String(passage.after || "")));
      parts.push(quote);
    } else {
      parts.push(el("p", "passage-text", "No passage of this source was found for this citation."));
    }
    const href = source ? linkTarget(source.url) : null;
    if (href) parts.push(externalLink(href, "passage-link", "Open the source" + (source.domain ? " (" + source.domain + ")" : "")));
    card.replaceChildren(...parts);
  }

  function wireChips(turn) {
    turn.body.addEventListener("pointerover", (event) => {
      const button = event.target.closest(".chip");
      // A mouse or a pen resting on a chip previews its card. A finger does nothing here (it may be
      // scrolling): its tap's click pins the card, and nothing shown on hover holds that click back.
      if (button && event.pointerType !== "touch") openCard(turn, button, false);
    });
    turn.answer.addEventListener("mouseout", (event) => {
      const from = event.target.closest(".chip, .passage-card");
      const to = event.relatedTarget;
      const pinned = !turn.card.hidden && !turn.card.classList.contains("preview");
      if (from && !pinned && !(to && to.closest && to.closest(".chip, .passage-card"))) {
        closeTimer = setTimeout(() => closeCards(false), 250);
      }
    });
    turn.card.addEventListener("mouseover", () => clearTimeout(closeTimer));
    turn.answer.addEventListener("focusin", (event) => {
      const button = event.target.closest(".chip");
      if (button && !refocusing) openCard(turn, button, true);
      else if (event.target.closest(".passage-card")) clearTimeout(closeTimer);
    });
    turn.answer.addEventListener("focusout", (event) => {
      const to = event.relatedTarget;
      if (!(to && to.closest && to.closest(".chip, .passage-card"))) closeCards(false);
    });
    turn.answer.addEventListener("click", (event) => {
      const button = event.target.closest(".chip");
      if (button) openCard(turn, button, true); // a click or tap pins; a click elsewhere or Escape closes
    });
  }

  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") closeCards(true);
  });
  document.addEventListener("click", (event) => {
    if (!event.target.closest(".chip, .passage-card")) closeCards(false);
  });

  // -- sources and warnings ---------------------------------------------------

  function sourceTitle(source) {
    const title = String(source.title || "untitled");
    const href = linkTarget(source.url);
    return href ? externalLink(href, "source-title", title) : el("span", "source-title", title);
  }

  function sourceCard(source) {
    const item = el("li", "card source-card");
    const head = el("div", "source-head");
    head.append(el("span", "source-number", Number(source.number)), sourceTitle(source));
    const meta = el("div", "source-meta");
    if (source.domain) meta.append(el("span", "source-domain", source.domain));
    if (source.mixed === true) {
      meta.append(el("span", "label label-neutral", "◐ mixed: some citations supported, some not"));
    } else if (source.supported === false) {
      meta.append(el("span", "label label-unsupported", "✗ cited, not supported"));
    } else {
      meta.append(el("span", "label label-supported", "cited"));
    }
    item.append(head);
    // One line of the cited passage itself (not the page's first words), cut with an ellipsis.
    if (typeof source.excerpt === "string" && source.excerpt) item.append(el("p", "source-snippet", source.excerpt));
    item.append(meta);
    return item;
  }

  // Sources the model was given but did not cite: one discreet line that wraps, no number.
  function consultedList(sources) {
    const line = el("p", "consulted");
    line.append(el("span", "consulted-label", "Also consulted, not cited: "));
    sources.forEach((source, i) => {
      if (i) line.append(document.createTextNode(" · "));
      const item = el("span", "consulted-item");
      item.append(sourceTitle(source));
      if (source.domain) item.append(el("span", "source-domain", " (" + source.domain + ")"));
      line.append(item);
    });
    return line;
  }

  function showReferences(turn, data) {
    turn.chips = Array.isArray(data.chips) ? data.chips : [];
    turn.sources = new Map();
    for (const source of data.sources || []) turn.sources.set(Number(source.number), source);
    for (const button of turn.body.querySelectorAll(".chip")) decorateChip(turn, button);
    const list = el("ol", "sources");
    list.setAttribute("aria-label", "Sources of this answer");
    for (const source of data.sources || []) list.append(sourceCard(source));
    if (list.childElementCount) turn.item.append(list);
    const consulted = Array.isArray(data.consulted) ? data.consulted : [];
    if (consulted.length) turn.item.append(consultedList(consulted));
    const invalid = Array.isArray(data.invalid) ? data.invalid : [];
    const count = invalid.length + Number(data.omitted_invalid || 0);
    if (count) {
      const reasons = invalid.map((i) => String(i.reason)).join("; ");
      const note = count === 1 ? "1 citation named no document and was left out" : count + " citations named no document and were left out";
      // The reasons after a colon: a reason may hold parentheses of its own ("no document 9 (4 given)").
      turn.item.append(el("p", "warning", "⚠ " + note + (reasons ? ": " + reasons + "." : ".")));
    }
  }

  // -- the streaming cursor and the view that follows the stream ---------------

  const BLOCKS = new Set(["P", "UL", "OL", "LI", "BLOCKQUOTE", "H3", "H4", "H5", "H6", "PRE", "CODE", "TABLE", "TBODY", "TR", "TD", "TH"]);
  const cursor = el("span", "cursor", "▍");
  cursor.setAttribute("aria-hidden", "true");

  // The cursor goes right after the last word: inside the last paragraph, list item or code block.
  function placeCursor(body) {
    let host = body;
    while (host.lastElementChild && BLOCKS.has(host.lastElementChild.tagName)) host = host.lastElementChild;
    host.append(cursor);
  }

  // The page follows the answer as it grows, unless the reader scrolled up to read; scrolling
  // back to the end follows again.
  let following = true;
  const atEnd = () => window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 48;

  function follow() {
    if (following) window.scrollTo(0, document.documentElement.scrollHeight);
  }

  let lastY = window.scrollY;
  window.addEventListener("scroll", () => {
    if (window.scrollY < lastY - 2) following = atEnd(); // the reader scrolled up
    else if (atEnd()) following = true;
    lastY = window.scrollY;
  }, { passive: true });

  // -- one turn --------------------------------------------------------------

  function newTurn(question) {
    const item = el("li", "turn");
    item.append(el("p", "question", question));
    const answer = el("div", "answer");
    answer.setAttribute("aria-busy", "true");
    const body = el("div", "answer-body");
    const card = el("div", "card passage-card");
    card.hidden = true;
    card.setAttribute("role", "group");
    answer.append(body);
    body.append(cursor);
    item.append(answer);
    conversationList.append(item);
    const turn = { item, answer, body, card, chips: null, sources: new Map(), step: null };
    card.id = "card-" + conversationList.childElementCount;
    wireChips(turn);
    return turn;
  }

  function handle(turn, name, data) {
    if (name === "start") {
      conversation = String(data.conversation);
      turn.answer.id = "answer-" + String(data.answer_id);
    } else if (name === "searching") {
      // The agent's tool runs: say so at once (the result replaces this line).
      turn.step = el("p", "tool-step", "searching…");
      turn.step.dataset.state = "running";
      turn.item.insertBefore(turn.step, turn.answer);
      status.textContent = "searching";
      follow();
    } else if (name === "tool") {
      // A tool that never answered (the run failed) ends its step too: it is no longer running.
      const text = data.failed
        ? "search failed"
        : "searched: " + String(data.query) + " — " + Number(data.found) + " documents";
      if (!turn.step) {
        turn.step = el("p", "tool-step");
        turn.item.insertBefore(turn.step, turn.answer);
      }
      turn.step.textContent = text;
      turn.step.dataset.state = data.failed ? "failed" : "done";
      turn.step = null;
      status.textContent = "streaming";
    } else if (name === "render") {
      turn.body.replaceChildren();
      appendChildren(turn.body, Array.isArray(data.blocks) ? data.blocks : [], turn);
      placeCursor(turn.body);
      follow();
    } else if (name === "references") {
      showReferences(turn, data);
      follow();
    } else if (name === "error") {
      turn.item.append(el("p", "error", "The answer failed: " + String(data.message)));
      return "error";
    } else if (name === "done") {
      return "done";
    }
    return null;
  }

  // Server-Sent Events read from a fetch body (EventSource cannot POST nor be aborted cleanly).
  async function stream(response, onEvent) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let ended = null;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let name = "message";
        let data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) name = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        ended = onEvent(name, JSON.parse(data)) || ended;
      }
    }
    return ended;
  }

  function setRunning(controller) {
    running = controller;
    send.disabled = controller !== null;
    stop.disabled = controller === null;
    if (controller === null && document.activeElement === stop) input.focus();
  }

  async function ask(question) {
    const turn = newTurn(question);
    following = true; // a new question: show it and its answer, above the composer
    follow();
    const controller = new AbortController();
    setRunning(controller);
    status.textContent = "streaming";
    document.body.dataset.state = "streaming";
    let outcome = "error";
    try {
      const response = await fetch("/api/chat", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ question, conversation }),
        signal: controller.signal,
      });
      if (!response.ok) {
        const problem = await response.json().catch(() => ({ error: response.statusText }));
        turn.item.append(el("p", "error", "The question was refused: " + String(problem.error)));
      } else {
        outcome = (await stream(response, (name, data) => handle(turn, name, data))) || "error";
      }
    } catch (error) {
      if (controller.signal.aborted) {
        outcome = "stopped";
        turn.item.append(el("p", "warning", "Stopped: the answer above is incomplete."));
      } else {
        turn.item.append(el("p", "error", "The connection failed: " + String(error)));
      }
    }
    cursor.remove();
    turn.answer.setAttribute("aria-busy", "false");
    setRunning(null);
    follow(); // the sources, a warning or an error came last
    status.textContent = outcome;
    document.body.dataset.state = outcome; // for scripts and tests: streaming, done, stopped or error
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const question = input.value.trim();
    if (!question || running) return;
    input.value = "";
    ask(question);
  });
  stop.addEventListener("click", () => {
    if (running) running.abort();
  });
})();
