"""The contrast set's edits, and its bench command with a chat model, offline (bench/eval_contrast.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from bench import eval_contrast, eval_grounding
from bench.eval_contrast import edit_antonym, edit_month, edit_name, edit_negation, edit_number, edit_qualifier

TOWER = "The Eiffel Tower, completed in 1889, is 330 metres tall and has 3 levels."


def test_negation_goes_after_the_first_auxiliary() -> None:
    """ "not" follows the first auxiliary verb; a claim that negates already is left out."""
    assert edit_negation("The tower is 330 metres tall.") == "The tower is not 330 metres tall."
    assert edit_negation("It was built and it has 3 levels.") == "It was not built and it has 3 levels."
    assert edit_negation("The tower is not red.") is None
    assert edit_negation("Towers rise.") is None


def test_number_and_date_edits_are_real() -> None:
    """A number or year the evidence states becomes one it does not state; a number it lacks is not edited."""
    rng = random.Random(0)
    edited = edit_number("The tower is 330 metres tall.", TOWER, rng, years=False)
    assert edited is not None
    new = edited.split()[3]
    assert new.isdigit()
    assert new not in TOWER
    year = edit_number("It was completed in 1889.", TOWER, rng, years=True)
    assert year is not None
    assert "1889" not in year
    assert year.split()[-1].rstrip(".") not in TOWER
    assert edit_number("It is 500 metres tall.", TOWER, rng, years=False) is None  # not stated: no real edit
    assert edit_number("It was completed in 1889.", TOWER, rng, years=False) is None  # a year is the date edit
    assert edit_number("It is cited in [3] with 3 levels.", TOWER, rng, years=False) is not None
    assert "[3]" in (edit_number("It is cited in [3] with 3 levels.", TOWER, rng, years=False) or "")


def test_month_and_name_swaps_use_words_the_evidence_never_has() -> None:
    """A month or a name the evidence has is swapped for one it never mentions."""
    rng = random.Random(0)
    month = edit_month("It opened in May 1889.", "It opened in May 1889.", rng)
    assert month is not None
    assert "May" not in month
    name = edit_name("The tower is in Paris today.", "The tower is in Paris.", rng, ["Paris", "Lyon", "Rome"])
    assert name in ("The tower is in Lyon today.", "The tower is in Rome today.")
    assert edit_name("The tower is in Paris today.", "The tower is in Paris.", rng, ["Paris"]) is None


def test_antonym_and_qualifier_edits() -> None:
    """A listed word becomes its opposite, "all" becomes "some": only where the evidence lacks the new word."""
    assert edit_antonym("Sales increased in 2020.", "Sales increased in 2020.") == "Sales decreased in 2020."
    assert edit_antonym("Sales increased in 2020.", "Sales rose in 2020.") is None  # the word is not in the evidence
    assert edit_qualifier("All students passed.", "All students passed.") == "Some students passed."
    assert edit_qualifier("All students passed.", "All students passed, some with honours.") is None


@pytest.fixture
def tiny_eval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two development files of a few rows each, and a docs page with the contrast markers."""
    ab = [
        {"claim": "The Eiffel Tower is 330 metres tall.", "references": [TOWER], "attribution_label": "attributable",
         "question": "q", "src_dataset": "x"},
        {"claim": "The Louvre museum is in Paris.", "references": ["The Louvre museum is in Paris."],
         "attribution_label": "attributable", "question": "q", "src_dataset": "x"},
        {"claim": "Lyon is old.", "references": ["Rome is old."], "attribution_label": "not attributable",
         "question": "q", "src_dataset": "x"},
    ]  # fmt: skip
    wice = [{"claim": "The bridge opened in 1932.", "evidence": ["The bridge opened in 1932."], "label": "supported"}]
    (tmp_path / "attributionbench_dev.jsonl").write_text("\n".join(json.dumps(r) for r in ab), encoding="utf-8")
    (tmp_path / "wice_claim_dev.jsonl").write_text("\n".join(json.dumps(r) for r in wice), encoding="utf-8")
    doc = tmp_path / "checking-meaning.md"
    doc.write_text("intro\n<!-- contrast:start -->\nold\n<!-- contrast:end -->\nafter\n", encoding="utf-8")
    monkeypatch.setattr(eval_grounding, "EVAL", tmp_path)
    monkeypatch.setattr(eval_contrast, "EVAL", tmp_path)
    monkeypatch.setattr(eval_contrast, "DOC", doc)
    return tmp_path


