"""Standard content: Citation annotations on text blocks (output_version), cited_text from the source."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda

from langchain_refs import AnswerReferences, Citation, Reference, TextReferenceStyle, manage_references
from langchain_refs.streaming import with_refusal
from tests.unit_tests.fakes import BlockChunksChatModel, ChunkExactChatModel, str_chunks

PROMPT = ChatPromptTemplate.from_messages([("human", "question")])
DOCUMENTS = [
    Document("Rome is old. Paris is the capital of France.", metadata={"source": "https://p.org", "title": "Paris"}),
    Document("Lyon has silk. Lyon is big.", metadata={"source": "https://l.org", "title": "Lyon"}),
]
CHUNKS = ["Paris is the cap", "ital[1](i", "d=1). Lyon has si", "lk[2](id=2)."]
TEXT = "Paris is the capital[1]. Lyon has silk[2].\n\n- [1] Paris (https://p.org)\n- [2] Lyon (https://l.org)\n"


def chain(**options: Any) -> Any:
    model = options.pop("model", None) or ChunkExactChatModel(chunks=CHUNKS)
    return manage_references(PROMPT | model, style=TextReferenceStyle(), **options)


def added(chunks: list[Any]) -> Any:
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


def check_annotations(block: dict[str, Any]) -> list[tuple[str, str]]:
    """(the words each annotation slices, its cited_text), checking cited_text is the cited document's."""
    by_url = {d.metadata["source"]: d.page_content for d in DOCUMENTS}
    found = []
    for annotation in block["annotations"]:
        assert annotation["type"] == "citation"
        assert annotation["cited_text"] in by_url[annotation["url"]]
        found.append((block["text"][annotation["start_index"] : annotation["end_index"]], annotation["cited_text"]))
    return found


EXPECTED = [("Paris is the capital", "Paris is the capital of France."), ("Lyon has silk", "Lyon has silk.")]


def test_v0_is_the_default_and_keeps_str_content() -> None:
    """v0: chunks and result keep str content; the annotations, with the source's words, are in the metadata."""
    chunks = list(chain().stream({"documents": DOCUMENTS}))
    assert all(isinstance(c.content, str) for c in chunks)
    message = chain().invoke({"documents": DOCUMENTS})
    assert message.content == TEXT
    assert "output_version" not in message.response_metadata
    citations = message.response_metadata["citations"]
    assert [(TEXT[a["start_index"] : a["end_index"]], a["cited_text"]) for a in citations] == EXPECTED


def test_v1_streams_text_blocks_and_the_last_one_carries_the_annotations() -> None:
    """v1: each chunk's content is index-0 text blocks; added up, one block whose annotations slice it."""
    chunks = list(chain(output_version="v1").stream({"documents": DOCUMENTS}))
    for chunk in chunks:
        assert isinstance(chunk.content, list)
        assert all(b["type"] == "text" and b["index"] == 0 for b in chunk.content)
    assert len({c.id for c in chunks}) == 1
    message = added(chunks)
    (block,) = message.content_blocks
    assert block["text"] == TEXT
    assert check_annotations(block) == EXPECTED
    assert message.response_metadata["output_version"] == "v1"


def test_v1_invoke_and_ainvoke() -> None:
    """invoke and ainvoke give the same single annotated text block."""
    import asyncio

    for message in (
        chain(output_version="v1").invoke({"documents": DOCUMENTS}),
        asyncio.run(chain(output_version="v1").ainvoke({"documents": DOCUMENTS})),
    ):
        (block,) = message.content_blocks
        assert block["text"] == TEXT
        assert check_annotations(block) == EXPECTED


def test_v1_moves_tool_call_chunks_off_the_text_index() -> None:
    """v1: a tool-call chunk at index 0 moves to 1, so the text block never swallows it; the call is a block too.

    A model with output_version="v1" streams its tool calls as tool_call_chunk blocks: so does the rewritten answer,
    and, marked v1, its content_blocks show the annotated text and the call (issue 20).
    """
    model = BlockChunksChatModel(
        chunks=[
            AIMessageChunk(content="Paris[1](id=1).", id="m"),
            AIMessageChunk(
                content="", id="m", tool_call_chunks=[{"name": "search", "args": "{}", "id": "c1", "index": 0}]
            ),
        ]
    )
    chunks = list(chain(model=model, output_version="v1").stream({"documents": DOCUMENTS}))
    assert [c.tool_call_chunks[0]["index"] for c in chunks if c.tool_call_chunks] == [1]
    message = added(chunks)
    assert [call["name"] for call in message.tool_calls] == ["search"]
    assert message.response_metadata["output_version"] == "v1"
    text, call = message.content_blocks
    assert (text["type"], check_annotations(text)) == ("text", [("Paris", "Paris is the capital of France.")])
    assert (call["type"], call["name"], call["id"], call["args"]) == ("tool_call", "search", "c1", {})


