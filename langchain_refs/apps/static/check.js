// The checking page. Everything the server sends is data: the response, the
// sources and the claims go into the page as text nodes (textContent), and
// every element is made with createElement. Nothing is ever parsed as HTML.
// A module script (strict): the DOM helpers come from dom.js.
import { el } from "./dom.js";

(() => {
  const LABELS = {
    Entailment: { icon: "\u2713", css: "entailment" },
    Neutral: { icon: "?", css: "neutral" },
    Contradiction: { icon: "\u2717", css: "contradiction" },
    Abstain: { icon: "\u2013", css: "abstain" },
  };
  const ORDER = ["Entailment", "Neutral", "Contradiction"];

  const form = document.getElementById("check-form");
  const boxes = document.getElementById("source-boxes");
  const addButton = document.getElementById("add-source");
  const submit = document.getElementById("check");
  const status = document.getElementById("status");
  const aggregatorSelect = document.getElementById("aggregator");
  const result = document.getElementById("result");
  const verdict = document.getElementById("verdict");
  const responseShown = document.getElementById("response-shown");
  const claimList = document.getElementById("claims");
  const sourcesShown = document.getElementById("sources-shown");
  const evidenceNote = document.getElementById("evidence-note");

  let last = null; // {data, response, sources: [{name, text}]}
  let active = -1;

  // The API's offsets count Unicode code points (Python's string indexes); a JavaScript string counts
  // UTF-16 units, two for an emoji or each half of a flag: slicing by the API's offsets directly would
  // cut the wrong words. utf16Offsets(text)(i) is where code point i starts in text (undefined past its end).
  function utf16Offsets(text) {
    const at = [0];
    for (const character of text) at.push(at[at.length - 1] + character.length);
    return (offset) => (Number.isInteger(offset) && offset >= 0 ? at[offset] : undefined);
  }

  function labelInfo(label) {
    return Object.prototype.hasOwnProperty.call(LABELS, label) ? LABELS[label] : { icon: "?", css: "neutral" };
  }

  // Colour, an icon and the word: the label never rests on colour alone.
  function badge(label) {
    const info = labelInfo(label);
    const node = el("span", "badge label label-" + info.css);
    const icon = el("span", "icon", info.icon);
    icon.setAttribute("aria-hidden", "true");
    node.append(icon, el("span", "label-text", String(label)));
    return node;
  }

  // ---- source boxes: add, remove, renumber ----
  // The most sources the server takes (CheckLimits.references): no box past it.
  const mostSources = Number(addButton.dataset.most) || Infinity;

  function renumber() {
    const all = boxes.querySelectorAll(".source-box");
    addButton.disabled = all.length >= mostSources;
    addButton.textContent = addButton.disabled ? "At most " + mostSources + " sources" : "Add a source";
    all.forEach((box, index) => {
      const number = index + 1;
      const area = box.querySelector("textarea");
      area.id = "source-" + number;
      box.querySelector("label").htmlFor = area.id;
      box.querySelector("label").textContent = "Source " + number;
      const remove = box.querySelector("button");
      remove.textContent = "Remove";
      remove.setAttribute("aria-label", "Remove source " + number);
      remove.hidden = all.length === 1;
    });
  }

  function addSource(text) {
    const box = el("div", "source-box");
    const label = el("label");
    const area = el("textarea", "source");
    area.rows = 4;
    area.value = text || "";
    const remove = el("button", "button button-secondary remove");
    remove.type = "button";
    remove.addEventListener("click", () => {
      const next = box.nextElementSibling || box.previousElementSibling;
      box.remove();
      renumber();
      if (next) next.querySelector("textarea").focus();
    });
    const row = el("div", "source-row");
    row.append(area, remove);
    box.append(label, row);
    boxes.append(box);
    renumber();
    return area;
  }

  addButton.addEventListener("click", () => addSource("").focus());
  addSource("");

  // ---- the verdict, for the chosen aggregator ----
  function showVerdict() {
    verdict.replaceChildren();
    if (!last || !last.data.verdicts) return;
    const method = aggregatorSelect.value;
    const value = last.data.verdicts[method];
    verdict.append(el("span", "verdict-name", "Verdict (" + method + "):"));
    if (typeof value === "string") {
      verdict.append(badge(value));
      if (value === "Abstain") verdict.append(el("span", "", "no claim to check"));
      return;
    }
    // soft: the share of each label
    const shares = el("ul", "shares");
    const keys = value && typeof value === "object" ? Object.keys(value) : [];
    const names = keys.includes("Abstain") ? ["Abstain"] : ORDER;
    names.forEach((name) => {
      const share = Number(value[name]);
      const part = el("li", "share");
      part.append(badge(name), el("span", "share-value", share.toFixed(3) + " (" + Math.round(share * 100) + "%)"));
      shares.append(part);
    });
    verdict.append(shares);
  }
  aggregatorSelect.addEventListener("change", showVerdict);

  // ---- the sources, with the active claim's evidence highlighted ----
  function showSources(scroll) {
    sourcesShown.replaceChildren();
    if (!last) return;
    const check = active >= 0 ? last.data.checks[active] : null;
    const evidence = check && Array.isArray(check.evidence) ? check.evidence : [];
    // The evidence of a claim that is not supported is never marked in the colour of support.
    const tone = check ? labelInfo(check.label).css : "neutral";
    const standing = sourceStanding();
    last.sources.forEach((source, index) => {
      const block = el("div", "source-shown");
      block.append(el("h4", "", source.name));
      block.append(standingNote(standing[index]));
      const text = el("p", "source-text");
      const unit = utf16Offsets(source.text);
      const spans = evidence
        .map((span, rank) => ({ start: unit(span.start), end: unit(span.end), rank, reference: span.reference }))
        .filter((s) => s.reference === index && s.start !== undefined && s.end !== undefined && s.end > s.start)
        .sort((a, b) => a.start - b.start);
      let at = 0;
      spans.forEach((span) => {
        const start = Math.max(span.start, at); // overlapping spans: each character marked once
        if (span.end <= start) return;
        if (start > at) text.append(document.createTextNode(source.text.slice(at, start)));
        const mark = el(
          "mark",
          "evidence evidence-" + tone + (span.rank === 0 ? " best" : ""),
          source.text.slice(start, span.end),
        );
        text.append(mark);
        at = span.end;
      });
      if (at < source.text.length) text.append(document.createTextNode(source.text.slice(at)));
      block.append(text);
      sourcesShown.append(block);
    });
    // Brought into view on focus or tap only: scrolling on hover would pull the claim from under the pointer.
    const best = sourcesShown.querySelector("mark.evidence.best");
    if (scroll && best && typeof best.scrollIntoView === "function") best.scrollIntoView({ block: "nearest" });
  }

  // Which claims each source's best passage backs, and which it does not: a source can be both (mixed).
  function sourceStanding() {
    const standing = last.sources.map(() => ({ supports: 0, not: 0 }));
    const checks = Array.isArray(last.data.checks) ? last.data.checks : [];
    checks.forEach((check) => {
      const evidence = check && Array.isArray(check.evidence) ? check.evidence : [];
      const reference = evidence.length ? Number(evidence[0].reference) : -1;
      if (!(reference >= 0 && reference < standing.length)) return;
      if (check.label === "Entailment") standing[reference].supports += 1;
      else standing[reference].not += 1;
    });
    return standing;
  }

  function claims(count) {
    return count + " claim" + (count === 1 ? "" : "s");
  }

  function standingNote(standing) {
    if (standing.supports && standing.not) {
      return el("p", "source-status status-mixed",
        "Mixed: supports " + claims(standing.supports) + ", does not support " + claims(standing.not) + ".");
    }
    if (standing.supports) return el("p", "source-status status-supports", "Supports " + claims(standing.supports) + ".");
    if (standing.not) {
      return el("p", "source-status status-not", "Supports none of the " + claims(standing.not) + " it is closest to.");
    }
    return el("p", "source-status", "No claim rests on it.");
  }

  // Why a claim is not supported: the guard's reason ("the sources say 330 metres, not 450 metres").
  function reason(index) {
    const guards = last && Array.isArray(last.data.guards) ? last.data.guards : [];
    const guard = guards[index];
    return guard && typeof guard.reason === "string" ? guard.reason : "";
  }

  function describe(index) {
    if (index < 0) return "Hover, tap or focus a claim to see its evidence.";
    const check = last.data.checks[index];
    const evidence = Array.isArray(check.evidence) ? check.evidence : [];
    const head = "Claim " + (index + 1) + " (" + check.label + "): ";
    const source = evidence.length ? last.sources[Number(evidence[0].reference)] : null;
    const name = source ? source.name : "";
    if (check.label === "Entailment") {
      return head + (source ? "highlighted in " + name : "no passage of the sources supports it") + ".";
    }
    const why = reason(index);
    if (why && source) return head + why + " (" + name + ", highlighted).";
    if (why) return head + why + ".";
    if (source) return head + "the closest passage, highlighted in " + name + ", does not support it.";
    return head + "no passage of the sources supports it.";
  }

  function activate(index, scroll) {
    if (!last || !last.data.checks) return;
    active = index;
    document.querySelectorAll("[data-claim]").forEach((node) => {
      node.classList.toggle("active", Number(node.dataset.claim) === index);
    });
    evidenceNote.textContent = describe(index);
    showSources(scroll);
  }

  function claimTarget(node, index) {
    node.dataset.claim = String(index);
    node.addEventListener("mouseenter", () => activate(index, false));
    node.addEventListener("focus", () => activate(index, true));
    node.addEventListener("click", () => activate(index, true));
  }

  // ---- the response with each claim in place, and the list of claims ----
  function showClaims() {
    const data = last.data;
    const response = last.response;
    const claims = Array.isArray(data.claims) ? data.claims : [];
    const labels = Array.isArray(data.ys) ? data.ys : [];
    const spans = Array.isArray(data.claim_spans) ? data.claim_spans : [];
    responseShown.replaceChildren();
    claimList.replaceChildren();
    const unit = utf16Offsets(response);
    const placed = spans
      .map((span, index) => (Array.isArray(span) ? { start: unit(span[0]), end: unit(span[1]), index } : null))
      .filter((s) => s && s.start !== undefined && s.end !== undefined && s.end > s.start)
      .sort((a, b) => a.start - b.start || a.end - b.end);
    let at = 0;
    placed.forEach((span) => {
      if (span.start < at) return; // a claim overlapping the one before stays in the list only
      if (span.start > at) responseShown.append(document.createTextNode(response.slice(at, span.start)));
      const label = labels[span.index];
      const mark = el("mark", "claim claim-" + labelInfo(label).css);
      mark.tabIndex = 0;
      mark.append(document.createTextNode(response.slice(span.start, span.end)), badge(label));
      const why = reason(span.index);
      mark.setAttribute(
        "aria-label",
        "Claim " + (span.index + 1) + ", " + label + ": " + response.slice(span.start, span.end) + (why ? " (" + why + ")" : ""),
      );
      if (why) mark.title = why;
      claimTarget(mark, span.index);
      responseShown.append(mark);
      at = span.end;
    });
    if (at < response.length) responseShown.append(document.createTextNode(response.slice(at)));
    claims.forEach((claim, index) => {
      const item = el("li");
      const button = el("button", "claim-item");
      button.type = "button";
      const text = Array.isArray(claim) ? claim.join(" \u00b7 ") : String(claim);
      button.append(badge(labels[index]), el("span", "claim-text", text));
      const check = data.checks[index];
      if (reason(index)) button.append(el("span", "why", reason(index)));
      if (check && typeof check.score === "number" && Array.isArray(check.evidence) && check.evidence.length)
        button.append(el("span", "score", "score " + check.score.toFixed(2)));
      claimTarget(button, index);
      item.append(button);
      claimList.append(item);
    });
    if (!claims.length) claimList.append(el("li", "none", "No claim found in the response."));
  }

  // ---- checking ----
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const response = document.getElementById("response").value;
    if (!response.trim()) {
      status.textContent = "Write or paste a response to check.";
      document.getElementById("response").focus();
      return;
    }
    const sources = [];
    boxes.querySelectorAll("textarea").forEach((area, index) => {
      if (area.value.trim()) sources.push({ name: "Source " + (index + 1), text: area.value });
    });
    const body = {
      response,
      reference: sources.map((s) => s.text),
      mode: "extract-check",
      aggregator: aggregatorSelect.value,
      checker: document.getElementById("checker").value,
    };
    const question = document.getElementById("question").value;
    if (question.trim()) body.question = question;
    submit.disabled = true;
    status.textContent = "checking\u2026";
    try {
      const answer = await fetch("/api/check", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      const data = await answer.json();
      if (!answer.ok) {
        status.textContent = "Not checked: " + String(data && data.error ? data.error : answer.status);
        return;
      }
      last = { data, response, sources };
      active = -1;
      showClaims();
      showVerdict();
      evidenceNote.textContent = describe(-1);
      showSources();
      result.hidden = false;
      // A chat model that failed is said so, not hidden behind its parts' defaults (no claims, Neutral).
      const warnings = Array.isArray(data.warnings) ? data.warnings : [];
      status.textContent = warnings.length
        ? "done, but " + warnings.length + " model call" + (warnings.length === 1 ? "" : "s") +
          " failed and counted as no claims or Neutral: " + String(warnings[0])
        : "done";
      // The result is below the form: take the reader (and a screen reader's focus) to it.
      document.getElementById("result-title").focus();
    } catch (error) {
      status.textContent = "Not checked: " + String(error);
    } finally {
      submit.disabled = false;
    }
  });
})();
