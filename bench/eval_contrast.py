"""A contrast set: supported claims, edited so they are no longer supported, through every offline path.

    python bench/eval_contrast.py                       # prints the table
    python bench/eval_contrast.py --write               # ... and puts it in docs/checking-meaning.md
    python bench/eval_contrast.py --limit 100           # a quick look: 100 originals of each file
    python bench/eval_contrast.py --model openai:gpt-4o-mini   # the same figures for any chat model

The originals are the supported claims of the development splits in
../shared/eval/ (AttributionBench ``attributable`` rows, WiCE ``supported``
claims), each with its evidence (the row's references; WiCE: its evidence
sentences). Each original is edited in every way that applies to it, and an
edit is kept only where it is real — it changes something the evidence
states into something it does not:

- ``number``: a number of the claim (not a year) that the evidence states,
  changed to another value the evidence does not state;
- ``date``: a year the evidence states, moved by 1 to 30 years to one it does
  not, or a month it names swapped for another it never names;
- ``name``: a capitalised word the evidence contains (not the claim's first
  word), swapped for a capitalised word of another claim that the evidence
  never mentions;
- ``negation``: "not" after the first auxiliary verb ("is", "was", "has",
  "can"...), in a claim that negates nothing;
- ``antonym``: a word of the built-in list (before/after, increased/decreased,
  won/lost, first/last...) that the evidence contains, turned into its
  opposite, which the evidence does not contain;
- ``qualifier``: a quantifier or frequency the evidence contains ("all",
  "every", "always", "most", "many", "often") weakened ("some", "sometimes",
  "few", "rarely"), the new word absent from the evidence.

Each path reports the share of the claims of each kind it calls supported:

- checker: ``ScorerClaimChecker`` (the ``check`` command and the checking
  page), supported = Entailment;
- verifier: ``verify_citations`` with the default ``LexicalScorer`` at its
  threshold (what ``manage_references(verifier=...)`` runs), each evidence
  text one cited document; supported = ``supported``;
- predictor: ``ReferencePredictor`` (default scorer, the evidence texts as
  documents), supported = every claim sentence's best span labelled
  ``grounded``;

each with the meaning guards on (the default) and off (the score alone, as
before issue 21). With ``--model provider:name`` the same claims go through
``LLMClaimChecker`` and through ``verify_citations`` with ``LLMJudgeScorer``
(the model alone, guards off, and with the guards). The data is read from
../shared/eval and never copied into the project.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_core.documents import Document  # noqa: E402

from bench.eval_grounding import EVAL, cite, load  # noqa: E402
from langchain_refs import LexicalScorer, ReferencePredictor, verify_citations  # noqa: E402
from langchain_refs.grounding import ANTONYMS, Claim, MeaningGuards, ScorerClaimChecker  # noqa: E402

DOC = ROOT / "docs" / "checking-meaning.md"
KINDS = ("original", "number", "date", "name", "negation", "antonym", "qualifier")
_AUXILIARIES = re.compile(
    r"\b(is|are|was|were|has|have|had|can|will|would|could|should|does|do|did|may|must)\b(?!\s+(?:not|never)\b)"
)
_NEGATED = re.compile(r"\b(?:not|no|never|none|nor|cannot|without)\b|n['\u2019]t\b", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?![\w.,]*\d)")
_MONTHS = "January February March April May June July August September October November December".split()
_CAPITALISED = re.compile(r"(?<=[a-z,;]\s)[A-Z][a-z]{2,}\b")
_CITATION_MARKER = re.compile(r"\[\s*\d+(?:\s*[,;\u2013-]\s*\d+)*\s*\](?:\(id=[^)]*\))?")
_QUALIFIERS = {"all": "some", "every": "some", "always": "sometimes", "most": "few", "many": "few", "often": "rarely"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Example:
    """One claim of the contrast set: an original or an edit of one, with its evidence texts."""

    kind: str
    claim: str
    evidence: tuple[str, ...]
    original: str


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def _number_value(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _evidence_values(evidence: str) -> set[float]:
    return {v for v in (_number_value(n) for n in _NUMBER.findall(evidence)) if v is not None}


def edit_number(claim: str, evidence: str, rng: random.Random, *, years: bool) -> str | None:
    """A number (``years``: a year) the evidence states, changed to a value it does not state."""
    stated = _evidence_values(evidence)
    # Citation markers ("[3]") are no numbers the claim states: blanked, offsets kept.
    for match in _NUMBER.finditer(_CITATION_MARKER.sub(lambda m: " " * len(m.group()), claim)):
        value = _number_value(match.group())
        if value is None or value not in stated or not value.is_integer():
            continue
        is_year = 1000 <= value <= 2100 and "," not in match.group()
        if is_year != years:
            continue
        for _ in range(20):
            if years:
                new = int(value) + rng.choice([-1, 1]) * rng.randint(1, 30)
            else:
                new = max(2, int(value * rng.choice([0.5, 1.5, 2, 3]) + rng.randint(1, 9)))
            if float(new) not in stated and str(new) not in evidence:
                text = f"{new:,}" if "," in match.group() else str(new)
                return claim[: match.start()] + text + claim[match.end() :]
    return None


def edit_month(claim: str, evidence: str, rng: random.Random) -> str | None:
    """A month the evidence names, swapped for one it never names."""
    for month in _MONTHS:
        if re.search(rf"\b{month}\b", claim) and month in evidence:
            others = [m for m in _MONTHS if m not in evidence]
            if others:
                return re.sub(rf"\b{month}\b", rng.choice(others), claim, count=1)
    return None


def edit_name(claim: str, evidence: str, rng: random.Random, names: Sequence[str]) -> str | None:
    """A capitalised word the evidence contains, swapped for a name the evidence never mentions."""
    known = _words(evidence)
    for match in _CAPITALISED.finditer(claim):
        if match.group().lower() not in known:
            continue
        candidates = [n for n in names if n.lower() not in known and n.lower() not in claim.lower()]
        if candidates:
            return claim[: match.start()] + rng.choice(candidates) + claim[match.end() :]
    return None


def edit_negation(claim: str) -> str | None:
    """ "not" after the first auxiliary verb, in a claim that negates nothing."""
    if _NEGATED.search(claim):
        return None
    match = _AUXILIARIES.search(claim)
    return claim[: match.end()] + " not" + claim[match.end() :] if match else None


def _replace_word(claim: str, word: str, new: str) -> str:
    def same_case(found: re.Match[str]) -> str:
        return new.capitalize() if found.group()[0].isupper() else new

    return re.sub(rf"\b{re.escape(word)}\b", same_case, claim, count=1, flags=re.IGNORECASE)


def _common_suffix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def edit_antonym(claim: str, evidence: str) -> str | None:
    """A word of the antonym list the evidence contains, turned into its opposite, which the evidence lacks."""
    claim_words, known = _words(claim), _words(evidence)
    for first, second in ANTONYMS:
        if first & set(_QUALIFIERS) or second & set(_QUALIFIERS.values()):
            continue  # quantifiers are the qualifier edit
        for words, opposites in ((first, second), (second, first)):
            for word in sorted(words & claim_words & known):
                # The opposite in the same form where the list has it: "increased" -> "decreased".
                choices = sorted(opposites, key=lambda o: (-_common_suffix(o, word), o))
                new = next((o for o in choices if o not in known and o not in claim_words), None)
                if new:
                    return _replace_word(claim, word, new)
    return None


def edit_qualifier(claim: str, evidence: str) -> str | None:
    """A quantifier or frequency the evidence contains ("all", "always"...), weakened to one it lacks."""
    claim_words, known = _words(claim), _words(evidence)
    for word, weaker in _QUALIFIERS.items():
        if word in claim_words and word in known and weaker not in known:
            return _replace_word(claim, word, weaker)
    return None


def originals(limit: int | None) -> list[tuple[str, tuple[str, ...]]]:
    """The supported claims of the development splits, with their evidence texts."""
    found: list[tuple[str, tuple[str, ...]]] = []
    for row in load("attributionbench_dev.jsonl", None):
        if row["attribution_label"] == "attributable" and row["references"]:
            found.append((row["claim"], tuple(row["references"])))
    wice = [(r["claim"], tuple(r["evidence"])) for r in load("wice_claim_dev.jsonl", None) if r["label"] == "supported"]
    ab = found
    if limit:
        ab, wice = (sample(rows, limit) for rows in (ab, wice))
    return ab + [row for row in wice if row[1]]


def sample(rows: list[Any], count: int) -> list[Any]:
    """A seeded sample in file order."""
    if count >= len(rows):
        return rows
    return [rows[i] for i in sorted(random.Random(0).sample(range(len(rows)), count))]


def contrast_set(rows: Sequence[tuple[str, tuple[str, ...]]], seed: int = 21) -> list[Example]:
    """Every original, and each real edit of it."""
    rng = random.Random(seed)
    names = sorted({m.group() for claim, _ in rows for m in _CAPITALISED.finditer(claim)})
    examples = []
    for claim, evidence in rows:
        joined = "\n\n".join(evidence)
        edits = {
            "original": claim,
            "number": edit_number(claim, joined, rng, years=False),
            "date": edit_number(claim, joined, rng, years=True) or edit_month(claim, joined, rng),
            "name": edit_name(claim, joined, rng, names),
            "negation": edit_negation(claim),
            "antonym": edit_antonym(claim, joined),
            "qualifier": edit_qualifier(claim, joined),
        }
        examples += [
            Example(kind=kind, claim=text, evidence=evidence, original=claim)
            for kind, text in edits.items()
            if text is not None and (kind == "original" or text != claim)
        ]
    return examples


# ---- the paths ----

Path_ = Callable[[Example], bool]


def checker_path(checker: Any) -> Path_:
    def supported(example: Example) -> bool:
        return bool(checker.check_batch([Claim(text=example.claim)], list(example.evidence))[0].label == "Entailment")

    return supported


def verifier_path(scorer: Any, guards: MeaningGuards | None) -> Path_:
    def supported(example: Example) -> bool:
        documents = [Document(text) for text in example.evidence]
        checked = verify_citations(cite(example.claim, len(documents)), documents, scorer, guards=guards)
        return bool(checked.citations[0].supported)

    return supported


def predictor_path(guards: MeaningGuards | None) -> Path_:
    predictor = ReferencePredictor(verifiability=None, guards=guards)

    def supported(example: Example) -> bool:
        references = predictor.predict(example.claim, [Document(text) for text in example.evidence])
        return bool(references) and all(r.label == "grounded" for r in references)

    return supported


def offline_paths() -> dict[str, Path_]:
    """Every offline path, with the guards (the default) and without."""
    return {
        "checker (ScorerClaimChecker, `check`)": checker_path(ScorerClaimChecker()),
        "checker, guards off": checker_path(ScorerClaimChecker(guards=None)),
        "verifier (verify_citations, LexicalScorer)": verifier_path(LexicalScorer(), MeaningGuards()),
        "verifier, guards off": verifier_path(LexicalScorer(), None),
        "predictor (ReferencePredictor, grounded)": predictor_path(MeaningGuards()),
        "predictor, guards off": predictor_path(None),
    }


def model_paths(model: Any, name: str) -> dict[str, Path_]:
    """A chat model's paths: its own checker, and its judge through verify_citations alone and with the guards."""
    from langchain_refs.grounding import LLMClaimChecker, LLMJudgeScorer

    judge = LLMJudgeScorer(model)
    return {
        f"checker (LLMClaimChecker, {name})": checker_path(LLMClaimChecker(model)),
        f"verifier (LLMJudgeScorer, {name}), guards off": verifier_path(judge, None),
        f"verifier (LLMJudgeScorer, {name}), guards on": verifier_path(judge, MeaningGuards()),
    }


