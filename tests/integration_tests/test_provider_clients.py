"""The real provider clients (langchain-anthropic, langchain-openai, langchain-google-genai) through langchain-refs.

Each client talks to a loopback server that replays what its API sends (``provider_payloads/``: a JSON body for a
call, a server-sent event stream for a streamed one), so the message shapes are the clients' own, not ours: an
Anthropic citation streamed in a text block with no text, OpenAI annotations streamed after the text they annotate
(and a file citation's ``file_index``), Gemini's grounding translated by the client itself. No network.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langchain_core.documents import Document
from langchain_core.messages import HumanMessage, message_chunk_to_message
from langchain_core.tools import tool

from langchain_refs import TextReferenceStyle

PAYLOADS = Path(__file__).parent / "provider_payloads"
DOCUMENTS = [
    Document("The grass is green. Lawns need water.", metadata={"source": "https://ex.org/grass", "title": "Grass"}),
    Document("The sky is blue on clear days.", metadata={"source": "https://ex.org/sky", "title": "Sky"}),
]
RAW_MARKER = "](id="


class _Replay(BaseHTTPRequestHandler):
    """Answers each request with the next payload queued: its ``.sse`` stream when streamed, else its ``.json``."""

    protocol_version = "HTTP/1.1"
    queue: ClassVar[list[str]] = []
    bodies: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        self.bodies.append(body)
        streamed = body.get("stream") is True or ":streamGenerateContent" in self.path
        name = self.queue.pop(0)
        data = (PAYLOADS / f"{name}.{'sse' if streamed else 'json'}").read_bytes()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream" if streamed else "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True


@pytest.fixture(scope="module")
def api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Replay)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def replay(*names: str) -> None:
    _Replay.queue[:] = names


def wrapped(model: Any) -> Any:
    from langchain_refs.agents import ReferencesChatModel

    return ReferencesChatModel(inner=model, documents=DOCUMENTS, style=TextReferenceStyle())


def streamed_message(model: Any) -> Any:
    chunks = list(model.stream("Colours?"))
    message = chunks[0]
    for chunk in chunks[1:]:
        message = message + chunk
    assert not any(RAW_MARKER in chunk.text for chunk in chunks)
    return message


def streamed_text(model: Any) -> str:
    return str(streamed_message(model).text)


def test_anthropic_citations_streamed_and_whole(api: str) -> None:
    """Anthropic's own citations (char and page locations) are numbered with the model's markers, streamed or not."""
    anthropic = pytest.importorskip("langchain_anthropic", reason="langchain-anthropic (the test extra) not installed")
    # The answer thinks first (the payload's first block): asked for, as a real call must (the client then streams
    # list content throughout).
    thinking = {"type": "enabled", "budget_tokens": 2000}
    inner = anthropic.ChatAnthropic(
        model="claude-sonnet-4-5-20250929", anthropic_api_url=api, api_key="k", thinking=thinking, max_tokens=4000
    )
    model = wrapped(inner)
    expected = (
        "According to the documents, the grass is green[1]. The sky is blue[2]. Also, water is essential[3], "
        "and lawns are green[1].\n\n- [1] Lawn guide\n- [2] Sky (https://ex.org/sky)\n- [3] Biology PDF\n"
    )
    replay("anthropic_cite")
    streamed = streamed_message(model)
    assert streamed.text == expected
    replay("anthropic_cite")
    whole = model.invoke("Colours?")
    assert whole.text == expected
    # Block by block too: each number ends the block the provider cited (whole, it was a block of its own).
    texts = [b["text"] for b in streamed.content_blocks if b["type"] == "text"]
    assert [b["text"] for b in whole.content_blocks if b["type"] == "text"] == texts
    assert texts[1:4] == ["the grass is green[1]", ". The sky is blue[2]. Also, ", "water is essential[3]"]


def test_anthropic_thinking_reads_as_reasoning_and_goes_back_as_thinking(api: str) -> None:
    """Issue 20: streamed thinking is the standard reasoning in the answer; as history it goes back signed, uncited.

    The answer is marked standard (v1) for its annotations: its thinking must be standard too. Fed back to the
    wrapper as history, the client sends the thinking with its signature (the API needs it) and the text without
    the annotations (the client would make Anthropic citations of them, with our fields in).
    """
    anthropic = pytest.importorskip("langchain_anthropic", reason="langchain-anthropic (the test extra) not installed")
    thinking = {"type": "enabled", "budget_tokens": 2000}
    inner = anthropic.ChatAnthropic(
        model="claude-sonnet-4-5-20250929", anthropic_api_url=api, api_key="k", thinking=thinking, max_tokens=4000
    )
    model = wrapped(inner)
    replay("anthropic_cite", "anthropic_cite")
    answer = message_chunk_to_message(streamed_message(model))
    assert [b["type"] for b in answer.content_blocks][:2] == ["reasoning", "text"]
    assert (
        answer.content_blocks[0]["reasoning"]
        == "The user asks about colours. Document 0 covers grass; the PDF covers water."
    )
    model.invoke([HumanMessage("Colours?"), answer, HumanMessage("And water?")])
    sent = _Replay.bodies[-1]["messages"][1]
    assert sent["role"] == "assistant"
    assert sent["content"][0]["type"] == "thinking"
    assert sent["content"][0]["signature"] == "EqQBCkYIBxgCKkD5b0d0ZmFrZS1zaWduYXR1cmUtZm9yLXRlc3RzLW9ubHk="
    assert [b for b in sent["content"] if b.get("citations")] == []
    assert "".join(b.get("text", "") for b in sent["content"]).startswith("According to the documents, the grass")


def test_an_openai_tool_call_turn_shows_its_call_as_the_model_alone(api: str) -> None:
    """Issue 20: a streamed tool-call turn (no text) keeps its tool call in content_blocks, as the bare client's."""
    openai = pytest.importorskip("langchain_openai", reason="langchain-openai (the test extra) not installed")
    inner = openai.ChatOpenAI(model="gpt-4o", base_url=f"{api}/v1", api_key="k")
    replay("openai_chat_tool")
    bare = streamed_message(inner)
    replay("openai_chat_tool")
    ours = streamed_message(wrapped(inner))
    assert [b["type"] for b in bare.content_blocks] == ["tool_call"]
    assert [(b["type"], b["name"], b["args"]) for b in ours.content_blocks] == [
        (b["type"], b["name"], b["args"]) for b in bare.content_blocks
    ]
    assert ours.tool_calls == bare.tool_calls


