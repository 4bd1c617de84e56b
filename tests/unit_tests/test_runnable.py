"""manage_references as a Runnable: every call style, message fields, errors."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages.content import Citation as StandardCitation
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableGenerator, RunnableLambda

from langchain_refs import (
    REFERENCES_EVENT,
    AnswerReferences,
    LexicalScorer,
    MarkerSyntax,
    ReferencePredictor,
    ReferencesCollector,
    TextReferenceStyle,
    manage_references,
)
from langchain_refs.streaming import BRACKET_SYNTAX, DAGGER_SYNTAX, ID_SYNTAX, marker_syntaxes
from langchain_refs.text import LexicalSupport
from tests.unit_tests.cases import CASE_IDS, CASES, Case
from tests.unit_tests.fakes import (
    AsyncOnlyRunnable,
    ChunkExactChatModel,
    message_chunks,
    sample_documents,
    str_chunks,
    whole_message,
)
from tests.unit_tests.strategies import every_split, per_char, random_splits, whole

PROMPT = ChatPromptTemplate.from_template("{question}")


def text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    content = value.content
    if isinstance(content, str):
        return content
    return "".join(b if isinstance(b, str) else b.get("text", "") for b in content)


def middleware(chunks: list[str], *, as_str: bool = False) -> Any:
    inner = str_chunks(chunks) if as_str else PROMPT | ChunkExactChatModel(chunks=chunks or [""])
    return manage_references(inner, style=TextReferenceStyle())


def inputs() -> dict[str, Any]:
    return {"documents": sample_documents(), "question": "q"}


CALL_STYLES = ["invoke", "batch", "stream", "ainvoke", "abatch", "astream"]


async def call(chain: Any, how: str) -> str:
    if how == "invoke":
        return text_of(chain.invoke(inputs()))
    if how == "batch":
        return text_of(chain.batch([inputs()])[0])
    if how == "stream":
        return "".join(text_of(c) for c in chain.stream(inputs()))
    if how == "ainvoke":
        return text_of(await chain.ainvoke(inputs()))
    if how == "abatch":
        return text_of((await chain.abatch([inputs()]))[0])
    return "".join([text_of(c) async for c in chain.astream(inputs())])


@pytest.mark.parametrize("how", CALL_STYLES)
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
async def test_every_case_every_call_style(case: Case, how: str) -> None:
    """Each case gives the same text through every call style, whole and per character."""
    for chunks in (whole(case.answer), per_char(case.answer)):
        assert await call(middleware(chunks), how) == case.expected
        assert await call(middleware(chunks, as_str=True), how) == case.expected


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_splits_through_stream(case: Case, data: st.DataObject) -> None:
    """Random chunkings give the same text through `stream`."""
    chunks = data.draw(random_splits(case.answer))
    assert "".join(text_of(c) for c in middleware(chunks).stream(inputs())) == case.expected


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_random_splits_through_astream(case: Case, data: st.DataObject) -> None:
    """Random chunkings give the same text through `astream`."""
    chunks = data.draw(random_splits(case.answer))

    async def collect() -> str:
        return "".join([text_of(c) async for c in middleware(chunks).astream(inputs())])

    assert asyncio.run(collect()) == case.expected


def test_message_fields_survive() -> None:
    """Id, response metadata and usage of the model's chunks survive."""
    model = ChunkExactChatModel(chunks=["Yes", "[1](", "id=3", ") done"])
    chunks = list(manage_references(PROMPT | model, style=TextReferenceStyle()).stream(inputs()))
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    assert {c.id for c in chunks if not c.id.startswith("lc_")} == {"run-fake-1"}
    assert chunks[-1].id == "run-fake-1"
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged = merged + chunk
    inner = model.invoke("x")
    assert merged.usage_metadata == inner.usage_metadata
    assert merged.response_metadata["model_name"] == "fake"
    assert merged.content == "Yes[1] done\n\n- [1] b.pdf\n"


def test_unchanged_chunks_pass_through_untouched() -> None:
    """A chunk whose text needs no change is passed on as the same object."""
    originals = [AIMessageChunk(content="plain "), AIMessageChunk(content="text")]
    out = list(manage_references(message_chunks(originals)).stream(inputs()))
    assert out[0] is originals[0]
    assert out[1] is originals[1]


def test_a_changed_chunk_is_the_models_chunk_with_new_text() -> None:
    """A chunk whose text changes is a copy with the new text: id, metadata, usage, tool-call chunks and extra kept.

    The copy is the one ``model_copy(update=...)`` makes (fields set included) and the model's chunk is untouched:
    the inner run's traced output keeps the model's own words.
    """
    call_chunk = tool_call_chunk(name="search", args='{"q"', id="call-1", index=1)
    original = AIMessageChunk(
        content="See[1](id=3).",
        id="run-7",
        response_metadata={"model_name": "fake", "finish_reason": None},
        usage_metadata={"input_tokens": 3, "output_tokens": 2, "total_tokens": 5},
        additional_kwargs={"refusal": None},
        tool_call_chunks=[call_chunk],
        provider_field="kept",
    )
    before = original.model_dump()
    (changed, *_) = list(manage_references(message_chunks([original]), style=TextReferenceStyle()).stream(inputs()))
    expected = original.model_copy(update={"content": "See[1]."})
    assert changed is not original
    assert changed.model_dump() == expected.model_dump()
    assert changed.model_fields_set == expected.model_fields_set
    assert changed.model_extra == {"provider_field": "kept"}
    assert changed.model_extra is not original.model_extra
    assert changed.tool_call_chunks == [call_chunk]
    assert original.model_dump() == before


