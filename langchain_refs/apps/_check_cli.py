"""``langchain-refs check``: claim extraction and checking over JSON files.

Input: a JSON list, or JSON Lines, of objects in RefChecker's shape:
``response`` (and optionally ``question``) to extract from, ``reference`` (a
string or a list of strings) to check against, ``claims`` for ``check``.
Output: the same objects with ``claims`` added (``extract``), and ``Y`` (the
aggregated label) and ``ys`` (one label per claim) added (``check``), plus
``checks`` with each claim's score and evidence spans. A ``.jsonl`` output is
written as JSON Lines, anything else as a JSON list.

Progress is saved after every item in ``OUTPUT.partial.jsonl``: run the same
command again after a crash and the items already done are not redone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from langchain_refs.apps._models import load_model
from langchain_refs.grounding import (
    Claim,
    LLMClaimChecker,
    LLMClaimExtractor,
    RuleBasedClaimExtractor,
    ScorerClaimChecker,
    aggregate,
)

__all__ = ["add_check_command"]


def is_json_list(text: str) -> bool:
    """Whether an input file is one JSON list (else JSON Lines).

    Example:
        >>> is_json_list('  [{"response": "a"}]'), is_json_list('{"response": "a"}')
        (True, False)
    """
    return text.lstrip().startswith("[")


def read_items(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """``(line or index, item, error)`` for each item of a JSON list or JSON Lines text read from ``path``.

    Example:
        >>> [(n, e is None) for n, _, e in read_items(Path("in.jsonl"), '{"response": "a"}\\nnot json\\n')]
        [(1, True), (2, False)]
    """
    if is_json_list(text):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as error:
            msg = f"{path}: not valid JSON ({error})"
            raise SystemExit(msg) from None
        for index, item in enumerate(items, start=1):
            yield (index, item, None) if isinstance(item, dict) else (index, None, "an item must be a JSON object")
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            yield number, None, f"not valid JSON ({error.msg} at column {error.colno})"
            continue
        yield (number, item, None) if isinstance(item, dict) else (number, None, "a line must be a JSON object")


def _references(item: dict[str, Any]) -> list[str]:
    reference = item.get("reference")
    if reference is None:
        msg = "no 'reference' to check against"
        raise ValueError(msg)
    references = [reference] if isinstance(reference, str) else reference
    if not isinstance(references, list) or not all(isinstance(r, str) for r in references):
        msg = "'reference' must be a string or a list of strings"
        raise ValueError(msg)
    return references


def _process(item: dict[str, Any], args: argparse.Namespace, extractor: Any, checker: Any) -> dict[str, Any]:
    out = dict(item)
    question = item.get("question")
    if args.mode in ("extract", "extract-check"):
        response = item.get("response")
        if not isinstance(response, str):
            msg = "no 'response' string to extract claims from"
            raise ValueError(msg)
        claims = extractor.extract(response, question)
        out["claims"] = [c.to_json() for c in claims]
    else:
        if "claims" not in item or not isinstance(item["claims"], list):
            msg = "no 'claims' list to check (run extract first)"
            raise ValueError(msg)
        claims = [Claim.from_json(c) for c in item["claims"]]
    if args.mode in ("check", "extract-check"):
        references = _references(item)
        checks = checker.check_batch(claims, references, question)
        out["ys"] = [c.label for c in checks]
        out["Y"] = aggregate(out["ys"], args.aggregator)
        out["checks"] = [c.to_dict() for c in checks]
    return out


def _progress(done: int, total: int, stream: TextIO) -> None:
    width = 30
    filled = width * done // max(total, 1)
    stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
    if done == total:
        stream.write("\n")
    stream.flush()


def run_check(args: argparse.Namespace) -> int:
    """Run ``extract``, ``check`` or ``extract-check`` over a file."""
    model = load_model(args.model) if args.model else None
    extractor = (
        LLMClaimExtractor(model, claim_format=args.claim_format) if model is not None else RuleBasedClaimExtractor()
    )
    checker = LLMClaimChecker(model) if model is not None else ScorerClaimChecker(threshold=args.threshold)
    source, target = Path(args.input), Path(args.output)
    partial = target.with_name(target.name + ".partial.jsonl")
    done: dict[int, dict[str, Any]] = {}
    if partial.exists():
        for line in partial.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
                done[record["position"]] = record["item"]
            except (json.JSONDecodeError, KeyError, TypeError):
                continue  # a line cut short by the crash: that item is redone
        print(f"resuming: {len(done)} items already done in {partial}", file=sys.stderr)
    text = source.read_text(encoding="utf-8")
    items = list(read_items(source, text))
    where = "item" if is_json_list(text) else "line"
    show = args.progress or (args.progress is None and sys.stderr.isatty() and len(items) > 20)
    failures = 0
    with partial.open("a", encoding="utf-8") as progress:
        for position, (number, item, error) in enumerate(items):
            if position not in done:
                if error is None and item is not None:
                    try:
                        result = _process(item, args, extractor, checker)
                    except ValueError as problem:
                        error = str(problem)
                if error is not None:
                    failures += 1
                    print(f"\n{source}: {where} {number}: {error}; skipped", file=sys.stderr)
                    result = {"error": error, where: number}
                done[position] = result
                progress.write(json.dumps({"position": position, "item": result}, ensure_ascii=False) + "\n")
                progress.flush()
            if show:
                _progress(position + 1, len(items), sys.stderr)
    results = [done[i] for i in range(len(items))]
    temporary = target.with_name(target.name + ".tmp")
    with temporary.open("w", encoding="utf-8") as out:
        if target.suffix == ".jsonl":
            out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in results)
        else:
            json.dump(results, out, ensure_ascii=False, indent=2)
    os.replace(temporary, target)
    partial.unlink()
    print(f"{len(results) - failures} items written to {target}; {failures} skipped", file=sys.stderr)
    return 0 if not failures else 1


def add_check_command(commands: Any) -> None:
    """Add the ``check`` sub-command to the ``langchain-refs`` parser."""
    check = commands.add_parser(
        "check",
        help="extract claims from responses and check them against references (RefChecker-style JSON)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("mode", choices=["extract", "check", "extract-check"])
    check.add_argument("--input", required=True, help="a JSON list or JSON Lines file")
    check.add_argument("--output", required=True, help="where to write the results (.jsonl for JSON Lines)")
    check.add_argument("--aggregator", choices=["strict", "soft", "major"], default="strict")
    check.add_argument("--model", help="provider:name of a chat model for extraction and checking (else offline)")
    check.add_argument("--claim-format", choices=["triplet", "subsentence"], default="triplet", help="with --model")
    check.add_argument("--threshold", type=float, default=0.4, help="support needed for Entailment (offline checker)")
    check.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None, help="show a progress bar")
    check.set_defaults(run=run_check)
