"""The chat server at the door: it reads no more than its limit, takes only JSON, and keeps bounded state."""

from __future__ import annotations

import asyncio
import gc
import json
import re
import types
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from starlette.testclient import TestClient

from langchain_refs.apps.chat_ui import ConversationStore, InMemoryConversationStore, create_app
from tests.unit_tests.fakes import streaming_model

DOCUMENTS = [Document("Paris is big.", metadata={"source": "https://a.org/paris", "title": "Paris"})]
QUESTION = json.dumps({"question": "Paris?"}).encode()
UI_BODY = json.dumps(
    {"id": "c1", "messages": [{"id": "u", "role": "user", "parts": [{"type": "text", "text": "Paris?"}]}]}
).encode()


def app() -> Any:
    return create_app(model=streaming_model(["Paris is big[1](id=1)."]), documents=DOCUMENTS, k=1)


async def post(path: str, headers: list[tuple[bytes, bytes]], pieces: int, piece: bytes) -> tuple[int, int]:
    """POST ``pieces`` copies of ``piece`` as a chunked body; the status and how many pieces the app read."""
    read = 0
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal read
        read += 1
        return {"type": "http.request", "body": piece, "more_body": read < pieces}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 1234),
        "server": ("127.0.0.1", 8000),
    }
    await app()(scope, receive, send)
    return status, read


@pytest.mark.parametrize(("path", "limit"), [("/api/chat", 16_384), ("/api/ui-stream", 1_048_576)])
def test_an_endless_body_is_refused_after_reading_past_its_limit_only(path: str, limit: int) -> None:
    """A chunked body of 64 MB without a length: 413 once past the limit, the rest never read."""
    piece = b" " * 65_536
    status, read = asyncio.run(post(path, [(b"content-type", b"application/json")], 1024, piece))
    assert status == 413
    assert read <= limit // len(piece) + 1


@pytest.mark.parametrize("path", ["/api/chat", "/api/ui-stream"])
def test_a_declared_length_over_the_limit_is_refused_before_reading(path: str) -> None:
    """A Content-Length over the limit gets 413 without a byte of the body read."""
    headers = [(b"content-type", b"application/json"), (b"content-length", b"209715200")]
    status, read = asyncio.run(post(path, headers, 3200, b" " * 65_536))
    assert (status, read) == (413, 0)


def leave_mid_upload(asgi_app: Any, path: str) -> list[dict[str, Any]]:
    """POST half a body, then disconnect, as a client that goes away does; what the app sent back."""
    events = iter(
        [{"type": "http.request", "body": b'{"question": "Par', "more_body": True}, {"type": "http.disconnect"}]
    )
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return next(events, {"type": "http.disconnect"})

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [(b"content-type", b"application/json"), (b"content-length", b"40")]
    scope = {"type": "http", "method": "POST", "path": path, "headers": headers, "query_string": b""}
    asyncio.run(asgi_app(scope, receive, send))  # raised ClientDisconnect, which uvicorn printed with its traceback
    return sent


@pytest.mark.parametrize("path", ["/api/chat", "/api/ui-stream", "/api/check"])
def test_a_client_that_leaves_mid_upload_is_let_go_quietly(path: str) -> None:
    """Half a body, then the client disconnects: the app ends the request itself (no ClientDisconnect traceback)."""
    sent = leave_mid_upload(app(), path)
    assert sent[0]["type"] == "http.response.start"
    assert sent[0]["status"] == 400
    assert json.loads(sent[1]["body"]) == {"error": "the client left before sending the whole body"}


def test_the_example_lets_a_client_that_leaves_mid_upload_go_quietly() -> None:
    """examples/ai_sdk: the same half body and disconnect end the request with a 400, not a traceback."""
    sent = leave_mid_upload(_example_server(), "/api/chat")
    assert sent[0]["status"] == 400
    assert json.loads(sent[1]["body"]) == {"detail": "the client left before sending the whole body"}


@pytest.mark.parametrize("path", ["/api/chat", "/api/ui-stream"])
@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data"],
)
def test_a_body_not_sent_as_json_is_a_415(path: str, content_type: str | None) -> None:
    """Only application/json is read: what a page of another site can post without a preflight is refused."""
    body = QUESTION if path == "/api/chat" else UI_BODY
    headers = {"content-type": content_type} if content_type else {}
    response = TestClient(app()).post(path, content=body, headers=headers)
    assert response.status_code == 415
    assert response.json() == {"error": "send the body as JSON, with Content-Type: application/json"}


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8", "Application/JSON"])
def test_a_json_body_is_answered(content_type: str) -> None:
    """application/json, with or without parameters, in any case, is taken."""
    response = TestClient(app()).post("/api/chat", content=QUESTION, headers={"content-type": content_type})
    assert response.status_code == 200
    assert "event: done" in response.text


