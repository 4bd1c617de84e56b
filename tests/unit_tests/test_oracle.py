"""Differential tests: the streaming layers against a whole-text oracle, on random answers and chunkings.

``ORACLE_EXAMPLES`` (default 2,500) sets the total number of examples, split
40/40/10/10 between the parser, the session, ``stream`` and ``astream``:
``ORACLE_EXAMPLES=100000 pytest tests/unit_tests/test_oracle.py`` for a long run.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.prompts import ChatPromptTemplate

from langchain_refs import TextReferenceStyle, manage_references
from langchain_refs.streaming import CitationParser, Event, Marker, ReferenceSession, Text
from tests.unit_tests.fakes import ChunkExactChatModel, sample_documents, str_chunks
from tests.unit_tests.oracle import oracle_events, render
from tests.unit_tests.strategies import HOLDBACK_BOUNDS, ORACLE_TEXT, cheap_splits

TOTAL = int(os.environ.get("ORACLE_EXAMPLES", "2500"))
SETTINGS: dict[str, Any] = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
PROMPT = ChatPromptTemplate.from_template("{question}")


def merged(events: list[Event]) -> list[Event]:
    """Join neighbouring text events: where text is cut depends on the chunking."""
    out: list[Event] = []
    for event in events:
        if isinstance(event, Text):
            if not event.text:
                continue
            if out and isinstance(out[-1], Text):
                out[-1] = Text(text=out[-1].text + event.text)
                continue
        out.append(event)
    return out


def test_oracle_agrees_with_hand_written_events() -> None:
    """The oracle itself gives the hand-written events of a few rule-defining answers."""
    assert oracle_events("Press the ` key[1](id=1).", 64) == [
        Text(text="Press the ` key"),
        Marker(raw="[1](id=1)", ids=(1,)),
        Text(text="."),
    ]
    assert oracle_events("a ` bcdefgh[1](id=1)\nx[1](id=2)", 9) == [
        Text(text="a ` bcdefgh[1](id=1)\nx"),
        Marker(raw="[1](id=2)", ids=(2,)),
    ]
    assert oracle_events("~~~\n[1](id=1)\n~~~~ [1](id=2, 1-99)", 64) == [
        Text(text="~~~\n[1](id=1)\n~~~~ "),
        Marker(raw="[1](id=2, 1-99)", ids=(2,), malformed=("1-99",)),
    ]
    assert oracle_events("[1](id=1 2)[1](id=12)", 8) == [Text(text="[1](id=1 2)[1](id=12)")]
    assert render([Text(text="A"), Marker(raw="", ids=(3, 4, 9)), Marker(raw="", ids=(7,))]) == (
        "A[1][2]\n\n- [1] b.pdf\n- [2] untitled document\n"
    )


@settings(max_examples=TOTAL * 4 // 10, **SETTINGS)
@given(data=st.data(), text=ORACLE_TEXT, bound=HOLDBACK_BOUNDS)
def test_parser_matches_oracle(data: st.DataObject, text: str, bound: int) -> None:
    """The parser, fed any chunking, gives the oracle's events; it holds only a possible marker, within the bound."""
    parser = CitationParser(max_holdback=bound)
    events: list[Event] = []
    for chunk in data.draw(cheap_splits(text)):
        events += parser.feed(chunk)
        assert len(parser.held) <= bound
        assert parser.held == "" or parser.held.startswith("[")
    events += parser.close()
    assert merged(events) == oracle_events(text, bound)


@settings(max_examples=TOTAL * 4 // 10, **SETTINGS)
@given(data=st.data(), text=ORACLE_TEXT, bound=HOLDBACK_BOUNDS)
def test_session_matches_oracle(data: st.DataObject, text: str, bound: int) -> None:
    """A session, fed any chunking, writes what the oracle's events render to."""
    style = TextReferenceStyle()
    session = ReferenceSession(sample_documents(), source_key=style.source_of, style=style, max_holdback=bound)
    out = [session.feed(chunk) for chunk in data.draw(cheap_splits(text))]
    out.append(session.close())
    assert "".join(out) == render(oracle_events(text, bound))


def middleware(chunks: list[str], bound: int, *, chat_model: bool) -> Any:
    inner = PROMPT | ChunkExactChatModel(chunks=chunks or [""]) if chat_model else str_chunks(chunks)
    return manage_references(inner, style=TextReferenceStyle(), max_holdback=bound)


def text_of(chunk: Any) -> str:
    return chunk if isinstance(chunk, str) else str(chunk.content)


INPUTS = {"documents": sample_documents(), "question": "q"}


@settings(max_examples=TOTAL // 10, **SETTINGS)
@given(data=st.data(), text=ORACLE_TEXT, bound=HOLDBACK_BOUNDS, chat_model=st.booleans())
def test_stream_matches_oracle(data: st.DataObject, text: str, bound: int, chat_model: bool) -> None:
    """`stream` over a chat model or a str runnable, any chunking, writes what the oracle renders."""
    chain = middleware(data.draw(cheap_splits(text)), bound, chat_model=chat_model)
    assert "".join(text_of(c) for c in chain.stream(INPUTS)) == render(oracle_events(text, bound))


@settings(max_examples=TOTAL // 10, **SETTINGS)
@given(data=st.data(), text=ORACLE_TEXT, bound=HOLDBACK_BOUNDS, chat_model=st.booleans())
def test_astream_matches_oracle(data: st.DataObject, text: str, bound: int, chat_model: bool) -> None:
    """`astream` over a chat model or a str runnable, any chunking, writes what the oracle renders."""
    chain = middleware(data.draw(cheap_splits(text)), bound, chat_model=chat_model)

    async def collect() -> str:
        return "".join([text_of(c) async for c in chain.astream(INPUTS)])

    assert asyncio.run(collect()) == render(oracle_events(text, bound))
