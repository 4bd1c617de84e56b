"""The cheap hot path keeps its shape: what the speed work of issue 12 must not undo (speed itself is in bench/)."""

from __future__ import annotations

import re
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import fields
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessageChunk
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnableConfig
from typing_extensions import override

from langchain_refs import (
    REFERENCES_EVENT,
    AnswerReferences,
    Citation,
    ConsultedSource,
    InvalidCitation,
    Passage,
    Reference,
    ReferenceSession,
    TextReferenceStyle,
    manage_references,
)
from langchain_refs.streaming import ID_SYNTAX
from langchain_refs.streaming import _parser as parser_module
from tests.unit_tests.fakes import ChunkExactChatModel, sample_documents


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


def test_to_dict_writes_every_field_of_every_value() -> None:
    """to_dict (written out by hand for speed) has every dataclass field, tuples as lists, and round-trips."""
    refs = AnswerReferences(
        references=(Reference(number=2, source="s", title="T", document_positions=(4, 7)),),
        citations=(
            Citation(
                number=2,
                document_positions=(4, 7),
                start=10,
                end=13,
                text_start=1,
                text_end=9,
                text="claim",
                marker="[1](id=4, 7)",
                support=0.25,
                supported=False,
                passage=Passage(document_position=7, document_start=3, document_end=9, excerpt="claim.", score=0.5),
                native={"type": "citation", "url": "https://p.org", "extras": {"k": 1}},
            ),
        ),
        invalid_citations=(InvalidCitation(marker="[1](id=9)", item="9", reason="no document 9", offset=5),),
        omitted_invalid_citations=3,
        consulted=(ConsultedSource(source="c", title=None, document_positions=(1, 2)),),
    )
    expected = {
        "references": [{"number": 2, "source": "s", "title": "T", "document_positions": [4, 7]}],
        "citations": [
            {
                "number": 2,
                "document_positions": [4, 7],
                "start": 10,
                "end": 13,
                "text_start": 1,
                "text_end": 9,
                "text": "claim",
                "marker": "[1](id=4, 7)",
                "support": 0.25,
                "supported": False,
                "unsupported_reason": None,
                "passage": {
                    "document_position": 7,
                    "document_start": 3,
                    "document_end": 9,
                    "excerpt": "claim.",
                    "score": 0.5,
                },
                "native": {"type": "citation", "url": "https://p.org", "extras": {"k": 1}},
            }
        ],
        "invalid_citations": [{"marker": "[1](id=9)", "item": "9", "reason": "no document 9", "offset": 5}],
        "omitted_invalid_citations": 3,
        "consulted": [{"source": "c", "title": None, "document_positions": [1, 2]}],
    }
    assert refs.to_dict() == expected
    for cls, key in (
        (Reference, "references"),
        (Citation, "citations"),
        (InvalidCitation, "invalid_citations"),
        (ConsultedSource, "consulted"),
    ):
        # A field added to a value later must be added to to_dict too.
        assert list(expected[key][0]) == [f.name for f in fields(cls)]
    assert list(expected["citations"][0]["passage"]) == [f.name for f in fields(Passage)]
    assert [f.name for f in fields(AnswerReferences)] == list(expected)
    assert AnswerReferences.from_dict(refs.to_dict()) == refs


def test_references_are_serialised_once_per_answer() -> None:
    """The references event carries the very dict of the last chunk's metadata: one to_dict per answer."""
    collected: list[Any] = []

    class Listener(BaseCallbackHandler):
        def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
            if name == REFERENCES_EVENT:
                collected.append(data)

    model = ChatPromptTemplate.from_template("{question}") | ChunkExactChatModel(chunks=["Yes[1](", "id=3)."])
    chain = manage_references(model, style=TextReferenceStyle())
    chunks = list(chain.stream({"documents": sample_documents(), "question": "q"}, {"callbacks": [Listener()]}))
    data = chunks[-1].response_metadata["references"]
    assert [r["source"] for r in data["references"]] == ["b.pdf"]
    assert len(collected) == 1
    assert collected[0] is data


def test_claim_window_restarts_512_back_when_it_passes_1024() -> None:
    """A claim with no sentence end is cut where the recent-output window restarts, as before the speed work."""
    style = TextReferenceStyle()
    session = ReferenceSession(sample_documents(), source_key=style.source_of, style=style)
    # 1,000 + 100 characters pass 1,024: the window restarts at 1,100 - 512 = 588; 300 more stay within it.
    output = session.feed("x" * 1000) + session.feed("y" * 100) + session.feed("z" * 300) + session.feed("[1](id=1)")
    # Then the window restarts at 1,403 + 700 - 512 = 1,591, after the marker: the claim starts there.
    output += session.feed("w" * 700) + session.feed("[2](id=3)") + session.close()
    first, second = session.references.citations
    assert (first.text_start, first.text_end) == (588, 1400)
    assert first.text == "x" * 412 + "y" * 100 + "z" * 300
    assert (second.text_start, second.text_end) == (1591, 2103)
    assert second.text == "w" * 512
    assert output[first.start : first.end] == "[1]"
    assert output[second.start : second.end] == "[2]"


