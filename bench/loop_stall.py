"""The longest stall of the event loop while an agent with `ReferencesMiddleware` answers on a long thread.

    python bench/loop_stall.py                # 31st turn of a thread of 10 search results a turn
    python bench/loop_stall.py --turns 60

An async server (a LangGraph server) runs many runs on one event loop: while
one run's code holds the loop, the others wait. A ticker task wakes every
millisecond during the last turn's ``ainvoke``; the longest gap between two
ticks is the longest the loop was held. Wall time (what the other runs
wait), the best of ``--repeats`` fresh threads.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain.agents import create_agent
from langchain_core.documents import Document
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from bench.workloads import WORDS, ToolRoundChatModel, chunked
from langchain_refs import ReferencesMiddleware, documents_tool_output


class ThreadModel(ToolRoundChatModel):
    """`ToolRoundChatModel` whose answer on each turn cites that turn's documents (ids ``10 t + 1``...).

    Each call's message has an id of its own (LangGraph's message list replaces a message by its id).
    """

    def _stream(self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        turn = self.calls // 2  # this call is number ``calls + 1``: even ones answer
        first = 10 * turn + 1
        answer = " ".join(
            f"The river trade made the city rich[{k}](id={first + k}). Its bridges are old[{k}](id={first + k + 1})."
            for k in range(4)
        )
        self.chunks = chunked(answer, 4)
        for generation in super()._stream(messages, stop, run_manager, **kwargs):
            generation.message.id = f"run-{self.calls}"  # each answer a message of its own in the thread
            yield generation


def thread_agent(seed: int) -> Any:
    """An agent whose every turn searches once (10 new documents of ~400 words) and answers with citations."""
    rng = random.Random(seed)
    counter = iter(range(10**9))

    @tool(response_format="content_and_artifact")
    def search(query: str) -> tuple[str, list[Document]]:
        """Search the documents."""
        documents = [
            Document(" ".join(rng.choice(WORDS) for _ in range(400)) + ".", metadata={"source": f"s{next(counter)}"})
            for _ in range(10)
        ]
        return documents_tool_output(documents)

    model = ThreadModel(chunks=[])
    return create_agent(model, tools=[search], middleware=[ReferencesMiddleware()], checkpointer=InMemorySaver())


async def last_turn(turns: int, seed: int) -> tuple[float, float]:
    """(longest loop stall, wall time) of turn ``turns + 1``, in seconds."""
    agent = thread_agent(seed)
    config = {"configurable": {"thread_id": "t"}}
    for turn in range(turns):
        await agent.ainvoke({"messages": [("user", f"question {turn}")]}, config)
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    task = asyncio.create_task(ticker())
    start = time.perf_counter()
    await agent.ainvoke({"messages": [("user", "the last question")]}, config)
    took = time.perf_counter() - start
    done.set()
    await task
    return max(gaps), took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=30, help="turns before the one measured (default 30)")
    parser.add_argument("--repeats", type=int, default=3, help="fresh threads, the best taken (default 3)")
    args = parser.parse_args()
    runs = [asyncio.run(last_turn(args.turns, seed)) for seed in range(args.repeats)]
    stall, took = min(runs)
    print(
        f"turn {args.turns + 1}: longest event-loop stall {stall * 1e3:.1f} ms "
        f"(ainvoke {took * 1e3:.0f} ms wall; best of {args.repeats} threads)"
    )


if __name__ == "__main__":
    main()
