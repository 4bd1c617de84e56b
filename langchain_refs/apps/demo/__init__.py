"""An offline RAG pipeline to see langchain-refs at work: corpus, retriever, model.

Nothing here downloads anything: the corpus ships inside the package (short
sections of our own documentation), the retriever is BM25 in pure Python, and
the chat model is extractive — it reads the numbered documents in its prompt and
streams the sentences that best answer the question, with ``[n](id=k)`` citations.

Example:
    >>> chain = build_demo_chain()
    >>> answer = chain.invoke({"question": "Which URLs become links?"})
    >>> "http" in answer and "[1]" in answer
    True
"""

from __future__ import annotations

import importlib.resources
import json
import math
import re
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import cache
from operator import itemgetter
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableParallel
from typing_extensions import override

from langchain_refs.streaming import (
    FORMAT_REFERENCES,
    ReferenceStyle,
    TextReferenceStyle,
    format_documents,
    manage_references,
)
from langchain_refs.text import content_words

__all__ = [
    "NOT_FOUND",
    "CorpusRetriever",
    "ExtractiveChatModel",
    "build_demo_chain",
    "demo_context",
    "demo_prompt",
    "load_corpus",
]

NOT_FOUND = "I could not find the answer to this question in the documents."

_DOCUMENT = re.compile(r"<document id=(\d+)>\n(.*?)\n</document>", re.DOTALL)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\[(\"'])")
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def terms(text: str) -> list[str]:
    """Content words of ``text``, lower-cased and lightly stemmed.

    Example:
        >>> terms("How are the citations renumbered?")
        ['citation', 'renumber']
    """
    return content_words(text)


@cache
def load_corpus() -> tuple[Document, ...]:
    """The documents shipped with the package (title, URL and text each).

    Example:
        >>> docs = load_corpus()
        >>> 30 <= len(docs) <= 60, sorted(docs[0].metadata)
        (True, ['source', 'title'])
    """
    text = (importlib.resources.files(__package__) / "corpus.jsonl").read_text(encoding="utf-8")
    return tuple(
        Document(page_content=row["text"], metadata={"source": row["url"], "title": row["title"]})
        for row in map(json.loads, text.splitlines())
    )


class CorpusRetriever(BaseRetriever):
    """Okapi BM25 over a list of documents (title and text), pure Python.

    Example:
        >>> retriever = CorpusRetriever(documents=list(load_corpus()), k=2)
        >>> [d.metadata["title"] for d in retriever.invoke("escape HTML titles")][0]
        'The HTML style'
    """

    documents: list[Document]
    k: int = 4
    k1: float = 1.5
    b: float = 0.75

    def _index(self) -> tuple[list[Counter[str]], dict[str, float], float]:
        bags = [Counter(terms(f"{d.metadata.get('title', '')} {d.page_content}")) for d in self.documents]
        frequency: Counter[str] = Counter(t for bag in bags for t in bag)
        count = len(bags)
        idf = {t: math.log(1 + (count - n + 0.5) / (n + 0.5)) for t, n in frequency.items()}
        average = sum(sum(bag.values()) for bag in bags) / max(count, 1)
        return bags, idf, average

    @override
    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        bags, idf, average = self._index()
        wanted = terms(query)
        scored = []
        for position, bag in enumerate(bags):
            length = sum(bag.values())
            score = 0.0
            for term in wanted:
                tf = bag.get(term, 0)
                if tf:
                    score += idf[term] * tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * length / average))
            if score > 0:
                scored.append((score, -position))
        scored.sort(reverse=True)
        return [self.documents[-position] for _, position in scored[: self.k]]