def test_tool_call_chunks_survive() -> None:
    """Tool-call chunks reach the output unchanged."""
    call_chunk = tool_call_chunk(name="search", args='{"q": 1}', id="call-1", index=0)
    chunks = [AIMessageChunk(content="See[1](id=3)"), AIMessageChunk(content="", tool_call_chunks=[call_chunk])]
    result = manage_references(message_chunks(chunks)).invoke(inputs())
    assert isinstance(result, AIMessage)
    assert result.tool_calls[0]["name"] == "search"
    assert result.tool_calls[0]["args"] == {"q": 1}


def test_invoke_returns_message_with_references() -> None:
    """invoke gives an AIMessage whose metadata holds the references as data."""
    model = ChunkExactChatModel(chunks=["Paris is big[1](id=8). Lyon", " too[2](id=3)[3](id=4)."])
    result = manage_references(PROMPT | model, style=TextReferenceStyle()).invoke(inputs())
    assert isinstance(result, AIMessage)
    refs = AnswerReferences.from_dict(result.response_metadata["references"])
    assert [(r.number, r.source, r.title, r.document_positions) for r in refs.references] == [
        (1, "https://e.org/x", "E & co", (8,)),
        (2, "b.pdf", None, (3, 4)),
    ]
    text = result.content
    assert isinstance(text, str)
    for citation in refs.citations:
        assert text[citation.start : citation.end] == f"[{citation.number}]"
        assert text[citation.text_start : citation.text_end] == citation.text
    assert [c.text for c in refs.citations] == ["Paris is big", "Lyon too"]
    assert refs.citations[1].document_positions == (3, 4)


def test_standard_citation_annotations() -> None:
    """Standard Citation annotations; cited_text is the source's words, never the answer's."""
    result = manage_references(PROMPT | ChunkExactChatModel(chunks=["Paris is big[1](id=8)."])).invoke(inputs())
    annotations = result.response_metadata["citations"]
    allowed = set(StandardCitation.__annotations__)
    assert annotations[0]["type"] == "citation"
    assert set(annotations[0]) <= allowed
    assert annotations[0]["url"] == "https://e.org/x"
    assert annotations[0]["title"] == "E & co"
    text = result.content
    assert text[annotations[0]["start_index"] : annotations[0]["end_index"]] == "Paris is big"
    # Document 8 reads "titled": its one sentence is the passage.
    assert annotations[0]["cited_text"] == "titled"


def test_str_output_stays_str() -> None:
    """A chain returning str gives str chunks and a str result."""
    chain = manage_references(str_chunks(["Yes[1](", "id=3)"]), style=TextReferenceStyle())
    assert all(type(c) is str for c in chain.stream(inputs()))
    assert chain.invoke(inputs()) == "Yes[1]\n\n- [1] b.pdf\n"


def test_list_content_text_blocks() -> None:
    """List content is handled: text blocks rewritten, other blocks untouched."""
    chunks = [
        AIMessageChunk(content=[{"type": "text", "text": "Yes[1](id", "index": 0}]),
        AIMessageChunk(content=[{"type": "text", "text": "=3) ok", "index": 0}]),
        AIMessageChunk(content=[{"type": "image", "url": "https://x.org/i.png", "index": 1}]),
    ]
    result = manage_references(message_chunks(chunks), style=TextReferenceStyle()).invoke(inputs())
    assert text_of(result) == "Yes[1] ok\n\n- [1] b.pdf\n"
    assert any(isinstance(b, dict) and b.get("type") == "image" for b in result.content)


@pytest.mark.parametrize("how", ["invoke", "stream"])
def test_non_streaming_whole_message(how: str) -> None:
    """A runnable that returns one whole AIMessage works, its fields kept."""
    message = AIMessage(content="Yes[1](id=3).", id="msg-9", response_metadata={"model_name": "m"})
    chain = manage_references(whole_message(message), style=TextReferenceStyle())
    result = chain.invoke(inputs()) if how == "invoke" else sum(chain.stream(inputs()), AIMessageChunk(content=""))
    assert text_of(result) == "Yes[1].\n\n- [1] b.pdf\n"
    assert result.id == "msg-9"
    assert result.response_metadata["model_name"] == "m"


def flaky(answer: str, failures: int) -> tuple[Any, list[int]]:
    """A runnable that fails ``failures`` times with ConnectionError, then answers; and its count of calls."""
    calls = [0]

    def call(_: Any) -> str:
        calls[0] += 1
        if calls[0] <= failures:
            raise ConnectionError("transient")
        return answer

    return RunnableLambda(call), calls


