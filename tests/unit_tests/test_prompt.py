"""Prompt helpers: format_documents with positions or given ids; source_key_function is public."""

from __future__ import annotations

from typing import Any

import pytest
import regex
from langchain_core.documents import Document

from langchain_refs.streaming import (
    CitationParser,
    Marker,
    MarkerSyntax,
    citation_instructions,
    format_documents,
    marker_syntaxes,
    source_key_function,
)


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


@pytest.mark.parametrize(
    ("syntaxes", "cited"),
    [
        ("id", [("55",), ("12",)]),
        ("bracket", [("55",), ("12", "3")]),
        ("dagger", [("55",), ("12",)]),
        (["bracket", "id"], [("55",), ("12", "3")]),
    ],
)
def test_each_rules_own_example_is_read_in_its_syntax(syntaxes: Any, cited: list[tuple[str, ...]]) -> None:
    """The example a rule shows the model is made of markers the syntax it asks for reads (hand-written ids)."""
    rule = citation_instructions(syntaxes)
    assert rule is not None
    example = rule.split('(e.g. "', 1)[1].rsplit('")', 1)[0]
    parser = CitationParser(marker_syntaxes(syntaxes))
    markers = [e for e in [*parser.feed(example), *parser.close()] if isinstance(e, Marker)]
    assert [tuple(map(str, m.ids)) for m in markers] == cited


def test_only_syntaxes_of_ones_own_have_no_rule() -> None:
    """No built-in syntax among them: no sentence to ask for them (the caller writes it)."""
    own = MarkerSyntax(name="caret", opener="^", pattern=regex.compile(r"\^(?P<ids>[0-9]+)\^"))
    assert citation_instructions(own) is None
    assert citation_instructions([own, "dagger"]) == citation_instructions("dagger")
