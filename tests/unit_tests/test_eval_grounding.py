"""The passage evaluation of bench/eval_grounding.py (``--passages``), on rows written by hand."""

from __future__ import annotations

from bench.eval_grounding import PASSAGE_SCORERS, passage_sentence, passages_table
from langchain_refs.text import PASSAGE_SUPPORT

PAGE = ["Rome is an old city.", "The bridge over the river opened in 1932.", "It rains in April."]


def test_the_passage_is_read_back_as_the_sentence_it_starts_in() -> None:
    """A claim taken from the second sentence is found there; the first and last sentences are told apart too."""
    assert passage_sentence(PASSAGE_SUPPORT, "The bridge opened in 1932.", PAGE) == 1
    assert passage_sentence(PASSAGE_SUPPORT, "Rome is old.", PAGE) == 0
    assert passage_sentence(PASSAGE_SUPPORT, "April rains.", PAGE) == 2


def test_the_table_counts_hits_against_the_supporting_sets() -> None:
    """Two claims, one supported by the sentence found and one whose supporting set is elsewhere: Hit@1 0.5."""
    rows = [
        {"claim": "The bridge opened in 1932.", "evidence": PAGE, "supporting_sentences": [[1]]},
        {"claim": "Rome is old.", "evidence": PAGE, "supporting_sentences": [[2]]},
        {"claim": "No evidence marked.", "evidence": PAGE, "supporting_sentences": [[]]},  # left out
    ]
    table = passages_table(rows, "cmd")
    assert "on the 2 WiCE development claims" in table
    default_row = next(line for line in table.splitlines() if line.startswith(f"| {next(iter(PASSAGE_SCORERS))}"))
    assert default_row.endswith("| 0.500 | 0 / 0 |")