@pytest.mark.parametrize("how", ["invoke", "batch", "ainvoke", "abatch"])
def test_the_inner_runnables_retries_and_fallbacks_hold_when_invoked(how: str) -> None:
    """invoke and batch invoke the inner runnable: its with_retry() retries, its with_fallbacks() falls back."""
    retried, calls = flaky("Yes[1](id=3).", failures=2)

    def fails_after_its_first_chunk(_: Any) -> Iterator[str]:
        yield "partial "
        raise ConnectionError("dropped")

    # A stream falls back only before its first chunk: this fallback holds for invoke alone.
    failing = RunnableGenerator(fails_after_its_first_chunk)
    fallback = RunnableLambda(lambda _: "No[1](id=1).")
    chains = {
        "retry": manage_references(
            retried.with_retry(stop_after_attempt=3, wait_exponential_jitter=False), style=TextReferenceStyle()
        ),
        "fallback": manage_references(failing.with_fallbacks([fallback]), style=TextReferenceStyle()),
    }
    run = {
        "invoke": lambda chain: chain.invoke(inputs()),
        "batch": lambda chain: chain.batch([inputs()])[0],
        "ainvoke": lambda chain: asyncio.run(chain.ainvoke(inputs())),
        "abatch": lambda chain: asyncio.run(chain.abatch([inputs()]))[0],
    }[how]
    assert text_of(run(chains["retry"])) == "Yes[1].\n\n- [1] b.pdf\n"
    assert calls == [3]
    assert text_of(run(chains["fallback"])) == "No[1].\n\n- [1] a.html#chap1\n"


def test_a_stream_falls_back_before_its_first_chunk_and_is_never_retried() -> None:
    """As the quick start says: with_fallbacks() holds for stream up to its first chunk; with_retry() never retries."""

    def fails_at_once(_: Any) -> Iterator[str]:
        raise ConnectionError("down")
        yield ""  # a generator

    fallback = RunnableLambda(lambda _: "No[1](id=1).")
    chain = manage_references(RunnableGenerator(fails_at_once).with_fallbacks([fallback]), style=TextReferenceStyle())
    assert "".join(chain.stream(inputs())) == "No[1].\n\n- [1] a.html#chap1\n"
    retried, calls = flaky("Yes[1](id=3).", failures=1)
    chain = manage_references(retried.with_retry(wait_exponential_jitter=False), style=TextReferenceStyle())
    with pytest.raises(ConnectionError, match="transient"):
        list(chain.stream(inputs()))
    assert calls == [1]


def test_an_inner_function_that_returns_none_fails_alike_in_invoke_and_stream() -> None:
    """None is not an answer (a function that forgot its return): the same TypeError whether invoked or streamed."""
    chain = manage_references(RunnableLambda(lambda _: None))
    message = r"wraps runnables that produce str or AI messages; got NoneType"
    with pytest.raises(TypeError, match=message):
        chain.invoke(inputs())
    with pytest.raises(TypeError, match=message):
        list(chain.stream(inputs()))


async def test_async_only_inner_runnable() -> None:
    """An async-only inner runnable works through ainvoke and astream."""
    chain = manage_references(AsyncOnlyRunnable(["Yes[1]", "(id=3)"]), style=TextReferenceStyle())
    assert await chain.ainvoke(inputs()) == "Yes[1]\n\n- [1] b.pdf\n"
    assert "".join([c async for c in chain.astream(inputs())]) == "Yes[1]\n\n- [1] b.pdf\n"


async def test_astream_does_not_block_the_event_loop() -> None:
    """Other tasks run between chunks of astream."""
    ticks = 0
    done = False

    async def ticker() -> None:
        nonlocal ticks
        while not done:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    chain = manage_references(PROMPT | ChunkExactChatModel(chunks=list("Yes[1](id=3) and more text")))
    ticks_seen = []
    async for _ in chain.astream(inputs()):
        ticks_seen.append(ticks)
    done = True
    await task
    assert ticks_seen[-1] > ticks_seen[0]


class ThreadNotedScorer:
    """A passage scorer of the user's (a cross-encoder would call a model) noting the thread it scores in."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def score(self, text_pairs: list[tuple[str, str]]) -> list[float]:
        self.threads.append(threading.get_ident())
        return [float(len(text)) for _, text in text_pairs]


@pytest.mark.parametrize("output", ["message", "str"])
async def test_astream_scores_passages_off_the_event_loop(output: str) -> None:
    """A passage scorer of the user's runs in a worker thread at the end of astream, as a verifier does."""
    scorer = ThreadNotedScorer()
    chunks = ["Yes[1](id=3)."]
    inner = message_chunks(chunks) if output == "message" else str_chunks(chunks)
    chain = manage_references(inner, style=TextReferenceStyle(), passages=scorer)
    collector = ReferencesCollector()
    out = [chunk async for chunk in chain.astream(inputs(), {"callbacks": [collector]})]
    assert "".join(c if isinstance(c, str) else c.text for c in out) == "Yes[1].\n\n- [1] b.pdf\n"
    # Document 3 is "fragment 3": its one sentence is the passage, whichever the scorer.
    assert collector.answers[-1].citations[0].passage.excerpt == "fragment 3"
    assert scorer.threads
    assert threading.get_ident() not in scorer.threads