def test_the_in_memory_store_keeps_a_bounded_number_of_conversations() -> None:
    """Past its bound the least recently used conversation is forgotten, and on_forget hears of it."""
    forgotten: list[str] = []
    store = InMemoryConversationStore(max_conversations=3, on_forget=forgotten.append)
    for name in "abcdefg":
        store.save(name, [(f"{name}?", f"{name}.")])
    store.turns("e")  # used: now the most recent
    store.save("h", [])
    assert len(store) == 3
    assert forgotten == ["a", "b", "c", "d", "f"]
    assert [store.turns(name) for name in "egh"] == [(("e?", "e."),), (("g?", "g."),), ()]
    assert store.turns("a") is None


def test_the_app_continues_conversations_of_the_store_it_is_given() -> None:
    """A store passed to create_app holds the chain's turns; a conversation it forgot starts afresh."""
    store = InMemoryConversationStore(max_conversations=2)
    assert isinstance(store, ConversationStore)
    client = TestClient(create_app(model=streaming_model(["Yes."]), documents=DOCUMENTS, k=1, conversation_store=store))

    def start(conversation: str | None) -> str:
        text = client.post("/api/chat", json={"question": "Paris?", "conversation": conversation}).text
        started: str = json.loads(text.split("\n")[1].removeprefix("data: "))["conversation"]
        return started

    first = start(None)
    assert start(first) == first
    assert store.turns(first) == (("Paris?", "Yes."), ("Paris?", "Yes."))
    start(None)
    start(None)  # the third conversation: the first is forgotten
    assert store.turns(first) is None
    assert start(first) != first


def reachable(root: Any, wanted: set[str]) -> set[str]:
    """The strings of ``wanted`` reachable from ``root`` (modules, classes and module globals not followed)."""
    seen: set[int] = set()
    stack, found = [root], set()
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, str):
            found.update({item} & wanted)
        elif not isinstance(item, (types.ModuleType, type)) and not (isinstance(item, dict) and "__builtins__" in item):
            stack.extend(gc.get_referents(item))
    return found


def test_the_chain_app_holds_no_more_conversation_ids_than_its_bound() -> None:
    """After 400 conversations the app holds 256 conversation ids: no list of dropped ids grows beside the store."""
    app = create_app(model=streaming_model(["Yes."]), documents=DOCUMENTS, k=1)
    client = TestClient(app)
    started = set()
    for _ in range(400):
        text = client.post("/api/chat", json={"question": "Paris?"}).text
        started.add(json.loads(text.split("\n")[1].removeprefix("data: "))["conversation"])
    assert len(started) == 400
    assert len(reachable(app, started)) == 256


def started(client: TestClient, conversation: str | None, question: str = "Paris?") -> str:
    """Ask on /api/chat; the conversation id its start event gives."""
    text = client.post("/api/chat", json={"question": question, "conversation": conversation}).text
    assert text.rstrip().endswith("event: done\ndata: {}"), text[-300:]
    conversation_id: str = json.loads(text.split("\n")[1].removeprefix("data: "))["conversation"]
    return conversation_id


def test_a_chain_conversation_survives_a_restart_with_its_store() -> None:
    """A second app given the first one's store (as a restarted server would be) continues its conversations."""
    store = InMemoryConversationStore()
    first_app = TestClient(
        create_app(model=streaming_model(["Yes."]), documents=DOCUMENTS, k=1, conversation_store=store)
    )
    conversation = started(first_app, None)
    restarted = TestClient(
        create_app(model=streaming_model(["Yes."]), documents=DOCUMENTS, k=1, conversation_store=store)
    )
    assert started(restarted, conversation, "Really?") == conversation
    assert store.turns(conversation) == (("Paris?", "Yes."), ("Really?", "Yes."))


