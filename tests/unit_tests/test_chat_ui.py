"""The chat UI's server, in-process: every content shape becomes text, no event carries markup, Markdown is data."""

from __future__ import annotations

import importlib.util
import json
import os
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableGenerator
from starlette.testclient import TestClient

from langchain_refs.apps.chat_ui import ALLOWED_TAGS, STATIC, content_text, create_app, markdown_tree
from langchain_refs.apps.chat_ui import chip as chip_token
from langchain_refs.streaming import AnswerReferences
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
    # Marks like the server's own (old and new) cannot fake a citation.
    [{"type": "text", "text": "(id=2). Fake: \x001\x00 \ue0001\ue001"}, {"type": "tool_use", "name": "x", "input": {}}],
]
# Written by hand: the text a reader must see, citations shown as [n].
HOSTILE_SHOWN = (
    'Paris <img src=x onerror="window.__xss=1"> is big[1]. <script>window.__xss=2</script>'
    " Rome & <b onmouseover=alert(3)>co</b> is old[2]. Fake: \ufffd1\ufffd \ufffd1\ufffd"
)


def events(body: str) -> list[tuple[str, Any]]:
    return [(name, json.loads(data)) for name, data in re.findall(r"event: (\w+)\ndata: (.*)\n\n", body)]


def shown(stream: list[tuple[str, Any]]) -> str:
    """What the token and citation events say: text as text, citations as [n]."""
    return "".join(
        data["text"] if name == "token" else f"[{data['number']}]"
        for name, data in stream
        if name in ("token", "citation")
    )


def tree_text(nodes: list[Any]) -> str:
    """The text a tree shows, citations as [n] (an oracle written here, not the page's code)."""
    out = []
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
        elif "cite" in node:
            out.append(f"[{node['cite']}]")
        else:
            out.append(tree_text(node["children"]))
    return "".join(out)


def elements(nodes: list[Any]) -> Iterator[dict[str, Any]]:
    for node in nodes:
        if isinstance(node, dict) and "tag" in node:
            yield node
            yield from elements(node["children"])


def final_tree(stream: list[tuple[str, Any]]) -> list[Any]:
    renders = [data["blocks"] for name, data in stream if name == "render"]
    assert renders, "no render event"
    return renders[-1]


def chat(client: TestClient, question: str, conversation: str | None = None) -> list[tuple[str, Any]]:
    response = client.post("/api/chat", json={"question": question, "conversation": conversation})
    assert response.status_code == 200, response.text
    assert not set("<>&") & set(response.text), "a markup character reached the wire"
    return events(response.text)


def ask(question: str, **app: Any) -> list[tuple[str, Any]]:
    return chat(TestClient(create_app(**app)), question)


def the(stream: list[tuple[str, Any]], name: str) -> Any:
    (data,) = [data for event, data in stream if event == name]
    return data


def test_every_content_shape_becomes_text_and_no_event_carries_markup() -> None:
    """A hostile answer as a string, strings or text blocks arrives as literal text; other blocks are left out."""
    stream = ask("Paris?", model=streaming_model(HOSTILE_CHUNKS), documents=DOCUMENTS, k=2)
    assert stream[0][0] == "start"
    assert [name for name, _ in stream][-3:] == ["render", "references", "done"]
    assert {name for name, _ in stream} == {"start", "token", "citation", "render", "references", "done"}
    assert shown(stream) == HOSTILE_SHOWN
    assert [data for name, data in stream if name == "citation"] == [
        {"number": 1, "index": 0},
        {"number": 2, "index": 1},
    ]
    body = json.dumps(stream)
    assert "[object Object]" not in body
    assert "reasoning" not in body
    assert "alert(4)" not in body
    # The rendered answer is the same text (Markdown had nothing to format), the raw HTML as text.
    tree = final_tree(stream)
    assert tree_text(tree) == HOSTILE_SHOWN
    assert {node["tag"] for node in elements(tree)} == {"p"}


# The host a browser's link opens (WHATWG URL, as Node's and Chromium's `new URL(url).hostname` give it, checked by
# hand against Node 20), and the domain the page shows beside the source: the same, or none.
DOMAINS = [
    ("https://www.a.org/x", "a.org"),
    ("HTTPS://A.org:8080/", "a.org"),
    ("https://user@a.org/", "a.org"),
    ("https://medium.com/@user/post", "medium.com"),
    ("//a.org/x", "a.org"),
    ("https://evil.example\\@trusted.example/x", None),  # opens evil.example; Python reads trusted.example
    ("\\\\evil.example\\x", None),  # opens evil.example; Python reads a path
    ("https://evil%2Eexample/", None),  # opens evil.example
    ("https://\u0430pple.com/", None),  # a Cyrillic a (U+0430): a look-alike of apple.com, opens xn--pple-43d.com
    ("https://fa\u00df.de/", None),  # opens xn--fa-hia.de (UTS #46); Python's idna codec would say fass.de
    ("https://xn--fa-hia.de/", "xn--fa-hia.de"),
    ("b.pdf", None),
]


