"""Citations a model makes natively (standard annotations, Anthropic citations) join the numbering and the list."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda

from langchain_refs import AnswerReferences, TextReferenceStyle, manage_references
from tests.unit_tests.fakes import BlockChunksChatModel

PROMPT = ChatPromptTemplate.from_messages([("human", "question")])
ROME = Document("Rome is old.", metadata={"source": "https://r.org", "title": "Rome"})
GRASS = {
    "type": "web_search_result_location",
    "url": "https://g.org",
    "title": "Grass",
    "cited_text": "The grass is green.",
    "encrypted_index": "abc",
}
LAWN = {
    "type": "char_location",
    "cited_text": "Lawns need rain.",
    "document_index": 0,
    "document_title": "Lawn care",
    "start_char_index": 0,
    "end_char_index": 16,
}
EXPECTED = "Rome is old[1]. Grass is green[2].\n\n- [1] Rome (https://r.org)\n- [2] Grass (https://g.org)\n"


def anthropic_chunks(citation_text: dict[str, str] | None = None) -> list[AIMessageChunk]:
    """As langchain-anthropic 1.x streams a cited block: the citation first (a block with no text), then the text.

    ``citation_text`` (``{"text": ""}``): the citation's block with an empty text instead, as other clients write it.
    """
    return [
        AIMessageChunk(content=[{"type": "text", "text": "Rome is old[1](", "index": 0}], id="m"),
        AIMessageChunk(content=[{"type": "text", "text": "id=1). ", "index": 0}], id="m"),
        AIMessageChunk(content=[{"type": "text", **(citation_text or {}), "index": 1, "citations": [GRASS]}], id="m"),
        AIMessageChunk(content=[{"type": "text", "text": "Grass is", "index": 1}], id="m"),
        AIMessageChunk(content=[{"type": "text", "text": " green", "index": 1}], id="m"),
        AIMessageChunk(content=[{"type": "text", "text": ".", "index": 2}], id="m"),
    ]


def chain(model: Any, **options: Any) -> Any:
    return manage_references(PROMPT | model, style=TextReferenceStyle(), **options)


def added(chunks: list[Any]) -> Any:
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


@pytest.mark.parametrize("citation_text", [None, {"text": ""}], ids=["no text", "empty text"])
@pytest.mark.parametrize("version", ["v0", "v1"])
def test_streamed_anthropic_citation_is_numbered_at_the_end_of_its_block(
    version: str, citation_text: dict[str, str] | None
) -> None:
    """The citation arrives before its block's text; it is rendered where the block ends, numbered after [1]."""
    model = BlockChunksChatModel(chunks=anthropic_chunks(citation_text))
    chunks = list(chain(model, output_version=version).stream({"documents": [ROME]}))
    message = added(chunks)
    assert message.text == EXPECTED
    # The citation goes out with the chunk that shows its block has ended (the one opening block 2).
    assert [b["text"] for b in chunks[5].content] == ["[2]", "."]
    refs = AnswerReferences.from_dict(message.response_metadata["references"])
    grass = refs.references[1]
    assert (grass.number, grass.source, grass.title, grass.document_positions) == (2, "https://g.org", "Grass", ())
    citation = refs.citations[1]
    assert (citation.document_positions, citation.marker, citation.text) == ((), "", "Grass is green")
    assert citation.native is not None
    assert citation.native["cited_text"] == "The grass is green."


def test_native_annotation_on_its_block_slices_the_text_and_quotes_the_provider() -> None:
    """The annotation on block 1 slices its words and keeps the provider's cited_text and extras."""
    message = chain(BlockChunksChatModel(chunks=anthropic_chunks()), output_version="v1").invoke({"documents": [ROME]})
    block = next(b for b in message.content if b.get("index") == 1)
    (annotation,) = block["annotations"]
    assert block["text"][annotation["start_index"] : annotation["end_index"]] == "Grass is green"
    assert annotation["url"] == "https://g.org"
    assert annotation["cited_text"] == "The grass is green."
    assert annotation["extras"]["encrypted_index"] == "abc"
    assert annotation["extras"]["number"] == 2
    assert "citations" not in block


def test_async_stream_gives_the_same() -> None:
    """astream places the native citation exactly as stream does."""

    async def collect() -> Any:
        runnable = chain(BlockChunksChatModel(chunks=anthropic_chunks()))
        return added([c async for c in runnable.astream({"documents": [ROME]})])

    assert asyncio.run(collect()).text == EXPECTED