class OneAtATimeScorer:
    """A scorer that is not safe to call from two threads at once (as a scorer with a cache), noting any overlap."""

    def __init__(self) -> None:
        self.inside = 0
        self.overlaps = 0
        self.calls = 0

    def score(self, text_pairs: list[tuple[str, str]]) -> list[float]:
        self.inside += 1
        self.calls += 1
        if self.inside > 1:
            self.overlaps += 1
        time.sleep(0.002)  # long enough for another thread to come in, were it let
        self.inside -= 1
        return [0.5] * len(text_pairs)


async def test_answers_ending_together_call_a_shared_scorer_in_turn() -> None:
    """Twenty async answers sharing one scorer: scored off the event loop, never two calls at once."""
    scorer = OneAtATimeScorer()
    chain = manage_references(message_chunks(["Yes[1](id=3)."]), style=TextReferenceStyle(), passages=scorer)

    async def answer() -> str:
        return "".join([chunk.text async for chunk in chain.astream(inputs())])

    answers = await asyncio.gather(*[answer() for _ in range(20)])
    assert answers == ["Yes[1].\n\n- [1] b.pdf\n"] * 20
    assert (scorer.calls, scorer.overlaps) == (20, 0)


async def test_a_str_answer_read_by_no_handler_is_not_scored() -> None:
    """astream of a str answer with no callback reads no references: the scorer is not called, as in stream."""
    scorer = OneAtATimeScorer()
    chain = manage_references(str_chunks(["Yes[1](id=3)."]), style=TextReferenceStyle(), passages=scorer)
    assert "".join(chain.stream(inputs())) == "".join([c async for c in chain.astream(inputs())])
    assert scorer.calls == 0


def test_batched_calls_keep_their_own_numbering() -> None:
    """Batched calls with different documents never mix numbering."""
    chain = manage_references(str_chunks(["A[1](id=1) B[2](id=2)"]), style=TextReferenceStyle())
    first = {"documents": [Document("x", metadata={"source": "p"}), Document("y", metadata={"source": "q"})]}
    second = {"documents": [Document("x", metadata={"source": "r"}), Document("y", metadata={"source": "r"})]}
    results = chain.batch([first, second, first])
    assert results == [
        "A[1] B[2]\n\n- [1] p\n- [2] q\n",
        "A[1] B[1]\n\n- [1] r\n",
        "A[1] B[2]\n\n- [1] p\n- [2] q\n",
    ]


async def test_concurrent_astreams_keep_their_own_numbering() -> None:
    """Interleaved concurrent astreams never mix numbering."""
    chain = manage_references(
        PROMPT | ChunkExactChatModel(chunks=list("A[1](id=2) B[2](id=1)")), style=TextReferenceStyle()
    )

    async def run(docs: list[Document]) -> str:
        return "".join([text_of(c) async for c in chain.astream({"documents": docs, "question": "q"})])

    one = [Document("x", metadata={"source": "p"}), Document("y", metadata={"source": "q"})]
    two = [Document("x", metadata={"source": "s"}), Document("y", metadata={"source": "s"})]
    results = await asyncio.gather(run(one), run(two), run(one))
    assert results == ["A[1] B[2]\n\n- [1] q\n- [2] p\n", "A[1] B[1]\n\n- [1] s\n", "A[1] B[2]\n\n- [1] q\n- [2] p\n"]


async def test_astream_events() -> None:
    """astream_events shows the rewritten stream and a references event."""
    chain = manage_references(PROMPT | ChunkExactChatModel(chunks=["Yes[1](", "id=3)"]), style=TextReferenceStyle())
    streamed = []
    references = []
    async for event in chain.astream_events(inputs(), version="v2"):
        if event["event"] == "on_chain_stream" and event["name"] == "manage_references":
            streamed.append(text_of(event["data"]["chunk"]))
        if event["event"] == "on_custom_event" and event["name"] == REFERENCES_EVENT:
            references.append(AnswerReferences.from_dict(event["data"]))
    assert "".join(streamed) == "Yes[1]\n\n- [1] b.pdf\n"
    assert [r.source for r in references[0].references] == ["b.pdf"]


def test_references_collector_for_str_chains() -> None:
    """A str chain's references are reachable through a callback handler."""
    collector = ReferencesCollector()
    chain = manage_references(PROMPT | ChunkExactChatModel(chunks=["Yes[1](id=5)"])) | StrOutputParser()
    chain.invoke(inputs(), {"callbacks": [collector]})
    assert [r.source for r in collector.answers[0].references] == ["c.pdf"]