# -- the claim a citation backs, against the forward search it replaced ------------------------

_SENTENCE_END = re.compile(r"[.!?\u3002\uff01\uff1f][\"'\u201d\u2019)\]]*\s|\n")


def forward_claim(text: str) -> tuple[int, int, str]:
    """The claim at the end of ``text``, found as before the speed work: every sentence end read forwards."""
    end = len(text.rstrip())
    search_end = len(text[:end].rstrip(".!?\u3002\uff01\uff1f \t\r\n"))
    start = 0
    for boundary in _SENTENCE_END.finditer(text, 0, search_end):
        start = boundary.end()
    while start < end and text[start] in " \t\r\n,;:-\u2013\u2014":
        start += 1
    return start, end, text[start:end]


CLAIMISH = st.text(alphabet=st.sampled_from(list("ab .!?\u3002\"')]\u201d\u2019\n\t,;:-\u2014")), max_size=60)


@settings(max_examples=500, deadline=None)
@given(text=CLAIMISH, cut=st.integers(0, 60))
def test_claim_matches_the_forward_search(text: str, cut: int) -> None:
    """The claim, found by searching backwards, is the one the forward search over every sentence end finds."""
    style = TextReferenceStyle()
    session = ReferenceSession(sample_documents(), source_key=style.source_of, style=style)
    session.feed(text[:cut])
    session.feed(text[cut:])
    session.feed("[1](id=1)")
    session.close()
    (citation,) = session.references.citations
    assert (citation.text_start, citation.text_end, citation.text) == forward_claim(text)


# -- the stdlib check that a held ``[n](id=k)`` may still complete ----------------------------

_ID_PIECES = list("[]()-+0123456789NUMBERid=, \tx")


@settings(max_examples=2000, deadline=None)
@given(
    text=st.one_of(
        st.text(alphabet=st.sampled_from(_ID_PIECES), max_size=16),
        st.sampled_from(["[2](id=1, 3)", "[NUMBER](id=4)", "[ -3 ] ( id = 1-2 )", "[+1](id=)"]).flatmap(
            lambda marker: st.integers(0, len(marker)).map(lambda n: marker[:n])
        ),
    )
)
def test_id_prefix_agrees_with_the_regex_partial_match(text: str) -> None:
    """Held text may still become an id marker exactly when the `regex` engine's partial match says so."""
    buf = "[" + text
    partial = ID_SYNTAX.pattern.match(buf, partial=True)
    assert (parser_module._ID_PREFIX.match(buf) is not None) == (partial is not None and partial.partial)


def test_style_that_adds_to_format_reference_is_asked_every_time() -> None:
    """A style overriding format_reference sees every citation: the cached rendering is only the template's own."""

    class Starred(TextReferenceStyle):
        def format_reference(self, ref: int, media: Any) -> str | None:
            return f"{super().format_reference(ref, media)}*"

    style = Starred()
    session = ReferenceSession(sample_documents(), source_key=style.source_of, style=style)
    out = session.feed("A[1](id=1) b[1](id=1) c[1](id=2).") + session.close()
    assert out == "A[1]* b[1]* c[2]*.\n\n- [1] a.html#chap1\n- [2] a.html#chap2\n"


# Inner chunks of each shape a chat model streams: text (with markers split across chunks), empty text,
# tool-call chunks, list content with text blocks (indexed or not), a provider's non-text block, a bare string.
_INNER_SHAPES: list[AIMessageChunk] = [
    AIMessageChunk(content="Paris is big[1](i", id="run-1"),
    AIMessageChunk(content="d=1). Rome", id="run-1"),
    AIMessageChunk(content="", id="run-1"),
    AIMessageChunk(content="", id="run-1", tool_call_chunks=[{"name": "search", "args": "{}", "id": "c1", "index": 0}]),
    AIMessageChunk(content=[{"type": "text", "text": " is old[2](id=2).", "index": 1}], id="run-1"),
    AIMessageChunk(content=[{"type": "thinking", "thinking": "Hm.", "index": 2}], id="run-1"),
    AIMessageChunk(content=[{"type": "text", "text": "No index[1](id=1)."}, "bare string"], id="run-1"),
    AIMessageChunk(content=[{"text": "legacy block without a type"}], id="run-1"),
]