def test_an_agent_conversation_survives_a_restart_with_its_checkpointer() -> None:
    """A second agent app given the first one's checkpointer continues its threads: the model sees both questions."""
    pytest.importorskip("langgraph", reason="the agents extra is not installed: pip install -e '.[agents]'")
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from langchain_refs.apps.demo.agent import AgentDemoChatModel

    seen: list[int] = []

    class Counting(AgentDemoChatModel):
        def reply(self, messages: Any) -> AIMessage:
            seen.append(sum(isinstance(m, HumanMessage) for m in messages))
            return super().reply(messages)

    saver = InMemorySaver()
    conversation = started(TestClient(create_app(agent=True, model=Counting(), checkpointer=saver)), None)
    restarted = TestClient(create_app(agent=True, model=Counting(), checkpointer=saver))
    assert started(restarted, conversation, "Which URLs become links?") == conversation
    assert started(restarted, "not-a-thread", "Which URLs become links?") != "not-a-thread"
    # Two model calls per turn (search, answer): 1 question, then 2 after the restart, then a new thread.
    assert seen == [1, 1, 2, 2, 1, 1]


def test_a_checkpointer_is_for_the_agent_and_a_store_for_the_chain() -> None:
    """Each mode refuses the other's memory with a ValueError that says which takes which."""
    with pytest.raises(ValueError, match="the chain takes a conversation_store"):
        create_app(checkpointer=object())
    with pytest.raises(ValueError, match="a conversation store is for the chain"):
        create_app(agent=True, conversation_store=InMemoryConversationStore())


# Bodies a client might send by mistake; each must get a 400 with a JSON error, never a 500.
BAD_BODIES = {
    "not JSON": b"{bad",
    "not UTF-8": b'{"id": "c\xff"}',
    "nested deeper than Python parses": b"[" * 100_000 + b"]" * 100_000,
    "no user message": json.dumps({"id": "c1", "messages": []}).encode(),
    "parts a number": b'{"id": "c1", "messages": [{"id": "u", "role": "user", "parts": 5}]}',
    "parts true": b'{"id": "c1", "messages": [{"id": "u", "role": "user", "parts": true}]}',
    # Valid JSON (JSON.stringify sends a lone surrogate so), that no answer could write back in UTF-8.
    "a lone surrogate": b'{"id": "c1", "messages": [{"id": "u", "role": "user", "parts": '
    b'[{"type": "text", "text": "Paris \\ud800?"}]}]}',
}


def _server_from_the_docs() -> Any:
    """The FastAPI server of docs/chat-uis.md ("In your own server"), run as the page shows it."""
    pytest.importorskip("fastapi", reason="FastAPI is not installed: pip install fastapi")
    from tests.unit_tests.test_readme import ROOT, blocks

    (code,) = [code for language, code in blocks(ROOT / "docs" / "chat-uis.md") if '@app.post("/api/chat")' in code]
    namespace: dict[str, Any] = {}
    exec(compile(code, "chat-uis.md", "exec"), namespace)
    return namespace["app"]


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ai_sdk"


def _example_module() -> Any:
    """examples/ai_sdk/server.py, loaded (its ``app``: the offline demo agent over the built-in corpus)."""
    pytest.importorskip("fastapi", reason="FastAPI is not installed: pip install fastapi")
    pytest.importorskip("langchain.agents", reason="the example's agent needs the agents extra")
    import importlib.util

    spec = importlib.util.spec_from_file_location("ai_sdk_example_server", EXAMPLE / "server.py")
    assert spec is not None
    assert spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example


def _example_server() -> Any:
    """examples/ai_sdk/server.py's app around the offline demo agent."""
    from langchain_refs.apps.demo.agent import build_demo_agent
    from langchain_refs.apps.ui_stream import citation_numbers_style

    agent = build_demo_agent(style=citation_numbers_style(), documents=DOCUMENTS, k=1)
    return _example_module().build_app(agent)


def _ui_body(*questions: str, **fields: str) -> bytes:
    """useChat's body for the chat c1: each question a user message (u1, u2...), an answer after all but the last."""
    messages: list[dict[str, Any]] = []
    for n, question in enumerate(questions, start=1):
        if messages:
            messages.append({"id": f"a{n - 1}", "role": "assistant", "parts": [{"type": "text", "text": "…"}]})
        messages.append({"id": f"u{n}", "role": "user", "parts": [{"type": "text", "text": question}]})
    return json.dumps({"id": "c1", "messages": messages, **fields}).encode()


