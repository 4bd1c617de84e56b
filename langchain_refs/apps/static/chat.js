// The chat page of langchain-refs serve. Everything from the server is data: text goes in
// as text nodes, elements are built with createElement from a fixed list of tags, links only
// to URLs the browser itself reads as http(s) or mailto. Nothing is ever parsed as HTML.
"use strict";

(() => {
  const TAGS = new Set("p h3 h4 h5 h6 ul ol li em strong s code pre blockquote a hr br table thead tbody tr th td".split(" "));
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

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = String(text);
    return node;
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
    for (const child of children) element.append(build(child, turn));
    return element;
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

  function openCard(turn, button) {
    clearTimeout(closeTimer);
    const data = turn.chips ? turn.chips[Number(button.dataset.index)] : null;
    if (!data) return;
    for (const other of document.querySelectorAll(".chip[aria-expanded='true']")) {
      if (other !== button) other.setAttribute("aria-expanded", "false");
    }
    for (const card of document.querySelectorAll(".passage-card")) {
      if (card !== turn.card) card.hidden = true;
    }
    const card = turn.card;
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
    if (data.supported === false) parts.push(el("p", "label label-unsupported", "✗ not supported by this source"));
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
    turn.body.addEventListener("mouseover", (event) => {
      const button = event.target.closest(".chip");
      if (button) openCard(turn, button);
    });
    turn.answer.addEventListener("mouseout", (event) => {
      const from = event.target.closest(".chip, .passage-card");
      const to = event.relatedTarget;
      if (from && !(to && to.closest && to.closest(".chip, .passage-card"))) {
        closeTimer = setTimeout(() => closeCards(false), 250);
      }
    });
    turn.card.addEventListener("mouseover", () => clearTimeout(closeTimer));
    turn.answer.addEventListener("focusin", (event) => {
      const button = event.target.closest(".chip");
      if (button && !refocusing) openCard(turn, button);
      else if (event.target.closest(".passage-card")) clearTimeout(closeTimer);
    });
    turn.answer.addEventListener("focusout", (event) => {
      const to = event.relatedTarget;
      if (!(to && to.closest && to.closest(".chip, .passage-card"))) closeCards(false);
    });
    turn.answer.addEventListener("click", (event) => {
      const button = event.target.closest(".chip");
      if (button) openCard(turn, button); // a tap opens; tapping elsewhere or Escape closes
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
    meta.append(el("span", "label label-supported", "cited"));
    if (source.supported === false) meta.append(el("span", "label label-unsupported", "✗ not supported"));
    item.append(head, meta);
    return item;
  }

  // Sources the model was given but did not cite: one discreet line, no number.
  function consultedList(sources) {
    const list = el("ul", "consulted");
    list.setAttribute("aria-label", "Also consulted, not cited");
    const label = el("li", "consulted-label", "Also consulted, not cited:");
    label.setAttribute("aria-hidden", "true");
    list.append(label);
    for (const source of sources) {
      const item = el("li", "consulted-item");
      item.append(sourceTitle(source));
      if (source.domain) item.append(el("span", "source-domain", " · " + source.domain));
      list.append(item);
    }
    return list;
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
      turn.item.append(el("p", "warning", "⚠ " + note + (reasons ? " (" + reasons + ")." : ".")));
    }
  }

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
    item.append(answer);
    conversationList.append(item);
    const turn = { item, answer, body, card, chips: null, sources: new Map() };
    card.id = "card-" + conversationList.childElementCount;
    wireChips(turn);
    return turn;
  }

  function handle(turn, name, data) {
    if (name === "start") {
      conversation = String(data.conversation);
      turn.answer.id = "answer-" + String(data.answer_id);
    } else if (name === "tool") {
      const step = el("p", "tool-step", "searched: " + String(data.query) + " — " + Number(data.found) + " documents");
      turn.item.insertBefore(step, turn.answer);
    } else if (name === "render") {
      turn.body.replaceChildren(...(data.blocks || []).map((node) => build(node, turn)));
    } else if (name === "references") {
      showReferences(turn, data);
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
    turn.answer.setAttribute("aria-busy", "false");
    setRunning(null);
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