def test_str_outputs_stay_str_in_v1() -> None:
    """output_version concerns messages: a chain returning str still streams str."""
    result = manage_references(str_chunks(["Yes[1](", "id=1)"]), style=TextReferenceStyle(), output_version="v1")
    assert result.invoke({"documents": DOCUMENTS}) == "Yes[1]\n\n- [1] Paris (https://p.org)\n"


@pytest.mark.parametrize("version", ["v0", "v1"])
def test_a_models_own_text_blocks_get_the_annotations(version: str) -> None:
    """List content (the model's text blocks, by index): the annotations go on the block the words are in."""
    model = BlockChunksChatModel(
        chunks=[
            AIMessageChunk(content=[{"type": "text", "text": "Paris is the capital[1](id=1). ", "index": 0}], id="m"),
            AIMessageChunk(content=[{"type": "tool_use", "id": "t", "name": "x", "input": {}, "index": 1}], id="m"),
            AIMessageChunk(content=[{"type": "text", "text": "Lyon has silk[2](id=2).", "index": 2}], id="m"),
        ]
    )
    message = added(list(chain(model=model, output_version=version).stream({"documents": DOCUMENTS})))
    texts = [b for b in message.content if isinstance(b, dict) and b["type"] == "text"]
    assert [b["index"] for b in texts] == [0, 2]
    assert texts[0]["text"] == "Paris is the capital[1]. "
    assert texts[1]["text"].startswith("Lyon has silk[2].\n\n- [1] Paris")
    assert check_annotations(texts[0]) == [EXPECTED[0]]
    assert check_annotations(texts[1]) == [EXPECTED[1]]


def test_cited_text_without_passages_is_the_start_of_the_document() -> None:
    """passages=False: cited_text is the first 300 characters of the cited document, never the answer's words."""
    long = Document("A" * 400, metadata={"source": "https://a.org"})
    model = ChunkExactChatModel(chunks=["Long[1](id=1)."])
    message = chain(model=model, passages=False).invoke({"documents": [long]})
    assert message.response_metadata["citations"][0]["cited_text"] == "A" * 300


def test_standard_citations_without_documents_or_passage_leave_cited_text_out() -> None:
    """AnswerReferences.standard_citations() with neither a passage nor documents cannot quote the source."""
    refs = AnswerReferences(
        references=(Reference(number=1, source="https://a.org", title="A", document_positions=(1,)),),
        citations=(
            Citation(
                number=1,
                document_positions=(1,),
                start=5,
                end=8,
                text_start=0,
                text_end=5,
                text="Paris",
                marker="[1](id=1)",
            ),
        ),
    )
    assert refs.standard_citations() == [
        {
            "type": "citation",
            "url": "https://a.org",
            "title": "A",
            "start_index": 0,
            "end_index": 5,
            "extras": {"number": 1, "document_positions": [1]},
        }
    ]
    assert refs.standard_citations([Document("Paris is big.")])[0]["cited_text"] == "Paris is big."


def test_output_version_is_checked() -> None:
    """An unknown output_version is a ValueError when the chain is built."""
    with pytest.raises(ValueError, match="output_version must be 'v0' or 'v1'"):
        chain(output_version="v2")


# A whole list-content answer with no block indices (Anthropic's, non-streamed): thinking, two text blocks of which
# the second carries the provider's own citation, a third text block.
WHOLE = AIMessage(
    content=[
        {"type": "thinking", "thinking": "Hm.", "signature": "s"},
        {"type": "text", "text": "Paris is the capital[1](id=1). "},
        {
            "type": "text",
            "text": "Rome is old.",
            "citations": [
                {
                    "type": "web_search_result_location",
                    "url": "https://r.org",
                    "title": "R",
                    "cited_text": "Rome is old.",
                    "encrypted_index": "x",
                }
            ],
        },
        {"type": "text", "text": " Lyon."},
    ],
    response_metadata={"model_provider": "anthropic"},
)
WHOLE_LIST = "\n\n- [1] Paris (https://p.org)\n- [2] R (https://r.org)\n"


