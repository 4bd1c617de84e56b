"""The offline `langchain-refs check` on WiCE claims: AUROC and confusion matrix.

    python bench/eval_claims.py                 # prints the table
    python bench/eval_claims.py --write-readme  # ... and puts it in README.md

Each WiCE development claim becomes one RefChecker-style item (``response`` =
the claim, ``reference`` = its evidence sentences) and goes through
``langchain-refs check extract-check`` offline (rule-based extraction, scorer
checker, strict aggregation). AUROC separates ``supported`` from
``not_supported`` claims by the mean support score of their sub-claims; the
confusion matrix shows the aggregated labels for every WiCE label.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_grounding import EVAL, auroc  # noqa: E402
from bench.readme import replace_section  # noqa: E402
from langchain_refs.apps import main as cli  # noqa: E402

LABELS = ["Entailment", "Neutral", "Contradiction", "Abstain"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write-readme", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for line in (EVAL / "wice_claim_dev.jsonl").read_text(encoding="utf-8").splitlines()]
    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder) / "in.jsonl", Path(folder) / "out.jsonl"
        source.write_text(
            "".join(json.dumps({"response": r["claim"], "reference": r["evidence"]}) + "\n" for r in rows),
            encoding="utf-8",
        )
        cli(["check", "extract-check", "--input", str(source), "--output", str(target), "--no-progress"])
        results = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    scores, positives, matrix = [], [], Counter()
    for row, result in zip(rows, results, strict=True):
        matrix[row["label"], result["Y"]] += 1
        if row["label"] in ("supported", "not_supported"):
            checks = result["checks"]
            scores.append(sum(c["score"] for c in checks) / len(checks) if checks else 0.0)
            positives.append(row["label"] == "supported")
    lines = [
        f"`python bench/eval_claims.py` on {len(rows)} WiCE development claims: AUROC supported vs "
        f"not_supported (mean sub-claim support) **{auroc(scores, positives):.3f}**; aggregated labels (strict):",
        "",
        "| WiCE label | " + " | ".join(LABELS) + " |",
        "|---|" + "---|" * len(LABELS),
    ]
    for label in ("supported", "partially_supported", "not_supported"):
        lines.append(f"| {label} | " + " | ".join(str(matrix[label, p]) for p in LABELS) + " |")
    table = "\n".join(lines)
    print(table)
    if args.write_readme:
        replace_section("claims", table)


if __name__ == "__main__":
    main()
