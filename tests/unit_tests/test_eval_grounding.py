"""The passage evaluation of bench/eval_grounding.py (``--passages``), on rows written by hand."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from bench import eval_grounding
from bench.eval_grounding import passage_sentence, passages_table
from langchain_refs.text import PASSAGE_SUPPORT

PAGE = ["Rome is an old city.", "The bridge over the river opened in 1932.", "It rains in April."]


class LastSentence:
    """A scorer that prefers the page's last sentence whatever the claim: wrong and right where the default is not."""

    def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
        return [1.0 if evidence == PAGE[-1] else 0.0 for _, evidence in text_pairs]


def test_the_passage_is_read_back_as_the_sentence_it_starts_in() -> None:
    """A claim taken from each sentence is found there (an int each, not a bool)."""
    found = [passage_sentence(PASSAGE_SUPPORT, claim, PAGE) for claim in ("Rome is old.", "The bridge opened in 1932.")]
    assert found == [0, 1]
    assert [type(f) for f in found] == [int, int]
    assert passage_sentence(PASSAGE_SUPPORT, "April rains.", PAGE) == 2


def test_the_table_counts_hits_and_the_claims_won_and_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two claims: the default finds the first's supporting sentence, not the second's; the other scorer the reverse."""
    monkeypatch.setattr(eval_grounding, "PASSAGE_SCORERS", {"default": PASSAGE_SUPPORT, "last": LastSentence()})
    rows = [
        {"claim": "The bridge opened in 1932.", "evidence": PAGE, "supporting_sentences": [[1]]},
        {"claim": "Rome is old.", "evidence": PAGE, "supporting_sentences": [[2]]},
        {"claim": "No evidence marked.", "evidence": PAGE, "supporting_sentences": [[]]},  # left out
    ]
    table = passages_table(rows, "cmd")
    assert "on the 2 WiCE development claims" in table
    lines = {line.split(" | ")[0].strip("| "): line for line in table.splitlines() if line.startswith("| ")}
    assert lines["default"].endswith("| 0.500 | 0 / 0 |")
    assert lines["last"].endswith("| 0.500 | 1 / 1 |")