def test_same_text_whether_blocks_come_whole_or_in_pieces() -> None:
    """Each block given whole in one chunk renders as the same text as streamed in pieces."""
    whole = [
        AIMessageChunk(content=[{"type": "text", "text": "Rome is old[1](id=1). ", "index": 0}], id="m"),
        AIMessageChunk(content=[{"type": "text", "text": "Grass is green", "index": 1, "citations": [GRASS]}], id="m"),
        AIMessageChunk(content=[{"type": "text", "text": ".", "index": 2}], id="m"),
    ]
    assert chain(BlockChunksChatModel(chunks=whole)).invoke({"documents": [ROME]}).text == EXPECTED


def test_a_source_a_document_has_shares_its_number() -> None:
    """A native citation of a URL that is also a document's source gets that document's number."""
    native = {"type": "citation", "url": "https://r.org", "cited_text": "Rome is old."}
    chunks = [
        AIMessageChunk(content=[{"type": "text", "text": "Rome is old[1](id=1). ", "index": 0}], id="m"),
        AIMessageChunk(content=[{"type": "text", "text": "It is.", "index": 1, "annotations": [native]}], id="m"),
    ]
    message = chain(BlockChunksChatModel(chunks=chunks)).invoke({"documents": [ROME]})
    assert message.text == "Rome is old[1]. It is.[1]\n\n- [1] Rome (https://r.org)\n"


def test_whole_message_with_standard_annotations_and_titles_only() -> None:
    """A non-streaming answer (whole AIMessage, blocks without index): title-only sources number by title."""
    other = {**LAWN, "cited_text": "Water lawns weekly.", "start_char_index": 17}
    answer = AIMessage(
        content=[
            {"type": "text", "text": "Lawns need rain", "citations": [LAWN]},
            {"type": "text", "text": " and water", "citations": [other]},
            {"type": "text", "text": ", as Rome is old[1](id=1)."},
        ]
    )
    message = chain(RunnableLambda(lambda _: answer)).invoke({"documents": [ROME]})
    assert message.text == (
        "Lawns need rain[1] and water[1], as Rome is old[2].\n\n- [1] Lawn care\n- [2] Rome (https://r.org)\n"
    )
    refs = message.response_metadata["references"]
    assert refs["references"][0] == {"number": 1, "source": None, "title": "Lawn care", "document_positions": []}
    citations = message.response_metadata["citations"]
    assert [(c["extras"]["number"], c.get("cited_text")) for c in citations] == [
        (1, "Lawns need rain."),
        (1, "Water lawns weekly."),
        (2, "Rome is old."),
    ]


def test_openai_url_citations_and_other_annotations() -> None:
    """OpenAI url_citation annotations are numbered; a non-standard annotation stays on its block untouched."""
    odd = {"type": "non_standard_annotation", "value": {"x": 1}}
    url = {"type": "url_citation", "url": "https://w.org", "title": "W", "start_index": 0, "end_index": 9}
    answer = AIMessage(content=[{"type": "text", "text": "Wiki says", "annotations": [url, odd], "index": 0}])
    message = chain(RunnableLambda(lambda _: answer)).invoke({"documents": [ROME]})
    assert message.text == "Wiki says[1]\n\n- [1] W (https://w.org)\n"
    (block,) = message.content
    assert block["annotations"][0] == odd
    annotation = block["annotations"][1]
    assert annotation["url"] == "https://w.org"
    assert annotation["extras"]["provider_start_index"] == 0
    assert block["text"][annotation["start_index"] : annotation["end_index"]] == "Wiki says"


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("javascript:alert(document.domain)", None),
        ("JaVaScRiPt&#58;alert(1)", None),
        ("data:text/html,<script>alert(1)</script>", None),
        ("https://w.org/a b", "https://w.org/a b"),
    ],
)
def test_a_providers_url_that_may_not_become_a_link_is_in_no_annotation(url: str, kept: str | None) -> None:
    """The standard annotations carry a url only where it may become a link, a provider's as a document's."""
    native = {"type": "url_citation", "url": url, "title": "W", "start_index": 0, "end_index": 9}
    answer = AIMessage(content=[{"type": "text", "text": "Wiki says", "annotations": [native], "index": 0}])
    message = chain(RunnableLambda(lambda _: answer)).invoke({"documents": [ROME]})
    (annotation,) = message.content[0]["annotations"]
    assert annotation.get("url") == kept
    assert [c.get("url") for c in message.response_metadata["citations"]] == [kept]
    assert annotation["title"] == "W"


