"""``POST /api/ui-stream`` read by the real AI SDK client: Node runs the ``ai`` package's own parser.

`ui_stream_client.mjs` fetches the endpoint of a served app (uvicorn on
loopback), parses the events with ``parseJsonEventStream`` and
``uiMessageChunkSchema`` and assembles the message with
``readUIMessageStream``, as ``useChat`` does; each test runs it with ``ai`` 7
(the current major) and ``ai`` 6 (installed as ``ai6``), both pinned in this
folder's package.json and installed by ``npm ci`` (``.ci/run``). Without Node
or without them the tests are skipped, and say so.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessageChunk
from langchain_core.runnables import RunnableGenerator

from tests.integration_tests.browser_fixtures import serving
from tests.unit_tests.fakes import streaming_model

HERE = Path(__file__).resolve().parent
CLIENT = HERE / "ui_stream_client.mjs"
PACKAGES = ("ai", "ai6")


def _missing() -> str | None:
    if shutil.which("node") is None:
        return "Node is not installed: the AI SDK client test needs node on PATH"
    for package in PACKAGES:
        if not (HERE / "node_modules" / package / "package.json").is_file():
            return f"the npm package {package!r} is not installed: run npm ci in tests/integration_tests"
    if importlib.util.find_spec("uvicorn") is None:
        return "uvicorn is not installed: pip install -e '.[serve]'"
    return None


MISSING = _missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"SKIPPED LOUDLY: {MISSING}")
NO_AGENTS = "the agents extra is not installed: pip install -e '.[agents]'"
agents = pytest.mark.skipif(importlib.util.find_spec("langgraph") is None, reason=NO_AGENTS)

# For the question "Paris?" the demo retriever ranks them in this order: ids 1, 2, 3.
DOCUMENTS = [
    Document(
        "Paris is big. Paris is the capital of France.",
        metadata={"source": "https://a.org/paris", "title": "Paris & <b>facts</b>"},
    ),
    Document("Rome is older than Paris.", metadata={"source": "rome.pdf", "title": "Rome"}),
    Document("Berlin is far from Paris.", metadata={"source": "https://c.org/berlin", "title": "Berlin"}),
]
# The model's answer, cut inside markers; the model's own numbers are wrong on purpose.
ANSWER_CHUNKS = ["Paris is big[1](id", "=1). Rome is old", "er[7](id=2)", " than Paris[2](id=1)."]
# Written by hand: renumbered by source (Paris 1, Rome 2), each marker as [n], nothing else changed.
ANSWER_SHOWN = "Paris is big[1]. Rome is older[2] than Paris[1]."
# The source parts the client must hold, in number order (written by hand from DOCUMENTS).
SOURCE_PARTS = [
    {"type": "source-url", "sourceId": "source-1", "url": "https://a.org/paris", "title": "Paris & <b>facts</b>"},
    {
        "type": "source-document",
        "sourceId": "source-2",
        "mediaType": "text/plain",
        "title": "Rome",
        "filename": "rome.pdf",
    },
]
# The words each citation backs (the clause before it, without its leading space) and its number (by hand).
CITATIONS = [("Paris is big", 1), ("Rome is older", 2), ("than Paris", 1)]


def body(question: str, chat_id: str = "chat-1") -> str:
    """The body useChat's DefaultChatTransport sends for a new question."""
    message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": question}]}
    return json.dumps({"id": chat_id, "messages": [message], "trigger": "submit-message"})