def test_invalid_ids_are_logged_and_reported(caplog: pytest.LogCaptureFixture) -> None:
    """Unresolvable ids are dropped from the text, logged, and reported as data."""
    chain = manage_references(
        PROMPT | ChunkExactChatModel(chunks=["A[1](id=0, 3) B[2](id=9)."]), style=TextReferenceStyle()
    )
    with caplog.at_level(logging.WARNING, logger="langchain_refs"):
        result = chain.invoke(inputs())
    assert result.content == "A[1] B.\n\n- [1] b.pdf\n"
    invalid = AnswerReferences.from_dict(result.response_metadata["references"]).invalid_citations
    assert [(i.item, i.marker) for i in invalid] == [("0", "[1](id=0, 3)"), ("9", "[2](id=9)")]
    assert "no document 9 (8 given)" in invalid[1].reason
    assert invalid[1].offset == len("A[1] B")
    assert "dropped citation '9'" in caplog.text


def test_missing_documents_key() -> None:
    """A missing documents key is a ValueError naming the key."""
    chain = manage_references(str_chunks(["x"]), documents_key="docs")
    with pytest.raises(ValueError, match=r"no 'docs' key.*Document/BaseMedia.*\['documents', 'question'\]"):
        chain.invoke(inputs())


def test_non_document_entry() -> None:
    """A non-document entry is a ValueError naming its position and type."""
    chain = manage_references(str_chunks(["x"]))
    with pytest.raises(ValueError, match=r"input\['documents'\]\[1\] is a str, expected a Document"):
        chain.invoke({"documents": [Document("a"), "b"]})


def test_dict_document_entry_says_how_to_make_it_a_document() -> None:
    """A document given as a dict (as JSON brings it) is refused with the one-line way to make it a Document."""
    chain = manage_references(str_chunks(["x"]))
    entry = {"page_content": "Paris.", "metadata": {"source": "a"}}
    with pytest.raises(ValueError, match=r"\[0\] is a dict, expected a Document.*Document\(\*\*item\)"):
        chain.invoke({"documents": [entry]})


def test_non_dict_input() -> None:
    """A non-dict input is a ValueError naming what was expected."""
    with pytest.raises(ValueError, match="expects a dict"):
        manage_references(str_chunks(["x"])).invoke("just a question")  # type: ignore[arg-type]


def test_unsupported_output_type() -> None:
    """An inner runnable producing something else is a TypeError naming the type."""
    with pytest.raises(TypeError, match="got dict"):
        manage_references(RunnableLambda(lambda _: {"a": 1})).invoke(inputs())


def test_unknown_syntax_is_refused() -> None:
    """An unknown syntax name is a ValueError listing the known ones."""
    with pytest.raises(ValueError, match="unknown marker syntax 'xml'"):
        manage_references(str_chunks(["x"]), syntaxes=["xml"])  # type: ignore[list-item]


def test_source_key_option() -> None:
    """source_key as a metadata key or a callable decides what is merged."""
    docs = [Document("a", metadata={"source": "s1", "url": "u"}), Document("b", metadata={"source": "s2", "url": "u"})]
    by_url = manage_references(str_chunks(["A[1](id=1) B[2](id=2)"]), style=TextReferenceStyle(), source_key="url")
    assert by_url.invoke({"documents": docs}) == "A[1] B[1]\n\n- [1] u\n"
    by_fn = manage_references(
        str_chunks(["A[1](id=1) B[2](id=2)"]), style=TextReferenceStyle(), source_key=lambda d: d.page_content
    )
    assert by_fn.invoke({"documents": docs}).startswith("A[1] B[2]")


def test_documents_without_source_are_never_merged() -> None:
    """Documents with no source key are each a source of their own."""
    docs = [Document("a"), Document("b"), Document("c", id="doc-c"), Document("d", id="doc-c")]
    chain = manage_references(str_chunks(["A[1](id=1) B[2](id=2) C[3](id=3) D[4](id=4)"]), style=TextReferenceStyle())
    assert chain.invoke({"documents": docs}).startswith("A[1] B[2] C[3] D[3]")


def test_other_syntaxes_can_be_switched_on() -> None:
    """The dagger and bracket syntaxes work through the runnable when enabled."""
    chain = manage_references(
        str_chunks(["A【3†source】 B [5]"]), style=TextReferenceStyle(), syntaxes=["id", "dagger", "bracket"]
    )
    assert chain.invoke(inputs()) == "A[1] B [2]\n\n- [1] b.pdf\n- [2] c.pdf\n"


def test_max_holdback_option() -> None:
    """A smaller bound makes longer markers plain text."""
    chain = manage_references(str_chunks(["A[1](id=3)"]), style=TextReferenceStyle(), max_holdback=5)
    assert chain.invoke(inputs()) == "A[1](id=3)"


def test_keep_citations_off_keeps_sources_only() -> None:
    """With keep_citations=False the sources are still numbered and listed, citations not kept."""
    chain = manage_references(
        PROMPT | ChunkExactChatModel(chunks=["A[1](id=3)[2](id=4) B[3](id=5)."]),
        style=TextReferenceStyle(),
        keep_citations=False,
    )
    result = chain.invoke(inputs())
    assert result.content == "A[1] B[2].\n\n- [1] b.pdf\n- [2] c.pdf\n"
    refs = AnswerReferences.from_dict(result.response_metadata["references"])
    assert [(r.source, r.document_positions) for r in refs.references] == [("b.pdf", (3, 4)), ("c.pdf", (5,))]
    assert refs.citations == ()