def test_wrapper_generation_chunks_equal_the_validated_ones() -> None:
    # `generation_v1` builds the ChatGenerationChunk without pydantic's validation: each must be
    # what `ChatGenerationChunk(message=...)` makes of the same message (text, fields set), whatever the shape.
    from langchain_core.outputs import ChatGenerationChunk

    from langchain_refs.streaming import ChunkRewriter

    style = TextReferenceStyle()
    documents = sample_documents()
    rewriter = ChunkRewriter(ReferenceSession(documents, source_key=style.source_of, style=style), documents=documents)
    texts = []
    for chunk in _INNER_SHAPES:
        made = rewriter.generation_v1(chunk)
        validated = ChatGenerationChunk(message=made.message)
        assert made == validated
        assert made.model_fields_set == validated.model_fields_set
        assert made.model_dump() == validated.model_dump()
        texts.append(made.text)
    # The text of each, by hand: markers rendered, list content read as LangChain reads it (a legacy
    # block, text without a type, counts as text).
    assert texts == [
        "Paris is big",
        "[1]. Rome",
        "",
        "",
        " is old[2].",
        "",
        "No index[1].bare string",
        "legacy block without a type",
    ]


# What a chat model's `_stream` yields, one generation at a time: text with markers split anywhere, list
# content, tool-call chunks, generation info, ids and metadata of every kind.
_owned_texts = st.lists(st.sampled_from(["Paris", " is big", "[1](i", "d=1)", "[2](id=2)", ". ", "[", ""]), max_size=4)
_owned_contents = st.one_of(
    _owned_texts.map("".join),
    _owned_texts.map(lambda parts: [{"type": "text", "text": "".join(parts), "index": 0}]),
    st.just([{"type": "reasoning", "reasoning": "Hm.", "index": 1}]),
)


@st.composite
def _owned_generation(draw: st.DrawFn) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "content": draw(_owned_contents),
        "id": draw(st.sampled_from([None, "run-1", "lc_run--2", "msg_1"])),
        "response_metadata": draw(st.sampled_from([{}, {"model_name": "m"}, {"finish_reason": "length"}])),
    }
    if draw(st.integers(0, 7)) == 0:
        fields["tool_call_chunks"] = [{"name": "search", "args": "{}", "id": "c1", "index": 0}]
    if draw(st.integers(0, 7)) == 0:
        fields["usage_metadata"] = {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}
    info = draw(st.sampled_from([None, None, None, {"finish_reason": "stop"}]))
    return {"fields": fields, "info": info}


@settings(max_examples=300, deadline=None)
@given(st.lists(_owned_generation(), min_size=1, max_size=10))
def test_an_owned_generation_comes_out_as_generation_v1_makes_it(specs: list[dict[str, Any]]) -> None:
    # `generation_owned` rewrites the usual chunk in place: it must give, chunk for chunk, what `generation_v1`
    # gives for the message LangChain's `stream` would have passed on (the generation info merged into the
    # metadata, the model's metadata first: written out here by hand), and the same last chunk.
    from langchain_core.outputs import ChatGenerationChunk

    from langchain_refs.streaming import ChunkRewriter

    style = TextReferenceStyle()
    documents = sample_documents()

    def rewriter() -> ChunkRewriter:
        return ChunkRewriter(ReferenceSession(documents, source_key=style.source_of, style=style), documents=documents)

    by_copy, owning = rewriter(), rewriter()
    for k, spec in enumerate(specs):
        fields, info = spec["fields"], spec["info"]
        as_streamed = {**fields, "response_metadata": {**(info or {}), **fields["response_metadata"]}}
        expected = by_copy.generation_v1(AIMessageChunk(**as_streamed))
        owned = ChatGenerationChunk(message=AIMessageChunk(**fields), generation_info=info)
        got = owning.generation_owned(owned)
        assert got.message == expected.message
        assert got.message.model_fields_set == expected.message.model_fields_set
        assert got.text == expected.text
        assert not got.generation_info  # merged into the message's metadata, as `stream` merges it
        # In place exactly when the chunk is the usual one and not the answer's first (which sets its id).
        usual = isinstance(fields["content"], str) and "tool_call_chunks" not in fields and info is None
        assert (got is owned) == (usual and k > 0)
    assert owning.finish() == by_copy.finish()


def test_the_wrapper_passes_on_the_inner_models_own_chunks_rewritten() -> None:
    # The speed of the agent path: after the answer's first, each text chunk the inner model yields is the one
    # the wrapper yields (rewritten in place), not a copy of it; the answer is the same as ever.
    from langchain_core.outputs import ChatGenerationChunk

    from langchain_refs.agents import ReferencesChatModel

    made: list[AIMessageChunk] = []

    class Recording(ChunkExactChatModel):
        @override
        def _stream(self, *args: Any, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
            for generation in super()._stream(*args, **kwargs):
                made.append(generation.message)
                yield generation

    inner = Recording(chunks=["Paris is big", "[1](id=1)", ". Rome", " is old", "[2](id=2)."])
    model = ReferencesChatModel(inner=inner, documents=sample_documents(), style=TextReferenceStyle())
    out = list(model.stream("question"))
    assert [m is o for m, o in zip(made, out, strict=False)] == [False, True, True, True, True]
    assert "".join(chunk.text for chunk in out) == (
        "Paris is big[1]. Rome is old[2].\n\n- [1] a.html#chap1\n- [2] a.html#chap2\n"
    )
