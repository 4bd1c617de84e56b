"""The two examples of the langchain-references README, with our import swapped in."""

from __future__ import annotations

from operator import itemgetter

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableParallel, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

from langchain_refs import FORMAT_REFERENCES, manage_references

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