# -- one home for each option ---------------------------------------------------


def agents_or_skip() -> Any:
    try:
        from langchain_refs.agents import ReferencesMiddleware
    except ImportError as error:  # the agents extra
        pytest.skip(f"langchain (the agents extra) not installed: {error}")
    return ReferencesMiddleware


@pytest.mark.parametrize("bound", [0, -3])
def test_max_holdback_below_one_is_refused_by_every_entry_point(bound: int) -> None:
    """manage_references, ReferencesMiddleware and the parser refuse max_holdback < 1 with one message."""
    from langchain_refs.streaming import CitationParser

    middleware = agents_or_skip()
    message = rf"max_holdback must be 1 or more characters, got {bound}"
    with pytest.raises(ValueError, match=message):
        manage_references(str_chunks(["x"]), max_holdback=bound)
    with pytest.raises(ValueError, match=message):
        middleware(max_holdback=bound)
    with pytest.raises(ValueError, match=message):
        CitationParser(max_holdback=bound)


def test_style_and_source_key_resolve_alike_in_runnable_and_middleware() -> None:
    """Both entry points default to the Markdown style and let source_key win over the style's key."""
    from langchain_refs import MarkdownReferenceStyle

    middleware = agents_or_skip()
    assert type(manage_references(str_chunks(["x"])).style) is MarkdownReferenceStyle
    assert type(middleware().style) is MarkdownReferenceStyle
    docs = [Document("a", metadata={"source": "s1", "url": "u"}), Document("b", metadata={"source": "s2", "url": "u"})]
    session = middleware(source_key="url", style=TextReferenceStyle())._session(docs)
    session.feed("A[1](id=1) B[2](id=2)")
    session.close()
    assert [r.document_positions for r in session.references.references] == [(1, 2)]


def test_a_bad_source_key_fails_when_given() -> None:
    """A source_key that is neither a key nor a callable is a TypeError at construction, not mid-stream."""
    with pytest.raises(TypeError, match="source_key must be a metadata key"):
        manage_references(str_chunks(["x"]), source_key=3)  # type: ignore[arg-type]


# Written by hand: an option's wrong value, the error every entry point gives for it when built.
WRONG_OPTIONS = [
    (
        {"style": "markdown"},
        TypeError,
        r"style must be a style such as MarkdownReferenceStyle\(\), got the str 'markdown'",
    ),
    ({"style": TextReferenceStyle}, TypeError, r"style must be a style, not the class TextReferenceStyle: write"),
    ({"style": object()}, TypeError, r"style must be a style such as MarkdownReferenceStyle\(\), got object"),
    ({"source_key": 5}, TypeError, r"source_key must be a metadata key \(str\) or a callable, got int"),
    ({"max_holdback": 0}, ValueError, r"max_holdback must be 1 or more characters, got 0"),
    ({"max_holdback": 2.5}, TypeError, r"max_holdback must be a whole number of characters, got float 2.5"),
    ({"max_holdback": True}, TypeError, r"max_holdback must be a whole number of characters, got bool True"),
    ({"syntaxes": ("idd",)}, ValueError, r"unknown marker syntax 'idd'"),
    ({"syntaxes": "idd"}, ValueError, r"unknown marker syntax 'idd'"),
    ({"syntaxes": ()}, ValueError, r"syntaxes must name at least one marker syntax"),
    ({"syntaxes": 5}, TypeError, r"syntaxes must be a marker syntax's name, a MarkerSyntax or a list of them, got int"),
    ({"passages": "yes"}, TypeError, r"passages must be True, False or a scorer"),
    (
        {"syntaxes": [MarkerSyntax(name="cite", opener="{", pattern=re.compile(r"\{cite:(?P<ids>\d+)\}"))]},
        TypeError,
        r"MarkerSyntax 'cite': the pattern must be compiled with the regex module, .* got Pattern",
    ),
    (
        {"syntaxes": [MarkerSyntax(name="cite", opener="{", pattern=regex.compile(r"\{cite:(\d+)\}"))]},
        ValueError,
        r"MarkerSyntax 'cite': the pattern must capture the id list in a group named ids",
    ),
    (
        {"syntaxes": [MarkerSyntax(name="cite", opener="<<", pattern=regex.compile(r"<<(?P<ids>\d+)>>"))]},
        ValueError,
        r"MarkerSyntax 'cite': the opener must be the one character a marker starts with, got '<<'",
    ),
    (
        # Named as a built-in syntax, but one's own: checked all the same.
        {"syntaxes": [MarkerSyntax(name="id", opener="<<", pattern=regex.compile(r"<<(?P<ids>\d+)>>"))]},
        ValueError,
        r"MarkerSyntax 'id': the opener must be the one character a marker starts with, got '<<'",
    ),
    (
        {"syntaxes": [MarkerSyntax(name="cite", opener="{", pattern=regex.compile(r"\{\p{L}+:(?P<ids>\d+)\}"))]},
        ValueError,
        r"MarkerSyntax 'cite': the pattern must also compile with Python's re module \(bad escape \\p",
    ),
    (
        {"syntaxes": [MarkerSyntax(name="cite", opener="{", pattern=regex.compile(r"\{c:(?P<ids>\d+)\}", regex.V1))]},
        ValueError,
        r"MarkerSyntax 'cite': the pattern's flags must be ones Python's re module has too, not V1",
    ),
]