@pytest.mark.parametrize(("url", "domain"), DOMAINS)
def test_the_domain_shown_is_the_host_the_link_opens_or_none(url: str, domain: str | None) -> None:
    """A source's domain names where its link goes, as a browser reads the URL, never another host."""
    document = Document("Paris is big.", metadata={"source": url, "title": "Paris"})
    model = streaming_model(["Paris is big", "[1](id=1)."])
    (source,) = the(ask("Paris?", model=model, documents=[document], k=1), "references")["sources"]
    assert source["url"] == url
    assert source["domain"] == domain


def test_sources_are_data_with_safe_urls_only() -> None:
    """The references event carries titles as text, a URL and domain only when the URL is safe to link."""
    stream = ask("Paris?", model=streaming_model(HOSTILE_CHUNKS), documents=DOCUMENTS, k=2)
    references = the(stream, "references")
    assert references["answer_id"] == the(stream, "start")["answer_id"]
    assert references["sources"] == [
        {
            "number": 1,
            "title": "Paris <b>facts</b>",
            "url": "https://a.org/paris",
            "domain": "a.org",
            "excerpt": "Paris is big.",  # the passage of its first citation: the card's one-line snippet
            "cited": True,
            "documents": [1],
            "supported": None,
            "mixed": False,
        },
        {
            "number": 2,
            "title": "Rome",
            "url": None,
            "domain": None,
            "excerpt": "Rome is older than Paris.",
            "cited": True,
            "documents": [2],
            "supported": None,
            "mixed": False,
        },
    ]
    assert references["consulted"] == []
    assert references["invalid"] == []


@pytest.mark.parametrize(
    "source",
    [
        "javascript:alert(2)",
        "javascript&#58;alert(2)",
        "&#x6A;avascript:alert(2)",
        "java\tscript:alert(2)",
        "JaVaScRiPt&colon;alert(2)",
        "%6Aavascript:alert(2)",
        "data:text/html,<script>alert(2)</script>",
    ],
)
def test_demo_model_with_hostile_documents(source: str) -> None:
    """The offline model quoting a hostile document streams it as text; no encoding of javascript: is a link."""
    hostile = [
        Document(
            "The answer is <script>alert(1)</script> in bold.",
            metadata={"source": source, "title": '<img src=x onerror="alert(3)">'},
        ),
        Document("The answer is also here.", metadata={"source": "https://ok.org/a?b=<c>", "title": "Fine & dandy"}),
    ]
    stream = ask("What is the answer?", documents=hostile)
    assert shown(stream) == "The answer is also here[1]. The answer is <script>alert(1)</script> in bold[2]."
    references = the(stream, "references")
    urls = {source["title"]: source["url"] for source in references["sources"]}
    assert urls == {'<img src=x onerror="alert(3)">': None, "Fine & dandy": "https://ok.org/a?b=<c>"}


def test_page_lets_only_its_own_script_run() -> None:
    """The page loads its one script with a fresh nonce under a strict CSP, and no script uses innerHTML."""
    client = TestClient(create_app())
    first, second = client.get("/"), client.get("/")
    policy = first.headers["content-security-policy"]
    nonce = re.search(r"script-src 'nonce-([\w-]+)';", policy)
    assert nonce is not None
    assert f'<script type="module" src="/static/chat.js" nonce="{nonce[1]}"></script>' in first.text
    assert first.text.count("<script") == 1
    assert "style-src 'self';" in policy
    assert "object-src 'none'" in policy
    assert "unsafe-inline" not in policy
    assert "unsafe-eval" not in policy
    assert second.headers["content-security-policy"] != policy
    scripts = [first.text] + [path.read_text(encoding="utf-8") for path in STATIC.glob("*.js")]
    assert len(scripts) >= 2
    for text in scripts:
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
            assert sink not in text
    # No inline event handler attribute in the page.
    assert not re.search(r"\son\w+\s*=", first.text)


def test_both_pages_have_one_policy() -> None:
    """The chat page and the checking page are served under the same Content-Security-Policy, each its own nonce."""
    client = TestClient(create_app())
    chat, check = (client.get(path).headers["content-security-policy"] for path in ("/", "/check"))
    assert chat != check
    assert re.sub(r"'nonce-[\w-]+'", "'nonce'", chat) == re.sub(r"'nonce-[\w-]+'", "'nonce'", check)


def test_the_page_is_given_the_servers_list_of_allowed_tags() -> None:
    """The page reads ALLOWED_TAGS from the server (data-tags): the script holds no list of its own."""
    page = TestClient(create_app()).get("/").text
    given = re.search(r'<body [^>]*data-tags="([^"]*)"', page)
    assert given is not None
    assert set(given[1].split()) == ALLOWED_TAGS
    script = (STATIC / "chat.js").read_text(encoding="utf-8")
    assert "document.body.dataset.tags" in script
    assert not any(f'"{tag} ' in script or f" {tag} " in script for tag in ("blockquote", "thead", "tbody"))


def test_the_dom_helpers_are_written_once() -> None:
    """el() lives in dom.js, which both pages' scripts import; neither script defines its own."""
    assert "export function el(" in (STATIC / "dom.js").read_text(encoding="utf-8")
    for name in ("chat.js", "check.js"):
        script = (STATIC / name).read_text(encoding="utf-8")
        assert 'import { el } from "./dom.js";' in script
        assert "function el(" not in script


