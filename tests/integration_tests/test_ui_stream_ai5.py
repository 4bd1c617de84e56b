"""The UI message stream against ``ai`` 5.0.0's strict chunk schema: every chunk of recorded streams is accepted.

``ai`` 5 (before 5.0.217) and ``ai`` 6 (before 6.0.231) check each chunk with a
strict schema, and ``useChat`` stops the answer at the first chunk with a field
they do not know. `ai5_chunk_schema.mjs` holds that schema, written out from
``ai`` 5.0.0's source, checked by the zod this folder's ``npm ci`` installs
(with ``ai`` 7 and 6). Streams are recorded in process, without a server: a
cited chain with reasoning, an agent with its tool step, a tool that fails, a
tool that raises, a model that fails, a chunk that is not JSON. Without Node or
zod the tests are skipped, and say so.
"""

from __future__ import annotations

import asyncio
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
from starlette.testclient import TestClient

from langchain_refs.apps.chat_ui import create_app
from langchain_refs.apps.ui_stream import citation_numbers_style, ui_message_chunks, ui_message_sse
from tests.unit_tests.fakes import streaming_model

HERE = Path(__file__).resolve().parent
SCHEMA = HERE / "ai5_chunk_schema.mjs"


def _missing() -> str | None:
    if shutil.which("node") is None:
        return "Node is not installed: the ai 5 schema test needs node on PATH"
    if not (HERE / "node_modules" / "zod" / "package.json").is_file():
        return "zod is not installed: run npm ci in tests/integration_tests"
    return None


MISSING = _missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"SKIPPED LOUDLY: {MISSING}")
agents = pytest.mark.skipif(
    importlib.util.find_spec("langgraph") is None,
    reason="the agents extra is not installed: pip install -e '.[agents]'",
)

DOCUMENTS = [
    Document("Paris is big. Paris is the capital of France.", metadata={"source": "https://a.org/paris", "title": "P"}),
    Document("Rome is older than Paris.", metadata={"source": "rome.pdf", "title": "Rome"}),
]
ANSWER = ["Paris is big[1](id", "=1). Rome is old", "er[7](id=2)", " than Paris[2](id=1)."]
QUESTION = {"id": "c1", "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Paris?"}]}]}