class ExtractiveChatModel(BaseChatModel):
    """An offline chat model that answers with cited sentences from its prompt.

    It reads ``<document id=k>`` blocks and the text after ``Question:`` in
    the last message, scores each sentence of each document by the weighted
    share of the question's content words it contains, and answers with the
    best ones (at most ``max_sentences``, each scoring at least ``min_score``
    and ``relative_score`` times the best), each followed by ``[n](id=k)``. With no good sentence it
    says `NOT_FOUND`. It streams token by token, cutting markers apart as real
    models do; ``delay`` seconds pass between tokens (0 in tests).

    Example:
        >>> prompt = "<document id=1>\\nParis is in France. Rome is old.\\n</document>\\nQuestion: Where is Paris?"
        >>> ExtractiveChatModel().invoke(prompt).content
        'Paris is in France[1](id=1).'
    """

    max_sentences: int = 3
    min_score: float = 0.34
    relative_score: float = 0.75
    delay: float = 0.0

    @property
    def _llm_type(self) -> str:
        return "extractive-demo"

    def answer(self, prompt: str) -> str:
        """The answer this model gives to a prompt (whole, not streamed).

        Example:
            >>> ExtractiveChatModel().answer("Question: anything?")
            'I could not find the answer to this question in the documents.'
        """
        question = prompt.rsplit("Question:", 1)[-1] if "Question:" in prompt else prompt
        wanted = set(terms(_DOCUMENT.sub("", question)))
        sentences = [
            (int(doc_id), sentence.strip())
            for doc_id, body in _DOCUMENT.findall(prompt)
            for sentence in _SENTENCE.split(body)
            if sentence.strip()
        ]
        if not wanted or not sentences:
            return NOT_FOUND
        # Rarer words weigh more: idf over the sentences in the prompt. Ties go
        # to the documents the retriever ranked first (lower ids).
        bags = [set(terms(sentence)) for _, sentence in sentences]
        weight = {t: math.log(1 + len(bags) / (1 + sum(t in bag for bag in bags))) for t in wanted}
        total = sum(weight.values())
        scored = sorted(
            ((sum(weight[t] for t in wanted & bag) / total - 0.01 * sentences[i][0], -i) for i, bag in enumerate(bags)),
            reverse=True,
        )
        best = scored[0][0]
        chosen = [
            -i
            for score, i in scored[: self.max_sentences]
            if score >= self.min_score and score >= self.relative_score * best
        ]
        if not chosen:
            return NOT_FOUND
        parts = []
        for n, index in enumerate(chosen, start=1):
            doc_id, sentence = sentences[index]
            body, end = (sentence[:-1], sentence[-1]) if sentence[-1] in ".!?" else (sentence, ".")
            parts.append(f"{body}[{n}](id={doc_id}){end}")
        return " ".join(parts)

    def _prompt_text(self, messages: list[BaseMessage]) -> str:
        return "\n".join(m.text if hasattr(m, "text") and isinstance(m.text, str) else str(m.content) for m in messages)

    @override
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = AIMessage(content=self.answer(self._prompt_text(messages)))
        return ChatResult(generations=[ChatGeneration(message=message)])

    @override
    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for token in _TOKEN.findall(self.answer(self._prompt_text(messages))):
            if self.delay:
                time.sleep(self.delay)
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=token))
            if run_manager is not None:
                run_manager.on_llm_new_token(token, chunk=chunk)
            yield chunk


def demo_prompt() -> ChatPromptTemplate:
    """The RAG prompt of the demo: numbered documents, citation rule, question.

    Example:
        >>> sorted(demo_prompt().input_variables)
        ['context', 'format_references', 'question']
    """
    return ChatPromptTemplate.from_messages(
        [
            ("system", "Answer the question from the documents only. {format_references}"),
            ("human", "{context}\n\nQuestion: {question}"),
        ]
    )


def demo_context(documents: Sequence[Document] | None = None, *, k: int = 4) -> Runnable[dict[str, Any], Any]:
    """``{"question": ...}`` in; the question, retrieved documents and prompt parts out.

    Example:
        >>> out = demo_context(k=2).invoke({"question": "How are sources numbered?"})
        >>> sorted(out), len(out["documents"])
        (['context', 'documents', 'format_references', 'question'], 2)
    """
    retriever = CorpusRetriever(documents=list(documents or load_corpus()), k=k)
    return RunnableParallel(
        documents=itemgetter("question") | retriever,
        question=itemgetter("question"),
    ).assign(
        context=lambda x: format_documents(x["documents"]),
        format_references=lambda _: FORMAT_REFERENCES,
    )


def build_demo_chain(
    *,
    style: ReferenceStyle | None = None,
    model: Runnable[Any, Any] | None = None,
    documents: Sequence[Document] | None = None,
    k: int = 4,
    as_text: bool = True,
) -> Runnable[dict[str, Any], Any]:
    """``{"question": ...}`` in, cited answer out, fully offline by default.

    With ``as_text`` the answer is a ``str``; without, AI message chunks whose
    last one carries the references as data.

    Example:
        >>> print(build_demo_chain().invoke({"question": "What is the capital of Peru?"}))
        I could not find the answer to this question in the documents.
    """
    answer = demo_prompt() | (model or ExtractiveChatModel())
    cited = demo_context(documents, k=k) | manage_references(answer, style=style or TextReferenceStyle())
    return cited | StrOutputParser() if as_text else cited
