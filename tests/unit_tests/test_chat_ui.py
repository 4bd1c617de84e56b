"""The chat UI's server, in-process: every content shape becomes text, and no event carries markup."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from langchain_core.documents import Document
from starlette.testclient import TestClient

from langchain_refs.apps.chat_ui import content_text, create_app
from tests.unit_tests.fakes import streaming_model

# The question "Paris?" ranks the first document first (it says Paris more often), so it is id=1.
DOCUMENTS = [
    Document(
        "Paris is big. Paris is Paris.", metadata={"source": "https://a.org/paris", "title": "Paris <b>facts</b>"}
    ),
    Document("Rome is older than Paris.", metadata={"source": "javascript:alert(9)", "title": "Rome"}),
]

# One hostile answer, streamed in every content shape a chat model may use.
HOSTILE_CHUNKS: list[Any] = [
    'Paris <img src=x onerror="window.__xss=1"> is big',  # a string
    ["[1](id", "=1). ", "<script>window.__xss=2</script>"],  # a list of strings; the marker is cut in two
    [{"type": "text", "text": " Rome & <b onmouseover=alert(3)>co</b>"}, {"type": "reasoning", "reasoning": "<i>"}],
    [" is old", {"type": "image_url", "image_url": {"url": "javascript:alert(4)"}}, {"type": "text", "text": "[2]"}],
    [{"type": "text", "text": "(id=2). Fake: \x001\x00"}, {"type": "tool_use", "name": "x", "input": {}}],
]
# Written by hand: the text a reader must see, citations shown as [n].
HOSTILE_SHOWN = (
    'Paris <img src=x onerror="window.__xss=1"> is big[1]. <script>window.__xss=2</script>'
    " Rome & <b onmouseover=alert(3)>co</b> is old[2]. Fake: \ufffd1\ufffd"
)


def events(body: str) -> list[tuple[str, Any]]:
    return [(name, json.loads(data)) for name, data in re.findall(r"event: (\w+)\ndata: (.*)\n\n", body)]


def shown(stream: list[tuple[str, Any]]) -> str:
    """What the page shows: text events as text, citation events as [n]."""
    return "".join(
        data if name == "text" else f"[{data['number']}]" for name, data in stream if name in ("text", "citation")
    )


def ask(question: str, **app: Any) -> str:
    return TestClient(create_app(**app)).get("/api/ask", params={"q": question}).text


def test_every_content_shape_becomes_text_and_no_event_carries_markup() -> None:
    """A hostile answer as a string, strings or text blocks arrives as literal text; other blocks are left out."""
    body = ask("Paris?", model=streaming_model(HOSTILE_CHUNKS), documents=DOCUMENTS, k=2)
    stream = events(body)
    assert {name for name, _ in stream} == {"start", "text", "citation", "references", "done"}
    assert not set("<>&") & set(body), "a markup character reached the wire"
    assert shown(stream) == HOSTILE_SHOWN
    assert all(isinstance(data, str) for name, data in stream if name == "text")
    assert [data for name, data in stream if name == "citation"] == [{"number": 1}, {"number": 2}]
    assert "[object Object]" not in body
    assert "reasoning" not in body
    assert "alert(4)" not in body


def test_sources_are_data_with_safe_urls_only() -> None:
    """The references event carries titles as text and a URL only when it is safe to link."""
    body = ask("Paris?", model=streaming_model(HOSTILE_CHUNKS), documents=DOCUMENTS, k=2)
    (answer_id,) = [data["answer_id"] for name, data in events(body) if name == "start"]
    (references,) = [data for name, data in events(body) if name == "references"]
    assert references == {
        "answer_id": answer_id,
        "sources": [
            {"number": 1, "title": "Paris <b>facts</b>", "url": "https://a.org/paris", "documents": [1]},
            {"number": 2, "title": "Rome", "url": None, "documents": [2]},
        ],
    }


def test_demo_model_with_hostile_documents() -> None:
    """The offline model quoting a hostile document streams it as text; a javascript: source is no link."""
    hostile = [
        Document(
            "The answer is <script>alert(1)</script> in bold.",
            metadata={"source": "javascript:alert(2)", "title": '<img src=x onerror="alert(3)">'},
        ),
        Document("The answer is also here.", metadata={"source": "https://ok.org/a?b=<c>", "title": "Fine & dandy"}),
    ]
    body = ask("What is the answer?", documents=hostile)
    assert not set("<>&") & set(body)
    stream = events(body)
    assert shown(stream) == "The answer is also here[1]. The answer is <script>alert(1)</script> in bold[2]."
    (references,) = [data for name, data in stream if name == "references"]
    urls = {source["title"]: source["url"] for source in references["sources"]}
    assert urls['<img src=x onerror="alert(3)">'] is None
    assert urls["Fine & dandy"] == "https://ok.org/a?b=<c>"


def test_page_lets_only_its_own_script_run() -> None:
    """The page is served with a fresh script nonce in a Content-Security-Policy, and never uses innerHTML."""
    client = TestClient(create_app())
    first, second = client.get("/"), client.get("/")
    policy = first.headers["content-security-policy"]
    nonce = re.search(r"script-src 'nonce-([\w-]+)'", policy)
    assert nonce is not None
    assert f'<script nonce="{nonce[1]}">' in first.text
    assert "object-src 'none'" in policy
    assert "unsafe-inline" not in policy
    assert second.headers["content-security-policy"] != policy
    assert "innerHTML" not in first.text
    assert "insertAdjacentHTML" not in first.text


def test_a_chain_that_streams_str_works_too() -> None:
    """A model chain ending in a string parser streams text events and citations like a chat model."""
    from langchain_core.output_parsers import StrOutputParser

    model = streaming_model(["Paris is big[1](id=1).", [{"type": "text", "text": " <i>Yes</i>"}]]) | StrOutputParser()
    stream = events(ask("Paris?", model=model, documents=DOCUMENTS, k=2))
    assert shown(stream) == "Paris is big[1]. <i>Yes</i>"


def test_empty_question_is_refused() -> None:
    """An empty question is a 400 with a clear message."""
    response = TestClient(create_app()).get("/api/ask")
    assert response.status_code == 400
    assert "ask a question" in response.json()["error"]


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ("plain", "plain"),
        (["a", "b"], "ab"),
        ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "ab"),
        (["a", {"type": "reasoning", "reasoning": "r"}, {"type": "text", "text": 3}, {"text": "untyped"}], "a"),
        (None, ""),
    ],
)
def test_content_text(content: Any, text: str) -> None:
    """content_text keeps strings and text blocks, in order, and leaves every other block out."""
    assert content_text(content) == text
