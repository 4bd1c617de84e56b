"""langchain-references 0.2.x users: its README's two examples and a custom style, our import swapped in."""

from __future__ import annotations

from operator import itemgetter

from langchain_core.documents import Document
from langchain_core.documents.base import BaseMedia
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableParallel, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

from langchain_refs import FORMAT_REFERENCES, ReferenceStyle, TextReferenceStyle, manage_references
from tests.unit_tests.fakes import str_chunks

MODEL_ANSWER = (
    "Mathematical games are structured activities defined by clear mathematical parameters, "
    "such as tic-tac-toe or chess [1](id=1). In contrast, mathematics competitions, like the "
    "International Mathematical Olympiad, involve solving complex problems [2](id=2). "
    "Games are for enjoyment [3](id=1)."
)
EXPECTED = (
    "Mathematical games are structured activities defined by clear mathematical parameters, "
    "such as tic-tac-toe or chess <sup>[[1](https://en.wikipedia.org/wiki/Mathematics)]</sup>. "
    "In contrast, mathematics competitions, like the International Mathematical Olympiad, "
    "involve solving complex problems <sup>[[2](https://en.wikipedia.org/wiki/Mathematical_game)]</sup>. "
    "Games are for enjoyment <sup>[[1](https://en.wikipedia.org/wiki/Mathematics)]</sup>."
    "\n\n- **1** [Mathematics](https://en.wikipedia.org/wiki/Mathematics)"
    "\n- **2** [Mathematical game](https://en.wikipedia.org/wiki/Mathematical_game)\n"
)
DOCS = [
    Document(
        "Mathematics is a field of study about numbers and games like chess.",
        metadata={"source": "https://en.wikipedia.org/wiki/Mathematics", "title": "Mathematics", "rank": 1},
    ),
    Document(
        "A mathematical game competition like the olympiad asks for proofs.",
        metadata={
            "source": "https://en.wikipedia.org/wiki/Mathematical_game",
            "title": "Mathematical game",
            "rank": 2,
        },
    ),
]

rag_prompt = ChatPromptTemplate.from_template(
    """
Here, the context:
{context}

{format_references}

Question : {question}
"""
)


def format_docs(docs: list[Document]) -> str:
    return "\n".join(
        # Add a document id so that LLM can reference it
        [f"<document id={i + 1}>\n{doc.page_content}\n</document>\n" for i, doc in enumerate(docs)]
    )


def fake_model() -> GenericFakeChatModel:
    # GenericFakeChatModel streams word by word, cutting markers apart.
    return GenericFakeChatModel(messages=iter([AIMessage(content=MODEL_ANSWER)]))


def test_chain_without_retriever() -> None:
    """README example 1: documents passed in, context built with RunnablePassthrough.assign."""
    context = RunnablePassthrough.assign(
        context=lambda input: format_docs(input["documents"]),
        format_references=lambda _: FORMAT_REFERENCES,
    )
    chain = context | manage_references(rag_prompt | fake_model()) | StrOutputParser()
    question = "What is the difference kind of games and competition of mathematics?"
    assert chain.invoke({"documents": DOCS, "question": question}) == EXPECTED


def test_chain_with_retriever() -> None:
    """README example 2: documents from an in-memory retriever via RunnableParallel."""
    vectorstore = InMemoryVectorStore.from_documents(DOCS, DeterministicFakeEmbedding(size=16))
    retriever = vectorstore.as_retriever(search_kwargs={"k": 2})
    # The model cites by position, so give it the documents in a known order.
    ordered = retriever | (lambda docs: sorted(docs, key=lambda d: d.metadata["rank"]))
    context = RunnableParallel(
        # Get list of documents, necessary for reference analysis
        documents=(itemgetter("question") | ordered),
        # and question
        question=itemgetter("question"),
    ).assign(
        context=lambda input: format_docs(input["documents"]),
        format_references=lambda _: FORMAT_REFERENCES,
    )
    chain = context | manage_references(rag_prompt | fake_model()) | StrOutputParser()
    streamed = "".join(chain.stream({"question": "What is the difference kind of games?"}))
    assert streamed == EXPECTED


# -- a langchain-references 0.2.x custom style, unchanged ---------------------------
#
# In the spirit of the upstream suite's own custom-style test: a style written
# against 0.2.x that reads the class attributes 0.2.x defines and calls its
# key helper, on the upstream scenario of chunks of one source cited apart.

