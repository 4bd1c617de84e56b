"""How a rewriting Runnable streams and still reports to LangChain's callbacks.

Why this exists
---------------
The obvious ways to write a streaming Runnable -- `RunnableGenerator`, or
``Runnable._transform_stream_with_config`` -- make LangChain add every output
chunk up a second time to report the run's output (measured: 1.76x the bare
stream against 1.00x for this module; see ``bench/run.py``). Here the run is
opened and closed by hand instead, in the few lines LangChain itself uses:

1. ``on_chain_start`` on the callback manager of the config, a child config
   whose callbacks are the run's children (so the inner runnable nests under
   this run in traces and in ``astream_events``);
2. the inner stream, each chunk mapped by the caller's ``map_chunk`` (and
   one last chunk from ``finish``), the inner stream run inside the child
   config's context (so ``get_config()`` and tracing context work inside the
   inner runnable);
3. if an ``astream_events``/``astream_log`` handler is attached (a
   ``_StreamingCallbackHandler``), it is handed the output iterator to tap,
   which is how those APIs see each chunk as it is produced; with none
   attached, the mapping is done in the run's own loop, so the stream passes
   through one generator only (each generator a chunk passes through costs
   it a resumption);
4. ``on_chain_end`` with whatever output the caller chooses to report (nothing
   is added up here), or ``on_chain_error``.

Inside a LangGraph node, whose ``stream_mode="messages"`` shows the tokens of
chat model runs, the inner runnable runs under LangGraph's ``nostream`` tag
and the rewritten chunks are reported as a chat model run of their own
(`_GraphMessages`), so that stream shows rewritten text, never raw markers.

The sync and async halves below are the only copies of these steps; the
Runnable's ``stream`` and ``astream`` are one call each.
`tests/unit_tests/test_plumbing.py` pins them with ``astream_events(v2)`` and
``astream_log`` on the oldest and the newest langchain-core supported.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Final, Protocol, TypeVar

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk, LLMResult
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import (
    ensure_config,
    get_async_callback_manager_for_config,
    get_callback_manager_for_config,
    patch_config,
    set_config_context,
)
from langchain_core.tracers._streaming import _StreamingCallbackHandler
from langchain_core.utils.aiter import aclosing

__all__ = ["RunState", "astream_run", "in_graph_node", "stream_run"]

StateT = TypeVar("StateT", bound="RunState")


class RunState(Protocol):
    """The per-call state of a rewriting run, as the plumbing sees it."""

    def traced_output(self) -> Any:
        """The run's output for tracers (None when nobody listens)."""


def stream_run(
    runnable: Runnable[Any, Any],
    input: Any,
    config: RunnableConfig | None,
    *,
    start: Callable[[Any], StateT],
    inner: Callable[[RunnableConfig], Iterator[Any]],
    map_chunk: Callable[[StateT, Any], Any] | None = None,
    finish: Callable[[StateT], Any] | None = None,
    on_end: Callable[[StateT, RunnableConfig], None] | None = None,
) -> Iterator[Any]:
    """Stream ``inner(child_config)``, each chunk mapped, as one run of ``runnable``.

    ``start(run_manager)`` builds the per-call state once the run exists (so
    it may use the run id); ``map_chunk(state, chunk)`` gives the chunk to
    pass on, or None for none (without it every chunk passes on unchanged);
    ``finish(state)`` gives one last chunk (or None) after the inner stream
    ends; ``on_end(state, child_config)`` runs after the last chunk when
    callbacks are attached (e.g. to dispatch a custom event).

    Example:
        >>> from langchain_core.runnables import RunnableLambda
        >>> class State:
        ...     def traced_output(self): return None
        >>> shout = RunnableLambda(lambda s: s)
        >>> list(stream_run(shout, "hi", None, start=lambda rm: State(),
        ...                 inner=lambda cfg: shout.stream("hi", cfg),
        ...                 map_chunk=lambda state, chunk: chunk.upper(), finish=lambda state: "!"))
        ['HI', '!']
    """
    config = ensure_config(config)
    run_manager = get_callback_manager_for_config(config).on_chain_start(
        None, input, name=config.get("run_name") or runnable.get_name(), run_id=config.pop("run_id", None)
    )
    graph = _GraphMessages.open(config, run_manager, runnable)
    child_config = patch_config(config, callbacks=_inner_callbacks(run_manager, graph is not None))
    state: StateT | None = None
    try:
        state = start(run_manager)
        with set_config_context(child_config) as context:
            tap = _stream_tap(run_manager.handlers)
            if tap is None and graph is None:
                # The common case: map in this loop, no generator in between.
                source = inner(child_config)
                if map_chunk is None:
                    while True:
                        try:
                            chunk = context.run(next, source)
                        except StopIteration:
                            break
                        yield chunk
                else:
                    while True:
                        try:
                            chunk = context.run(next, source)
                        except StopIteration:
                            break
                        chunk = map_chunk(state, chunk)
                        if chunk is not None:
                            yield chunk
                if finish is not None:
                    last = context.run(finish, state)
                    if last is not None:
                        yield last
            else:
                chunks = _mapped(state, inner(child_config), map_chunk, finish)
                if graph is not None:
                    chunks = graph.reported(chunks)
                if tap is not None:
                    chunks = tap.tap_output_iter(run_manager.run_id, chunks)
                while True:
                    try:
                        chunk = context.run(next, chunks)
                    except StopIteration:
                        break
                    yield chunk
        if on_end is not None and run_manager.handlers:
            on_end(state, child_config)
    except BaseException as error:
        if graph is not None:
            graph.run.on_llm_error(error)
        run_manager.on_chain_error(error)
        raise
    run_manager.on_chain_end(state.traced_output())


