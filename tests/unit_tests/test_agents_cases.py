"""The parser case table through create_agent: chunking invariance and nothing lost on the agent path.

The retriever tool returns `sample_documents()` in one call, so their thread
ids are their positions 1..8 (none has a Document.id and their texts differ,
so each is known by its own content hash, in retrieval order): the table's
``[n](id=k)`` answers and hand-written expected texts hold as they are.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

pytest.importorskip("langchain.agents", reason="the agent tests need the agents extra: pip install -e '.[agents]'")

from langchain.agents import create_agent

from langchain_refs import ReferencesMiddleware, TextReferenceStyle
from langchain_refs.agents import ThreadDocuments
from tests.unit_tests.agent_fakes import ScriptedToolModel, Step, retriever_tool, search
from tests.unit_tests.cases import CASE_IDS, CASES, Case
from tests.unit_tests.fakes import sample_documents


def splits(text: str) -> dict[str, list[str]]:
    """The answer whole, per character, and at two seeded random sets of cut points."""
    ways = {"whole": [text], "per char": list(text)}
    for seed in (1, 2):
        rng = random.Random(f"{seed}:{text}")
        cuts = sorted(rng.sample(range(1, len(text)), k=min(len(text) - 1, rng.randint(1, 12)))) if text else []
        ways[f"random {seed}"] = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return ways


@pytest.fixture(scope="module")
def agent_and_model() -> tuple[Any, ScriptedToolModel]:
    model = ScriptedToolModel(script=[])
    agent = create_agent(
        model,
        tools=[retriever_tool(sample_documents())],
        middleware=[ReferencesMiddleware(style=TextReferenceStyle())],
    )
    return agent, model


def test_sample_documents_get_their_positions_as_thread_ids() -> None:
    """The premise of the table on the agent path: retrieved in one call, document k gets id k."""
    from langchain_core.messages import ToolMessage

    documents = sample_documents()
    thread = ThreadDocuments.from_messages([ToolMessage("", tool_call_id="a", artifact=documents)])
    assert [thread.id_of(d) for d in documents] == list(range(1, 9))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_case_through_the_agent_every_chunking(case: Case, agent_and_model: tuple[Any, ScriptedToolModel]) -> None:
    """Streamed through the agent in any chunking, the answer comes out as the table's expected text."""
    agent, model = agent_and_model
    question = {"messages": [{"role": "user", "content": "?"}]}
    for way, chunks in splits(case.answer).items():
        model.script = [search("*"), Step(chunks)]
        model.step = 0
        streamed = [
            chunk for chunk, meta in agent.stream(question, stream_mode="messages") if meta["langgraph_node"] == "model"
        ]
        text = "".join(c.text for c in streamed)
        assert text == case.expected, way
        assert model.seen[-1][-1].text.startswith("<document id=1>\nfragment 1\n</document>")