def test_assets_are_served_from_the_package() -> None:
    """The stylesheets, the script and the icon come from the package (nothing from a CDN)."""
    client = TestClient(create_app())
    assert client.get("/favicon.ico").headers["content-type"] == "image/svg+xml"
    assert client.get("/static/app.css").status_code == 200
    assert (
        client.get("/static/chat.js").headers["content-type"].startswith(("text/javascript", "application/javascript"))
    )
    page = client.get("/").text
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert 'href="/check"' in page


def test_a_chain_that_streams_str_works_too() -> None:
    """A model chain ending in a string parser streams tokens and citations like a chat model."""
    from langchain_core.output_parsers import StrOutputParser

    model = streaming_model(["Paris is big[1](id=1).", [{"type": "text", "text": " <i>Yes</i>"}]]) | StrOutputParser()
    assert shown(ask("Paris?", model=model, documents=DOCUMENTS, k=2)) == "Paris is big[1]. <i>Yes</i>"


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"", 400, "the body is not valid JSON (Expecting value at line 1, column 1)"),
        (b"not json", 400, "the body is not valid JSON (Expecting value at line 1, column 1)"),
        (b'{"question": "   "}', 400, "question"),
        (b'{"question": 3}', 400, "question"),
        (b"[" * 5000 + b"]" * 5000, 400, "cannot read the body's JSON: nested too deeply to read"),
        (b'{"question": "caf\xe9"}', 400, "the body is not UTF-8 (byte 0xe9 at offset 17)"),
        (b'{"question": "a", "n": ' + b"9" * 5000 + b"}", 400, "an integer of 5000 digits (Python reads at most 4300)"),
        (json.dumps({"question": "x" * 4001}).encode(), 413, "4000 characters"),
        (json.dumps({"question": "x", "pad": "y" * 20_000}).encode(), 413, "bytes; the limit is 16,384"),
    ],
)
def test_bad_requests_are_refused_clearly(body: bytes, status: int, says: str) -> None:
    """A missing, malformed, deeply nested or oversized body gets a 4xx with a clear message."""
    response = TestClient(create_app()).post("/api/chat", content=body, headers={"content-type": "application/json"})
    assert response.status_code == status
    assert says in response.json()["error"]


def test_markdown_list_emphasis_heading_and_code_fence_become_elements() -> None:
    """Lists, emphasis, headings and code fences are elements; a marker inside a fence stays literal."""
    answer = "# Steps\n\n- **one**[1](id=1)\n- *two*\n\n```python\nx = [1](id=1)\n```\n\nSee `[2](id=2)` too."
    stream = ask("Paris?", model=streaming_model([answer]), documents=DOCUMENTS, k=2)
    tree = final_tree(stream)
    assert tree == [
        {"tag": "h3", "attrs": {}, "children": ["Steps"]},
        {
            "tag": "ul",
            "attrs": {},
            "children": [
                {
                    "tag": "li",
                    "attrs": {},
                    "children": [{"tag": "strong", "attrs": {}, "children": ["one"]}, {"cite": 1, "index": 0}],
                },
                {"tag": "li", "attrs": {}, "children": [{"tag": "em", "attrs": {}, "children": ["two"]}]},
            ],
        },
        {"tag": "pre", "attrs": {}, "children": [{"tag": "code", "attrs": {}, "children": ["x = [1](id=1)\n"]}]},
        {
            "tag": "p",
            "attrs": {},
            "children": ["See ", {"tag": "code", "attrs": {}, "children": ["[2](id=2)"]}, " too."],
        },
    ]
    assert [data for name, data in stream if name == "citation"] == [{"number": 1, "index": 0}]


@pytest.mark.parametrize(
    ("markdown", "hrefs"),
    [
        ("[a](javascript:alert(1)) [b](https://ok.org/)", ["https://ok.org/"]),
        ("[a](java&#115;cript:alert(1))", []),
        ("[a](&#x6A;avascript:alert(1))", []),
        ("[a](JAVASCRIPT&colon;alert(1))", []),
        ("<javascript:alert(1)> <https://ok.org/x>", ["https://ok.org/x"]),
        ("[a](data:text/html;base64,PHNjcmlwdD4=)", []),
        ("[a](vbscript:msgbox) [m](mailto:a@b.org) [r](docs/x.md)", ["mailto:a@b.org", "docs/x.md"]),
        ("![x](javascript:alert(1)) ![y](https://ok.org/i.png)", []),
        ('<a href="javascript:alert(1)">x</a> <img src=x onerror=alert(1)>', []),
    ],
)
def test_markdown_links_only_to_safe_urls(markdown: str, hrefs: list[str]) -> None:
    """Only http, https, mailto and relative links survive, however javascript: is written; images load nothing."""
    tree = markdown_tree(markdown)
    assert [node["attrs"]["href"] for node in elements(tree) if node["tag"] == "a"] == hrefs
    for node in elements(tree):
        assert node["tag"] in ALLOWED_TAGS
        assert set(node["attrs"]) <= {"href", "start"}


def test_raw_html_in_markdown_is_text() -> None:
    """Raw HTML, inline or as a block, is shown as its text, never as an element."""
    tree = markdown_tree('<div onclick="x()">\n<script>alert(1)</script>\n</div>\n\nA <b>b</b> &lt;i&gt;')
    assert {node["tag"] for node in elements(tree)} == {"p"}
    assert tree_text(tree) == '<div onclick="x()">\n<script>alert(1)</script>\n</div>A <b>b</b> <i>'


