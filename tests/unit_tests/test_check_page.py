"""The checking page's server, in-process: POST /api/check answers as `langchain-refs check` does, with limits."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from starlette.applications import Starlette
from starlette.testclient import TestClient

from langchain_refs.apps import main
from langchain_refs.apps.check.page import CheckLimits, check_routes

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "check_input.json"
STATIC = ROOT / "langchain_refs" / "apps" / "static"
EXTRAS = ("claim_spans", "verdicts", "warnings", "guards")

# A supported claim copied from the reference, and one about something the reference never mentions.
PARIS = {
    "response": "Paris is the capital of France. The moon is made of green cheese.",
    "reference": "Paris is the capital of France. It lies on the Seine.",
}


def client(**routes: Any) -> TestClient:
    return TestClient(Starlette(routes=check_routes(**routes)))


def post(body: Any, **routes: Any) -> Any:
    return client(**routes).post("/api/check", json=body)


def cli_output(tmp_path: Path, source: Path, mode: str, aggregator: str, *options: str) -> list[dict[str, Any]]:
    """The items `langchain-refs check MODE` writes for ``source``."""
    output = tmp_path / f"{mode}-{aggregator}.json"
    arguments = ["check", mode, "--input", str(source), "--output", str(output), "--aggregator", aggregator]
    assert main([*arguments, *options]) == 0
    items: list[dict[str, Any]] = json.loads(output.read_text(encoding="utf-8"))
    return items


def without_extras(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in answer.items() if key not in EXTRAS}


# -- the same answers as the command line ------------------------------------------


@pytest.mark.parametrize("aggregator", ["strict", "soft", "major"])
@pytest.mark.parametrize("mode", ["extract", "extract-check"])
def test_api_equals_command_line_on_examples(tmp_path: Path, mode: str, aggregator: str) -> None:
    """Each item of examples/check_input.json gets from the API exactly what the check command writes for it."""
    expected = cli_output(tmp_path, EXAMPLES, mode, aggregator)
    items = json.loads(EXAMPLES.read_text(encoding="utf-8"))
    assert len(expected) == len(items) == 4
    web = client()
    for item, written in zip(items, expected, strict=True):
        answer = web.post("/api/check", json={**item, "mode": mode, "aggregator": aggregator})
        assert answer.status_code == 200, answer.text
        assert without_extras(answer.json()) == written


@pytest.mark.parametrize("threshold", [0.0, 0.9, 1.0])
def test_api_equals_command_line_with_a_threshold(tmp_path: Path, threshold: float) -> None:
    """The threshold option answers as --threshold does (0 and 0.9 each change some of the examples' labels)."""
    expected = cli_output(tmp_path, EXAMPLES, "extract-check", "soft", "--threshold", str(threshold))
    web = client()
    for item, written in zip(json.loads(EXAMPLES.read_text(encoding="utf-8")), expected, strict=True):
        answer = web.post("/api/check", json={**item, "aggregator": "soft", "threshold": threshold}).json()
        assert without_extras(answer) == written


def test_api_equals_command_line_in_check_mode(tmp_path: Path) -> None:
    """Mode check on the extracted claims answers as `check check` does on the same file."""
    extracted = tmp_path / "extracted.json"
    extracted.write_text(json.dumps(cli_output(tmp_path, EXAMPLES, "extract", "strict")), encoding="utf-8")
    expected = cli_output(tmp_path, extracted, "check", "major")
    web = client()
    for item, written in zip(json.loads(extracted.read_text(encoding="utf-8")), expected, strict=True):
        answer = web.post("/api/check", json={**item, "mode": "check", "aggregator": "major"}).json()
        assert without_extras(answer) == written
        assert answer["claim_spans"] == [None] * len(item["claims"])


# -- the shapes ----------------------------------------------------------------------


def test_answer_shape_with_places_and_every_verdict() -> None:
    """The answer holds the item, claims with their places, labels, checks and the three verdicts."""
    answer = post({**PARIS, "question": "What is Paris?", "id": 7})
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    data = answer.json()
    assert data["id"] == 7  # other keys come back, as the command keeps them
    assert data["question"] == "What is Paris?"
    assert data["claims"] == ["Paris is the capital of France.", "The moon is made of green cheese."]
    assert data["claim_spans"] == [[0, 31], [32, 65]]
    assert [PARIS["response"][a:b] for a, b in data["claim_spans"]] == data["claims"]
    assert data["ys"] == ["Entailment", "Neutral"]
    assert data["Y"] == "Neutral"
    # Hand-computed: one of two claims each way; a tie in major goes to the worse label.
    assert data["verdicts"] == {
        "strict": "Neutral",
        "soft": {"Entailment": 0.5, "Neutral": 0.5, "Contradiction": 0.0},
        "major": "Neutral",
    }
    first = data["checks"][0]
    assert first["label"] == "Entailment"
    assert first["evidence"][0] == {"reference": 0, "start": 0, "end": 31, "score": first["evidence"][0]["score"]}
    assert data["checks"][1]["label"] == "Neutral"


@pytest.mark.parametrize(("aggregator", "y"), [("strict", "Neutral"), ("major", "Neutral")])
def test_aggregator_chooses_y(aggregator: str, y: str) -> None:
    """The aggregator option decides Y, as --aggregator does; the options are not echoed in the item."""
    data = post({**PARIS, "aggregator": aggregator, "mode": "extract-check", "threshold": 0.4}).json()
    assert data["Y"] == y
    assert not {"aggregator", "mode", "threshold", "checker", "claim_format"} & set(data)


def test_soft_y_is_shares() -> None:
    """Soft gives the share of each label as Y."""
    assert post({**PARIS, "aggregator": "soft"}).json()["Y"] == {
        "Entailment": 0.5,
        "Neutral": 0.5,
        "Contradiction": 0.0,
    }


def test_extract_mode_gives_claims_only() -> None:
    """Mode extract needs no reference and adds neither labels nor verdicts."""
    data = post({"response": PARIS["response"], "mode": "extract"}).json()
    assert data == {
        "response": PARIS["response"],
        "claims": ["Paris is the capital of France.", "The moon is made of green cheese."],
        "claim_spans": [[0, 31], [32, 65]],
        "warnings": [],
    }


def test_no_claims_is_abstain() -> None:
    """A response with no claim gives no labels and Abstain every way."""
    data = post({"response": "Hello!", "reference": "Anything."}).json()
    assert data["claims"] == data["ys"] == data["claim_spans"] == []
    assert data["verdicts"] == {"strict": "Abstain", "soft": {"Abstain": 1.0}, "major": "Abstain"}


def test_several_sources_are_numbered_in_evidence() -> None:
    """Evidence names the source it stands in by its position in the list."""
    data = post({"response": "It lies on the Seine.", "reference": ["Rome is old.", "Paris lies on the Seine."]}).json()
    assert data["ys"] == ["Entailment"]
    assert data["checks"][0]["evidence"][0]["reference"] == 1


def test_model_checker_is_the_given_chat_model() -> None:
    """checker=model extracts and checks with the chat model the routes were given, as check --model does."""
    model = FakeListChatModel(
        responses=['{"claims": ["Paris is the capital of France.", "Paris is big"]}', '{"label": "Contradiction"}']
    )
    data = post({**PARIS, "checker": "model", "claim_format": "subsentence"}, model=model).json()
    assert data["claims"] == ["Paris is the capital of France.", "Paris is big"]
    # The first is a piece of the response; the second a paraphrase, with no place.
    assert data["claim_spans"] == [[0, 31], None]
    assert data["ys"] == ["Contradiction", "Neutral"]  # the fake's second reply is not a label: Neutral


def test_unreadable_model_replies_are_warned_about() -> None:
    """A reply the checker cannot read is named in warnings (one line each); the offline checker adds none."""
    model = FakeListChatModel(responses=['{"claims": ["Paris is the capital of France."]}', "I would rather not say"])
    data = post({**PARIS, "checker": "model", "claim_format": "subsentence"}, model=model).json()
    assert data["ys"] == ["Neutral"]
    (warning,) = data["warnings"]
    assert warning.startswith("unreadable claim checker reply"), warning
    assert "I would rather not say" in warning
    assert post(PARIS).json()["warnings"] == []


class Unreachable(FakeListChatModel):
    """A chat model whose every call fails as a model behind a dead network would."""

    def _call(self, *args: Any, **kwargs: Any) -> str:
        raise ConnectionError("network is unreachable\nsecond line")


def test_a_model_that_is_down_is_said_so_not_hidden_as_abstain() -> None:
    """When every model call fails the answer still comes (Abstain), and its warnings say why."""
    data = post({**PARIS, "checker": "model"}, model=Unreachable(responses=["unused"])).json()
    assert data["Y"] == "Abstain"
    assert data["warnings"], data
    assert all("ConnectionError('network is unreachable" in w for w in data["warnings"])


def test_warnings_do_not_depend_on_the_logging_setup() -> None:
    """An app that quiets the library's logger (or all logging) still gets the warnings in the answer."""
    logger = logging.getLogger("langchain_refs")
    level = logger.level
    try:
        logger.setLevel(logging.CRITICAL)
        logging.disable(logging.WARNING)
        data = post({**PARIS, "checker": "model"}, model=Unreachable(responses=["unused"])).json()
    finally:
        logging.disable(logging.NOTSET)
        logger.setLevel(level)
    assert data["Y"] == "Abstain"
    assert data["warnings"]


async def test_concurrent_requests_each_get_their_own_warnings() -> None:
    """Two model-checked requests with the model down and two offline ones, at once: warnings stay apart."""
    import asyncio

    import httpx

    app = Starlette(routes=check_routes(model=Unreachable(responses=["unused"])))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as http:
        bodies = [{**PARIS, "checker": "model"}, PARIS, {**PARIS, "checker": "model"}, PARIS]
        answers = await asyncio.gather(*(http.post("/api/check", json=body) for body in bodies))
    counts = [len(answer.json()["warnings"]) for answer in answers]
    alone = len(post({**PARIS, "checker": "model"}, model=Unreachable(responses=["unused"])).json()["warnings"])
    assert alone > 0
    assert counts == [alone, 0, alone, 0]


def test_offline_is_default_even_with_a_model() -> None:
    """Without checker=model the offline pair checks, even when a model is configured."""
    model = FakeListChatModel(responses=['{"label": "Contradiction"}'])
    assert post(PARIS, model=model).json()["ys"] == ["Entailment", "Neutral"]


# -- bad requests ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ([PARIS], "the body must be a JSON object: one item of the check command's input, with options"),
        ({"reference": "x"}, "no 'response' string to extract claims from"),
        ({"response": ["a"], "reference": "x"}, "no 'response' string to extract claims from"),
        ({"response": "A b c d.", "reference": 3}, "'reference' must be a string or a list of strings"),
        ({"response": "A b c d.", "reference": ["a", 2]}, "'reference' must be a string or a list of strings"),
        ({"response": "A b c d."}, "no 'reference' to check against"),
        (
            {"response": "A b c d.", "references": ["a"]},
            "no 'reference' to check against (the field is 'reference', a string or a list of strings)",
        ),
        ({**PARIS, "question": 5}, "'question' must be a string"),
        ({**PARIS, "mode": "verify"}, "'mode' must be one of extract, check, extract-check; got \"verify\""),
        ({**PARIS, "aggregator": "mean"}, "'aggregator' must be one of strict, soft, major; got \"mean\""),
        ({**PARIS, "checker": "gpt"}, "'checker' must be one of offline, model; got \"gpt\""),
        ({**PARIS, "claim_format": "x"}, "'claim_format' must be one of triplet, subsentence; got \"x\""),
        ({**PARIS, "threshold": 2}, "'threshold' must be a number from 0 to 1; got 2"),
        ({**PARIS, "threshold": True}, "'threshold' must be a number from 0 to 1; got true"),
        ({**PARIS, "threshold": "0.5"}, "'threshold' must be a number from 0 to 1; got \"0.5\""),
        (
            {**PARIS, "checker": "model"},
            "'checker': no chat model is configured (start serve with --model provider:name)",
        ),
        ({"reference": "x", "mode": "check"}, "no 'claims' list to check (run extract first)"),
        (
            {"reference": "x", "mode": "check", "claims": "abc"},
            "'claims' must be a list of claims (as extract writes them), got str",
        ),
        # Written by hand: the wrong claim named by its place and shown as JSON, never as a Python repr.
        (
            {"reference": "x", "mode": "check", "claims": [7]},
            "claims[0] must be a string or a [head, relation, tail] triplet of strings, got 7",
        ),
        (
            {"reference": "x", "mode": "check", "claims": ["Water is wet.", {"a": 1}]},
            'claims[1] must be a string or a [head, relation, tail] triplet of strings, got {"a": 1}',
        ),
        (
            {"reference": "x", "mode": "check", "claims": [["a", "b"]]},
            'claims[0] must be a string or a [head, relation, tail] triplet of strings, got ["a", "b"]',
        ),
        (
            {"reference": "x", "mode": "check", "claims": [None]},
            "claims[0] must be a string or a [head, relation, tail] triplet of strings, got null",
        ),
        (
            {"reference": "x", "mode": "check", "claims": ["Water is wet.", "  "]},
            "claims[1] is blank: there is nothing to check",
        ),
        (
            {**PARIS, "claim_format": "subsentence"},
            '\'claim_format\': only with "checker": "model" (the offline extractor has no format)',
        ),
        (
            {**PARIS, "mode": "extract", "threshold": 0.9},
            "'threshold': only when claims are checked (mode check or extract-check)",
        ),
    ],
)
def test_bad_body_is_a_400_naming_what_is_wrong(body: Any, error: str) -> None:
    """A body of the wrong shape gets 400 and one line saying what is wrong."""
    answer = post(body)
    assert answer.status_code == 400
    assert answer.json() == {"error": error}