def measure(examples: Sequence[Example], paths: dict[str, Path_]) -> dict[str, dict[str, tuple[int, int]]]:
    """For each path and kind: (claims called supported, claims)."""
    results: dict[str, dict[str, tuple[int, int]]] = {}
    for name, path in paths.items():
        start = time.process_time()
        counts: dict[str, tuple[int, int]] = {}
        for example in examples:
            called, total = counts.get(example.kind, (0, 0))
            counts[example.kind] = (called + path(example), total + 1)
        results[name] = counts
        print(f"{name}: {time.process_time() - start:.1f} s CPU", file=sys.stderr)
    return results


def table(results: dict[str, dict[str, tuple[int, int]]], examples: Sequence[Example], command: str) -> str:
    """The Markdown table: the share each path calls supported, per kind, and over every edit."""
    kinds = [k for k in KINDS if any(e.kind == k for e in examples)]
    sizes = {k: sum(e.kind == k for e in examples) for k in kinds}
    lines = [
        f"`{command}`: {sizes.get('original', 0)} supported claims of the development splits "
        f"and {len(examples) - sizes.get('original', 0)} real edits of them. Share called supported "
        "(lower is better for edits, higher for originals):",
        "",
        "| path | " + " | ".join(f"{k} ({sizes[k]})" for k in kinds) + " | all edits |",
        "|---|" + "---|" * (len(kinds) + 1),
    ]
    for name, counts in results.items():
        cells = []
        for kind in kinds:
            called, total = counts.get(kind, (0, 0))
            cells.append(f"{called / total:.1%}" if total else "-")
        edited = [counts[k] for k in kinds if k != "original" and k in counts]
        called, total = sum(c for c, _ in edited), sum(t for _, t in edited)
        cells.append(f"{called / total:.1%}" if total else "-")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_section(path: Path, text: str, name: str = "contrast") -> None:
    """Put ``text`` between ``<!-- name:start -->`` and ``<!-- name:end -->`` in ``path``."""
    content = path.read_text(encoding="utf-8")
    pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.DOTALL)
    if not pattern.search(content):
        raise SystemExit(f"{path} has no <!-- {name}:start --> ... <!-- {name}:end --> section")
    path.write_text(pattern.sub(lambda m: m[1] + text + "\n" + m[2], content), encoding="utf-8")


