"""The offline ``langchain-refs check`` on the development splits: what users of the command get.

    python bench/eval_claims.py                 # prints the tables
    python bench/eval_claims.py --write-readme  # ... and puts them in docs/checking.md
    python bench/eval_claims.py --limit 200     # a quick look on fewer rows of each file
    python bench/eval_claims.py --sweep         # macro-F1 of both sets at --threshold 0.20, 0.25, ... 0.80
    python bench/eval_claims.py --no-guards     # the checker's score alone, the meaning guards off (the "before")

Every row goes through ``langchain-refs check extract-check`` itself (rule-based
extraction, the scorer checker, strict aggregation, the command's default
threshold), as a RefChecker-style item:

- AttributionBench: ``response`` = the row's ``claim`` (the statement whose
  attribution is labelled; the full ``response`` holds other statements its
  references were never meant to back), ``question`` = the question,
  ``reference`` = the reference passages.
- WiCE: ``response`` = the claim, ``reference`` = the evidence sentences.

Two figures per set, per source dataset:

- AUROC of a support score read from the command's output: the mean of the
  per-claim scores (``checks[i].score``, the best reference window's support);
  a claim labelled Contradiction counts 0 and a response with no claim
  (Abstain) scores 0. It separates attributable from not attributable rows
  (WiCE: supported from not_supported).
- macro-F1 of the aggregated verdict ``Y``: Entailment means attributable
  (supported), any other label (Neutral, Contradiction, Abstain) means not.

and the count of each aggregated label per gold class, which shows how often
Contradiction fires on rows that are in fact attributable, and how many rows
Abstain.

Bare answers: the development split has none (its AttributedQA claims are
whole sentences), so the AttributedQA rows are also checked with each claim
cut back to its answer — the words before "sings", "sang", "said", "signed"
or "scored", or after "sung by" / "written by", kept when they are at most
four words ("Milira sings the song ..." gives "Milira") — with the question
and the references of the row. The data is read from ../shared/eval and
never copied into the project.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_grounding import EVAL, auroc  # noqa: E402
from bench.readme import replace_section  # noqa: E402
from langchain_refs.apps import checking  # noqa: E402
from langchain_refs.apps import main as cli  # noqa: E402
from langchain_refs.grounding import ScorerClaimChecker  # noqa: E402

LABELS = ("Entailment", "Neutral", "Contradiction", "Abstain")

_ANSWER_BEFORE = re.compile(
    r"^(?:The (?:band |Scottish post-punk band )?)?(.+?),? (?:an? [^,]+, )?(?:sings|sang|said|signed|scored|sing)\b"
)
_ANSWER_AFTER = re.compile(r"\b(?:sung|written) by (?:the )?(.+?)\.?$")


def load(name: str, limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (EVAL / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows[:limit] if limit else rows


def run_command(items: list[dict[str, Any]], threshold: float | None = None) -> list[dict[str, Any]]:
    """The items through ``langchain-refs check extract-check`` (offline, defaults or ``--threshold``), in order."""
    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder) / "in.jsonl", Path(folder) / "out.jsonl"
        source.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
        options = ["--threshold", str(threshold)] if threshold is not None else []
        status = cli(
            ["check", "extract-check", "--input", str(source), "--output", str(target), "--no-progress", *options]
        )
        if status != 0:
            raise SystemExit(f"the check command exited with status {status}")
        return [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]


def bare_answer(claim: str) -> str | None:
    """The answer an AttributedQA claim states ("Milira" of "Milira sings ..."), when it is short and found."""
    last = claim.split("\n")[-1]
    found = _ANSWER_BEFORE.search(last) or _ANSWER_AFTER.search(last)
    if not found:
        return None
    answer = found.group(1).strip()
    return answer if len(answer.split()) <= 4 and not answer.lower().startswith("who") else None


def support(result: dict[str, Any]) -> float:
    """The row's support score: the mean claim score, a contradicted claim counting 0; no claim: 0."""
    checks = result["checks"]
    if not checks:
        return 0.0
    return sum(0.0 if c["label"] == "Contradiction" else c["score"] for c in checks) / len(checks)