def annotated(blocks: list[Any]) -> list[tuple[str, str, list[str]]]:
    """(type, text or reasoning, the words each annotation slices) of each block."""
    return [
        (
            b["type"],
            b.get("text", b.get("reasoning", "")),
            [b["text"][a["start_index"] : a["end_index"]] for a in b.get("annotations", [])],
        )
        for b in blocks
    ]


@pytest.mark.parametrize("call", ["invoke", "ainvoke"])
async def test_a_whole_list_content_answer_gets_its_annotations_and_one_list_in_v1(call: str) -> None:
    """Issue 20: manage_references over a whole list-content answer: annotated blocks, the list in the last one.

    Was: no annotation at all, and the list of sources a text block of its own.
    """
    runnable = manage_references(RunnableLambda(lambda _: WHOLE), style=TextReferenceStyle(), output_version="v1")
    message = (
        runnable.invoke({"documents": DOCUMENTS})
        if call == "invoke"
        else await runnable.ainvoke({"documents": DOCUMENTS})
    )
    assert annotated(message.content_blocks) == [
        ("reasoning", "Hm.", []),
        ("text", "Paris is the capital[1]. ", ["Paris is the capital"]),
        ("text", "Rome is old.[2]", ["Rome is old."]),
        ("text", " Lyon." + WHOLE_LIST, []),
    ]
    # The blocks keep the shape they came in: no index added.
    assert not [b for b in message.content if "index" in b]


def test_a_whole_list_content_answer_in_v0_keeps_the_models_blocks_and_annotates_them() -> None:
    """v0: the model's own blocks (thinking as it was), each text block annotated, the list in the last one."""
    runnable = manage_references(RunnableLambda(lambda _: WHOLE), style=TextReferenceStyle())
    message = runnable.invoke({"documents": DOCUMENTS})
    assert annotated(message.content) == [
        ("thinking", "", []),
        ("text", "Paris is the capital[1]. ", ["Paris is the capital"]),
        ("text", "Rome is old.[2]", ["Rome is old."]),
        ("text", " Lyon." + WHOLE_LIST, []),
    ]
    assert message.content[0] == WHOLE.content[0]
    assert not [b for b in message.content if "index" in b]


@pytest.mark.parametrize("version", ["v0", "v1"])
def test_a_whole_answer_whose_blocks_partly_have_indices_keeps_them_and_annotates_each(version: str) -> None:
    """A block given index 1 by the model, one with none (at position 1): each keeps its own annotation and index.

    Was: the second was numbered 1 too, the list and its annotation merged into the first block.
    """
    whole = AIMessage(
        [
            {"type": "text", "text": "Paris is the capital[1](id=1).", "index": 1},
            {"type": "text", "text": " Lyon[2](id=2)."},
        ]
    )
    runnable = manage_references(RunnableLambda(lambda _: whole), style=TextReferenceStyle(), output_version=version)
    message = runnable.invoke({"documents": DOCUMENTS})
    listed = "\n\n- [1] Paris (https://p.org)\n- [2] Lyon (https://l.org)\n"
    assert [(b.get("index"), b["text"], check_annotations(b)) for b in message.content] == [
        (1, "Paris is the capital[1].", [("Paris is the capital", "Paris is the capital of France.")]),
        (None, " Lyon[2]." + listed, [("Lyon", "Lyon has silk.")]),
    ]


def test_a_whole_answer_of_bare_strings_keeps_them_in_v0() -> None:
    """The model's own shape (v0): a list of strings stays strings (they carry no annotation), the list after."""
    whole = AIMessage(["Paris is the capital[1](id=1).", " Lyon[2](id=2)."])
    message = manage_references(RunnableLambda(lambda _: whole), style=TextReferenceStyle()).invoke(
        {"documents": DOCUMENTS}
    )
    assert message.content == [
        "Paris is the capital[1].",
        " Lyon[2].",
        "\n\n- [1] Paris (https://p.org)\n- [2] Lyon (https://l.org)\n",
    ]