def main(argv: Sequence[str] | None = None, *, model: Any = None) -> str:
    """Build the contrast set, run the paths, print the table (and write it with ``--write``); returns the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, help="only N originals of each file (a seeded sample)")
    parser.add_argument("--model", help="also a chat model's paths, as provider:name (init_chat_model)")
    parser.add_argument("--no-offline", action="store_true", help="only the model's paths")
    parser.add_argument("--write", action="store_true", help="write the table into docs/checking-meaning.md")
    args = parser.parse_args(argv)
    if not (EVAL / "attributionbench_dev.jsonl").exists():
        raise SystemExit(f"no development data in {EVAL} (set LANGCHAIN_REFS_EVAL)")
    examples = contrast_set(originals(args.limit))
    paths = {} if args.no_offline else offline_paths()
    if args.model or model is not None:
        if model is None:
            from langchain_refs.apps._models import load_model

            model = load_model(args.model)
        paths |= model_paths(model, args.model or type(model).__name__)
    command = "python bench/eval_contrast.py" + "".join(
        f" --{flag} {value}" for flag, value in (("limit", args.limit), ("model", args.model)) if value
    )
    text = table(measure(examples, paths), examples, command + (" --no-offline" if args.no_offline else ""))
    print(text)
    if args.write:
        write_section(DOC, text)
    return text


if __name__ == "__main__":
    main()