def test_openai_responses_annotations_follow_the_text_they_annotate(api: str) -> None:
    """url_citation and file_citation annotations are numbered on their sentences: whole, and as they stream in."""
    openai = pytest.importorskip("langchain_openai", reason="langchain-openai (the test extra) not installed")
    model = wrapped(openai.ChatOpenAI(model="gpt-5", base_url=f"{api}/v1", api_key="k", use_responses_api=True))
    wiki = "([en.wikipedia.org](https://en.wikipedia.org/wiki/Paris?utm_source=openai))"
    louvre = "([louvre.fr](https://www.louvre.fr/en?utm_source=openai))"
    sources = (
        "\n\n- [1] Paris - Wikipedia (https://en.wikipedia.org/wiki/Paris?utm_source=openai)\n"
        "- [2] Grass (https://ex.org/grass)\n- [3] louvre_facts.pdf\n"
        "- [4] Louvre Museum (https://www.louvre.fr/en?utm_source=openai)\n"
    )
    replay("openai_responses_cite")
    # Streamed, an annotation comes after the delta that ends its span: its number follows that delta.
    assert streamed_text(model) == (
        f"Paris is the capital of France {wiki}.[1] The Louvre is in Paris[2]. The museum holds 380,000 objects.[3] "
        f"It is the most-visited museum {louvre}.[4]" + sources
    )
    replay("openai_responses_cite")
    assert model.invoke("Colours?").text == (
        f"Paris is the capital of France {wiki}[1]. The Louvre is in Paris[2]. The museum holds 380,000 objects.[3] "
        f"It is the most-visited museum {louvre}[4]." + sources
    )


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("output_version", ["v0", "responses/v1", "v1"])
def test_an_openai_responses_answer_with_a_function_call_goes_back_as_the_model_alone_sends_it(
    api: str, output_version: str, *, streamed: bool
) -> None:
    """Read back as history, the rewritten answer gives the Responses API the items the bare model's answer gives.

    Found in use: with ``output_version="v0"`` (the client's legacy shape, its reasoning and call ids in
    ``additional_kwargs``), the client rebuilt the function call from the answer's tool calls and sent the
    rewritten answer's standard ``tool_call`` block too: the same call twice. The expected items are the bare
    client's own, from its own answer (the payload: reasoning, a message, one function call, and whole, a
    compaction, which that shape keeps in its content and must go back too).
    """
    openai = pytest.importorskip("langchain_openai", reason="langchain-openai (the test extra) not installed")
    from langchain_core.messages import ToolMessage

    inner = openai.ChatOpenAI(
        model="gpt-5", base_url=f"{api}/v1", api_key="k", use_responses_api=True, output_version=output_version
    )

    def answer(model: Any) -> Any:
        replay("openai_responses_call")
        if not streamed:
            return model.invoke("Louvre?")
        chunks = list(model.stream("Louvre?"))
        message = chunks[0]
        for chunk in chunks[1:]:
            message = message + chunk
        return message_chunk_to_message(message)

    def items_sent_back(model: Any, message: Any) -> list[tuple[Any, ...]]:
        replay("openai_responses_cite")
        model.invoke([HumanMessage("Louvre?"), message, ToolMessage("Found.", tool_call_id="call_1")])
        return [(item.get("type"), item.get("id"), item.get("call_id")) for item in _Replay.bodies[-1]["input"]]

    bare = items_sent_back(inner, answer(inner))
    ours = items_sent_back(wrapped(inner), answer(wrapped(inner)))
    assert [kind for kind, _, _ in bare].count("function_call") == 1
    assert ours == bare