CHUNKS = [
    Document("c1", id="1", metadata={"source": "a.html#chap1", "row": 1, "title": "doc1", "total_pages": 2}),
    Document("c2", id="2", metadata={"source": "a.html#chap2", "row": 2, "title": "doc2", "total_pages": 9}),
    Document("c3", id="3", metadata={"source": "b.pdf", "row": 3, "title": "doc3", "total_pages": 3}),
    Document("c4", id="4", metadata={"source": "b.pdf", "row": 4, "title": "doc4", "total_pages": 3}),
]
SCENARIO = "yes[1](id=3), maybe[2](id=2), no[3](id=4), yes[4](id=1), error[5](id=10)"


class PagedStyle(ReferenceStyle):
    """Written for 0.2.x: names each source by its key, with its page count when short enough."""

    def format_reference(self, ref: int, media: BaseMedia) -> str:
        return f"[{media.metadata['title']}]"

    def format_all_references(self, refs: list[tuple[int, BaseMedia]]) -> str:
        get_source = self._get_key_assigner(self.source_id_key)
        lines = []
        for ref, media in refs:
            pages = media.metadata.get(self.total_pages_key)
            shown = f" ({pages} pages)" if pages is not None and pages <= self.max_total_pages else ""
            lines.append(f"- {ref} {get_source(media)} row {media.metadata['row']}{shown}\n")
        return "\n" + "".join(lines)


def test_custom_style_of_langchain_references_0_2() -> None:
    """A 0.2.x style reading total_pages_key, max_total_pages and _get_key_assigner works unchanged."""
    chain = manage_references(str_chunks(list(SCENARIO)), style=PagedStyle())
    assert chain.invoke({"documents": CHUNKS}) == (
        "yes[doc3], maybe[doc2], no[doc4], yes[doc1], error"
        # As in 0.2.x, the list names the chunk of b.pdf cited last (row 4, not row 3).
        "\n- 1 b.pdf row 4 (3 pages)\n- 2 a.html#chap2 row 2\n- 3 a.html#chap1 row 1 (2 pages)\n"
    )


def test_key_assigner_of_0_2_with_a_function_on_the_class() -> None:
    """_get_key_assigner takes a metadata key, or a function set on a style class (as 0.2.x's README does)."""

    def by_row(media: BaseMedia) -> str:
        return f"{media.metadata['source']}#{media.metadata['row']}"

    class ByRow(PagedStyle):
        source_id_key = by_row  # type: ignore[assignment]

    style = ByRow()
    assert style._get_key_assigner(style.source_id_key)(CHUNKS[2]) == "b.pdf#3"
    assert ReferenceStyle._get_key_assigner("title")(CHUNKS[0]) == "doc1"
    assert (ReferenceStyle.total_pages_key, ReferenceStyle.max_total_pages) == ("total_pages", 4)
    chain = manage_references(str_chunks([SCENARIO]), style=style)
    # Rows are sources of their own now: four numbers, each listed by its row.
    assert chain.invoke({"documents": CHUNKS}) == (
        "yes[doc3], maybe[doc2], no[doc4], yes[doc1], error"
        "\n- 1 b.pdf#3 row 3 (3 pages)\n- 2 a.html#chap2#2 row 2\n- 3 b.pdf#4 row 4 (3 pages)"
        "\n- 4 a.html#chap1#1 row 1 (2 pages)\n"
    )


def test_list_names_the_chunk_cited_last() -> None:
    """Chunks of one source share a number; the list and the data name the chunk cited last, as in 0.2.x."""
    chain = manage_references(str_chunks([SCENARIO]), style=TextReferenceStyle())
    assert chain.invoke({"documents": CHUNKS}) == (
        "yes[1], maybe[2], no[1], yes[3], error"
        "\n\n- [1] doc4 (b.pdf)\n- [2] doc2 (a.html#chap2)\n- [3] doc1 (a.html#chap1)\n"
    )
    session = chain.start_session({"documents": CHUNKS})
    session.feed(SCENARIO)
    session.close()
    assert [(r.title, r.document_positions) for r in session.references.references] == [
        ("doc4", (3, 4)),
        ("doc2", (2,)),
        ("doc1", (1,)),
    ]