def test_a_threshold_too_large_for_a_float_is_named_as_read() -> None:
    """``1e999`` is read as null (standard JSON): the line says so, not only "got null"."""
    raw = b'{"response": "Paris is in France.", "reference": "Paris is in France.", "threshold": 1e999}'
    answer = client().post("/api/check", content=raw, headers={"Content-Type": "application/json"})
    assert answer.status_code == 400
    assert answer.json() == {
        "error": "'threshold' must be a number from 0 to 1; got null (NaN, Infinity and numbers too large for a "
        "float, such as 1e999, are read as null)"
    }


def test_a_threshold_sent_as_null_is_named_as_sent() -> None:
    """A literal ``null`` threshold is refused as what it is: no note about numbers read as null."""
    body = {"response": "Paris is in France.", "reference": "Paris is in France.", "threshold": None}
    answer = post(body)
    assert answer.status_code == 400
    assert answer.json() == {"error": "'threshold' must be a number from 0 to 1; got null"}


@pytest.mark.parametrize(
    ("raw", "start"),
    [
        (b'{"response": ', "the body is not valid JSON (Expecting value at line 1, column 14)"),
        (b"", "the body is not valid JSON (Expecting value at line 1, column 1)"),
        (b'{"response": "caf\xe9"}', "the body is not UTF-8 (byte 0xe9 at offset 17)"),
        (b"[" * 100_000 + b"]" * 100_000, "cannot read the body's JSON: nested too deeply to read"),
    ],
)
def test_unreadable_body_is_a_400(raw: bytes, start: str) -> None:
    """Malformed JSON, bytes that are not UTF-8 and JSON too deep to read each get 400 and one line."""
    answer = client().post("/api/check", content=raw, headers={"Content-Type": "application/json"})
    assert answer.status_code == 400
    assert answer.json() == {"error": start}


