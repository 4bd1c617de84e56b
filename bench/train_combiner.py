"""Would a learned combiner of cheap signals beat the lexical scorer? Cross-validated on AttributionBench dev.

    python bench/train_combiner.py                    # lexical signals, and MiniLM when the extra is installed
    python bench/train_combiner.py --no-embeddings    # lexical signals only (seconds)

Each AttributionBench development claim is scored against its references
joined, one pair at a time (as `verify_citations` does), with these signals:

- the lexical scorer as shipped, and variants of its coverage from its own
  knobs: words only (no phrase bonus), the whole text only, the best
  two-sentence window only, the best single sentence, no number penalty;
- number agreement (share of the claim's numbers missing from the evidence,
  and whether it has any), negation agreement (one side negated, the other
  not), entity overlap (share of the claim's capitalised words found), the
  claim's length and the evidence's (log words), whether the claim is a bare
  answer (four content words or fewer);
- with the embeddings extra: the embedding scorer's score (best window's
  cosine, MiniLM int8).

A logistic regression (L2, standardised signals, Newton's method, numpy) is
fitted on four fifths of the questions and scores the fifth (five folds,
grouped by question so that the claims of one answer never straddle folds;
a second seed checks the split does not decide). Reported: cross-validated
AUROC, macro-F1 at 0.5 (the logistic's own threshold; the split is
balanced), per source dataset; beside the lexical scorer alone and the
50/50 hybrid of lexical and embedding scores. Nothing is written into the
package: a variant only becomes a default if it beats the lexical scorer on
these figures, per source as well as in all.

The data is read from ../shared/eval and never copied into the project.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench.eval_grounding import auroc, fold_of, macro_f1  # noqa: E402
from langchain_refs.text import LexicalSupport, content_words, split_sentences  # noqa: E402

EVAL = Path(os.environ.get("LANGCHAIN_REFS_EVAL", ROOT.parent / "shared" / "eval"))
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
NEGATION = re.compile(r"\b(?:not|no|never|none|nobody|nothing|neither|nor|cannot|without)\b|n't\b", re.IGNORECASE)
NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z]+")

VARIANTS = {
    "lexical": LexicalSupport(),
    "words only": LexicalSupport(phrase_weight=0.0),
    "whole text only": LexicalSupport(whole_weight=1.0),
    "best window only": LexicalSupport(whole_weight=0.0),
    "best sentence only": LexicalSupport(whole_weight=0.0, window=1),
    "no number penalty": LexicalSupport(number_penalty=1.0),
}


def signals(claim: str, evidence: str) -> list[float]:
    """The cheap signals of one (claim, evidence) pair."""
    found = [support.score([(claim, evidence)])[0] for support in VARIANTS.values()]
    numbers = set(NUMBER.findall(claim))
    missing = len(numbers - set(NUMBER.findall(evidence))) / len(numbers) if numbers else 0.0
    claim_negated = bool(NEGATION.search(claim))
    # Negation agreement with the sentence that shares most words with the claim.
    words = set(content_words(claim))
    sentences = [s.text for s in split_sentences(evidence)] or [evidence]
    closest = max(sentences, key=lambda s: len(words & set(content_words(s))))
    names = {n.lower() for n in NAME.findall(claim)}
    lowered = evidence.lower()
    names_found = sum(n in lowered for n in names) / len(names) if names else 1.0
    return [
        *found,
        missing,
        float(bool(numbers)),
        float(claim_negated != bool(NEGATION.search(closest))),
        names_found,
        math.log1p(len(words)),
        math.log1p(len(content_words(evidence))),
        float(len(words) <= 4),
    ]


NAMES = [
    *VARIANTS,
    "numbers missing",
    "has numbers",
    "negation differs",
    "names found",
    "log claim words",
    "log evidence words",
    "bare answer",
]


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> Callable[[np.ndarray], np.ndarray]:
    """L2-regularised logistic regression on standardised signals (Newton's method); returns its predictor."""
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    w = np.zeros(z.shape[1])
    penalty = np.eye(z.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(100):
        p = 1 / (1 + np.exp(-z @ w))
        step = np.linalg.solve((z * (p * (1 - p))[:, None]).T @ z + penalty, z.T @ (p - y) + penalty @ w)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return lambda new: 1 / (1 + np.exp(-(w[0] + ((new - mean) / scale) @ w[1:])))


def cross_validated(x: np.ndarray, y: np.ndarray, folds: Sequence[int], l2: float) -> list[float]:
    predicted = np.zeros(len(y))
    held = np.array(folds)
    for k in sorted(set(folds)):
        predicted[held == k] = fit(x[held != k], y[held != k], l2)(x[held == k])
    return [float(p) for p in predicted]


def report(name: str, scores: Sequence[float], labels: list[bool], rows: list[dict[str, Any]], at: float) -> str:
    sources = sorted({row["src_dataset"] for row in rows})
    cells = []
    for source in sources:
        idx = [i for i, row in enumerate(rows) if row["src_dataset"] == source]
        cells.append(f"{auroc([scores[i] for i in idx], [labels[i] for i in idx]):.3f}")
    f1 = macro_f1([s >= at for s in scores], labels)
    return f"| {name} | {auroc(scores, labels):.3f} | {f1:.3f} (at {at:.2f}) | " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-embeddings", action="store_true", help="lexical signals only")
    parser.add_argument("--l2", type=float, default=1.0, help="the ridge penalty on standardised weights")
    args = parser.parse_args()
    lines = (EVAL / "attributionbench_dev.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    labels = [row["attribution_label"] == "attributable" for row in rows]
    evidence = ["\n\n".join(row["references"]) for row in rows]
    x = np.array([signals(row["claim"], text) for row, text in zip(rows, evidence, strict=True)])
    y = np.array(labels, dtype=float)
    embedded: list[float] | None = None
    if not args.no_embeddings:
        try:
            from langchain_refs import EmbeddingScorer, MiniLMEmbeddings

            scorer = EmbeddingScorer(MiniLMEmbeddings(threads=1))
            embedded = [scorer.score([(row["claim"], text)])[0] for row, text in zip(rows, evidence, strict=True)]
        except ImportError as error:
            print(f"embedding signal skipped: {error}", file=sys.stderr)
    sources = sorted({row["src_dataset"] for row in rows})
    out = [
        f"AttributionBench dev ({len(rows)} claims), 5-fold cross-validation grouped by question, L2 {args.l2}:",
        "",
        "| variant | AUROC | macro-F1 | " + " | ".join(f"{s} AUROC" for s in sources) + " |",
        "|---|---|---|" + "---|" * len(sources),
    ]
    lexical = list(x[:, 0])
    out.append(report("lexical scorer alone (threshold 0.50)", lexical, labels, rows, 0.5))
    for seed in (13, 29):
        folds = fold_of([row["question"] for row in rows], seed=seed)
        fitted = cross_validated(x, y, folds, args.l2)
        out.append(report(f"logistic, lexical signals (seed {seed})", fitted, labels, rows, 0.5))
        if embedded is not None:
            both = np.hstack([x, np.array(embedded)[:, None]])
            out.append(
                report(
                    f"logistic, lexical + MiniLM (seed {seed})",
                    cross_validated(both, y, folds, args.l2),
                    labels,
                    rows,
                    0.5,
                )
            )
            pair = np.stack([x[:, 0], np.array(embedded)], axis=1)
            out.append(
                report(
                    f"logistic, lexical score + MiniLM score (seed {seed})",
                    cross_validated(pair, y, folds, args.l2),
                    labels,
                    rows,
                    0.5,
                )
            )
    if embedded is not None:
        hybrid = [(a + b) / 2 for a, b in zip(lexical, embedded, strict=True)]
        out.append(report("hybrid 50/50, no fitting (threshold 0.50)", hybrid, labels, rows, 0.5))
        out.append(report("MiniLM alone (threshold 0.50)", embedded, labels, rows, 0.5))
    out += [
        "",
        "Single signals (AUROC on all): "
        + ", ".join(f"{n} {auroc(list(x[:, j]), labels):.3f}" for j, n in enumerate(NAMES)),
    ]
    print("\n".join(out))


if __name__ == "__main__":
    random.seed(0)
    main()