# A syntax of one's own: {cite:k} or {CITE:k} (any case), ids as [n](id=k)'s.
CITE_SYNTAX = MarkerSyntax(name="cite", opener="{", pattern=regex.compile(r"\{cite:(?P<ids>[0-9, -]+)\}", regex.I))


CITE_ANSWER = "Yes{cite:3} and {CITE:1, 3}; {cite:x} stays, {Cite:9} goes."
# Written by hand: id 3 is b.pdf, id 1 a.html#chap1, 9 names no document (dropped).
CITE_EXPECTED = "Yes[1] and [2][1]; {cite:x} stays,  goes.\n\n- [1] b.pdf\n- [2] a.html#chap1\n"


def cite_text(chunks: list[str]) -> str:
    chain = manage_references(str_chunks(chunks), style=TextReferenceStyle(), syntaxes=[CITE_SYNTAX])
    return "".join(chain.stream(inputs()))


@pytest.mark.parametrize("syntax", [ID_SYNTAX, BRACKET_SYNTAX, DAGGER_SYNTAX], ids=lambda s: s.name)
def test_each_built_in_syntax_passes_the_checks_a_syntax_of_ones_own_gets(syntax: MarkerSyntax) -> None:
    """A copy of a built-in syntax is checked as one's own is (the built-in itself is taken as it is)."""
    copy = dataclasses.replace(syntax)
    assert copy is not syntax
    assert marker_syntaxes([copy]) == (copy,)


def test_a_syntax_flag_the_two_regex_modules_number_apart_holds_at_every_split() -> None:
    """regex.A (0x80 in regex, re.DEBUG in re): \\w stops at é whole and split alike, so {réf:2} stays text."""
    ascii_words = MarkerSyntax(name="w", opener="{", pattern=regex.compile(r"\{\w+:(?P<ids>[0-9]+)\}", regex.A))
    for chunks in [whole("A{réf:2} B{ref:2}."), per_char("A{réf:2} B{ref:2}."), *every_split("A{réf:2} B{ref:2}.")]:
        chain = manage_references(str_chunks(chunks), style=TextReferenceStyle(), syntaxes=[ascii_words])
        assert "".join(chain.stream(inputs())) == "A{réf:2} B[1].\n\n- [1] a.html#chap2\n", chunks


def test_a_syntax_of_ones_own_reads_alike_whole_per_character_and_at_every_split() -> None:
    """A valid MarkerSyntax (with a flag) is read as the table says, however the answer is cut."""
    assert cite_text(whole(CITE_ANSWER)) == CITE_EXPECTED
    assert cite_text(per_char(CITE_ANSWER)) == CITE_EXPECTED
    for chunks in every_split(CITE_ANSWER):
        assert cite_text(chunks) == CITE_EXPECTED, chunks


@given(data=st.data())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_syntax_of_ones_own_reads_alike_at_random_splits(data: st.DataObject) -> None:
    """The same at random splits."""
    assert cite_text(data.draw(random_splits(CITE_ANSWER))) == CITE_EXPECTED


def entry_point(name: str) -> Any:
    """One public way to build the rewriting, from its options (the agents' two skip without the extra)."""
    if name == "manage_references":
        return lambda **options: manage_references(str_chunks(["x"]), **options)
    middleware = agents_or_skip()
    if name == "ReferencesMiddleware":
        return lambda **options: middleware(**options)
    from langchain_refs.agents import ReferencesChatModel
    from tests.unit_tests.fakes import ChunkExactChatModel

    return lambda **options: ReferencesChatModel(inner=ChunkExactChatModel(chunks=[]), **options)


@pytest.mark.parametrize("entry", ["manage_references", "ReferencesMiddleware", "ReferencesChatModel"])
@pytest.mark.parametrize(("options", "error", "message"), WRONG_OPTIONS)
def test_a_wrong_option_fails_alike_when_built_by_every_entry_point(
    entry: str, options: dict[str, Any], error: type[Exception], message: str
) -> None:
    """The same wrong value gets the same error naming it from every entry point, when built, never mid-answer.

    (ReferencesChatModel's ValueErrors arrive inside pydantic's ValidationError, itself a ValueError.)
    """
    build = entry_point(entry)
    with pytest.raises(error, match=message):
        build(**options)


@pytest.mark.parametrize("entry", ["manage_references", "ReferencesMiddleware", "ReferencesChatModel"])
def test_one_syntax_name_alone_is_one_syntax_for_every_entry_point(entry: str) -> None:
    """syntaxes="bracket" means ("bracket",) everywhere (it was read letter by letter: "unknown marker syntax 'b'")."""
    from langchain_refs.streaming import marker_syntaxes

    built = entry_point(entry)(syntaxes="bracket")
    assert marker_syntaxes(built.syntaxes) == marker_syntaxes(("bracket",))
    assert [s.name for s in marker_syntaxes(built.syntaxes)] == ["bracket"]