@pytest.mark.parametrize("key", ["response", "unused"])
def test_a_lone_surrogate_anywhere_in_the_body_is_a_400(key: str) -> None:
    """A "\\ud800" escape, in a key the check reads or in one it ignores: 400 and one line, never a 500."""
    body = {"response": "Paris is the capital of France.", "reference": "Paris is the capital of France."}
    raw = json.dumps(body)[:-1] + f', "{key}x": "a\\ud800b"}}'
    answer = client().post("/api/check", content=raw, headers={"Content-Type": "application/json"})
    assert answer.status_code == 400
    assert answer.json() == {"error": "the body holds \\ud800, a lone surrogate that UTF-8 cannot write"}


def test_body_not_sent_as_json_is_a_415() -> None:
    """A form post (what a curl -d sends) gets 415 saying to send JSON."""
    answer = client().post("/api/check", content=json.dumps(PARIS), headers={"Content-Type": "text/plain"})
    assert answer.status_code == 415
    assert answer.json() == {"error": "send the body as JSON, with Content-Type: application/json"}


def test_numbers_json_cannot_hold_are_read_as_null() -> None:
    """NaN in a kept key comes back as null, never as NaN (the answer stays standard JSON)."""
    raw = b'{"response": "Paris is the capital of France.", "reference": "Paris is the capital of France.", "x": NaN}'
    answer = client().post("/api/check", content=raw, headers={"Content-Type": "application/json"})
    assert answer.status_code == 200
    assert "NaN" not in answer.text
    assert answer.json()["x"] is None