def macro_f1(predicted: Sequence[bool], gold: Sequence[bool]) -> float:
    """The mean of the F1 of the positive class and the F1 of the negative class."""
    scores = []
    for cls in (True, False):
        tp = sum(1 for p, g in zip(predicted, gold, strict=True) if p == cls and g == cls)
        fp = sum(1 for p, g in zip(predicted, gold, strict=True) if p == cls and g != cls)
        fn = sum(1 for p, g in zip(predicted, gold, strict=True) if p != cls and g == cls)
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(scores) / 2


def figures(
    rows: list[dict[str, Any]], results: list[dict[str, Any]], group: Callable[[dict[str, Any]], str | None]
) -> list[tuple[str, int, float, float]]:
    """(group, rows, AUROC, macro-F1) per group and for all rows; rows whose group is None are left out.

    A row whose group is ``"all"`` counts in the total only.
    """
    grouped: dict[str, list[tuple[float, bool, bool]]] = {}
    for row, result in zip(rows, results, strict=True):
        name = group(row)
        if name is None:
            continue
        positive = row.get("attribution_label", row.get("label")) in ("attributable", "supported")
        entry = (support(result), result["Y"] == "Entailment", positive)
        if name != "all":
            grouped.setdefault(name, []).append(entry)
        grouped.setdefault("all", []).append(entry)
    out = []
    for name in sorted(grouped, key=lambda n: (n == "all", n)):
        entries = grouped[name]
        scores, verdicts, gold = zip(*entries, strict=True)
        out.append((name, len(entries), auroc(scores, gold), macro_f1(verdicts, gold)))
    return out


def label_counts(rows: list[dict[str, Any]], results: list[dict[str, Any]], gold: str) -> Counter[tuple[str, str]]:
    return Counter((row[gold], result["Y"]) for row, result in zip(rows, results, strict=True))


def contradiction_precision(counts: Counter[tuple[str, str]], wrong: Sequence[str]) -> str:
    """The share of Contradiction verdicts that fall on rows whose gold class is one of ``wrong``."""
    fired = sum(n for (_, label), n in counts.items() if label == "Contradiction")
    right = sum(n for (gold, label), n in counts.items() if label == "Contradiction" and gold in wrong)
    return f"{right}/{fired}" if fired else "0/0"


def table(
    title: str, scored: list[tuple[str, int, float, float]], counts: Counter[tuple[str, str]], golds: Sequence[str]
) -> list[str]:
    lines = [
        f"| {title} | rows | AUROC | macro-F1 |",
        "|---|---|---|---|",
        *(f"| {name} | {n} | {auc:.3f} | {f1:.3f} |" for name, n, auc, f1 in scored),
        "",
        "| gold label | " + " | ".join(LABELS) + " |",
        "|---|" + "---|" * len(LABELS),
        *(f"| {gold} | " + " | ".join(str(counts[gold, label]) for label in LABELS) + " |" for gold in golds),
    ]
    return lines