def test_what_a_translator_adds_to_every_block_comes_once() -> None:
    """Google's translator adds a refusal for the finish reason to each block's translation: one, at the end.

    ``standard_content`` leaves the message's refusal to ``with_refusal``,
    which adds it once to the answer marked standard. Expected from the bare
    message's own content_blocks (langchain-core translating it whole).
    """
    from langchain_refs.streaming import standard_content

    message = AIMessage(
        content=[{"type": "thinking", "thinking": "a"}, {"type": "thinking", "thinking": "b"}],
        response_metadata={"model_provider": "google_genai", "finish_reason": "SAFETY"},
    )
    assert [b["type"] for b in message.content_blocks] == ["reasoning", "reasoning", "refusal"]
    standard = standard_content(message.content, message)
    assert standard == [b for b in message.content_blocks if b["type"] != "refusal"]
    metadata = {**message.response_metadata, "output_version": "v1"}
    marked = message.model_copy(update={"content": standard, "response_metadata": metadata})
    assert with_refusal(marked).content_blocks == message.content_blocks


def test_a_server_tools_call_keeps_its_place_before_its_result() -> None:
    """OpenAI's web_search_call is a server tool's call and its result: both stay where the search was.

    Found in use: the call was moved to the end, after its own result and
    the text, and langchain-openai, reading the answer back as history,
    dropped a call that followed its result. The expected types and order
    are written by hand (langchain-core's content_blocks of the whole message
    give the same); the function call after the text stays after it.
    """
    from langchain_refs.streaming import standard_content

    message = AIMessage(
        content=[
            {"id": "rs_1", "summary": [{"text": "T.", "type": "summary_text"}], "type": "reasoning"},
            {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search"}},
            {"type": "text", "text": "Hi.", "annotations": [], "id": "msg_1"},
            {"type": "function_call", "name": "search", "arguments": "{}", "call_id": "call_1", "id": "fc_1"},
        ],
        tool_calls=[{"name": "search", "args": {}, "id": "call_1", "type": "tool_call"}],
        response_metadata={"model_provider": "openai"},
    )
    standard = standard_content(message.content, message)
    assert standard is not None
    order = [(b["type"], b.get("id") or b.get("tool_call_id")) for b in standard]
    assert order == [
        ("reasoning", "rs_1"),
        ("server_tool_call", "ws_1"),
        ("server_tool_result", "ws_1"),
        ("text", "msg_1"),
        ("tool_call", "call_1"),
    ]


TEXT_BLOCK = {"type": "text", "text": "Partly[1]"}
# (the message, the blocks with_refusal gives it: None for the same message), written by hand.
WITH_REFUSAL = {
    "openai refusal": (
        AIMessage(
            content=[TEXT_BLOCK],
            additional_kwargs={"refusal": "No."},
            response_metadata={"model_provider": "openai", "output_version": "v1"},
        ),
        [TEXT_BLOCK, {"type": "refusal", "refusal": "No."}],
    ),
    "google safety": (
        AIMessage(
            content=[TEXT_BLOCK],
            response_metadata={"model_provider": "google_genai", "output_version": "v1", "finish_reason": "SAFETY"},
        ),
        [TEXT_BLOCK, {"type": "refusal", "refusal": "", "extras": {"finish_reason": "SAFETY"}}],
    ),
    "anthropic refusal": (
        AIMessage(
            content=[TEXT_BLOCK],
            response_metadata={"model_provider": "anthropic", "output_version": "v1", "stop_reason": "refusal"},
        ),
        [TEXT_BLOCK, {"type": "refusal", "refusal": ""}],
    ),
    "an answer that ends as usual": (
        AIMessage(
            content=[TEXT_BLOCK],
            response_metadata={"model_provider": "anthropic", "output_version": "v1", "stop_reason": "end_turn"},
        ),
        None,
    ),
    "a refusal block already there": (
        AIMessage(
            content=[TEXT_BLOCK, {"type": "refusal", "refusal": "No."}],
            additional_kwargs={"refusal": "No."},
            response_metadata={"model_provider": "openai", "output_version": "v1"},
        ),
        None,
    ),
    "the model's own shape (translated when read)": (
        AIMessage(
            content=[TEXT_BLOCK], additional_kwargs={"refusal": "No."}, response_metadata={"model_provider": "openai"}
        ),
        None,
    ),
    "str content": (
        AIMessage(content="Partly", additional_kwargs={"refusal": "No."}, response_metadata={"output_version": "v1"}),
        None,
    ),
}


@pytest.mark.parametrize(("message", "blocks"), WITH_REFUSAL.values(), ids=WITH_REFUSAL.keys())
def test_with_refusal_adds_the_refusal_given_outside_standard_content(message: AIMessage, blocks: Any) -> None:
    out = with_refusal(message)
    if blocks is None:
        assert out is message
    else:
        assert out.content == blocks
        assert [b["type"] for b in out.content_blocks] == [b["type"] for b in blocks]
