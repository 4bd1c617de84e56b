"""Prompt helpers: format_documents with positions or given ids; source_key_function is public."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document

from langchain_refs.streaming import format_documents, source_key_function


def test_format_documents_numbers_by_position() -> None:
    """Without ids, document k (1-based) is wrapped as <document id=k>."""
    assert format_documents([Document("A."), Document("B.")]) == (
        "<document id=1>\nA.\n</document>\n<document id=2>\nB.\n</document>"
    )


def test_format_documents_writes_the_ids_given() -> None:
    """With ids, each document is wrapped with its own id, in order."""
    assert format_documents([Document("A."), Document("B.")], ids=[4, 2]) == (
        "<document id=4>\nA.\n</document>\n<document id=2>\nB.\n</document>"
    )
    assert format_documents([], ids=[]) == ""


def test_format_documents_needs_one_id_per_document() -> None:
    """Too few or too many ids is a clear ValueError, not a silently shortened prompt."""
    with pytest.raises(ValueError, match="one id per document: 1 ids for 2 documents"):
        format_documents([Document("A."), Document("B.")], ids=[1])


def test_source_key_function_is_public() -> None:
    """source_key_function reads a metadata key or calls a callable, from langchain_refs.streaming."""
    document = Document("x", metadata={"url": "https://a.org", "source": "a.pdf"})
    assert source_key_function("url")(document) == "https://a.org"
    assert source_key_function(lambda d: d.metadata["source"].upper())(document) == "A.PDF"