def test_the_example_drops_from_the_thread_the_turns_usechat_dropped() -> None:
    """examples/ai_sdk: after regenerate() and an edited question, the agent's thread holds what the reader sees.

    Found in use: the example ignored ``trigger`` and ``messageId``, so a
    regenerated answer's question went into the thread a second time and an
    edited question beside the one it replaced.
    """
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from langchain_refs.apps.demo.agent import build_demo_agent
    from langchain_refs.apps.ui_stream import citation_numbers_style

    agent = build_demo_agent(style=citation_numbers_style(), documents=DOCUMENTS, k=1, checkpointer=InMemorySaver())
    client = TestClient(_example_module().build_app(agent))
    config = {"configurable": {"thread_id": "c1"}}

    def questions() -> list[str]:
        return [m.text for m in agent.get_state(config).values["messages"] if isinstance(m, HumanMessage)]

    def post(body: bytes) -> None:
        response = client.post("/api/chat", content=body, headers={"content-type": "application/json"})
        assert response.status_code == 200, response.text

    post(_ui_body("Paris?"))
    post(_ui_body("Paris?", "Lyon?"))
    assert questions() == ["Paris?", "Lyon?"]
    post(_ui_body("Paris?", "Lyon?", trigger="regenerate-message", messageId="a2"))
    assert questions() == ["Paris?", "Lyon?"]
    post(_ui_body("Rome?", trigger="submit-message", messageId="u1"))  # the first question edited
    assert questions() == ["Rome?"]