def refused_by_ai5(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chunks ai 5.0.0's strict schema refuses: index, type and fields of each (see ai5_chunk_schema.mjs)."""
    done = subprocess.run(
        ["node", str(SCHEMA)],
        input=json.dumps(chunks),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=HERE,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    refused: list[dict[str, Any]] = json.loads(done.stdout)
    return [{k: r[k] for k in ("index", "type", "keys")} for r in refused]


def sse_chunks(wire: str) -> list[dict[str, Any]]:
    """The chunks of a UI message stream as sent: each ``data:`` event but ``[DONE]``, read as JSON."""
    events = [event.removeprefix("data: ") for event in wire.split("\n\n") if event.startswith("data: ")]
    assert events[-1] == "[DONE]"
    return [json.loads(event) for event in events[:-1]]


def served(app: Any) -> list[dict[str, Any]]:
    """The chunks ``POST /api/ui-stream`` of ``app`` sends for a first question."""
    response = TestClient(app).post("/api/ui-stream", json=QUESTION)
    assert response.status_code == 200
    return sse_chunks(response.text)


def thought(text: str) -> list[dict[str, Any]]:
    return [{"type": "reasoning", "reasoning": text, "index": 1}]


def collect(stream: AsyncIterator[Any], **options: Any) -> list[dict[str, Any]]:
    async def run() -> list[dict[str, Any]]:
        return [chunk async for chunk in ui_message_chunks(stream, message_id="m", **options)]

    return asyncio.run(run())


def test_a_cited_chain_answer_with_reasoning_is_all_ai5_chunks() -> None:
    """serve's chain: reasoning, cited text, source-url and source-document parts, data parts, finish."""
    chunks = served(create_app(model=streaming_model([thought("Hm."), *ANSWER]), documents=DOCUMENTS, k=2))
    types = [c["type"] for c in chunks]
    assert {"reasoning-start", "text-end", "source-url", "source-document", "data-citation", "finish"} <= set(types)
    assert refused_by_ai5(chunks) == []


@agents
def test_an_agents_answer_with_its_tool_step_is_all_ai5_chunks() -> None:
    """serve --agent: the tool part's input and output, then the cited answer."""
    from tests.unit_tests.agent_fakes import ScriptedToolModel, Step, search

    model = ScriptedToolModel(script=[search("Paris", tool="search_docs"), Step(ANSWER)])
    chunks = served(create_app(agent=True, model=model, documents=DOCUMENTS, k=2))
    assert "tool-output-available" in [c["type"] for c in chunks]
    assert refused_by_ai5(chunks) == []


@agents
@pytest.mark.parametrize("handled", [True, False])
def test_a_tool_that_fails_or_raises_gives_ai5_chunks(handled: bool) -> None:
    """A tool's error as its message (tool-output-error), or raised (tool-output-error, then error)."""
    from langchain.agents import create_agent
    from langchain_core.tools import ToolException, tool

    from langchain_refs import ReferencesMiddleware
    from tests.unit_tests.agent_fakes import ScriptedToolModel, Step, search

    @tool
    def search_docs(query: str) -> str:
        """Search the docs."""
        msg = f"the index is down for {query}"
        raise ToolException(msg) if handled else ConnectionError(msg)

    search_docs.handle_tool_error = handled
    model = ScriptedToolModel(script=[search("Paris", tool="search_docs"), Step(["The search failed."])])
    agent = create_agent(model, tools=[search_docs], middleware=[ReferencesMiddleware(style=citation_numbers_style())])
    chunks = collect(agent.astream({"messages": [{"role": "user", "content": "Paris?"}]}, stream_mode="messages"))
    assert "tool-output-error" in [c["type"] for c in chunks]
    assert refused_by_ai5(chunks) == []


def failing_model() -> RunnableGenerator[Any, Any]:
    """A chat model that streams a cited sentence, then fails."""

    def stream(inputs: Iterator[Any]) -> Iterator[AIMessageChunk]:
        yield from ()

    async def astream(inputs: AsyncIterator[Any]) -> AsyncIterator[AIMessageChunk]:
        async for _ in inputs:
            pass
        yield AIMessageChunk("Paris is big[1](id=1)")
        msg = "the model went away"
        raise RuntimeError(msg)

    return RunnableGenerator(stream, astream)


def test_a_model_that_fails_midway_gives_ai5_chunks() -> None:
    """The words so far, their part ended, one error chunk."""
    chunks = served(create_app(model=failing_model(), documents=DOCUMENTS, k=2))
    assert chunks[-1] == {"type": "error", "errorText": "RuntimeError: the model went away"}
    assert refused_by_ai5(chunks) == []


def test_a_chunk_that_is_not_json_gives_an_ai5_error_chunk() -> None:
    """A value JSON cannot hold becomes an error chunk ai 5 reads, and the stream still ends with [DONE]."""

    async def chunks() -> AsyncIterator[dict[str, Any]]:
        yield {"type": "start", "messageId": "m"}
        yield {"type": "data-x", "data": {"path": Path("a.md")}}

    async def wire() -> str:
        return "".join([event async for event in ui_message_sse(chunks())])

    sent = sse_chunks(asyncio.run(wire()))
    assert [c["type"] for c in sent] == ["start", "error"]
    assert refused_by_ai5(sent) == []


def test_the_ai7_fields_are_what_ai5_refuses() -> None:
    """The schema is strict: with ai7_fields the text-end's citations and finish's finishReason are refused."""
    from langchain_core.prompts import ChatPromptTemplate

    from langchain_refs.streaming import manage_references

    prompt = ChatPromptTemplate.from_messages([("human", "{question}")])
    chain = manage_references(prompt | streaming_model(ANSWER), style=citation_numbers_style())
    chunks = collect(chain.astream({"question": "?", "documents": DOCUMENTS}), ai7_fields=True)
    refused = refused_by_ai5(chunks)
    assert [(r["type"], r["keys"]) for r in refused] == [
        ("text-end", ["id", "citations"]),
        ("finish", ["finishReason"]),
    ]