def test_the_offline_report_per_path_and_kind(tiny_eval: Path) -> None:
    """Every offline path, guards on and off, gets a row; originals are supported, edited claims not (guards on)."""
    table = eval_contrast.main([])
    rows = {line.split(" | ")[0].strip("| "): line for line in table.splitlines() if line.startswith("| ")}
    assert set(rows) >= {"checker (ScorerClaimChecker, `check`)", "checker, guards off", "verifier, guards off"}
    header = next(line for line in table.splitlines() if line.startswith("| path"))
    # The bridge claim has no auxiliary verb: two negations, of the tower and of the Louvre.
    assert "original (3)" in header
    assert "negation (2)" in header
    cells = rows["checker (ScorerClaimChecker, `check`)"].strip("| ").split(" | ")
    assert cells[1] == "100.0%"  # the three originals
    assert cells[-1] == "0.0%"  # no edit called supported


def test_any_chat_model_gives_the_same_report(tiny_eval: Path) -> None:
    """With a (fake) chat model its checker and judge get rows; --write puts the table between the markers."""
    always = FakeListChatModel(responses=['{"label": "Entailment", "references": [1], "score": 0.9}'])
    table = eval_contrast.main(["--no-offline", "--write"], model=always)
    lines = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| path")]
    names = [line.split(" | ")[0].strip("| ") for line in lines]
    assert names == [
        "checker (LLMClaimChecker, FakeListChatModel)",
        "verifier (LLMJudgeScorer, FakeListChatModel), guards off",
        "verifier (LLMJudgeScorer, FakeListChatModel), guards on",
    ]
    # A model that calls everything supported: every kind 100% alone; the guards stop the edits.
    assert lines[0].strip("| ").split(" | ")[-1] == "100.0%"
    assert lines[1].strip("| ").split(" | ")[-1] == "100.0%"
    assert lines[2].strip("| ").split(" | ")[-1] == "0.0%"
    written = (tiny_eval / "checking-meaning.md").read_text(encoding="utf-8")
    assert written.startswith("intro\n<!-- contrast:start -->\n`python bench/eval_contrast.py --no-offline`")
    assert written.endswith(table + "\n<!-- contrast:end -->\nafter\n")


def test_the_review_set_is_well_formed_and_judged_pair_by_pair() -> None:
    """bench/meaning_review.jsonl: 144 labelled pairs; a changed unit is judged right, its paraphrase right too."""
    from bench import eval_review

    rows = eval_review.pairs()
    assert len(rows) == 144
    assert {row["label"] for row in rows} == {"Entailment", "Neutral", "Contradiction"}
    assert all(row["claim"].strip() and row["evidence"].strip() and row["kind"] for row in rows)
    changed = {
        "claim": "Voyager is 6.4 billion miles away.", "evidence": "Voyager is 6.4 billion kilometres away.",
        "label": "Contradiction", "kind": "units",
    }  # fmt: skip
    kept = {**changed, "claim": "Voyager is 6.4 billion kilometres away.", "label": "Entailment", "kind": "paraphrase"}
    judged = eval_review.judged([changed, kept])
    assert [(r["checker"], r["checker_right"], r["verifier_right"]) for r in judged] == [
        ("Contradiction", True, True),
        ("Entailment", True, True),
    ]
    assert "| **all changed** | 1 | 1 | 1 | 1 |" in eval_review.table(judged)