def test_a_chip_inside_code_reads_as_its_number() -> None:
    """A citation that Markdown puts inside code shows as [n] text, never as a chip."""
    assert markdown_tree(f"`a{chip_token(0)}`", [4]) == [
        {"tag": "p", "attrs": {}, "children": [{"tag": "code", "attrs": {}, "children": ["a[4]"]}]}
    ]


def test_ordered_list_keeps_its_start() -> None:
    """An ordered list that starts at 3 says so; one that starts at 1 has no attribute."""
    assert markdown_tree("3. a\n4. b")[0]["attrs"] == {"start": 3}
    assert markdown_tree("1. a")[0]["attrs"] == {}


def test_each_chip_carries_the_passage_of_its_document() -> None:
    """A chip's passage is the cited document's own words, with the text around it from the same document."""
    stream = ask("How are sources numbered?")
    chips = the(stream, "references")["chips"]
    citations = [data for name, data in stream if name == "citation"]
    assert [chip["number"] for chip in chips] == [c["number"] for c in citations]
    sources = {s["number"]: s for s in the(stream, "references")["sources"]}
    from langchain_refs.apps.demo import load_corpus

    texts = {d.metadata["source"]: d.page_content for d in load_corpus()}
    for chip in chips:
        text = texts[sources[chip["number"]]["url"]]
        passage = chip["passage"]
        assert passage["excerpt"]
        assert passage["excerpt"] in text
        assert (passage["before"] + passage["excerpt"] + passage["after"]).strip("…") in text


def test_invalid_citation_is_reported() -> None:
    """A marker naming no document is left out of the text and listed with its reason."""
    stream = ask("Paris?", model=streaming_model(["Paris is big[1](id=1). Odd[2](id=9)."]), documents=DOCUMENTS, k=2)
    assert shown(stream) == "Paris is big[1]. Odd."
    assert the(stream, "references")["invalid"] == [{"marker": "[2](id=9)", "reason": "no document 9 (2 given)"}]


class NothingSupported:
    """A verifier that finds no citation supported (support 0.1)."""

    def verify_citations(self, references: AnswerReferences, documents: Any, *, threshold: float) -> AnswerReferences:
        from dataclasses import replace

        return replace(
            references, citations=tuple(replace(c, support=0.1, supported=False) for c in references.citations)
        )


def test_unsupported_citations_are_marked() -> None:
    """With a verifier, each chip and source says whether it is supported."""
    model = streaming_model(["Paris is big[1](id=1)."])
    references = the(ask("Paris?", model=model, documents=DOCUMENTS, k=2, verifier=NothingSupported()), "references")
    assert [(c["supported"], c["support"]) for c in references["chips"]] == [(False, 0.1)]
    assert [s["supported"] for s in references["sources"]] == [False]


def test_a_passage_card_starts_and_ends_at_a_word() -> None:
    """The context around a passage is cut at spaces: never "…ibrary" or "retrie…"."""
    from langchain_refs.apps.chat_ui import _passage
    from langchain_refs.streaming import Passage

    words = " ".join(f"word{i:03d}" for i in range(120))
    text = words + " The passage itself. " + words
    start = text.index("The passage")
    end = start + len("The passage itself.")
    passage = Passage(document_position=1, document_start=start, document_end=end, excerpt=text[start:end], score=1.0)
    shown = _passage(passage, [Document(text)])
    assert shown is not None
    assert shown["before"].startswith("…word")
    assert shown["before"][1:] == text[text.index(shown["before"][1:]) : start]
    assert shown["after"].endswith("…")
    assert shown["after"][:-1].rstrip().split(" ")[-1].startswith("word")
    assert len(shown["after"][:-1].rstrip().split(" ")[-1]) == 7


class FirstSupportedOnly:
    """A verifier that finds the first citation supported and the others not, with a reason."""

    def verify_citations(self, references: AnswerReferences, documents: Any, *, threshold: float) -> AnswerReferences:
        from dataclasses import replace

        checked = [
            replace(c, support=0.9, supported=True)
            if i == 0
            else replace(c, support=0.4, supported=False, unsupported_reason="the sources say 2, not 3")
            for i, c in enumerate(references.citations)
        ]
        return replace(references, citations=tuple(checked))


def test_a_source_cited_rightly_and_wrongly_is_mixed_and_the_reason_is_given() -> None:
    """One source, one supported and one unsupported citation: the source reads mixed; the chip says why."""
    model = streaming_model(["Paris is big[1](id=1). Paris has 3 towers[2](id=1)."])
    references = the(ask("Paris?", model=model, documents=DOCUMENTS, k=2, verifier=FirstSupportedOnly()), "references")
    assert [(c["supported"], c["reason"]) for c in references["chips"]] == [
        (True, None),
        (False, "the sources say 2, not 3"),
    ]
    assert [(s["supported"], s["mixed"]) for s in references["sources"]] == [(False, True)]