def sweep(limit: int | None) -> None:
    """Print the verdict's macro-F1 on both sets at thresholds from 0.20 to 0.80 (the default is chosen here)."""
    bench_rows = load("attributionbench_dev.jsonl", limit)
    bench_items = [
        {"response": r["claim"], "question": r["question"], "reference": r["references"]} for r in bench_rows
    ]
    wice_rows = [r for r in load("wice_claim_dev.jsonl", limit) if r["label"] != "partially_supported"]
    wice_items = [{"response": r["claim"], "reference": r["evidence"]} for r in wice_rows]
    print("| threshold | AttributionBench macro-F1 | WiCE macro-F1 | mean |\n|---|---|---|---|")
    for step in range(4, 17):
        threshold = step / 20
        scores = []
        for rows, items in ((bench_rows, bench_items), (wice_rows, wice_items)):
            results = run_command(items, threshold)
            gold = [r.get("attribution_label", r.get("label")) in ("attributable", "supported") for r in rows]
            scores.append(macro_f1([result["Y"] == "Entailment" for result in results], gold))
        print(f"| {threshold:.2f} | {scores[0]:.3f} | {scores[1]:.3f} | {sum(scores) / 2:.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, help="only the first N rows of each file")
    parser.add_argument("--write-readme", action="store_true")
    parser.add_argument("--sweep", action="store_true", help="macro-F1 at each threshold, to choose the default")
    parser.add_argument("--no-guards", action="store_true", help="the meaning guards off (figures only, not written)")
    args = parser.parse_args()
    if args.no_guards:
        if args.write_readme:
            raise SystemExit("--no-guards figures are for comparison: they are not written")
        # The command builds its checker with the default guards: the same checker with none.
        with mock.patch.object(checking, "ScorerClaimChecker", functools.partial(ScorerClaimChecker, guards=None)):
            run(args)
        return
    run(args)


def run(args: argparse.Namespace) -> None:
    """The tables (and, with ``--write-readme``, docs/checking.md's section)."""
    if args.sweep:
        sweep(args.limit)
        return

    bench_rows = load("attributionbench_dev.jsonl", args.limit)
    bench_results = run_command(
        [{"response": r["claim"], "question": r["question"], "reference": r["references"]} for r in bench_rows]
    )
    wice_rows = load("wice_claim_dev.jsonl", args.limit)
    wice_results = run_command([{"response": r["claim"], "reference": r["evidence"]} for r in wice_rows])

    bare_rows, answers = [], []
    for row in bench_rows:
        answer = bare_answer(row["claim"]) if row["src_dataset"] == "AttributedQA" else None
        if answer:
            bare_rows.append(row)
            answers.append(answer)
    bare_results = run_command(
        [
            {"response": answer, "question": row["question"], "reference": row["references"]}
            for row, answer in zip(bare_rows, answers, strict=True)
        ]
    )

    bench_counts = label_counts(bench_rows, bench_results, "attribution_label")
    wice_counts = label_counts(wice_rows, wice_results, "label")
    limit = f" --limit {args.limit}" if args.limit else ""
    limit += " --no-guards" if args.no_guards else ""
    lines = [
        f"`python bench/eval_claims.py{limit}`: each development row through `langchain-refs check "
        "extract-check` offline (defaults: rule-based claims, scorer checker, strict aggregation). AUROC of the "
        "mean claim support (a contradicted claim and a row without claims count 0); macro-F1 of the verdict "
        "(Entailment = attributable, any other label = not).",
        "",
        *table(
            f"AttributionBench ({len(bench_rows)} rows)",
            figures(bench_rows, bench_results, lambda r: r["src_dataset"]),
            bench_counts,
            ("attributable", "not attributable"),
        ),
        "",
        f"Contradiction verdicts on not-attributable rows: "
        f"{contradiction_precision(bench_counts, ['not attributable'])}.",
        "",
        *table(
            f"AttributedQA bare answers ({len(bare_rows)} rows)",
            figures(bare_rows, bare_results, lambda r: "all"),
            label_counts(bare_rows, bare_results, "attribution_label"),
            ("attributable", "not attributable"),
        ),
        "",
        'Bare answers: the AttributedQA rows with each claim cut back to its answer ("Milira sings the song '
        '..." gives "Milira"), checked with the row\'s question: the answer is read as the answer to the '
        "question, and the window must name it.",
        "",
        *table(
            f"WiCE ({len(wice_rows)} claims)",
            figures(wice_rows, wice_results, lambda r: "all" if r["label"] != "partially_supported" else None),
            wice_counts,
            ("supported", "partially_supported", "not_supported"),
        ),
        "",
        "WiCE figures compare supported with not_supported claims (partially_supported left out). Contradiction "
        f"verdicts on claims that are not fully supported: "
        f"{contradiction_precision(wice_counts, ['partially_supported', 'not_supported'])}.",
    ]
    text = "\n".join(lines)
    print(text)
    if args.write_readme:
        replace_section("claims", text)


if __name__ == "__main__":
    main()