def read(package: str, url: str, request: str, path: str = "api/ui-stream") -> dict[str, Any]:
    """What the AI SDK client made of the endpoint's answer (see ui_stream_client.mjs)."""
    done = subprocess.run(
        ["node", str(CLIENT), package, url + path, request],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=HERE,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def parts(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """The message's parts of one type (``"source-*"``: of every type that begins so)."""
    if kind.endswith("*"):
        return [p for p in message["parts"] if p["type"].startswith(kind[:-1])]
    return [p for p in message["parts"] if p["type"] == kind]


def check_cited_answer(result: dict[str, Any], package: str) -> None:
    """The checks shared by the chain and the agent: text, sources, data parts, protocol."""
    assert result["status"] == 200
    assert result["header"] == "v1"
    assert result["contentType"].startswith("text/event-stream")
    assert result["refused"] == [], "chunks the ai package's schema refused"
    assert result["errors"] == []
    assert result["chunkTypes"][0] == "start"
    assert result["chunkTypes"][-1] == "finish"
    message = result["message"]
    [text] = parts(message, "text")
    assert text["text"] == ANSWER_SHOWN
    assert text["state"] == "done"
    sources = [{k: v for k, v in p.items() if k != "providerMetadata"} for p in parts(message, "source-*")]
    assert sources == SOURCE_PARTS
    numbers = [p["providerMetadata"]["langchain_refs"]["number"] for p in parts(message, "source-*")]
    assert numbers == [1, 2]
    cited = [d["data"] for d in parts(message, "data-citation")]
    assert [(c["text"], c["number"]) for c in cited] == CITATIONS
    for citation in cited:  # the passage is the cited document's own words
        document = DOCUMENTS[citation["passage"]["document_position"] - 1]
        assert citation["passage"]["excerpt"] in document.page_content
        assert document.metadata["title"] == SOURCE_PARTS[citation["number"] - 1]["title"]
    [references] = [d["data"] for d in parts(message, "data-references")]
    listed = [(r["number"], r["source"]) for r in references["references"]]
    assert listed == [(1, "https://a.org/paris"), (2, "rome.pdf")]
    assert [s["title"] for s in references["consulted"]] == ["Berlin"]
    if package == "ai":  # ai 7, served with ai7_fields, keeps text-end's citations on the text part; ai 6 has none
        spans = list(zip(result["citedWords"], [c["source"]["id"] for c in text["citations"]], strict=True))
        assert spans == [(words, f"source-{number}") for words, number in CITATIONS]


@pytest.mark.parametrize("package", PACKAGES)
def test_chain_answer_reaches_the_ai_sdk_client_with_its_sources(package: str) -> None:
    """A chain's cited answer: text as rendered, one source part per cited source in number order, data parts."""
    from langchain_refs.apps.chat_ui import create_app

    app = create_app(model=streaming_model(ANSWER_CHUNKS), documents=DOCUMENTS, k=3, ai7_fields=package == "ai")
    with serving(app) as url:
        check_cited_answer(read(package, url, body("Paris?")), package)


@pytest.mark.parametrize("package", PACKAGES)
def test_reasoning_between_stretches_of_text_reaches_the_client_beside_one_cited_text_part(package: str) -> None:
    """Think, write, think, write (a chain's model): the client keeps one text part, cited, and both reasonings."""
    from langchain_refs.apps.chat_ui import create_app

    def thought(text: str) -> list[dict[str, Any]]:
        return [{"type": "reasoning", "reasoning": text, "index": 1}]

    chunks = [thought("First."), *ANSWER_CHUNKS[:2], thought("Then."), *ANSWER_CHUNKS[2:]]
    app = create_app(model=streaming_model(chunks), documents=DOCUMENTS, k=3, ai7_fields=package == "ai")
    with serving(app) as url:
        result = read(package, url, body("Paris?"))
    check_cited_answer(result, package)
    assert [p["text"] for p in parts(result["message"], "reasoning")] == ["First.", "Then."]


# A flag (two code points, four UTF-16 units) and an emoji (one code point, two units) before the citations.
EMOJI_DOCUMENTS = [
    Document("Paris is the capital of France.", metadata={"source": "https://a.org/paris", "title": "Paris"}),
    Document("Paris is on the Seine.", metadata={"source": "https://b.org/seine", "title": "Seine"}),
]
EMOJI_ANSWER = (
    "\U0001f1eb\U0001f1f7 \U0001f600 Paris is the capital of France[1](id=1). Paris is on the Seine[2](id=2)."
)


def test_citation_offsets_give_the_cited_words_to_javascript_after_emoji() -> None:
    """ai 7's text part, sliced by JavaScript at each citation's startIndex/endIndex, gives the words it backs."""
    from langchain_refs.apps.chat_ui import create_app

    app = create_app(model=streaming_model([EMOJI_ANSWER]), documents=EMOJI_DOCUMENTS, k=2, ai7_fields=True)
    with serving(app) as url:
        result = read("ai", url, body("Paris?"))
    assert result["refused"] == []
    [text] = parts(result["message"], "text")
    assert (
        text["text"] == "\U0001f1eb\U0001f1f7 \U0001f600 Paris is the capital of France[1]. Paris is on the Seine[2]."
    )
    # Written by hand: the words before each marker, from the start of its sentence.
    assert result["citedWords"] == [
        "\U0001f1eb\U0001f1f7 \U0001f600 Paris is the capital of France",
        "Paris is on the Seine",
    ]
    assert [(c["startIndex"], c["endIndex"]) for c in text["citations"]] == [(0, 38), (43, 64)]


@agents
@pytest.mark.parametrize("package", PACKAGES)
def test_agent_answer_reaches_the_ai_sdk_client_with_its_tool_step(package: str) -> None:
    """An agent's answer: its search as a tool part with input and output, then the cited answer."""
    from langchain_refs.apps.chat_ui import create_app
    from tests.unit_tests.agent_fakes import ScriptedToolModel, Step, search

    answer = Step(ANSWER_CHUNKS)
    model = ScriptedToolModel(script=[search("Paris", tool="search_docs"), answer])
    with serving(create_app(agent=True, model=model, documents=DOCUMENTS, k=3, ai7_fields=package == "ai")) as url:
        result = read(package, url, body("Paris?"))
    check_agent_answer(result, package)


def check_agent_answer(result: dict[str, Any], package: str) -> None:
    """The agent's answer: the cited answer, after its search as a tool part with input and output."""
    check_cited_answer(result, package)
    [tool] = parts(result["message"], "tool-*")
    assert tool["type"] == "tool-search_docs"
    assert tool["state"] == "output-available"
    assert tool["input"] == {"query": "Paris"}
    assert [d["title"] for d in tool["output"]["documents"]] == [d.metadata["title"] for d in DOCUMENTS]
    # The tool step comes before the answer's text.
    types = [p["type"] for p in result["message"]["parts"]]
    assert types.index("tool-search_docs") < types.index("text")


@agents
@pytest.mark.parametrize("package", PACKAGES)
def test_a_thinking_models_reasoning_reaches_the_ai_sdk_client_as_a_reasoning_part(package: str) -> None:
    """An agent on a model that thinks first (Anthropic's thinking blocks): a reasoning part, then the cited answer."""
    from langchain_core.messages import AIMessageChunk

    from langchain_refs.apps.chat_ui import create_app
    from tests.unit_tests.agent_fakes import BlockStreamer, ScriptedToolModel, search

    meta = {"model_provider": "anthropic"}
    thinking = [
        AIMessageChunk(content=[{"type": "thinking", "thinking": t, "index": 0}], response_metadata=meta)
        for t in ("Let me ", "think.")
    ]
    answer = [
        AIMessageChunk(content=[{"type": "text", "text": t, "index": 1}], response_metadata=meta) for t in ANSWER_CHUNKS
    ]
    tool_step = next(iter(ScriptedToolModel(script=[search("Paris", tool="search_docs")])._stream([])))
    model = BlockStreamer(script=[[tool_step.message], [*thinking, *answer]])
    with serving(create_app(agent=True, model=model, documents=DOCUMENTS, k=3, ai7_fields=package == "ai")) as url:
        result = read(package, url, body("Paris?"))
    check_cited_answer(result, package)
    [reasoning] = parts(result["message"], "reasoning")
    assert (reasoning["text"], reasoning["state"]) == ("Let me think.", "done")
    types = [p["type"] for p in result["message"]["parts"]]
    assert types.index("tool-search_docs") < types.index("reasoning") < types.index("text")


EXAMPLE = HERE.parents[1] / "examples" / "ai_sdk" / "server.py"


@agents
@pytest.mark.skipif(importlib.util.find_spec("fastapi") is None, reason="FastAPI is not installed: pip install fastapi")
@pytest.mark.parametrize("package", PACKAGES)
def test_the_fastapi_example_serves_an_agent_to_the_ai_sdk_client(package: str) -> None:
    """examples/ai_sdk/server.py: useChat's default POST /api/chat gets the agent's cited answer and its tool step."""
    from langgraph.checkpoint.memory import InMemorySaver

    from langchain_refs.apps.demo.agent import build_demo_agent
    from langchain_refs.apps.ui_stream import citation_numbers_style
    from tests.unit_tests.agent_fakes import ScriptedToolModel, Step, search

    spec = importlib.util.spec_from_file_location("ai_sdk_example_server", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    model = ScriptedToolModel(script=[search("Paris", tool="search_docs"), Step(ANSWER_CHUNKS)])
    agent = build_demo_agent(
        style=citation_numbers_style(), model=model, documents=DOCUMENTS, k=3, checkpointer=InMemorySaver()
    )
    with serving(example.build_app(agent, ai7_fields=package == "ai")) as url:
        check_agent_answer(read(package, url, body("Paris?"), path="api/chat"), package)
        refused = read(package, url, json.dumps({"id": "c"}), path="api/chat")
    assert refused["status"] == 400
    assert json.loads(refused["body"]) == {"detail": 'send the body useChat sends: {"id": ..., "messages": [...]}'}


@agents
@pytest.mark.parametrize("package", PACKAGES)
def test_a_tool_that_fails_reaches_the_ai_sdk_client_as_a_failed_tool_part(package: str) -> None:
    """A tool's error (``ToolMessage(status="error")``): the client's tool part is in ``output-error`` with it."""
    from langchain.agents import create_agent
    from langchain_core.tools import ToolException, tool

    from langchain_refs import ReferencesMiddleware
    from langchain_refs.apps.ui_stream import citation_numbers_style
    from tests.unit_tests.agent_fakes import ScriptedToolModel, Step, search

    @tool
    def search_docs(query: str) -> str:
        """Search the docs."""
        msg = "the index is down"
        raise ToolException(msg)

    search_docs.handle_tool_error = True  # LangChain's way: the error becomes the tool's message, status "error"
    spec = importlib.util.spec_from_file_location("ai_sdk_example_server", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    model = ScriptedToolModel(script=[search("Paris", tool="search_docs"), Step(["The search failed."])])
    middleware = [ReferencesMiddleware(style=citation_numbers_style())]
    agent = create_agent(model, tools=[search_docs], middleware=middleware)
    with serving(example.build_app(agent)) as url:
        result = read(package, url, body("Paris?"), path="api/chat")
    [part] = parts(result["message"], "tool-*")
    assert (part["type"], part["state"], part["errorText"]) == ("tool-search_docs", "output-error", "the index is down")
    assert [p["text"] for p in parts(result["message"], "text")] == ["The search failed."]


def failing_model() -> RunnableGenerator[Any, Any]:
    """A chat model that streams a cited sentence, then fails."""

    def stream(inputs: Iterator[Any]) -> Iterator[AIMessageChunk]:
        for _ in inputs:
            pass
        yield AIMessageChunk("Paris is big[1](id=1)")
        msg = "the model went away\nTraceback (most recent call last): ..."
        raise RuntimeError(msg)

    async def astream(inputs: AsyncIterator[Any]) -> AsyncIterator[AIMessageChunk]:
        async for _ in inputs:
            pass
        yield AIMessageChunk("Paris is big[1](id=1)")
        msg = "the model went away\nTraceback (most recent call last): ..."
        raise RuntimeError(msg)

    return RunnableGenerator(stream, astream)


@pytest.mark.parametrize("package", PACKAGES)
def test_a_stream_failing_midway_gives_the_client_an_error_and_the_server_stays_up(package: str) -> None:
    """The client gets the words so far and one error line; the next request is answered."""
    from langchain_refs.apps.chat_ui import create_app

    with serving(create_app(model=failing_model(), documents=DOCUMENTS, k=3)) as url:
        result = read(package, url, body("Paris?"))
        assert result["status"] == 200
        assert result["refused"] == []
        assert result["errors"] == ["RuntimeError: the model went away"]
        assert "finish" not in result["chunkTypes"]
        [text] = parts(result["message"], "text")
        assert text["text"] == "Paris is big[1]"
        again = read(package, url, body("Paris?", chat_id="chat-2"))
        assert again["errors"] == ["RuntimeError: the model went away"]


@pytest.mark.parametrize("package", PACKAGES)
def test_a_body_that_is_not_usechats_is_a_400_with_one_line(package: str) -> None:
    """A request without messages is refused with a 400 that names what to send."""
    from langchain_refs.apps.chat_ui import create_app

    with serving(create_app(model=streaming_model(ANSWER_CHUNKS), documents=DOCUMENTS, k=3)) as url:
        result = read(package, url, json.dumps({"question": "Paris?"}))
    assert result["status"] == 400
    assert json.loads(result["body"]) == {"error": 'send the body useChat sends: {"id": ..., "messages": [...]}'}


@agents
@pytest.mark.parametrize("package", PACKAGES)
def test_a_tool_that_raises_leaves_no_tool_part_running_in_the_ai_sdk_client(package: str) -> None:
    """A tool raising (not handled by LangChain): the client's tool part ends in ``output-error``, then the error."""
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    from langchain_refs import ReferencesMiddleware
    from langchain_refs.apps.ui_stream import citation_numbers_style
    from tests.unit_tests.agent_fakes import ScriptedToolModel, Step, search

    @tool
    def search_docs(query: str) -> str:
        """Search the docs."""
        msg = "the vector store is unreachable"
        raise ConnectionError(msg)

    spec = importlib.util.spec_from_file_location("ai_sdk_example_server", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    model = ScriptedToolModel(script=[search("Paris", tool="search_docs"), Step(["unused"])])
    agent = create_agent(model, tools=[search_docs], middleware=[ReferencesMiddleware(style=citation_numbers_style())])
    with serving(example.build_app(agent)) as url:
        result = read(package, url, body("Paris?"), path="api/chat")
    assert result["refused"] == []
    [part] = parts(result["message"], "tool-*")
    line = "ConnectionError: the vector store is unreachable"
    assert (part["state"], part["input"], part["errorText"]) == ("output-error", {"query": "Paris"}, line)
    assert result["errors"] == [line]