def test_a_citation_naming_nothing_is_a_source_of_its_own() -> None:
    """A native citation with no URL, title or document index gets its own number and an untitled entry."""
    bare = {"type": "citation", "cited_text": "Something."}
    answer = AIMessage(content=[{"type": "text", "text": "So it is", "annotations": [bare], "index": 0}])
    message = chain(RunnableLambda(lambda _: answer)).invoke({"documents": [ROME]})
    assert message.text == "So it is[1]\n\n- [1] untitled document\n"


def test_gemini_grounding_of_a_whole_str_answer_through_manage_references() -> None:
    """A whole str answer grounded by Gemini: a text block carrying the annotation, the number after its span."""
    grounding = {
        "grounding_chunks": [{"web": {"uri": "https://w.org", "title": "W"}}],
        "grounding_supports": [
            {"segment": {"start_index": 0, "end_index": 9, "text": "Wiki says"}, "grounding_chunk_indices": [0]}
        ],
    }
    metadata = {"grounding_metadata": grounding, "model_provider": "google_genai"}
    answer = AIMessage("Wiki says so. Rome is old[1](id=1).", response_metadata=metadata)
    message = chain(RunnableLambda(lambda _: answer)).invoke({"documents": [ROME]})
    assert message.text == "Wiki says[1] so. Rome is old[2].\n\n- [1] W (https://w.org)\n- [2] Rome (https://r.org)\n"
    # content_blocks gives ours, not Google's translation of its offsets into the model's text.
    (block,) = message.content_blocks
    assert [(block["text"][a["start_index"] : a["end_index"]], a["url"]) for a in block["annotations"]] == [
        ("Wiki says", "https://w.org"),
        ("Rome is old", "https://r.org"),
    ]
    # Google's own data stays where the provider put it.
    assert message.response_metadata["grounding_metadata"] == grounding


# As langchain-openai 1.x streams a Responses answer: each annotation in a text block of its own (no text), after
# the delta that ends its span; a file citation has no span, only its position (``file_index``; the API's ``index``).
W_CITATION = {"type": "url_citation", "url": "https://w.org", "title": "W", "start_index": 13, "end_index": 33}
FILE_CITATION = {"type": "file_citation", "file_id": "file-1", "filename": "facts.pdf", "file_index": 72}


def openai_responses_chunks() -> list[AIMessageChunk]:
    texts = ["Paris is big ", "([w](https://w.org)).", " Rome is old[1](id=1). It has 3 hills."]
    return [
        AIMessageChunk(content=[{"type": "reasoning", "summary": [], "index": 0}], id="m"),
        AIMessageChunk(content=[{"type": "text", "text": texts[0], "index": 1}], id="m"),
        AIMessageChunk(content=[{"type": "text", "text": texts[1], "index": 1}], id="m"),
        AIMessageChunk(content=[{"type": "text", "annotations": [W_CITATION], "index": 1}], id="m"),
        AIMessageChunk(content=[{"type": "text", "text": texts[2], "index": 1}], id="m"),
        AIMessageChunk(content=[{"type": "text", "annotations": [FILE_CITATION], "index": 1}], id="m"),
        AIMessageChunk(content=[{"type": "text", "text": "", "id": "msg_1", "index": 1}], id="m"),
    ]


SOURCES = "\n\n- [1] W (https://w.org)\n- [2] Rome (https://r.org)\n- [3] facts.pdf\n"


@pytest.mark.parametrize("version", ["v0", "v1"])
def test_streamed_openai_annotations_are_numbered_after_the_text_they_annotate(version: str) -> None:
    """Each streamed annotation is numbered as it arrives (its span has just passed on), in order with markers."""
    runnable = chain(BlockChunksChatModel(chunks=openai_responses_chunks()), output_version=version)
    message = added(list(runnable.stream({"documents": [ROME]})))
    assert message.text == "Paris is big ([w](https://w.org)).[1] Rome is old[2]. It has 3 hills.[3]" + SOURCES
    if version == "v1":
        block = next(b for b in message.content if b["type"] == "text")
        spans = [block["text"][a["start_index"] : a["end_index"]] for a in block["annotations"]]
        assert spans == ["Paris is big ([w](https://w.org)).", "Rome is old", "It has 3 hills."]