class RecordingModel:
    """Streams fixed answers in turn and records the messages of each call."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = answers
        self.calls: list[list[BaseMessage]] = []

    def runnable(self) -> RunnableGenerator[Any, Any]:
        async def astream(inputs: AsyncIterator[Any]) -> AsyncIterator[AIMessageChunk]:
            async for value in inputs:
                self.calls.append(list(value.to_messages()))
            yield AIMessageChunk(content=self.answers[len(self.calls) - 1])

        def stream(inputs: Iterator[Any]) -> Iterator[AIMessageChunk]:
            raise NotImplementedError  # the server streams asynchronously
            yield  # pragma: no cover

        return RunnableGenerator(stream, astream)


def test_earlier_turns_go_back_as_plain_text() -> None:
    """The second turn's prompt holds the first question and answer, the answer without citation numbers."""
    model = RecordingModel(["Paris is *big*[1](id=1) and old[2](id=2).", "Yes[1](id=1)."])
    client = TestClient(create_app(model=model.runnable(), documents=DOCUMENTS, k=2))
    conversation = the(chat(client, "Paris?"), "start")["conversation"]
    second = chat(client, "Really?", conversation)
    assert the(second, "start")["conversation"] == conversation
    history = [m for m in model.calls[1] if m.type in ("human", "ai")][:-1]
    assert [(m.type, m.content) for m in history] == [("human", "Paris?"), ("ai", "Paris is *big* and old.")]
    # A new conversation (no id, or an id the server does not know) starts empty.
    chat(client, "Rome?", "not-a-conversation")
    assert [m.type for m in model.calls[2]] == ["system", "human"]


def test_a_failing_model_ends_with_an_error_event() -> None:
    """An exception in the model becomes one error event with its first line, and no done."""

    def fail(_: Iterator[Any]) -> Iterator[Any]:
        raise RuntimeError("the model is down\nand a second line")
        yield  # pragma: no cover

    async def afail(_: AsyncIterator[Any]) -> AsyncIterator[Any]:
        raise RuntimeError("the model is down\nand a second line")
        yield  # pragma: no cover

    stream = ask("Paris?", model=RunnableGenerator(fail, afail), documents=DOCUMENTS, k=2)
    assert stream[-1] == ("error", {"message": "RuntimeError: the model is down"})
    assert "done" not in [name for name, _ in stream]


def test_a_model_failing_mid_answer_leaves_every_word_it_streamed_on_the_page() -> None:
    """The page draws renders only (sent at most every 80 ms): one more comes before the error, with all the words."""
    pieces = ["Paris is ", "big[1](id=1). ", "It is old."]

    def fail(_: Iterator[Any]) -> Iterator[Any]:
        yield from (AIMessageChunk(piece) for piece in pieces)
        raise RuntimeError("the model went away")

    async def afail(_: AsyncIterator[Any]) -> AsyncIterator[Any]:
        for piece in pieces:
            yield AIMessageChunk(piece)
        raise RuntimeError("the model went away")

    stream = ask("Paris?", model=RunnableGenerator(fail, afail), documents=DOCUMENTS, k=2)
    assert [name for name, _ in stream[-2:]] == ["render", "error"]
    assert tree_text(stream[-2][1]["blocks"]) == "Paris is big[1]. It is old."


def test_a_split_emoji_and_a_source_name_that_is_not_utf8_reach_the_page() -> None:
    """Lone surrogates (an emoji a model split in two chunks, a file name not in UTF-8) travel as JSON escapes."""
    source = os.fsdecode(b"/docs/caf\xe9.pdf")  # what a file loader puts in the metadata: '/docs/caf\udce9.pdf'
    documents = [Document("Paris is big.", metadata={"source": source, "title": "Caf\u00e9"})]
    model = streaming_model(["Paris \ud83d", "\ude00 is big[1](id=1)."])
    response = TestClient(create_app(model=model, documents=documents, k=1)).post(
        "/api/chat", json={"question": "Paris?"}
    )
    stream = events(response.text)
    assert [name for name, _ in stream][-2:] == ["references", "done"]
    assert shown(stream) == "Paris \ud83d\ude00 is big[1]."  # two halves, which a JavaScript string joins again
    assert [s["url"] for s in the(stream, "references")["sources"]] == [source]


