"""The run plumbing's every option and path: no mapping, dropped chunks, no last chunk, a graph node, a tap, errors.

``ReferencesRunnable`` always passes ``map_chunk``, ``finish`` and
``on_end``; ``bench/workloads.py``'s floor wrapper passes none. Both are
callers of `stream_run`/`astream_run`, so each path is pinned here on a small
wrapper of its own, sync and async: the common loop, the one LangGraph's
"messages" stream reads (metadata ``langgraph_node``), and the one
``astream_events`` taps.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessageChunk
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tracers.log_stream import LogStreamCallbackHandler
from typing_extensions import override

from langchain_refs.streaming._plumbing import NOSTREAM_TAG, astream_run, stream_run

GRAPH_NODE: RunnableConfig = {"metadata": {"langgraph_node": "answer"}}


class Chunks(Runnable[Any, Any]):
    """Streams fixed chunks, then raises if told to; records the tags of the config it ran under."""

    def __init__(self, chunks: list[Any], *, fail: bool = False) -> None:
        self.chunks = chunks
        self.fail = fail
        self.tags: list[str] = []

    @override
    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self.chunks

    @override
    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[Any]:
        self.tags = list(getattr((config or {}).get("callbacks"), "tags", []))
        yield from self.chunks
        if self.fail:
            raise RuntimeError("the inner runnable broke")

    @override
    async def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        for chunk in self.stream(input, config):
            yield chunk


class State:
    """The per-call state: what was finished, what tracers are told."""

    def __init__(self) -> None:
        self.ended = False

    def traced_output(self) -> str:
        return "traced"


class Wrapped(Runnable[Any, Any]):
    """A runnable streaming ``inner`` through the plumbing with the options given (none: the floor wrapper's)."""

    def __init__(
        self,
        inner: Chunks,
        *,
        map_chunk: Callable[[State, Any], Any] | None = None,
        finish: Callable[[State], Any] | None = None,
        on_end: Callable[[State, RunnableConfig], None] | None = None,
    ) -> None:
        self.inner = inner
        self.map_chunk = map_chunk
        self.finish = finish
        self.on_end = on_end

    @override
    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> list[Any]:
        return list(self.stream(input, config))

    @override
    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[Any]:
        return stream_run(
            self,
            input,
            config,
            start=lambda _run_manager: State(),
            inner=lambda child: self.inner.stream(input, child),
            map_chunk=self.map_chunk,
            finish=self.finish,
            on_end=self.on_end,
        )

    @override
    def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        finish, on_end = self.finish, self.on_end

        async def afinish(state: State) -> Any:
            return finish(state) if finish is not None else None

        async def aon_end(state: State, child: RunnableConfig) -> None:
            if on_end is not None:
                on_end(state, child)

        return astream_run(
            self,
            input,
            config,
            start=lambda _run_manager: State(),
            inner=lambda child: self.inner.astream(input, child),
            map_chunk=self.map_chunk,
            finish=afinish if finish is not None else None,
            on_end=aon_end if on_end is not None else None,
        )


class Recorder(BaseCallbackHandler):
    """Each callback by name (with the chain's output, the tokens and errors), in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self.calls.append(("chain_start", None))

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.calls.append(("chain_end", outputs))

    def on_chain_error(self, error: BaseException, **kwargs: Any) -> None:
        self.calls.append(("chain_error", str(error)))

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.calls.append(("chat_model_start", None))

    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self.calls.append(("token", token))

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.calls.append(("llm_end", response.generations))

    def on_llm_error(self, error: BaseException, **kwargs: Any) -> None:
        self.calls.append(("llm_error", str(error)))


def run(wrapped: Wrapped, config: RunnableConfig, how: str) -> list[Any]:
    if how == "sync":
        return list(wrapped.stream("q", config))

    async def collect() -> list[Any]:
        return [chunk async for chunk in wrapped.astream("q", config)]

    return asyncio.run(collect())


HOW = ["sync", "async"]
PLACES = {"alone": {}, "in a graph node": GRAPH_NODE}


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("place", list(PLACES))
def test_with_no_options_every_chunk_passes_unchanged(how: str, place: str) -> None:
    """No map_chunk, finish or on_end (the floor wrapper): the very chunks, in order, and the run opened and closed."""
    chunks: list[Any] = ["Yes", ["a", "list"], {"a": "dict"}]
    recorder = Recorder()
    out = run(Wrapped(Chunks(chunks)), {**PLACES[place], "callbacks": [recorder]}, how)
    assert out == chunks
    assert all(got is sent for got, sent in zip(out, chunks, strict=True))
    assert (recorder.calls[0], recorder.calls[-1]) == (("chain_start", None), ("chain_end", "traced"))


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("place", list(PLACES))
def test_a_chunk_mapped_to_none_is_dropped_and_a_none_last_chunk_is_not_sent(how: str, place: str) -> None:
    """map_chunk's None drops that chunk; finish's None adds nothing; the others pass in order."""
    wrapped = Wrapped(
        Chunks(["keep", "drop", "keep too"]),
        map_chunk=lambda _state, chunk: None if chunk == "drop" else chunk.upper(),
        finish=lambda _state: None,
    )
    assert run(wrapped, PLACES[place], how) == ["KEEP", "KEEP TOO"]


@pytest.mark.parametrize("how", HOW)
def test_on_end_runs_only_when_someone_listens(how: str) -> None:
    """on_end (the references event) runs after the last chunk when callbacks are attached, else not at all."""
    ended: list[str] = []
    wrapped = Wrapped(Chunks(["a"]), on_end=lambda _state, _child: ended.append("ended"))
    run(wrapped, {}, how)
    assert ended == []
    run(wrapped, {"callbacks": [Recorder()]}, how)
    assert ended == ["ended"]


@pytest.mark.parametrize("how", HOW)
def test_in_a_graph_node_the_chunks_are_reported_as_a_chat_model_run(how: str) -> None:
    """In a graph node: str and message chunks (the last one too) are our chat model run's tokens; others are not."""
    inner, recorder = Chunks(["Hel", {"not": "text"}, AIMessageChunk(content="lo")]), Recorder()
    out = run(Wrapped(inner, finish=lambda _state: "!"), {**GRAPH_NODE, "callbacks": [recorder]}, how)
    assert out == ["Hel", {"not": "text"}, AIMessageChunk(content="lo"), "!"]
    assert [call for call in recorder.calls if call[0] != "chain_start"] == [
        ("chat_model_start", None),
        ("token", "Hel"),
        ("token", "lo"),
        ("token", "!"),
        ("llm_end", [[]]),
        ("chain_end", "traced"),
    ]
    assert NOSTREAM_TAG in inner.tags


@pytest.mark.parametrize("how", HOW)
def test_alone_the_inner_runnable_is_not_hidden_from_the_messages_stream(how: str) -> None:
    """Outside a graph node the inner runnable runs without the nostream tag, and no chat model run is added."""
    inner, recorder = Chunks(["a"]), Recorder()
    run(Wrapped(inner), {"callbacks": [recorder]}, how)
    assert NOSTREAM_TAG not in inner.tags
    assert [name for name, _ in recorder.calls] == ["chain_start", "chain_end"]


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("place", list(PLACES))
def test_an_inner_error_closes_every_run_it_opened_and_reaches_the_caller(how: str, place: str) -> None:
    """The inner runnable fails: on_chain_error (and, in a graph node, on_llm_error for our model run), then raise."""
    recorder = Recorder()
    with pytest.raises(RuntimeError, match="the inner runnable broke"):
        run(Wrapped(Chunks(["a"], fail=True)), {**PLACES[place], "callbacks": [recorder]}, how)
    errors = [call for call in recorder.calls if call[0].endswith("error")]
    expected = [("chain_error", "the inner runnable broke")]
    if place == "in a graph node":
        expected.insert(0, ("llm_error", "the inner runnable broke"))
    assert errors == expected
    assert "chain_end" not in [name for name, _ in recorder.calls]


async def test_astream_events_taps_the_unmapped_stream() -> None:
    """With no map_chunk, astream_events still sees each chunk of our run as it streams."""
    events = [event async for event in Wrapped(Chunks(["a", "b"])).astream_events("q", version="v2")]
    streamed = [event["data"]["chunk"] for event in events if event["event"] == "on_chain_stream"]
    assert streamed == ["a", "b"]
    assert events[-1]["event"] == "on_chain_end"


async def test_astream_events_taps_the_mapped_stream_without_dropped_chunks() -> None:
    """Through the tap, a dropped chunk is not streamed and the last chunk from finish is."""
    wrapped = Wrapped(
        Chunks(["a", "drop", "b"]),
        map_chunk=lambda _state, chunk: None if chunk == "drop" else chunk,
        finish=lambda _state: "!",
    )
    events = [event async for event in wrapped.astream_events("q", version="v2")]
    assert [event["data"]["chunk"] for event in events if event["event"] == "on_chain_stream"] == ["a", "b", "!"]


class Tapping(LogStreamCallbackHandler):
    """astream_log's handler, noting each chunk it is handed to tap."""

    def __init__(self) -> None:
        super().__init__(auto_close=False)
        self.tapped: list[Any] = []

    @override
    def tap_output_iter(self, run_id: UUID, output: Iterator[Any]) -> Iterator[Any]:
        for chunk in super().tap_output_iter(run_id, output):
            self.tapped.append(chunk)
            yield chunk


def test_a_tapping_handler_on_a_sync_stream_sees_each_chunk() -> None:
    """A stream-tapping handler (astream_log's) on the sync path is handed each chunk, the last one too."""
    handler = Tapping()
    wrapped = Wrapped(
        Chunks(["a", "drop", "b"]), map_chunk=lambda _s, c: None if c == "drop" else c, finish=lambda _s: "!"
    )
    assert list(wrapped.stream("q", {"callbacks": [handler]})) == ["a", "b", "!"]
    assert handler.tapped == ["a", "b", "!"]
