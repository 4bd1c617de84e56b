"""A measuring prototype: citations rewritten by an ``AgentMiddleware.transformers`` stream transformer.

LangChain 1.5's stream-rewriting idiom (``PIIMiddleware`` uses it) mutates
the ``content-block-delta`` events of ``stream_events(version="v3")`` in
flight. This prototype does the least such a rewrite must: one
`ReferenceSession` per text block, each text delta fed through it and
replaced by what it releases, the finished block's text replaced by the
whole rewritten text with the list of sources. No annotations, no state,
no passages: a lower bound on what a transformer costs. It is not part of
the package; `bench/run.py` (``transformer_cost``) measures it against
`ReferencesMiddleware` (the model wrapper) and the bare agent on the same
workload, and shows what a ``stream_mode="messages"`` client reads with it.

    python bench/agent_transformer.py        # the figures alone (about a minute)
"""

from __future__ import annotations

import gc
import re
import sys
import time
import warnings
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.workloads import ToolRoundChatModel, answer, chunked, long_documents  # noqa: E402
from langchain_refs import MarkdownReferenceStyle, ReferenceSession  # noqa: E402

_MARKER = re.compile(r"\[[^\]\n]*\]\(id=[^)\n]*\)")


def citation_transformer(documents: Sequence[Any]) -> Any:
    """The transformer factory (``AgentMiddleware.transformers`` entry) for ``documents``."""
    from langgraph.stream import StreamTransformer

    class CitationStreamTransformer(StreamTransformer):
        """Rewrites text deltas of the v3 ``messages`` channel through a `ReferenceSession` per block."""

        before_builtins: ClassVar[bool] = True
        required_stream_modes: ClassVar[tuple[str, ...]] = ("messages",)

        def __init__(self, scope: tuple[str, ...] = ()) -> None:
            super().__init__(scope)
            self._sessions: dict[tuple[str, int], tuple[ReferenceSession, list[str]]] = {}
            self._style = MarkdownReferenceStyle()

        def init(self) -> dict[str, Any]:
            return {}

        def process(self, event: Any) -> bool:
            if event["method"] != "messages":
                return True
            data = event["params"].get("data")
            if not isinstance(data, tuple) or len(data) != 2 or not isinstance(data[0], dict):
                return True
            payload, metadata = data
            kind = payload.get("event")
            key = (str((metadata or {}).get("run_id") or ""), payload.get("index", 0))
            if kind == "content-block-delta":
                delta = payload.get("delta")
                if isinstance(delta, dict) and delta.get("type") == "text-delta":
                    session, out = self._session(key)
                    delta["text"] = session.feed(delta["text"])
                    out.append(delta["text"])
            elif kind == "content-block-finish":
                content = payload.get("content")
                if isinstance(content, dict) and content.get("type") == "text" and key in self._sessions:
                    session, out = self._sessions.pop(key)
                    out.append(session.close())
                    content["text"] = "".join(out)
            return True

        def _session(self, key: tuple[str, int]) -> tuple[ReferenceSession, list[str]]:
            found = self._sessions.get(key)
            if found is None:
                style = self._style
                session = ReferenceSession(documents, source_key=style.source_of, style=style, passages=False)
                found = self._sessions[key] = (session, [])
            return found

    return CitationStreamTransformer


def agents(text: str) -> dict[str, Any]:
    """The bare agent, the agent with `ReferencesMiddleware`, and the agent with the transformer alone."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.tools import tool

    from langchain_refs import ReferencesMiddleware, documents_tool_output

    docs = long_documents()

    @tool(response_format="content_and_artifact")
    def search(query: str) -> tuple[str, list[Any]]:
        """Search the documents."""
        return documents_tool_output(docs)

    class TransformerOnly(AgentMiddleware):  # type: ignore[type-arg]
        transformers = (partial(citation_transformer(docs)),)

    def agent(middleware: list[Any]) -> Any:
        return create_agent(ToolRoundChatModel(chunks=chunked(text, 4)), tools=[search], middleware=middleware)

    return {
        "bare": agent([]),
        "model wrapper (ReferencesMiddleware, passages off)": agent([ReferencesMiddleware(passages=False)]),
        "model wrapper (ReferencesMiddleware, passages on)": agent([ReferencesMiddleware()]),
        "transformer prototype": agent([TransformerOnly()]),
    }


QUESTION = {"messages": [{"role": "user", "content": "question"}]}


def v3_text(graph: Any) -> tuple[float, str]:
    """Process CPU seconds of one ``stream_events(version="v3")`` read, and the text deltas it showed."""
    gc.collect()
    start = time.process_time()
    deltas = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # v3 is experimental
        for event in graph.stream_events(QUESTION, version="v3"):
            if event["method"] == "messages":
                payload = event["params"]["data"][0]
                if isinstance(payload, dict) and payload.get("event") == "content-block-delta":
                    delta = payload["delta"]
                    if delta.get("type") == "text-delta":
                        deltas.append(delta["text"])
    return time.process_time() - start, "".join(deltas)


def messages_text(graph: Any) -> tuple[float, str]:
    """Process CPU seconds of one ``stream(stream_mode="messages")`` read, and the model's text it showed."""
    gc.collect()
    start = time.process_time()
    texts = [m.text for m, meta in graph.stream(QUESTION, stream_mode="messages") if meta["langgraph_node"] == "model"]
    return time.process_time() - start, "".join(texts)


def transformer_cost(repeats: int, length: int = 20_000) -> dict[str, Any] | None:
    """Each contender read both ways, interleaved; CPU ratios to the bare agent and raw markers left."""
    try:
        graphs = agents(answer(length))
        from langgraph.stream import StreamTransformer  # noqa: F401
    except ImportError:  # the agents extra, or a langgraph without the v3 protocol
        return None
    rows: dict[str, dict[str, Any]] = {name: {} for name in graphs}
    for mode, read in (("v3", v3_text), ("messages", messages_text)):
        best: dict[str, float] = {}
        for _ in range(repeats):
            for name, graph in graphs.items():
                seconds, text = read(graph)
                best[name] = min(best.get(name, seconds), seconds)
                rows[name][f"{mode}_raw_markers"] = len(_MARKER.findall(text))
        for name in graphs:
            rows[name][f"{mode}_ratio"] = best[name] / best["bare"]
            rows[name][f"{mode}_ms"] = best[name] * 1e3
    return {"length": length, "markers": len(_MARKER.findall(answer(length))), "rows": rows}


def main() -> None:
    found = transformer_cost(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
    if found is None:
        print("needs the agents extra and langgraph >= 1.2 (stream_events v3)")
        return
    print(f"{found['length']:,} characters in 4-char chunks, {found['markers']} markers, one tool round")
    for name, row in found["rows"].items():
        print(
            f"{name}: v3 {row['v3_ratio']:.2f}x ({row['v3_ms']:.0f} ms, {row['v3_raw_markers']} raw markers); "
            f"messages {row['messages_ratio']:.2f}x ({row['messages_ms']:.0f} ms, "
            f"{row['messages_raw_markers']} raw markers)"
        )


if __name__ == "__main__":
    main()
