"""The checking page: paste a response and its sources, see every claim labelled (the ``serve`` extra).

``check_routes()`` gives the Starlette routes of the page and of its API:

- ``GET /check``: the page. A response box, one or more source boxes, an
  optional question, the checker (offline, or the chat model ``serve
  --model`` was given) and the aggregator. The result shows the response with
  each claim highlighted in place and labelled Entailment / Neutral /
  Contradiction (colour, icon and word), the aggregated verdict, and, on
  hover, tap or keyboard focus of a claim, its evidence highlighted in the
  source text, in the colour of the claim's label (a passage is shown in the
colour of support only for a supported claim), with the reason a claim is
not supported ("the sources say 1932, not 1951") and, per source, whether
it supports the claims resting on it, does not, or both (mixed). The page
builds its DOM from data (``textContent``, never
  ``innerHTML``) under a nonce Content-Security-Policy, as the chat page does.
- ``GET /static/{name}``: the files of the app's pages (this page's
  ``check.js``, ``check.css`` and the shared ``app.css``, ``dom.js``), by
  name only: the one route the chat page's files come from too.
- ``POST /api/check``: one item of ``langchain-refs check``, checked the way
  that command checks it.

``POST /api/check`` takes a JSON object (``Content-Type: application/json``):
the item in the shape of the ``check`` command's input, plus options.

- ``response`` (string): the text to extract claims from (modes ``extract``
  and ``extract-check``);
- ``reference`` (a string, or a list of strings, one per source): what the
  claims are checked against (modes ``check`` and ``extract-check``);
- ``question`` (string, optional);
- ``claims`` (list of strings or ``[head, relation, tail]`` triplets): the
  claims to check in mode ``check``;
- options, taken out of the item before it is checked: ``mode``
  (``extract-check`` by default, or ``extract`` or ``check``), ``aggregator``
  (``strict`` by default, ``soft`` or ``major``), ``checker`` (``offline`` by
  default: the rule-based extractor and the lexical checker; ``model``: the
  chat model the routes were given, as ``check --model``), ``threshold`` (the
  offline checker's support for Entailment, 0 to 1, default 0.4),
  ``claim_format`` (``triplet`` by default or ``subsentence``, with the model).

Any other key is kept and given back, as the command does.

The answer (200) is the item exactly as ``langchain-refs check MODE
--aggregator A`` writes it for that item (``claims``, and in the checking
modes ``ys``, ``Y`` and ``checks`` with each claim's label, score and
evidence spans ``{"reference", "start", "end", "score"}``), plus four keys:

- ``claim_spans``: for each claim, ``[start, end]``, where it stands in the
  response, or ``null`` (a paraphrase, or a claim given in mode ``check``).
  Like the evidence spans, these offsets are Python string indexes (Unicode
  code points): in JavaScript, where an emoji counts 2, ``check.js``
  converts them before it slices;
- ``guards``: for each claim (in the checking modes), why it is not
  supported when a meaning guard of the offline checker fired (``{"name",
  "reason", "claim_value", "source_value"}``; the claim's first evidence span
  is then the source sentence the guard read), else ``null``;
- ``verdicts``: the labels aggregated all three ways, ``{"strict": ...,
  "soft": {"Entailment": share, "Neutral": share, "Contradiction": share},
  "major": ...}`` (in the checking modes only);
- ``warnings``: one line for each chat-model reply that failed or could not
  be read while this item was checked (that part then gave its default, as
  the ``check`` command does: no claims, or Neutral), so a model that is
  down shows as such and not as a plain Abstain; empty when nothing went
  wrong (the offline checker never adds any). Collected with
  `recorded_model_failures`, whatever the logging setup.

A bad request gets ``{"error": "<one line naming what is wrong>"}``: 400 for
a body that is not JSON, not an object, or has a missing field or a field of
the wrong type or value; 413 for a body or a field over its limit (the line
names the limit, see `CheckLimits`); 415 for a body not sent as JSON.

Example:
    >>> from starlette.applications import Starlette
    >>> from starlette.testclient import TestClient
    >>> client = TestClient(Starlette(routes=check_routes()))
    >>> answer = client.post("/api/check", json={"response": "Paris is in France.", "reference": "Paris is in France."})
    >>> answer.json()["ys"], answer.json()["claim_spans"]
    (['Entailment'], [[0, 19]])
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, cast

from langchain_core.language_models import BaseChatModel
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from langchain_refs.apps._web import NOSNIFF, BodyError, check_size, page_response, read_json_body, static_route
from langchain_refs.apps.check.items import (
    DEFAULT_CLAIM_FORMAT,
    DEFAULT_THRESHOLD,
    MODES,
    Checkers,
    ClaimChecking,
    ClaimExtraction,
    Mode,
    OptionNotUsed,
    build_checkers,
    checked_item,
    option_not_used,
    read_json_text,
)
from langchain_refs.grounding import Claim, ClaimCheck, aggregate

__all__ = ["CheckLimits", "check_routes"]

_PAGE = (Path(__file__).parent / "page.html").read_text(encoding="utf-8")
_AGGREGATORS: tuple[Literal["strict", "soft", "major"], ...] = ("strict", "soft", "major")
_CHECKERS = ("offline", "model")
_CLAIM_FORMATS = ("triplet", "subsentence")
_OPTIONS = ("mode", "aggregator", "checker", "threshold", "claim_format")


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckLimits:
    """The largest request ``POST /api/check`` takes; anything larger gets a 413 that names the limit.

    The defaults keep one offline check around a second on one core: its cost
    grows with claims times source sentences.

    Example:
        >>> CheckLimits().response_chars, CheckLimits(references=3).references
        (20000, 3)
    """

    body_bytes: int = 1_000_000
    response_chars: int = 20_000
    question_chars: int = 2_000
    references: int = 20
    reference_chars: int = 100_000  # all sources together
    claims: int = 500


# An option given that the check would not use (`option_not_used`), in the API's words.
_NOT_USED: Final[dict[OptionNotUsed, str]] = {
    "claim format without a model": (
        '\'claim_format\': only with "checker": "model" (the offline extractor has no format)'
    ),
    "claim format to check": "'claim_format': only when claims are extracted (mode extract or extract-check)",
    "threshold to extract": "'threshold': only when claims are checked (mode check or extract-check)",
    "threshold with a model": "'threshold': only with the offline checker (the model gives each label itself)",
}


def _choice(options: dict[str, Any], key: str, allowed: Sequence[str], default: str) -> str:
    value = options.get(key, default)
    if value not in allowed:
        msg = f"{key!r} must be one of {', '.join(allowed)}; got {json.dumps(value)[:80]}"
        raise BodyError(msg)
    return cast("str", value)


def _references(item: dict[str, Any], limits: CheckLimits) -> None:
    # Only the sizes: the types and the messages are the check command's (`check_item`).
    reference = item.get("reference")
    if reference is None and "references" in item:
        msg = "no 'reference' to check against (the field is 'reference', a string or a list of strings)"
        raise BodyError(msg)
    references = [reference] if isinstance(reference, str) else reference
    if isinstance(references, list) and all(isinstance(r, str) for r in references):
        check_size("'reference'", len(references), limits.references, "sources")
        check_size("'reference'", sum(len(r) for r in references), limits.reference_chars, "characters")


def _within_limits(item: dict[str, Any], mode: str, limits: CheckLimits) -> None:
    """413 for a field over its limit, before any work is done."""
    for key, limit in (("response", limits.response_chars), ("question", limits.question_chars)):
        if isinstance(item.get(key), str):
            check_size(f"{key!r}", len(item[key]), limit, "characters")
    if mode in ("check", "extract-check"):
        _references(item, limits)
    if mode == "check" and isinstance(item.get("claims"), list):
        check_size("'claims'", len(item["claims"]), limits.claims, "claims")


class _RecordingChecker:
    """A checker that keeps the verdicts it gives, with the guard that fired on each (for the page's reasons)."""

    def __init__(self, checker: ClaimChecking) -> None:
        self.checker = checker
        self.checks: list[ClaimCheck] = []

    def check_batch(self, claims: list[Claim], references: list[str], question: str | None = None) -> list[ClaimCheck]:
        self.checks = self.checker.check_batch(claims, references, question)
        return self.checks


class _Recording:
    """An extractor that keeps the claims it gives, with their places in the response."""

    def __init__(self, extractor: ClaimExtraction) -> None:
        self.extractor = extractor
        self.claims: list[Claim] = []

    def extract(self, response: str, question: str | None = None) -> list[Claim]:
        self.claims = self.extractor.extract(response, question)
        return self.claims


async def _body(request: Request, limits: CheckLimits) -> tuple[dict[str, Any], bool]:
    """The request's JSON object, and whether it held numbers JSON cannot hold (read as null)."""
    read_as_null = [0]
    body = await read_json_body(request, limits.body_bytes, lambda text: read_json_text(text, count=read_as_null))
    if not isinstance(body, dict):
        msg = "the body must be a JSON object: one item of the check command's input, with options"
        raise BodyError(msg)
    return body, read_as_null[0] > 0


def check_routes(*, model: BaseChatModel | None = None, limits: CheckLimits | None = None) -> list[BaseRoute]:
    """The routes of the checking page, its API and the pages' files (see the module's docstring for the JSON shapes).

    The files' route is the app's one (``/static/{name}``), so the page is
    whole wherever these routes are mounted; `create_app` takes it from here.

    Args:
        model: the chat model of ``serve --model``: the page and the API then
            offer it as extractor and checker (``"checker": "model"``), as
            ``check --model`` uses it. Without one, only the offline checker.
        limits: the largest request taken.

    Example:
        >>> from starlette.applications import Starlette
        >>> from starlette.testclient import TestClient
        >>> client = TestClient(Starlette(routes=check_routes()))
        >>> client.get("/check").headers["content-security-policy"].startswith("default-src 'self'")
        True
        >>> client.post("/api/check", json={"response": 3}).json()
        {'error': "no 'response' string to extract claims from"}
    """
    limits = limits or CheckLimits()
    if model is None:
        model_option = ""
    else:
        name = getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__
        model_option = f'<option value="model">Chat model: {html.escape(str(name))}</option>'
    page_text = _PAGE.replace("{{model_option}}", model_option).replace("{{most_sources}}", str(limits.references))

    async def page(_: Request) -> Response:
        return page_response(page_text)

    def run(body: dict[str, Any], read_as_null: bool) -> dict[str, Any]:
        result = checked(body, read_as_null)
        # `checked_item` names the model's failed replies, if any (the check runs in a worker thread, its own context).
        result["warnings"] = result.pop("warnings", [])
        return result

    def checked(body: dict[str, Any], read_as_null: bool) -> dict[str, Any]:
        options = {key: body[key] for key in _OPTIONS if key in body}
        item = {key: value for key, value in body.items() if key not in _OPTIONS}
        mode = cast("Mode", _choice(options, "mode", MODES, "extract-check"))
        aggregator = _choice(options, "aggregator", _AGGREGATORS, "strict")
        chosen = _choice(options, "checker", _CHECKERS, "offline")
        claim_format = _choice(options, "claim_format", _CLAIM_FORMATS, DEFAULT_CLAIM_FORMAT)
        threshold = options.get("threshold", DEFAULT_THRESHOLD)
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 <= threshold <= 1:
            msg = f"'threshold' must be a number from 0 to 1; got {json.dumps(threshold)[:80]}"
            if threshold is None and read_as_null:
                # The body is read as standard JSON: NaN, Infinity and numbers too large for a float are null.
                msg += " (NaN, Infinity and numbers too large for a float, such as 1e999, are read as null)"
            raise BodyError(msg)
        # An option this check would not use is refused, as the command refuses it, not ignored.
        unused = option_not_used(
            mode,
            with_model=chosen == "model",
            claim_format_given="claim_format" in options,
            threshold_given="threshold" in options,
        )
        if unused is not None:
            raise BodyError(_NOT_USED[unused])
        if chosen == "model" and model is None:
            msg = "'checker': no chat model is configured (start serve with --model provider:name)"
            raise BodyError(msg)
        _within_limits(item, mode, limits)
        # The command's own extractor and checker for these options, and its own per-item step.
        built = build_checkers(
            model=model if chosen == "model" else None, claim_format=claim_format, threshold=float(threshold)
        )
        extractor = _Recording(built.extractor)
        checker = _RecordingChecker(built.checker)
        checkers = Checkers(extractor=extractor, checker=checker)
        result, problem = checked_item(item, mode=mode, aggregator=aggregator, checkers=checkers)
        if problem is not None:
            raise BodyError(problem[:300])
        if mode == "check":
            result["claim_spans"] = [None] * len(result["claims"])
        else:
            result["claim_spans"] = [
                [c.start, c.end] if c.start is not None and c.end is not None else None for c in extractor.claims
            ]
        if "ys" in result:
            result["verdicts"] = {a: aggregate(result["ys"], a) for a in _AGGREGATORS}
            # Why each claim is not supported: the meaning guard that fired, in a key of the page's own
            # (the check command's output keeps its columns).
            result["guards"] = [verdict.to_dict(guard=True)["guard"] for verdict in checker.checks]
        return result

    async def api(request: Request) -> Response:
        try:
            body, read_as_null = await _body(request, limits)
            # Checking is CPU work (or a model's calls): off the event loop.
            result = await run_in_threadpool(run, body, read_as_null)
        except BodyError as problem:
            return JSONResponse({"error": str(problem)}, status_code=problem.status, headers=NOSNIFF)
        return JSONResponse(result, headers=NOSNIFF)

    return [
        Route("/check", page, methods=["GET"]),
        static_route(),
        Route("/api/check", api, methods=["POST"]),
    ]
