"""The cheap hot path keeps its shape: what the speed work of issue 12 must not undo (speed itself is in bench/)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from typing_extensions import override

from langchain_refs import TextReferenceStyle, manage_references
from tests.unit_tests.fakes import sample_documents


class _FrameRecorder(Runnable[Any, str]):
    """Streams fixed chunks and records the name of the code that resumed it for each one."""

    def __init__(self, chunks: list[str]) -> None:
        self.chunks = chunks
        self.resumed_by: list[str] = []

    @override
    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> str:
        return "".join(self.chunks)

    @override
    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[str]:
        for chunk in self.chunks:
            self.resumed_by.append(sys._getframe(1).f_code.co_name)
            yield chunk

    @override
    async def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[str]:
        for chunk in self.chunks:
            self.resumed_by.append(sys._getframe(1).f_code.co_name)
            yield chunk


def test_stream_reads_the_inner_stream_in_its_own_loop() -> None:
    """Without an astream_events tap, no generator stands between the run's loop and the inner stream."""
    inner = _FrameRecorder(["Yes[1](", "id=1) and no."])
    out = "".join(manage_references(inner, style=TextReferenceStyle()).stream({"documents": sample_documents()}))
    assert out == "Yes[1] and no.\n\n- [1] a.html#chap1\n"
    assert inner.resumed_by == ["stream_run", "stream_run"]


async def test_astream_reads_the_inner_stream_in_its_own_loop() -> None:
    """The async twin: the run's own loop reads the inner stream directly."""
    inner = _FrameRecorder(["Yes[1](", "id=1) and no."])
    chain = manage_references(inner, style=TextReferenceStyle())
    out = "".join([chunk async for chunk in chain.astream({"documents": sample_documents()})])
    assert out == "Yes[1] and no.\n\n- [1] a.html#chap1\n"
    assert inner.resumed_by == ["astream_run", "astream_run"]