def test_only_get_and_post() -> None:
    """The API takes POST only; the page GET only."""
    web = client()
    assert web.get("/api/check").status_code == 405
    assert web.post("/check").status_code == 405


# -- limits -------------------------------------------------------------------------


SMALL = CheckLimits(
    body_bytes=2_000, response_chars=100, question_chars=20, references=2, reference_chars=150, claims=3
)


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"response": "a" * 101, "reference": "x"}, "'response' is 101 characters; the limit is 100"),
        ({**PARIS, "question": "q" * 21}, "'question' is 21 characters; the limit is 20"),
        ({"response": "Hi.", "reference": ["a", "b", "c"]}, "'reference' is 3 sources; the limit is 2"),
        ({"response": "Hi.", "reference": ["a" * 100, "b" * 51]}, "'reference' is 151 characters; the limit is 150"),
        ({"mode": "check", "claims": ["a", "b", "c", "d"], "reference": "x"}, "'claims' is 4 claims; the limit is 3"),
        (
            {"response": "Hi.", "reference": "x", "pad": "p" * 2_000},
            r"the body is 2,0\d\d bytes; the limit is 2,000",
        ),
    ],
)
def test_request_over_a_limit_is_a_413_naming_it(body: Any, error: str) -> None:
    """Every field over its limit, and a body over its byte limit, gets 413 and the limit in one line."""
    answer = post(body, limits=SMALL)
    assert answer.status_code == 413
    assert re.fullmatch(error, answer.json()["error"])