def ui_user(message_id: str, text: str) -> dict[str, Any]:
    """A user message as ``useChat`` sends it."""
    return {"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def ui_chunks(body: str) -> list[dict[str, Any]]:
    """The chunks of a UI message stream, in order (``[DONE]`` left out)."""
    return [json.loads(line[len("data: ") :]) for line in body.splitlines() if line.startswith("data: {")]


def test_the_conversation_usechat_sends_back_may_hold_the_lone_surrogate_of_a_source_it_was_sent() -> None:
    """A source named in bytes that are not UTF-8 streams as a \\udce9 escape; sent back with the next question, it
    is read, and the question answered."""
    source = os.fsdecode(b"/docs/caf\xe9.pdf")  # what a file loader puts in the metadata: '/docs/caf\udce9.pdf'
    documents = [Document("Paris is big.", metadata={"source": source})]
    client = TestClient(create_app(model=streaming_model(["Paris is big[1](id=1)."]), documents=documents, k=1))
    first = client.post("/api/ui-stream", json={"id": "c", "messages": [ui_user("u1", "Paris?")]})
    assert '"filename": "/docs/caf\\udce9.pdf"' in first.text
    chunks = ui_chunks(first.text)
    sent_back = [chunk for chunk in chunks if chunk["type"] in ("source-document", "data-references")]
    assert [chunk["type"] for chunk in sent_back] == ["source-document", "data-references"]
    assert {key: sent_back[0][key] for key in ("title", "filename")} == {
        "title": "/docs/caf\udce9.pdf",
        "filename": "/docs/caf\udce9.pdf",
    }
    text = "".join(chunk["delta"] for chunk in chunks if chunk["type"] == "text-delta")
    answer = {"id": "a1", "role": "assistant", "parts": [{"type": "text", "text": text, "state": "done"}, *sent_back]}
    messages = [ui_user("u1", "Paris?"), answer, ui_user("u2", "Is Paris big?")]
    # As JSON.stringify writes the conversation: the lone surrogate as its escape.
    body = json.dumps({"id": "c", "messages": messages, "trigger": "submit-message"})
    second = client.post("/api/ui-stream", content=body, headers={"content-type": "application/json"})
    assert second.status_code == 200, second.text
    assert [chunk["type"] for chunk in ui_chunks(second.text)][-2:] == ["data-references", "finish"]


def test_a_ui_stream_answer_cut_short_goes_back_to_the_model_without_its_citation_numbers() -> None:
    """A turn the model failed after a cited sentence enters the history as a complete turn does: no [1] in it."""
    seen: list[list[tuple[str, str]]] = []

    async def astream(inputs: AsyncIterator[Any]) -> AsyncIterator[AIMessageChunk]:
        async for prompt in inputs:
            seen.append([(m.type, m.text) for m in prompt.to_messages()][1:-1])  # between the system and the question
        yield AIMessageChunk("Paris is big[1](id=1). It is")
        if len(seen) == 1:
            raise RuntimeError("the model went away")
        yield AIMessageChunk(" old[1](id=1).")

    def stream(_: Iterator[Any]) -> Iterator[AIMessageChunk]:
        raise NotImplementedError  # the server streams asynchronously
        yield  # pragma: no cover

    model = RunnableGenerator(stream, astream)
    client = TestClient(create_app(model=model, documents=DOCUMENTS, k=1))
    first = client.post("/api/ui-stream", json={"id": "c", "messages": [ui_user("u1", "Paris?")]})
    assert ui_chunks(first.text)[-1] == {"type": "error", "errorText": "RuntimeError: the model went away"}
    assert '"delta": "Paris is big[1]. It is"' in first.text
    client.post("/api/ui-stream", json={"id": "c", "messages": [ui_user("u2", "Paris big?")]})
    client.post("/api/ui-stream", json={"id": "c", "messages": [ui_user("u3", "Paris old?")]})
    assert seen[1:] == [
        [("human", "Paris?"), ("ai", "Paris is big. It is")],
        [
            ("human", "Paris?"),
            ("ai", "Paris is big. It is"),
            ("human", "Paris big?"),
            ("ai", "Paris is big. It is old."),
        ],
    ]


agents = pytest.mark.skipif(
    importlib.util.find_spec("langgraph") is None or importlib.util.find_spec("langchain") is None,
    reason="AGENT MODE NOT TESTED: the agents extra (langchain, langgraph) is not installed",
)


@agents
def test_agent_mode_shows_the_tool_step_before_the_answer() -> None:
    """In agent mode the search step comes before the first token, and the answer is cited."""
    stream = ask("How are sources numbered?", agent=True)
    names = [name for name, _ in stream]
    assert names.index("tool") < names.index("token")
    assert the(stream, "tool") == {"name": "search_docs", "query": "How are sources numbered?", "found": 4}
    assert shown(stream).startswith("Chunks that come from the same source share one citation number[1].")
    chips = the(stream, "references")["chips"]
    assert chips[0]["passage"]["excerpt"] == "Chunks that come from the same source share one citation number."


@agents
def test_agent_mode_keeps_the_thread() -> None:
    """The agent's second turn in a conversation sees the first; a new conversation does not."""
    from langchain_refs.apps.demo.agent import AgentDemoChatModel

    seen: list[int] = []

    class Counting(AgentDemoChatModel):
        def reply(self, messages: Any) -> AIMessage:
            seen.append(sum(isinstance(m, HumanMessage) for m in messages))
            return super().reply(messages)

    client = TestClient(create_app(agent=True, model=Counting()))
    conversation = the(chat(client, "How are sources numbered?"), "start")["conversation"]
    chat(client, "Which URLs become links?", conversation)
    chat(client, "Which URLs become links?")
    # Two model calls per turn (search, answer): 1 question, then 2, then a new thread with 1.
    assert seen == [1, 1, 2, 2, 1, 1]


def test_a_model_cannot_fake_a_citation_with_the_servers_marks() -> None:
    """Private-use marks in the model's words show as replacement characters, never as chips."""
    stream = ask("Paris?", model=streaming_model(["A\ue000", "1\ue001 B\ue0002"]), documents=DOCUMENTS, k=2)
    assert [name for name, _ in stream if name == "citation"] == []
    assert shown(stream) == "A\ufffd1\ufffd B\ufffd2"


@pytest.mark.parametrize("index", ["0", "1" * 5000, "\u0663"], ids=["a real chip's index", "5,000 digits", "arabic"])
def test_a_model_cannot_fake_a_citation_with_character_references_of_the_marks(index: str) -> None:
    """Markdown decodes &#xE000; after the words' marks were replaced: still no chip, and the answer is done."""
    words = f"Paris is big[1](id=1). The moon is cheese&#xE000;{index}&#57345;."
    stream = ask("Paris?", model=streaming_model([words]), documents=DOCUMENTS, k=2)
    assert [name for name, _ in stream][-2:] == ["references", "done"]
    chips = [node for node in final_tree(stream)[0]["children"] if isinstance(node, dict)]
    assert chips == [{"cite": 1, "index": 0}]
    assert tree_text(final_tree(stream)).endswith(f"The moon is cheese\ufffd{index}\ufffd.")


@pytest.mark.parametrize(
    "words", ["See [the guide](https://a.org/x[1](id=1)).", "See <https://a.org/x[1](id=1)>."], ids=["link", "autolink"]
)
def test_a_citation_inside_a_links_destination_never_sends_the_servers_secret(words: str) -> None:
    """The chips hold the server's secret: a citation Markdown puts in a link's href leaves the href, secret and all."""
    from langchain_refs.apps import chat_ui

    stream = ask("Paris?", model=streaming_model([words]), documents=DOCUMENTS, k=2)
    assert chat_ui._SECRET not in repr(stream)
    assert [name for name, _ in stream][-2:] == ["references", "done"]


@agents
def test_an_agent_model_cannot_fake_a_citation_with_the_servers_marks() -> None:
    """In agent mode too (no text normalising stage before the middleware), marks in the words are not chips."""
    from langchain_refs.apps.demo.agent import AgentDemoChatModel

    class Faking(AgentDemoChatModel):
        def answer(self, prompt: str) -> str:
            return "A\ue0001\ue001 B\ue000"

    stream = ask("Paris?", agent=True, model=Faking())
    assert [name for name, _ in stream if name == "citation"] == []
    assert shown(stream) == "A\ufffd1\ufffd B\ufffd"


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


@pytest.mark.parametrize(
    ("argv", "agent", "verified"),
    [(["serve"], False, False), (["serve", "--agent"], True, False), (["serve", "--verify"], False, True)],
)
def test_serve_command_starts_the_chat_app(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], agent: bool, verified: bool
) -> None:
    """`langchain-refs serve [--agent | --verify]` hands uvicorn the chat app, in the mode asked, and its socket."""
    import uvicorn

    from langchain_refs.apps import main

    started: list[Any] = []

    def run(server: Any, sockets: list[Any]) -> None:
        started.append((server.config.app, sockets))

    monkeypatch.setattr(uvicorn.Server, "run", run)
    assert main([*argv, "--port", "0"]) == 0
    ((app, (listener,)),) = started
    assert app.state.agent is agent
    assert listener.getsockname()[0] == "127.0.0.1"  # bound by serve, listening, before uvicorn starts
    listener.close()
    if not agent:
        client = TestClient(app, base_url="http://127.0.0.1:8000")
        chips = the(chat(client, "How are sources numbered?"), "references")["chips"]
        assert {chip["supported"] for chip in chips} == ({True} if verified else {None})


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("127.0.0.1:8000", 200),
        ("localhost:8000", 200),
        ("[::1]:8000", 200),
        ("LOCALHOST", 200),
        ("evil.example", 400),  # a name an attacker pointed at 127.0.0.1 (DNS rebinding)
        ("evil.example:8000", 400),
        ("127.0.0.1.evil.example", 400),
    ],
)
def test_serve_answers_only_requests_sent_to_its_own_names(
    monkeypatch: pytest.MonkeyPatch, host: str, status: int
) -> None:
    """`serve` on the loopback: a request whose Host header names another site is refused (a page of that site
    cannot reach the app, nor the model key it runs with); the loopback names are served."""
    import uvicorn

    from langchain_refs.apps import main

    started: list[Any] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda server, sockets: started.append((server.config.app, sockets)))
    assert main(["serve", "--port", "0"]) == 0
    ((app, (listener,)),) = started
    listener.close()
    response = TestClient(app).get("/", headers={"host": host})
    assert response.status_code == status
    response = TestClient(app).post("/api/chat", json={"question": "Hi?"}, headers={"host": host})
    assert response.status_code == status