def test_a_whole_openai_answer_numbers_a_file_citation_at_its_position() -> None:
    """A file citation of a whole answer goes where its ``file_index`` stands in the raw text, not at the end."""
    text = "Paris is big ([w](https://w.org)). Rome is old[1](id=1). It has 3 hills. Done."
    answer = AIMessage(content=[{"type": "text", "text": text, "annotations": [W_CITATION, FILE_CITATION]}])
    message = chain(RunnableLambda(lambda _: answer)).invoke({"documents": [ROME]})
    assert message.text == "Paris is big ([w](https://w.org))[1]. Rome is old[2]. It has 3 hills.[3] Done." + SOURCES


def test_an_anthropic_search_result_citation_shares_the_number_of_its_source() -> None:
    """A search result's ``source`` names it: the document with that source and the citation share one number."""
    location = {
        "type": "search_result_location",
        "cited_text": "Rome is old.",
        "source": "https://r.org",
        "title": "Rome",
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 1,
    }
    answer = AIMessage(
        content=[
            {"type": "text", "text": "Rome is old", "citations": [location], "index": 0},
            {"type": "text", "text": ", as its page says[1](id=1).", "index": 1},
        ]
    )
    message = chain(RunnableLambda(lambda _: answer), output_version="v1").invoke({"documents": [ROME]})
    assert message.text == "Rome is old[1], as its page says[1].\n\n- [1] Rome (https://r.org)\n"
    native = next(a for b in message.content for a in b.get("annotations", []) if a.get("cited_text"))
    assert native["extras"]["source"] == "https://r.org"


def test_gemini_grounding_already_translated_by_the_client_is_numbered_once() -> None:
    """langchain-google-genai's v1 message holds the grounding twice: as annotations (byte offsets) and as metadata."""
    grounding = {
        "grounding_chunks": [{"web": {"uri": "https://w.org", "title": "W"}}],
        "grounding_supports": [
            {"segment": {"start_index": 0, "end_index": 10, "text": "Café says"}, "grounding_chunk_indices": [0]}
        ],
    }
    # What the client makes of the support: its UTF-8 byte offsets as character offsets.
    translated = {
        "type": "citation",
        "url": "https://w.org",
        "title": "W",
        "start_index": 0,
        "end_index": 10,
        "cited_text": "Café says",
        "extras": {"google_ai_metadata": {"grounding_chunk_index": 0}},
    }
    text = "Café says so. Rome is old[1](id=1)."
    answer = AIMessage(
        content=[{"type": "text", "text": text, "annotations": [translated]}],
        response_metadata={"grounding_metadata": grounding, "model_provider": "google_genai", "output_version": "v1"},
    )
    message = chain(RunnableLambda(lambda _: answer), output_version="v1").invoke({"documents": [ROME]})
    assert message.text == "Café says[1] so. Rome is old[2].\n\n- [1] W (https://w.org)\n- [2] Rome (https://r.org)\n"


@pytest.mark.parametrize("cut", ["[1", "[1](", "[1](id=1"])
def test_a_streamed_annotation_never_cuts_a_marker_in_two(cut: str) -> None:
    """An annotation arriving while a marker is held waits for the end of its block: the marker is read whole."""
    first = "Paris is big ([w](https://w.org)). Rome is old" + cut
    file_citation = {**FILE_CITATION, "file_index": 34}  # just after "Paris is big ([w](https://w.org))."
    chunks = [
        AIMessageChunk(content=[{"type": "text", "text": first, "index": 0}], id="m"),
        AIMessageChunk(content=[{"type": "text", "annotations": [file_citation], "index": 0}], id="m"),
        AIMessageChunk(content=[{"type": "text", "text": "[1](id=1)."[len(cut) :], "index": 0}], id="m"),
    ]
    message = added(list(chain(BlockChunksChatModel(chunks=chunks)).stream({"documents": [ROME]})))
    assert message.text == (
        "Paris is big ([w](https://w.org)). Rome is old[1].[2]\n\n- [1] Rome (https://r.org)\n- [2] facts.pdf\n"
    )