def test_body_without_length_is_cut_at_the_limit() -> None:
    """A streamed body with no Content-Length is refused once it passes the limit."""

    def chunks() -> Iterator[bytes]:
        yield b'{"response": "'
        for _ in range(100):
            yield b"x" * 100
        yield b'"}'

    answer = client(limits=SMALL).post("/api/check", content=chunks(), headers={"Content-Type": "application/json"})
    assert answer.status_code == 413
    assert re.fullmatch(r"the body is [\d,]+ bytes; the limit is 2,000", answer.json()["error"])


def test_limits_at_the_edge_are_taken() -> None:
    """A request exactly at each limit is checked."""
    body = {"response": "a" * 100, "question": "q" * 20, "reference": ["a" * 100, "b" * 50]}
    assert post(body, limits=SMALL).status_code == 200


# -- the page and its files ---------------------------------------------------------


def test_page_has_a_fresh_nonce_in_its_policy_and_tags() -> None:
    """The page's script carries the nonce of its Content-Security-Policy, new on every load."""
    web = client()
    nonces = []
    for _ in range(2):
        page = web.get("/check")
        policy = page.headers["content-security-policy"]
        nonce = re.search(r"script-src 'nonce-([\w-]+)'", policy)
        assert nonce is not None
        assert "'unsafe-inline'" not in policy
        assert "object-src 'none'" in policy
        assert f'<script type="module" src="/static/check.js" nonce="{nonce[1]}"></script>' in page.text
        assert '<link rel="stylesheet" href="/static/app.css">' in page.text
        assert "{{" not in page.text
        nonces.append(nonce[1])
    assert nonces[0] != nonces[1]


def test_page_offers_the_model_only_when_there_is_one() -> None:
    """The checker choice lists the chat model when one is configured, its name escaped."""
    assert 'value="model"' not in client().get("/check").text
    model = FakeListChatModel(responses=["x"], name="<b>x</b>")
    page = client(model=model).get("/check").text
    assert '<option value="model">Chat model: FakeListChatModel</option>' in page
    assert "<b>x</b>" not in page


def test_page_links_back_to_the_chat_page() -> None:
    """The page's navigation links to the chat page."""
    assert '<a class="nav-link" href="/">Chat</a>' in client().get("/check").text


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("check.js", "text/javascript; charset=utf-8"),
        ("dom.js", "text/javascript; charset=utf-8"),
        ("check.css", "text/css; charset=utf-8"),
        ("app.css", "text/css; charset=utf-8"),
    ],
)
def test_static_files_are_served_with_their_type(name: str, kind: str) -> None:
    """The page's scripts and styles come from the app's one files route, as themselves, not sniffed."""
    answer = client().get(f"/static/{name}")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == kind
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.content == (STATIC / name).read_bytes()


@pytest.mark.parametrize("name", ["page.py", "..%2F_web.py", "..%2Fcheck%2Fpage.html", "CHECK.JS", "dom", ".js"])
def test_other_files_are_not_served(name: str) -> None:
    """Only the pages' own files are served, by name: no other name reaches the file system."""
    assert client().get(f"/static/{name}").status_code == 404


def test_script_never_parses_text_as_html() -> None:
    """check.js builds the DOM with createElement and textContent only: no HTML sink, no eval."""
    script = (STATIC / "check.js").read_text(encoding="utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "srcdoc"):
        assert sink not in script
    assert "textContent" in script
    assert "createElement" in script