@pytest.mark.parametrize("every_address", ["0.0.0.0", "0"])
def test_serve_on_every_address_answers_any_name(monkeypatch: pytest.MonkeyPatch, every_address: str) -> None:
    """`serve --host 0.0.0.0` (or ``0``, the same address spelt short) opens the app to a network: any name."""
    import uvicorn

    from langchain_refs.apps import main

    started: list[Any] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda server, sockets: started.append((server.config.app, sockets)))
    assert main(["serve", "--host", every_address, "--port", "0"]) == 0
    ((app, (listener,)),) = started
    listener.close()
    assert TestClient(app).get("/", headers={"host": "chat.example.lan:8000"}).status_code == 200


def test_serve_refuses_verify_with_agent(capsys: pytest.CaptureFixture[str]) -> None:
    """`serve --agent --verify` is refused in one line: the agent mode has no verifier."""
    from langchain_refs.apps import main

    assert main(["serve", "--agent", "--verify"]) == 2
    assert capsys.readouterr().err == (
        "langchain-refs: --verify checks the answers of the chain: it cannot be combined with --agent\n"
    )


async def test_which_astream_events_carry_rewritten_text() -> None:
    """As the README says: on_chat_model_stream (and the inner chain) carry raw markers, the wrapper's events do not."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate

    from langchain_refs.streaming import TextReferenceStyle, manage_references

    model = GenericFakeChatModel(messages=iter([AIMessage("Paris[1](id=1) is big.")]))
    inner = (ChatPromptTemplate.from_template("{question}") | model).with_config(run_name="inner")
    chain = (manage_references(inner, style=TextReferenceStyle()) | StrOutputParser()).with_config(run_name="outer")
    texts: dict[tuple[str, str], str] = {}
    inputs = {"documents": [Document("Paris is big.", metadata={"source": "a"})], "question": "?"}
    async for event in chain.astream_events(inputs, version="v2"):
        if event["event"].endswith("_stream"):
            chunk = event["data"]["chunk"]
            key = (event["event"], event["name"])
            texts[key] = texts.get(key, "") + (chunk if isinstance(chunk, str) else content_text(chunk.content))
    raw, rewritten = "Paris[1](id=1) is big.", "Paris[1] is big.\n\n- [1] a\n"
    assert texts == {
        ("on_chat_model_stream", "GenericFakeChatModel"): raw,
        ("on_chain_stream", "inner"): raw,
        ("on_chain_stream", "manage_references"): rewritten,
        ("on_parser_stream", "StrOutputParser"): rewritten,
        ("on_chain_stream", "outer"): rewritten,
    }


def test_app_serves_the_checking_page_and_its_api() -> None:
    """The chat app also serves /check, and POST /api/check labels a claim its source states."""
    client = TestClient(create_app())
    assert client.get("/check").status_code == 200
    checked = client.post("/api/check", json={"response": "Paris is in France.", "reference": "Paris is in France."})
    assert checked.status_code == 200
    assert checked.json()["ys"] == ["Entailment"]


@agents
def test_agent_mode_says_searching_when_the_tool_is_called() -> None:
    """A searching event comes as soon as the agent calls its tool, before the tool event with its result."""
    client = TestClient(create_app(agent=True))
    names = [name for name, _ in chat(client, "How are sources numbered?")]
    assert names.index("searching") < names.index("tool") < names.index("token")
    assert names.count("searching") == 1


def test_a_dropped_citation_leaves_no_space_before_punctuation_in_the_final_render() -> None:
    """The final render drops the space the model wrote before a citation that was dropped, nothing else."""
    answer = ["Paris is big [1](id=9). Rome is old [1](id=2) and ", "far [2](id=7) away [3](id=8)"]
    stream = ask("Paris?", model=streaming_model(answer), documents=DOCUMENTS, k=2)
    # By hand: "big ." and "far  away" lose the space before the dropped citation; so does the end;
    # the space before a kept citation stays.
    assert tree_text(final_tree(stream)) == "Paris is big. Rome is old [1] and far away"


def test_a_failure_in_the_final_render_ends_with_an_error_event(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building the final render or the references fails: the page gets an error event with its line, no cut stream."""
    import langchain_refs.apps.chat_ui as chat_ui

    def broken(*_: Any) -> Any:
        msg = "the references could not be built\nsecond line"
        raise KeyError(msg)

    monkeypatch.setattr(chat_ui, "_references", broken)
    client = TestClient(create_app(model=streaming_model(["Paris is big[1](id=1)."]), documents=DOCUMENTS, k=2))
    response = client.post("/api/chat", json={"question": "Paris?"})
    stream = events(response.text)
    assert stream[-1][0] == "error"
    assert stream[-1][1]["message"].startswith("KeyError: ")
    assert "done" not in [name for name, _ in stream]


