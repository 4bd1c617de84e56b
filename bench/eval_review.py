"""The meaning guards on a review set: 144 hand-written claim/evidence pairs, each labelled by its writer.

    python bench/eval_review.py              # the table by kind of change
    python bench/eval_review.py --misjudged  # ... and each pair the checker or the verifier gets wrong

``bench/meaning_review.jsonl`` holds 97 claims whose meaning a source
changes (who did what to whom, a comparison, a quantifier, modality, status,
order, a swapped name, a negation in a word, causation, units) and 47 that
keep it (paraphrases, and weaker claims). A reviewer wrote them in session 29
to find what the guards miss; the guards were then changed for some of the
misses, so these are development figures, not held-out ones.

A changed claim is judged right when it is not called supported (the
checker: not Entailment; the verifier: ``supported`` False); a kept claim
when it is. ``exact`` counts the checker's label equal to the writer's.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_core.documents import Document  # noqa: E402

from langchain_refs import AnswerReferences, Citation, LexicalScorer, Reference  # noqa: E402
from langchain_refs.grounding import Claim, ScorerClaimChecker, verify_citations  # noqa: E402

PAIRS = Path(__file__).with_name("meaning_review.jsonl")
ENTAILMENT = "Entailment"


def pairs() -> list[dict[str, str]]:
    return [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]


def verified(claim: str, evidence: str, scorer: LexicalScorer) -> bool:
    """Whether `verify_citations` calls a citation of ``evidence`` behind ``claim`` supported."""
    references = AnswerReferences(
        references=(Reference(number=1, source="s", title=None, document_positions=(1,)),),
        citations=(
            Citation(
                number=1, document_positions=(1,), start=0, end=0, text_start=0, text_end=0,
                text=claim, marker="[1](id=1)",
            ),
        ),
    )  # fmt: skip
    return bool(verify_citations(references, [Document(evidence)], scorer).citations[0].supported)


def judged(rows: list[dict[str, str]]) -> list[dict[str, Any]]:
    checker, scorer = ScorerClaimChecker(), LexicalScorer()
    out = []
    for row in rows:
        changed = row["label"] != ENTAILMENT
        label = checker.check(Claim(text=row["claim"]), [row["evidence"]]).label
        supported = verified(row["claim"], row["evidence"], scorer)
        out.append(
            {
                **row,
                "checker": label,
                "checker_right": (label != ENTAILMENT) if changed else (label == ENTAILMENT),
                "exact": label == row["label"],
                "verifier_right": (not supported) if changed else supported,
            }
        )
    return out


def table(results: list[dict[str, Any]]) -> str:
    groups: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for row in results:
        groups[row["kind"]].append(row)
    lines = ["| kind | pairs | checker right | exact label | verifier right |", "|---|---:|---:|---:|---:|"]
    changed = [r for r in results if r["label"] != ENTAILMENT]
    kept = [r for r in results if r["label"] == ENTAILMENT]
    for name, members in [*sorted(groups.items()), ("**all changed**", changed), ("**all kept**", kept)]:
        right = sum(r["checker_right"] for r in members)
        exact = sum(r["exact"] for r in members)
        verifier = sum(r["verifier_right"] for r in members)
        lines.append(f"| {name} | {len(members)} | {right} | {exact} | {verifier} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--misjudged", action="store_true", help="list the pairs the checker or verifier gets wrong")
    args = parser.parse_args()
    results = judged(pairs())
    print(f"`python bench/eval_review.py`: {len(results)} pairs of `bench/meaning_review.jsonl`.\n")
    print(table(results))
    if args.misjudged:
        print()
        for row in results:
            if not (row["checker_right"] and row["verifier_right"]):
                print(
                    f"- {row['kind']}, {row['label']}: checker {row['checker']}, verifier right {row['verifier_right']}"
                )
                print(f"  claim: {row['claim']}\n  source: {row['evidence']}")


if __name__ == "__main__":
    main()
