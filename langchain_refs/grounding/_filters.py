"""Keep only the retrieved documents that support a response.

Both filters are Runnables: ``{"response": ..., "documents": [...]}`` in, the
supporting documents out (a list, or a formatted string with
``as_string=True``). They work alone — to list sources for an answer that
carries no markers — or in front of `manage_references`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.cross_encoders import BaseCrossEncoder
from langchain_core.documents.base import BaseMedia
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import BaseModel, Field
from typing_extensions import override

from langchain_refs._inputs import checked_documents_key, document_text, documents_from, input_value
from langchain_refs.grounding._llm import ModelReply, ask_model, checked_chat_model
from langchain_refs.grounding._scoring import EmbeddingScorer, LexicalScorer
from langchain_refs.streaming import checked_support_threshold, support_threshold_of
from langchain_refs.text import split_sentences

__all__ = ["LLMReferenceFilter", "SimilarityReferenceFilter", "format_reference_list"]

logger = logging.getLogger("langchain_refs")


def format_reference_list(documents: Sequence[BaseMedia], metadata_key: str = "source") -> str:
    """A numbered list of the documents' sources (the default string format).

    Example:
        >>> from langchain_core.documents import Document
        >>> print(format_reference_list([Document("x", metadata={"source": "a.pdf", "title": "A"})]))
        [1] A (a.pdf)
    """
    lines = []
    for number, document in enumerate(documents, start=1):
        source = document.metadata.get(metadata_key)
        title = document.metadata.get("title")
        label = f"{title} ({source})" if title and source else str(title or source or document_text(document)[:60])
        lines.append(f"[{number}] {label}")
    return "\n".join(lines)


class _ReferenceFilter(Runnable[dict[str, Any], Any]):
    """Shared input handling and output formatting of the filters."""

    def __init__(
        self,
        *,
        response_key: str,
        documents_key: str,
        as_string: bool,
        format_documents: Callable[[Sequence[BaseMedia]], str] | None,
    ) -> None:
        self.response_key = response_key
        self.documents_key = checked_documents_key(documents_key)
        self.as_string = as_string
        self.format_documents = format_documents or format_reference_list

    def select(self, response: str, documents: Sequence[BaseMedia]) -> list[BaseMedia]:
        """The documents that support ``response``, in their original order."""
        raise NotImplementedError

    @override
    def invoke(self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self._call_with_config(self._run, input, config)

    def _run(self, input: dict[str, Any]) -> Any:
        response = input_value(input, self.response_key, type(self).__name__, "the response")
        text = response if isinstance(response, str) else getattr(response, "text", None)
        if not isinstance(text, str):
            if not isinstance(getattr(response, "content", None), (str, list)):
                msg = (
                    f"{type(self).__name__}: {self.response_key!r} must be the answer, a str or an AI message, "
                    f"got {type(response).__name__}"
                )
                raise TypeError(msg)
            text = str(response.content)
        kept = self.select(text, documents_from(input, self.documents_key, type(self).__name__))
        return self.format_documents(kept) if self.as_string else kept


class SimilarityReferenceFilter(_ReferenceFilter):
    """Keeps the documents some sentence of the response is similar enough to.

    A document is kept when its best score against any response sentence
    reaches ``threshold`` (None, the default: the scorer's own
    ``support_threshold``, as `verify_citations` and `ReferencePredictor`
    take it: 0.5 for `LexicalScorer`, 0.71 for `EmbeddingScorer`). The
    score comes from ``scorer`` (default `LexicalScorer`), or from
    ``embeddings`` through `EmbeddingScorer`.

    Example:
        >>> from langchain_core.documents import Document
        >>> docs = [Document("Paris is the capital of France.", metadata={"source": "p"}),
        ...         Document("Bananas are yellow.", metadata={"source": "b"})]
        >>> kept = SimilarityReferenceFilter().invoke({"response": "Paris is France's capital.", "documents": docs})
        >>> [d.metadata["source"] for d in kept]
        ['p']
    """

    def __init__(
        self,
        *,
        scorer: BaseCrossEncoder | None = None,
        embeddings: Embeddings | None = None,
        threshold: float | None = None,
        batch_size: int = 64,
        response_key: str = "response",
        documents_key: str = "documents",
        as_string: bool = False,
        format_documents: Callable[[Sequence[BaseMedia]], str] | None = None,
    ) -> None:
        super().__init__(
            response_key=response_key,
            documents_key=documents_key,
            as_string=as_string,
            format_documents=format_documents,
        )
        if scorer is not None and embeddings is not None:
            msg = "give SimilarityReferenceFilter a scorer or embeddings, not both"
            raise ValueError(msg)
        self.scorer = scorer or (EmbeddingScorer(embeddings) if embeddings is not None else LexicalScorer())
        given = checked_support_threshold(threshold, option="threshold", none_means="the scorer's own")
        self.threshold = support_threshold_of(self.scorer) if given is None else given
        self.batch_size = batch_size

    @override
    def select(self, response: str, documents: Sequence[BaseMedia]) -> list[BaseMedia]:
        sentences = [s.text for s in split_sentences(response)] or [response]
        pairs = [(sentence, document_text(document)) for document in documents for sentence in sentences]
        scores: list[float] = []
        for i in range(0, len(pairs), self.batch_size):
            scores.extend(self.scorer.score(pairs[i : i + self.batch_size]))
        per_document = len(sentences)
        return [
            document
            for index, document in enumerate(documents)
            if max(scores[index * per_document : (index + 1) * per_document], default=0.0) >= self.threshold
        ]


class _Relevant(BaseModel):
    relevant: list[int] = Field(description="numbers of the chunks the response uses")


_FILTER_PROMPT = (
    "Below are numbered CHUNKS retrieved for a question, then a RESPONSE. List the numbers of the chunks "
    'whose content the response actually uses or is supported by. Answer with JSON only: {"relevant": [1, 3]}.'
)


def _read_numbers(reply: ModelReply) -> list[int | str]:
    """The chunk numbers of ``{"relevant": [...]}`` or of a bare list.

    Whole numbers (``2``, ``2.0``, ``"2"``) are read as numbers; any other
    entry (``true``, ``2.5``, ``"two"``) is kept as its text, so that the
    filter names it as a chunk that does not exist — never reading ``true``
    as chunk 1.
    """
    numbers = reply.data["relevant"] if isinstance(reply.data, dict) else reply.data
    if not isinstance(numbers, list):
        msg = "no list of chunk numbers"
        raise ValueError(msg)
    return [_chunk_number(n) for n in numbers]


def _chunk_number(value: Any) -> int | str:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return repr(value)


class LLMReferenceFilter(_ReferenceFilter):
    """Asks a chat model which documents the response relies on.

    Each chunk is shown with its number and its ``metadata_key`` value; the
    model answers with the numbers (structured output where it has it,
    tolerant JSON reading otherwise). A reply that cannot be read (or a call
    that fails) is logged once and keeps no document, as `ask_model` does for
    every LLM-backed part; numbers that name no chunk are logged and ignored.
    The filter never raises on a reply.

    Example:
        >>> from langchain_core.documents import Document
        >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
        >>> docs = [Document("a", metadata={"source": "a.pdf"}), Document("b", metadata={"source": "b.pdf"})]
        >>> flt = LLMReferenceFilter(FakeListChatModel(responses=['Here: {"relevant": [2]}']), as_string=True)
        >>> flt.invoke({"response": "b", "documents": docs})
        '[1] b.pdf'
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        metadata_key: str = "source",
        response_key: str = "response",
        documents_key: str = "documents",
        as_string: bool = False,
        format_documents: Callable[[Sequence[BaseMedia]], str] | None = None,
        max_chunk_chars: int = 2000,
    ) -> None:
        super().__init__(
            response_key=response_key,
            documents_key=documents_key,
            as_string=as_string,
            format_documents=format_documents,
        )
        self.model = checked_chat_model(model, "LLMReferenceFilter")
        self.metadata_key = metadata_key
        self.max_chunk_chars = max_chunk_chars

    @override
    def select(self, response: str, documents: Sequence[BaseMedia]) -> list[BaseMedia]:
        if not documents:
            return []
        chunks = "\n\n".join(
            f"CHUNK {n} ({self.metadata_key}: {d.metadata.get(self.metadata_key, 'unknown')}):\n"
            f"{document_text(d)[: self.max_chunk_chars]}"
            for n, d in enumerate(documents, start=1)
        )
        messages = [SystemMessage(_FILTER_PROMPT), HumanMessage(f"{chunks}\n\nRESPONSE: {response}")]
        replies: list[list[int | str]] = ask_model(
            self.model, [messages], schema=_Relevant, read=_read_numbers, default=[], name="reference filter"
        )
        wanted = replies[0]
        keep = {n for n in wanted if isinstance(n, int) and 1 <= n <= len(documents)}
        bad = [n for n in wanted if n not in keep]
        if bad:
            logger.warning("LLMReferenceFilter: the model named chunks that do not exist: %s", bad)
        return [d for n, d in enumerate(documents, start=1) if n in keep]