async def astream_run(
    runnable: Runnable[Any, Any],
    input: Any,
    config: RunnableConfig | None,
    *,
    start: Callable[[Any], StateT],
    inner: Callable[[RunnableConfig], AsyncIterator[Any]],
    map_chunk: Callable[[StateT, Any], Any] | None = None,
    finish: Callable[[StateT], Awaitable[Any]] | None = None,
    on_end: Callable[[StateT, RunnableConfig], Awaitable[Any]] | None = None,
) -> AsyncIterator[Any]:
    """The async twin of `stream_run`; ``finish`` and ``on_end`` are awaited.

    Example:
        >>> import asyncio
        >>> from langchain_core.runnables import RunnableLambda
        >>> class State:
        ...     def traced_output(self): return None
        >>> async def bang(state):
        ...     return "!"
        >>> echo = RunnableLambda(lambda s: s)
        >>> async def main():
        ...     return [c async for c in astream_run(echo, "hi", None, start=lambda rm: State(),
        ...                                          inner=lambda cfg: echo.astream("hi", cfg),
        ...                                          map_chunk=lambda state, chunk: chunk.upper(), finish=bang)]
        >>> asyncio.run(main())
        ['HI', '!']
    """
    config = ensure_config(config)
    run_manager = await get_async_callback_manager_for_config(config).on_chain_start(
        None, input, name=config.get("run_name") or runnable.get_name(), run_id=config.pop("run_id", None)
    )
    graph = await _AsyncGraphMessages.open(config, run_manager, runnable)
    child_config = patch_config(config, callbacks=_inner_callbacks(run_manager, graph is not None))
    state: StateT | None = None
    try:
        state = start(run_manager)
        with set_config_context(child_config):
            tap = _stream_tap(run_manager.handlers)
            if tap is None and graph is None:
                # The common case: map in this loop, no generator in between.
                source = inner(child_config)
                async with aclosing(source):
                    if map_chunk is None:
                        async for chunk in source:
                            yield chunk
                    else:
                        async for chunk in source:
                            chunk = map_chunk(state, chunk)
                            if chunk is not None:
                                yield chunk
                if finish is not None:
                    last = await finish(state)
                    if last is not None:
                        yield last
            else:
                chunks = _amapped(state, inner(child_config), map_chunk, finish)
                if graph is not None:
                    chunks = graph.reported(chunks)
                if tap is not None:
                    chunks = tap.tap_output_aiter(run_manager.run_id, chunks)
                async with aclosing(chunks):
                    async for chunk in chunks:
                        yield chunk
        if on_end is not None and run_manager.handlers:
            await on_end(state, child_config)
    except BaseException as error:
        if graph is not None:
            await graph.run.on_llm_error(error)
        await run_manager.on_chain_error(error)
        raise
    await run_manager.on_chain_end(state.traced_output())


def _mapped(
    state: StateT,
    source: Iterator[Any],
    map_chunk: Callable[[StateT, Any], Any] | None,
    finish: Callable[[StateT], Any] | None,
) -> Iterator[Any]:
    """The mapped stream as one iterator, for a tap that must see each chunk."""
    for chunk in source:
        out = chunk if map_chunk is None else map_chunk(state, chunk)
        if out is not None:
            yield out
    if finish is not None:
        last = finish(state)
        if last is not None:
            yield last


