"""Evaluate the grounding scorers on the development splits in ../shared/eval/.

    python bench/eval_grounding.py                 # prints the table
    python bench/eval_grounding.py --write-readme  # ... and puts it in README.md
    python bench/eval_grounding.py --limit 200     # a quick look on fewer examples

For each scorer: AUROC of attributable vs not attributable claims on
AttributionBench (dev, 1,198 balanced examples; claim scored against its
references joined), evidence-sentence Hit@1 and Hit@3 on WiCE (dev, claims with
supporting sentences; the top-scored evidence sentence must belong to a
supporting set), AUROC of supported vs not_supported WiCE claims (best single
sentence or window), and pairs scored per second. The data is read from
../shared/eval and never copied into the project.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_core.cross_encoders import BaseCrossEncoder  # noqa: E402

from bench.readme import replace_section  # noqa: E402
from langchain_refs import LexicalScorer  # noqa: E402

EVAL = Path(os.environ.get("LANGCHAIN_REFS_EVAL", ROOT.parent / "shared" / "eval"))


def auroc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """Area under the ROC curve (ties count one half), by ranks."""
    ranked = sorted(zip(scores, labels, strict=True))
    positives = sum(labels)
    negatives = len(labels) - positives
    rank_sum = 0.0
    i = 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        mean_rank = (i + j + 1) / 2
        rank_sum += mean_rank * sum(1 for _, label in ranked[i:j] if label)
        i = j
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def load(name: str, limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (EVAL / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows[:limit] if limit else rows


def attributionbench(scorer: BaseCrossEncoder, rows: list[dict[str, Any]]) -> tuple[float, int]:
    pairs = [(row["claim"], "\n\n".join(row["references"])) for row in rows]
    scores = scorer.score(pairs)
    labels = [row["attribution_label"] == "attributable" for row in rows]
    return auroc(scores, labels), len(pairs)


def wice(scorer: BaseCrossEncoder, rows: list[dict[str, Any]]) -> tuple[float, float, float, int]:
    hits1 = hits3 = counted = 0
    best_scores: list[float] = []
    labels: list[bool] = []
    pairs_scored = 0
    for row in rows:
        evidence = row["evidence"]
        scores = scorer.score([(row["claim"], sentence) for sentence in evidence])
        pairs_scored += len(evidence)
        supporting = {i for group in row["supporting_sentences"] for i in group}
        if supporting:
            order = sorted(range(len(scores)), key=lambda i: -scores[i])
            counted += 1
            hits1 += order[0] in supporting
            hits3 += bool(set(order[:3]) & supporting)
        if row["label"] in ("supported", "not_supported"):
            windows = [" ".join(evidence[i : i + 2]) for i in range(max(1, len(evidence) - 1))]
            window_scores = scorer.score([(row["claim"], w) for w in windows])
            pairs_scored += len(windows)
            best_scores.append(max([*scores, *window_scores]))
            labels.append(row["label"] == "supported")
    return hits1 / counted, hits3 / counted, auroc(best_scores, labels), pairs_scored


def scorers(names: list[str]) -> dict[str, BaseCrossEncoder]:
    chosen: dict[str, BaseCrossEncoder] = {}
    for name in names:
        if name == "lexical":
            chosen["lexical (default, no model)"] = LexicalScorer()
        elif name == "embedding":
            try:
                from langchain_refs import EmbeddingScorer, HybridScorer, MiniLMEmbeddings

                embedding = EmbeddingScorer(MiniLMEmbeddings(threads=1))
            except ImportError as error:
                print(f"embedding scorers skipped: {error}", file=sys.stderr)
                continue
            chosen["embedding (MiniLM int8 ONNX, embeddings extra)"] = embedding
            chosen["hybrid 50/50 lexical + embedding"] = HybridScorer([(LexicalScorer(), 0.5), (embedding, 0.5)])
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, help="only the first N examples of each file")
    parser.add_argument("--scorers", default="lexical,embedding", help="comma-separated: lexical, embedding")
    parser.add_argument("--write-readme", action="store_true")
    args = parser.parse_args()
    attribution_rows = load("attributionbench_dev.jsonl", args.limit)
    wice_rows = load("wice_claim_dev.jsonl", args.limit)
    lines = [
        f"Measured on {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()} with "
        f"`python bench/eval_grounding.py{' --limit ' + str(args.limit) if args.limit else ''}` "
        f"({len(attribution_rows)} AttributionBench and {len(wice_rows)} WiCE development examples).",
        "",
        "| scorer | AttributionBench AUROC | WiCE Hit@1 | WiCE Hit@3 | WiCE AUROC (supported vs not) | pairs/s |",
        "|---|---|---|---|---|---|",
    ]
    for name, scorer in scorers(args.scorers.split(",")).items():
        start = time.perf_counter()
        ab, ab_pairs = attributionbench(scorer, attribution_rows)
        hit1, hit3, wice_auc, wice_pairs = wice(scorer, wice_rows)
        rate = (ab_pairs + wice_pairs) / (time.perf_counter() - start)
        lines.append(f"| {name} | {ab:.3f} | {hit1:.3f} | {hit3:.3f} | {wice_auc:.3f} | {rate:,.0f} |")
        print(lines[-1], file=sys.stderr)
    table = "\n".join(lines)
    print(table)
    if args.write_readme:
        replace_section("eval", table)


if __name__ == "__main__":
    main()