def test_deeply_nested_emphasis_renders_as_text_without_a_recursion_error() -> None:
    """Hundreds of * around a word (deeper than Python recurses): one paragraph of the text, and the answer is done."""
    nested = "*" * 700 + "x" + "*" * 700
    assert markdown_tree(f"Here: {nested}") == [{"tag": "p", "attrs": {}, "children": [f"Here: {nested}"]}]
    stream = ask("Paris?", model=streaming_model(["Here it is: ", nested]), documents=DOCUMENTS, k=2)
    assert [name for name, _ in stream][-2:] == ["references", "done"]
    assert tree_text(final_tree(stream)) == f"Here it is: {nested}"


@agents
def test_a_tool_that_raises_ends_the_searching_step_before_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tool raises: a tool event marked failed ends the page's "searching…" step, then the error event."""
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    import langchain_refs.apps.demo.agent as demo_agent
    from langchain_refs import ReferencesMiddleware
    from tests.unit_tests.agent_fakes import ScriptedToolModel, Step, search

    @tool
    def search_docs(query: str) -> str:
        """Search the docs."""
        msg = "the vector store is unreachable"
        raise ConnectionError(msg)

    def with_failing_tool(**options: Any) -> Any:
        middleware = [ReferencesMiddleware(style=options["style"])]
        return create_agent(
            options["model"], tools=[search_docs], middleware=middleware, checkpointer=options["checkpointer"]
        )

    monkeypatch.setattr(demo_agent, "build_demo_agent", with_failing_tool)
    model = ScriptedToolModel(script=[search("Paris", tool="search_docs"), Step(["unused"])])
    stream = ask("Paris?", agent=True, model=model)
    assert [name for name, _ in stream][-3:] == ["searching", "tool", "error"]
    assert stream[-2][1] == {"name": "search_docs", "failed": True}
    assert stream[-1][1] == {"message": "ConnectionError: the vector store is unreachable"}