def test_the_example_answers_a_question_too_long_with_413() -> None:
    """examples/ai_sdk: a question over 4,000 characters is a 413 (`QuestionTooLongError`), as question_of says."""
    response = TestClient(_example_server()).post(
        "/api/chat", content=_ui_body("x" * 4_001), headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json() == {"detail": "the question is over 4000 characters"}


def test_the_example_readme_shows_what_the_example_streams() -> None:
    """Each line of examples/ai_sdk/README.md's sample stream ("…" standing for any text) is a line the server sends."""
    from tests.unit_tests.test_readme import blocks

    readme = EXAMPLE / "README.md"
    [sample] = [code for language, code in blocks(readme) if language == "text"]
    [curl] = [code for language, code in blocks(readme) if language == "bash" and "curl" in code]
    body = curl.split("-d '")[1].split("'")[0]
    sent = TestClient(_example_module().app).post(
        "/api/chat", content=body, headers={"content-type": "application/json"}
    )
    lines = sent.text.splitlines()
    for shown in sample.splitlines():
        if shown.strip() == "…":
            continue
        pattern = re.compile(".*".join(re.escape(piece) for piece in shown.split("…")))
        assert any(pattern.fullmatch(line) for line in lines), shown


@pytest.mark.parametrize("server", [_server_from_the_docs, _example_server], ids=["docs snippet", "example"])
@pytest.mark.parametrize("body", list(BAD_BODIES.values()), ids=list(BAD_BODIES))
def test_the_documented_servers_answer_a_bad_body_with_400(server: Any, body: bytes) -> None:
    """The FastAPI servers the docs give (the page's snippet, examples/ai_sdk): a bad body is a 400 with one line."""
    response = TestClient(server()).post("/api/chat", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    error = response.json().get("error") or response.json().get("detail")
    assert isinstance(error, str)
    assert error
    assert "\n" not in error


@pytest.mark.parametrize("server", [_server_from_the_docs, _example_server], ids=["docs snippet", "example"])
def test_the_documented_servers_answer_usechat(server: Any) -> None:
    """The same servers stream an answer for useChat's body (so the 400s above are not all they do)."""
    response = TestClient(server()).post("/api/chat", content=UI_BODY, headers={"content-type": "application/json"})
    assert response.status_code == 200
    assert response.text.startswith("data: ")
    assert "data: [DONE]" in response.text


def test_the_docs_server_answers_with_citations() -> None:
    """The page's snippet prompts as serve does (numbered documents, the citation rule): its answer cites."""
    question = {"id": "u", "role": "user", "parts": [{"type": "text", "text": "Which URLs become links?"}]}
    body = json.dumps({"id": "c1", "messages": [question]}).encode()
    response = TestClient(_server_from_the_docs()).post(
        "/api/chat", content=body, headers={"content-type": "application/json"}
    )
    chunks = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: {")]
    text = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
    # Written by hand: the demo corpus's page on links, cited as [1].
    assert "[1]" in text
    sources = [(c["sourceId"], c["url"]) for c in chunks if c["type"] == "source-url"]
    assert sources[0] == ("source-1", "https://langchain-refs.dev/docs/security")
    assert [c["type"] for c in chunks].count("data-citation") >= 1


@pytest.mark.parametrize(
    ("method", "path", "status", "error"),
    [
        ("GET", "/api/chat", 405, "GET is not taken at /api/chat: send POST"),
        ("GET", "/api/ui-stream", 405, "GET is not taken at /api/ui-stream: send POST"),
        ("OPTIONS", "/api/check", 405, "OPTIONS is not taken at /api/check: send POST"),
        ("GET", "/api/nope", 404, "no endpoint at /api/nope"),
        ("POST", "/api/nope", 404, "no endpoint at /api/nope"),
    ],
)
def test_the_api_answers_a_wrong_route_or_method_in_json(method: str, path: str, status: int, error: str) -> None:
    """Under /api/ a wrong method or route is a JSON error of one line, as the app's other errors are."""
    response = TestClient(app()).request(method, path)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error": error}
    if status == 405:
        assert response.headers["allow"] == "POST"


def test_a_page_that_does_not_exist_stays_plain_text() -> None:
    """Outside /api/ (a page a browser asked for), the 404 stays Starlette's plain text."""
    response = TestClient(app()).get("/nope")
    assert (response.status_code, response.text) == (404, "Not Found")


LONE_SURROGATE = "holds \\ud800, a lone surrogate that UTF-8 cannot write"
TOO_LONG = '{"question": "Paris?", "n": ' + "9" * 5000 + "}"


@pytest.mark.parametrize(
    ("path", "body", "error"),
    [
        ("/api/chat", '{"question": "Paris \\ud800?"}', f"the body {LONE_SURROGATE}"),
        (
            "/api/ui-stream",
            UI_BODY.decode().replace("Paris?", "Paris \\ud800?"),
            f"the question or the chat id {LONE_SURROGATE}",
        ),
        ("/api/chat", TOO_LONG, "an integer of 5000 digits (Python reads at most 4300)"),
        ("/api/ui-stream", TOO_LONG, "an integer of 5000 digits (Python reads at most 4300)"),
    ],
    ids=["lone surrogate", "lone surrogate in the question", "integer too long", "integer too long (UI stream)"],
)
def test_a_body_no_answer_could_be_written_for_is_a_400_before_any_event(path: str, body: str, error: str) -> None:
    """Both chat endpoints refuse it up front, in one line the /api/check endpoint words the same way.

    The UI stream's body carries back the earlier messages, which may hold what the server sent (a lone
    surrogate of a file name): there, the question (or the chat id) holding one is what is refused.
    """
    response = TestClient(app()).post(path, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"].endswith(error)


def test_a_host_the_server_does_not_answer_to_is_refused_in_one_line_of_json_under_api() -> None:
    """The trusted-host refusal is a 400 either way; under /api/ it is the API's one line of JSON naming the host."""
    client = TestClient(
        create_app(
            model=streaming_model(["Paris is big[1](id=1)."]),
            documents=DOCUMENTS,
            k=1,
            allowed_hosts=["127.0.0.1", "localhost"],
        )
    )
    headers = {"content-type": "application/json", "host": "devbox.lan:8000"}
    for path, body in [("/api/ui-stream", UI_BODY), ("/api/chat", QUESTION)]:
        response = client.post(path, content=body, headers=headers)
        assert (response.status_code, response.headers["content-type"]) == (400, "application/json")
        assert response.text == '{"error":"this server does not answer to the host devbox.lan:8000"}'
        assert client.post(path, content=body, headers={**headers, "host": "localhost:8000"}).status_code == 200
    page = client.get("/", headers={"host": "devbox.lan:8000"})
    assert (page.status_code, page.text) == (400, "Invalid host header")


@pytest.mark.parametrize(("conversation", "named"), [(12345, "int"), (["c1"], "list"), ({"id": "c1"}, "dict")])
def test_a_conversation_that_is_no_id_is_a_400_not_a_new_conversation(conversation: Any, named: str) -> None:
    """A wrong type would start a new conversation in silence, its earlier turns lost: refused, naming the field."""
    response = TestClient(app()).post("/api/chat", json={"question": "Paris?", "conversation": conversation})
    assert response.status_code == 400
    assert response.json()["error"] == f"conversation must be the id the server gave (a string), got {named}"
