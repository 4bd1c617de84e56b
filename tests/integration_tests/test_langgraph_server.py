"""The demo agent served by ``langgraph dev`` (examples/langgraph/langgraph.json), read with the langgraph-sdk client.

Starts the real LangGraph dev server (``langgraph-cli[inmem]``) on loopback
and streams one question in ``messages-tuple`` and ``values`` modes: the
streamed text never holds a raw marker and the final state's answer carries
standard ``Citation`` annotations. Skips loudly when the CLI is not installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langgraph"
RAW_MARKER = re.compile(r"\]\(\s*id\s*=")

pytestmark = pytest.mark.slow


def _langgraph_cli() -> str:
    cli = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or shutil.which("langgraph")
    try:
        import langgraph_api  # noqa: F401
        import langgraph_sdk  # noqa: F401
    except ImportError as error:
        pytest.skip(f"LANGGRAPH SERVER NOT CHECKED: langgraph-cli[inmem] missing ({error}): pip install -e '.[test]'")
    if cli is None:
        pytest.skip("LANGGRAPH SERVER NOT CHECKED: no langgraph command: pip install 'langgraph-cli[inmem]'")
    return cli


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _example_copy(folder: Path) -> Path:
    """The example in ``folder``, its dependency the checkout: the server keeps its state (.langgraph_api/) there."""
    shutil.copy(EXAMPLE / "agent.py", folder / "agent.py")
    config = json.loads((EXAMPLE / "langgraph.json").read_text(encoding="utf-8"))
    config["dependencies"] = [str((EXAMPLE / dependency).resolve()) for dependency in config["dependencies"]]
    (folder / "langgraph.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    cli = _langgraph_cli()
    port = _free_port()
    env = {**os.environ, "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false"}
    process = subprocess.Popen(
        [cli, "dev", "--host", "127.0.0.1", "--port", str(port), "--no-browser", "--no-reload"],
        cwd=_example_copy(tmp_path_factory.mktemp("langgraph-dev")),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        import httpx

        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                output = process.stdout.read() if process.stdout else ""
                pytest.fail(f"langgraph dev exited with {process.returncode}:\n{output[-3000:]}")
            try:
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("langgraph dev did not answer /ok within 90 s")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def test_messages_and_values_from_the_sdk_client(server: str) -> None:
    """messages-tuple shows only rewritten text; the final state's answer has Citation annotations slicing its text."""
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=server)
    thread = client.threads.create()
    streamed: list[str] = []
    values: dict[str, Any] | None = None
    for part in client.runs.stream(
        thread["thread_id"],
        "agent",
        input={"messages": [{"role": "user", "content": "How do I run the tests?"}]},
        stream_mode=["messages-tuple", "values"],
    ):
        if part.event == "messages":
            message, metadata = part.data
            if metadata.get("langgraph_node") == "model" and message.get("type") in ("AIMessageChunk", "ai"):
                streamed.append(_text(message))
        elif part.event == "values":
            values = part.data
    text = "".join(streamed)
    assert text, "no model text was streamed"
    assert not RAW_MARKER.search(text)
    assert values is not None
    answer = values["messages"][-1]
    blocks = [b for b in answer["content"] if isinstance(b, dict) and b.get("type") == "text"]
    annotations = [(b["text"], a) for b in blocks for a in b.get("annotations", [])]
    assert annotations, "the final answer carries no Citation annotations"
    for block_text, annotation in annotations:
        assert annotation["type"] == "citation"
        assert block_text[annotation["start_index"] : annotation["end_index"]].strip()
    assert not RAW_MARKER.search(_text(answer))
    # What streamed is the answer the state keeps.
    assert text == _text(answer)