@pytest.mark.parametrize(
    ("threshold", "error", "message"),
    [
        ("high", TypeError, r"support_threshold must be a number from 0 to 1 \(None: the verifier's own\), got str"),
        (50, ValueError, r"support_threshold must be a number from 0 to 1 \(scores' scale\), got 50"),
        (float("nan"), ValueError, r"support_threshold must be a number from 0 to 1"),
        (True, TypeError, r"support_threshold must be a number from 0 to 1"),
    ],
)
def test_a_wrong_support_threshold_fails_when_built(threshold: Any, error: type[Exception], message: str) -> None:
    """A threshold that is no score fails when manage_references is built, not after the whole answer streamed."""
    with pytest.raises(error, match=message):
        manage_references(str_chunks(["x"]), verifier=LexicalScorer(), support_threshold=threshold)
    assert manage_references(str_chunks(["x"]), verifier=LexicalScorer(), support_threshold=1).support_threshold == 1.0


# Written by hand: options another one given leaves unused, each refused when built (they were ignored silently).
OPTIONS_NOT_USED = [
    ({"support_threshold": 0.3}, ValueError, r"^support_threshold is the verifier's: give verifier=\.\.\. too"),
    (
        {"keep_citations": False, "verifier": "lexical"},
        ValueError,
        r"^verifier checks each citation, but keep_citations=False keeps none",
    ),
    (
        {"keep_citations": False, "style": TextReferenceStyle(show_passages=True)},
        ValueError,
        r"^the style's show_passages shows each citation's passage, but keep_citations=False keeps none$",
    ),
    (
        {"passages": False, "style": TextReferenceStyle(show_passages=True)},
        ValueError,
        r"^the style's show_passages shows the passages that passages=False turns off",
    ),
    ({"keep_citations": "no"}, TypeError, r"^keep_citations must be True or False, got str 'no'$"),
    (
        {"keep_citations": False, "passages": LexicalSupport()},
        ValueError,
        r"^passages=<a scorer> finds each citation's passage, but keep_citations=False keeps none",
    ),
]


@pytest.mark.parametrize(("options", "error", "message"), OPTIONS_NOT_USED)
def test_an_option_the_others_leave_unused_is_refused_when_built(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    """support_threshold without a verifier, a verifier or show_passages without citations kept: one clear error."""
    if options.get("verifier") == "lexical":
        options = {**options, "verifier": LexicalScorer()}
    with pytest.raises(error, match=message):
        manage_references(str_chunks(["x"]), **options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"documents_from": "artifact"}, r"documents_from must be a function of a tool result"),
        ({"instructions": 5}, r"instructions must be the system prompt's text \(str\) or None, got int"),
        ({"max_document_texts": "x"}, r"max_document_texts must be a whole number of documents, got str"),
        ({"max_document_texts": 1.5}, r"max_document_texts must be a whole number of documents, got float"),
        ({"passages": False, "cited_text": True}, r"takes passages=\.\.\. \(cited_text is its old name\), not both"),
    ],
)
def test_the_middlewares_own_options_fail_when_built(options: dict[str, Any], message: str) -> None:
    """ReferencesMiddleware's options of its own are checked when it is built, each error naming the option."""
    middleware = agents_or_skip()
    with pytest.raises(TypeError, match=message):
        middleware(**options)


def test_middleware_cited_text_is_the_old_name_of_passages() -> None:
    """ReferencesMiddleware(cited_text=...) still works, with a DeprecationWarning; passages= is the name."""
    middleware = agents_or_skip()
    assert middleware(passages=False).passages is False
    with pytest.warns(DeprecationWarning, match=r"cited_text=\.\.\.\) is now ReferencesMiddleware\(passages"):
        old = middleware(cited_text=False)
    assert old.passages is False
    assert middleware().passages is True


@pytest.mark.parametrize(
    ("caller", "call"),
    [
        ("manage_references()", lambda: manage_references(str_chunks(["x"])).invoke({"docs": []})),
        (
            "ReferencePredictor",
            lambda: ReferencePredictor().invoke({"answer": "x", "docs": []}),
        ),
    ],
)
def test_missing_documents_error_names_the_real_caller(caller: str, call: Any) -> None:
    """The error of a missing documents key names the component that was called, not always manage_references."""
    with pytest.raises(ValueError, match=f"no 'documents' key: {re.escape(caller)} needs"):
        call()


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"documents_key": 5}, r"^documents_key must be the input's key \(a str\) holding the documents, got int$"),
        ({"documents_key": ("documents",)}, r"^documents_key must be the input's key \(a str\) .*, got tuple$"),
    ],
    ids=["int", "tuple"],
)
def test_a_wrong_option_of_manage_references_alone_is_refused_when_given(options: dict[str, Any], error: str) -> None:
    """Options only manage_references takes: refused as given (before, documents_key=5 failed at the first call)."""
    with pytest.raises(TypeError, match=error):
        manage_references(RunnableLambda(str), **options)