@pytest.mark.parametrize("output_version", ["v0", "v1"])
def test_gemini_grounding_is_numbered_once(api: str, output_version: str) -> None:
    """Gemini's grounding gets one number per source, on its sentence, whether or not the client translated it."""
    google = pytest.importorskip("langchain_google_genai", reason="langchain-google-genai (test extra) not installed")
    inner = google.ChatGoogleGenerativeAI(
        model="gemini-2.5-flash", base_url=api, google_api_key="k", output_version=output_version
    )
    replay("gemini_grounded")
    assert wrapped(inner).invoke("Colours?").text == (
        "Café culture in Paris dates to 1686.[1] The Louvre is the most-visited museum.[2] The sky is blue[3].\n\n"
        "- [1] wikipedia.org (https://vertexaisearch.cloud.google.com/grounding-api-redirect/AAA)\n"
        "- [2] louvre.fr (https://vertexaisearch.cloud.google.com/grounding-api-redirect/BBB)\n"
        "- [3] Sky (https://ex.org/sky)\n"
    )


@pytest.mark.parametrize("output_version", ["v0", "v1"])
def test_gemini_thinking_then_text_keeps_the_text_in_a_block_of_its_own(api: str, output_version: str) -> None:
    """Issue 20: Gemini streams its thoughts as a block at index 0, then its text as str: both stay, standard.

    Was (v0): the answer merged into the reasoning block, the message's text empty.
    """
    google = pytest.importorskip("langchain_google_genai", reason="langchain-google-genai (test extra) not installed")
    inner = google.ChatGoogleGenerativeAI(
        model="gemini-2.5-flash",
        base_url=api,
        google_api_key="k",
        output_version=output_version,
        include_thoughts=True,
        thinking_budget=1000,
    )
    expected = "The grass is green[1]. The sky is blue[2].\n\n- [1] Grass (https://ex.org/grass)\n- [2] Sky (https://ex.org/sky)\n"
    replay("gemini_thinking", "gemini_thinking")
    for answer in (streamed_message(wrapped(inner)), wrapped(inner).invoke("Colours?")):
        assert answer.text == expected
        blocks = answer.content_blocks
        assert [b["type"] for b in blocks] == ["reasoning", "text"]
        assert blocks[0]["reasoning"] == "The user asks about colours. Both documents help."


@pytest.mark.parametrize("output_version", ["v0", "v1"])
def test_an_agent_on_openai_streams_the_answer_once_and_counts_usage_once(api: str, output_version: str) -> None:
    """create_agent on ChatOpenAI: the messages stream shows the rewritten answer once; usage is the bare agent's."""
    openai = pytest.importorskip("langchain_openai", reason="langchain-openai (the test extra) not installed")
    from langchain.agents import create_agent
    from langchain_core.callbacks import get_usage_metadata_callback

    from langchain_refs.agents import ReferencesMiddleware, documents_tool_output

    @tool(response_format="content_and_artifact")
    def search_docs(query: str) -> Any:
        """Search the documents about colours."""
        return documents_tool_output(DOCUMENTS)

    def run(middleware: list[Any]) -> tuple[str, dict[str, Any]]:
        model = openai.ChatOpenAI(model="gpt-4o", base_url=f"{api}/v1", api_key="k", output_version=output_version)
        agent = create_agent(model, tools=[search_docs], middleware=middleware)
        replay("openai_chat_tool", "openai_chat_answer")
        with get_usage_metadata_callback() as usage:
            stream = agent.stream({"messages": [("user", "Colours?")]}, stream_mode="messages")
            text = "".join(message.text for message, meta in stream if meta["langgraph_node"] == "model")
        return text, usage.usage_metadata

    text, usage = run([ReferencesMiddleware(style=TextReferenceStyle())])
    assert text == (
        "The grass is green[1]. The sky[2] is blue[1].\n\n- [1] Grass (https://ex.org/grass)\n"
        "- [2] Sky (https://ex.org/sky)\n"
    )
    bare_text, bare_usage = run([])
    assert RAW_MARKER in bare_text  # the bare agent streams the model's markers as written
    assert usage == bare_usage
