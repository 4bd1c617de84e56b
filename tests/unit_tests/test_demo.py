"""The offline demo: corpus, retriever, extractive model, command line, chat UI."""

from __future__ import annotations

import json
import re

import pytest
from langchain_core.documents import Document

from langchain_refs import AnswerReferences, HTMLReferenceStyle, TextReferenceStyle
from langchain_refs.apps import main
from langchain_refs.apps.demo import (
    NOT_FOUND,
    CorpusRetriever,
    ExtractiveChatModel,
    build_demo_chain,
    load_corpus,
)

QUESTIONS = {
    "Which URLs become links?": "https://langchain-refs.dev/docs/security",
    "How do I run the tests?": "https://langchain-refs.dev/docs/tests",
    "What does the empty style do?": "https://langchain-refs.dev/docs/styles#empty",
    "How much text is held back?": "https://langchain-refs.dev/docs/streaming",
    "Can I migrate from langchain-references?": "https://langchain-refs.dev/docs/migration",
}


def test_corpus_ships_with_the_package() -> None:
    """30 to 60 documents, each with a title, a unique https URL and text."""
    corpus = load_corpus()
    assert 30 <= len(corpus) <= 60
    urls = [d.metadata["source"] for d in corpus]
    assert len(set(urls)) == len(urls)
    assert all(u.startswith("https://") for u in urls)
    assert all(d.metadata["title"] and len(d.page_content) > 40 for d in corpus)


def test_retriever_ranks_the_relevant_section_first() -> None:
    """BM25 finds the section that answers each question."""
    retriever = CorpusRetriever(documents=list(load_corpus()), k=4)
    for question, url in QUESTIONS.items():
        assert url in [d.metadata["source"] for d in retriever.invoke(question)], question


@pytest.mark.parametrize(("question", "url"), QUESTIONS.items())
def test_answers_cite_the_right_source(question: str, url: str) -> None:
    """Each question gets its own answer, whose first citation is the right section."""
    message = build_demo_chain(as_text=False).invoke({"question": question})
    refs = AnswerReferences.from_dict(message.response_metadata["references"])
    assert refs.references[0].source == url
    assert message.content.startswith(refs.citations[0].text)


def test_different_questions_different_answers() -> None:
    """The model is not canned: every question gets a different answer."""
    chain = build_demo_chain()
    answers = {chain.invoke({"question": q}) for q in QUESTIONS}
    assert len(answers) == len(QUESTIONS)


def test_unanswerable_question_says_so_without_citations() -> None:
    """A question the corpus cannot answer gets an honest not-found and no sources."""
    message = build_demo_chain(as_text=False).invoke({"question": "What is the capital of Peru?"})
    assert message.content == NOT_FOUND
    assert message.response_metadata["references"]["references"] == []


def test_model_streams_markers_cut_apart() -> None:
    """The extractive model streams tokens, so markers arrive in pieces."""
    prompt = "<document id=1>\nParis is in France. Rome is old.\n</document>\nQuestion: Where is Paris?"
    chunks = [c.content for c in ExtractiveChatModel().stream(prompt)]
    assert "".join(chunks) == "Paris is in France[1](id=1)."
    assert "[1](id=1)" not in chunks
    assert len(chunks) > 8


def test_model_is_a_chat_model_for_any_documents() -> None:
    """The model answers from whatever documents its prompt holds."""
    docs = [
        Document("Bananas are yellow. Apples can be red.", metadata={"source": "fruit.txt"}),
        Document("The sky is blue on clear days.", metadata={"source": "sky.txt"}),
    ]
    chain = build_demo_chain(documents=docs, style=TextReferenceStyle())
    assert chain.invoke({"question": "What colour is the sky?"}) == (
        "The sky is blue on clear days[1].\n\n- [1] sky.txt\n"
    )


def test_cli_streams_a_cited_answer(capsys: pytest.CaptureFixture[str]) -> None:
    """`langchain-refs demo QUESTION` prints the answer and the sources."""
    assert main(["demo", "--delay", "0", "Which URLs become links?"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Only http, https, mailto and relative URLs become links[1].")
    assert "- [1] Safe links (https://langchain-refs.dev/docs/security)" in out


@pytest.mark.parametrize("style", ["markdown", "html", "empty"])
def test_cli_styles(style: str, capsys: pytest.CaptureFixture[str]) -> None:
    """--style picks the style."""
    main(["demo", "--delay", "0", "--style", style, "Which URLs become links?"])
    out = capsys.readouterr().out
    marks = {"markdown": "<sup>[[1](https://", "html": '<sup class="citation">', "empty": "links."}
    assert marks[style] in out


def test_cli_asks_for_the_question(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Without an argument the question is read at a prompt."""
    monkeypatch.setattr("builtins.input", lambda _: "How do I run the tests?")
    main(["demo", "--delay", "0"])
    assert "python -m pytest" in capsys.readouterr().out


def test_cli_model_spec_is_checked() -> None:
    """--model must be provider:name."""
    with pytest.raises(SystemExit, match="provider:name"):
        main(["demo", "--model", "gpt", "hi"])


HOSTILE = [
    Document(
        "The answer is <script>alert(1)</script> in bold.",
        metadata={"source": "javascript:alert(2)", "title": '<img src=x onerror="alert(3)">'},
    ),
    Document("The answer is also here.", metadata={"source": "https://ok.org/a?b=<c>", "title": "Fine & dandy"}),
]


def test_chat_ui_stream_is_safe_with_hostile_documents() -> None:
    """The SSE stream escapes the model's text and sends only safe URLs."""
    from starlette.testclient import TestClient

    from langchain_refs.apps.chat_ui import create_app

    body = TestClient(create_app(documents=HOSTILE)).get("/api/ask", params={"q": "What is the answer?"}).text
    answer = "".join(json.loads(data) for data in re.findall(r"event: token\ndata: (.*)\n", body))
    assert "<script>" not in answer
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in answer
    references = re.search(r"event: references\ndata: (.*)\n", body)
    assert references is not None
    assert '"url": null' in references[1]
    assert "javascript" not in references[1]
    assert '"url": "https://ok.org/a?b=<c>"' in references[1]


def test_chat_ui_rejects_empty_question() -> None:
    """An empty question is a 400 with a clear message."""
    from starlette.testclient import TestClient

    from langchain_refs.apps.chat_ui import create_app

    response = TestClient(create_app()).get("/api/ask")
    assert response.status_code == 400
    assert "ask a question" in response.json()["error"]


def test_html_style_in_the_terminal_is_escaped() -> None:
    """The HTML style keeps its escaping promise in the demo pipeline too."""
    answer = build_demo_chain(documents=HOSTILE, style=HTMLReferenceStyle()).invoke({"question": "What is the answer?"})
    assert "javascript:" not in answer
    assert "&lt;img" in answer