async def _amapped(
    state: StateT,
    source: AsyncIterator[Any],
    map_chunk: Callable[[StateT, Any], Any] | None,
    finish: Callable[[StateT], Awaitable[Any]] | None,
) -> AsyncIterator[Any]:
    """The async twin of `_mapped`."""
    async with aclosing(source):
        async for chunk in source:
            out = chunk if map_chunk is None else map_chunk(state, chunk)
            if out is not None:
                yield out
    if finish is not None:
        last = await finish(state)
        if last is not None:
            yield last


# LangGraph's tag for a chat model run whose tokens its "messages" stream must not show.
NOSTREAM_TAG: Final = "nostream"


def in_graph_node(config: RunnableConfig) -> bool:
    """Whether this run is inside a LangGraph node (whose "messages" stream reads chat model runs).

    Example:
        >>> in_graph_node({"metadata": {"langgraph_node": "answer"}}), in_graph_node({})
        (True, False)
    """
    return "langgraph_node" in (config.get("metadata") or {})


def _inner_callbacks(run_manager: Any, in_graph: bool) -> Any:
    """The inner runnable's callbacks: this run's children; in a graph node, hidden from its messages stream."""
    child = run_manager.get_child()
    if in_graph:
        child.add_tags([NOSTREAM_TAG])
    return child


def _as_message_chunk(chunk: Any, message_id: str) -> AIMessageChunk | None:
    if isinstance(chunk, AIMessageChunk):
        return chunk
    if isinstance(chunk, str):
        return AIMessageChunk(content=chunk, id=message_id)
    return None


class _GraphMessages:
    """The rewritten chunks reported as a chat model run: what LangGraph's "messages" stream shows.

    Inside a LangGraph node, ``stream_mode="messages"`` reads the tokens of
    chat model runs. The inner runnable's model runs under the ``nostream``
    tag (its raw markers are not shown) and this run, a child of the
    rewriting run, carries the rewritten chunks instead. It ends with no
    generations: the model's own run holds the answer and its usage (a
    second copy would be counted twice), the rewriting run the rewritten output.
    """

    __slots__ = ("_message_id", "run")

    def __init__(self, run: Any) -> None:
        self.run = run
        self._message_id = f"lc_run--{run.run_id}"

    @classmethod
    def open(cls, config: RunnableConfig, run_manager: Any, runnable: Runnable[Any, Any]) -> _GraphMessages | None:
        if not in_graph_node(config):
            return None
        name = runnable.get_name()
        (run,) = run_manager.get_child().on_chat_model_start({"name": name}, [[]], name=name)
        return cls(run)

    def reported(self, chunks: Iterator[Any]) -> Iterator[Any]:
        for chunk in chunks:
            message = _as_message_chunk(chunk, self._message_id)
            if message is not None:
                self.run.on_llm_new_token(message.text, chunk=ChatGenerationChunk(message=message))
            yield chunk
        self.run.on_llm_end(LLMResult(generations=[[]]))


class _AsyncGraphMessages:
    """The async twin of `_GraphMessages`."""

    __slots__ = ("_message_id", "run")

    def __init__(self, run: Any) -> None:
        self.run = run
        self._message_id = f"lc_run--{run.run_id}"

    @classmethod
    async def open(
        cls, config: RunnableConfig, run_manager: Any, runnable: Runnable[Any, Any]
    ) -> _AsyncGraphMessages | None:
        if not in_graph_node(config):
            return None
        name = runnable.get_name()
        (run,) = await run_manager.get_child().on_chat_model_start({"name": name}, [[]], name=name)
        return cls(run)

    async def reported(self, chunks: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async with aclosing(chunks):
            async for chunk in chunks:
                message = _as_message_chunk(chunk, self._message_id)
                if message is not None:
                    await self.run.on_llm_new_token(message.text, chunk=ChatGenerationChunk(message=message))
                yield chunk
        await self.run.on_llm_end(LLMResult(generations=[[]]))


def _stream_tap(handlers: list[BaseCallbackHandler]) -> Any:
    """The handler behind astream_events/astream_log, which must see each chunk."""
    return next((h for h in handlers if isinstance(h, _StreamingCallbackHandler)), None)
