"""Evaluate the grounding scorers on the paths users run, on the development splits in ../shared/eval/.

    python bench/eval_grounding.py                      # prints the tables
    python bench/eval_grounding.py --scorers lexical    # only the default scorer (a few seconds)
    python bench/eval_grounding.py --write-readme       # ... and puts them in docs/grounding.md
    python bench/eval_grounding.py --limit 200          # a quick look on a sample of each file
    python bench/eval_grounding.py --context-sweep      # how the predictor's context setting was chosen
    python bench/eval_grounding.py --no-guards          # the scores alone, the meaning guards off (the "before")
    python bench/eval_grounding.py --passages           # only: how often the passage behind a citation supports it

What is measured, for each scorer:

- AttributionBench (dev, 1,198 balanced examples), through `verify_citations`
  (what ``manage_references(verifier=...)`` runs): each claim is a citation of
  all its references, one document each. AUROC of attributable vs not
  attributable, and macro-F1 of ``supported`` (the scorer's default
  ``support_threshold`` reached and no meaning guard fired), in all and per
  source dataset. The calibration rule: the threshold (on a 0.01
  grid) that maximises macro-F1 on the whole split; its cross-validated
  macro-F1 is the threshold chosen on four fifths of the questions and
  applied to the fifth (five folds, grouped by question so that claims of
  one answer never straddle folds).
- AttributionBench through `ReferencePredictor` (the claim is the answer,
  the references the documents, every sentence of the claim scored; the
  claim's score is the mean of its sentences' best scores): AUROC.
- WiCE (dev, 349 claims) through `ReferencePredictor` (the claim is the
  answer, each evidence sentence a document): Hit@1 and Hit@3 of the
  evidence sentences ranked by their score, on the claims with supporting
  sentences; and supported vs not_supported AUROC of `verify_citations`
  (the claim cites the evidence as one document).
- pairs/s: the AttributionBench rows through `verify_citations` per second
  of CPU time, cold: a fresh scorer, every cache emptied, the model loaded
  before the clock starts (one scored pair per row; each pair's evidence is
  the claim's references, 771 characters at the median). Timed on a seeded
  sample of 300 rows (``--speed-rows N`` for another number).
- The predictor's cost on a 10-sentence answer against 5 documents of 2,000
  characters (the default scorer), cold and warm, CPU milliseconds.
- With the embeddings extra: how many AttributionBench rows have a text the
  model would truncate at 256 tokens, embedding the references whole as
  before and in the scorer's windows now.
- With ``--passages`` (only that, written to its own section): the passage
  behind a citation (`attach_passages`, what a session attaches), on WiCE
  with the cited page as one document: how often the sentence chosen is
  one of the claim's supporting sentences (Hit@1), for the passage scorer
  (`PASSAGE_SUPPORT`) and the settings it was chosen against.

The data is read from ../shared/eval and never copied into the project.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_core.cross_encoders import BaseCrossEncoder  # noqa: E402
from langchain_core.documents import Document  # noqa: E402

from bench.readme import replace_section  # noqa: E402
from bench.workloads import chunked, prose  # noqa: E402
from langchain_refs import Citation, LexicalScorer, Reference, ReferencePredictor, verify_citations  # noqa: E402
from langchain_refs.grounding import MeaningGuards  # noqa: E402
from langchain_refs.grounding._guards import DEFAULT_GUARDS  # noqa: E402
from langchain_refs.streaming import AnswerReferences, attach_passages  # noqa: E402
from langchain_refs.text import PASSAGE_SUPPORT, LexicalSupport, PairScorer  # noqa: E402

EVAL = Path(os.environ.get("LANGCHAIN_REFS_EVAL", ROOT.parent / "shared" / "eval"))
FOLDS = 5
GRID = [i / 100 for i in range(101)]


def auroc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """Area under the ROC curve (ties count one half), by ranks; NaN when a class is missing."""
    ranked = sorted(zip(scores, labels, strict=True))
    positives = sum(labels)
    negatives = len(labels) - positives
    if not positives or not negatives:
        return float("nan")
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


def macro_f1(predicted: Sequence[bool], labels: Sequence[bool]) -> float:
    """The mean of the F1 of each class (an empty class scores 0)."""
    f1s = []
    for cls in (True, False):
        tp = sum(p == cls and y == cls for p, y in zip(predicted, labels, strict=True))
        fp = sum(p == cls and y != cls for p, y in zip(predicted, labels, strict=True))
        fn = sum(p != cls and y == cls for p, y in zip(predicted, labels, strict=True))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(f1s) / 2


def best_threshold(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """The grid threshold maximising macro-F1 (the lowest of equals)."""
    return max(GRID, key=lambda t: (macro_f1([s >= t for s in scores], labels), -t))


def fold_of(groups: Sequence[str], folds: int = FOLDS, seed: int = 13) -> list[int]:
    """A fold per item, the same for every item of a group (groups shuffled with a fixed seed)."""
    unique = sorted(set(groups))
    random.Random(seed).shuffle(unique)
    fold = {group: i % folds for i, group in enumerate(unique)}
    return [fold[group] for group in groups]


def cross_validated_f1(scores: Sequence[float], labels: Sequence[bool], folds: Sequence[int]) -> float:
    """Macro-F1 of held-out predictions, each fold thresholded by the rule fitted on the other folds."""
    predicted = [False] * len(scores)
    for k in sorted(set(folds)):
        train = [i for i, f in enumerate(folds) if f != k]
        threshold = best_threshold([scores[i] for i in train], [labels[i] for i in train])
        for i, f in enumerate(folds):
            if f == k:
                predicted[i] = scores[i] >= threshold
    return macro_f1(predicted, labels)


def load(name: str, limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (EVAL / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    return load_sample(rows, limit) if limit else rows


def load_sample(rows: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """A seeded sample in file order: the files are sorted by source and label, so a prefix would be one class."""
    if count >= len(rows):
        return rows
    keep = sorted(random.Random(0).sample(range(len(rows)), count))
    return [rows[i] for i in keep]


def cite(claim: str, count: int) -> AnswerReferences:
    """An answer whose one citation is ``claim``, citing documents 1..count."""
    positions = tuple(range(1, count + 1))
    citation = Citation(
        number=1, document_positions=positions, start=0, end=0, text_start=0, text_end=0, text=claim, marker="[1]"
    )
    reference = Reference(number=1, source="eval", title=None, document_positions=positions)
    return AnswerReferences(references=(reference,), citations=(citation,))


def support(scorer: BaseCrossEncoder, claim: str, documents: list[Document]) -> float:
    """The support `verify_citations` gives ``claim`` citing all of ``documents``."""
    return verdict(scorer, claim, documents)[0]


def verdict(scorer: BaseCrossEncoder, claim: str, documents: list[Document]) -> tuple[float, bool]:
    """The support `verify_citations` gives ``claim`` citing all of ``documents``, and whether it is supported.

    Supported is the threshold reached and no meaning guard fired (a guarded
    citation keeps a lowered score, which may still reach the threshold).
    """
    # The scorer's own guards, as ``manage_references(verifier=scorer)`` applies them.
    guards = getattr(scorer, "guards", DEFAULT_GUARDS)
    checked = verify_citations(cite(claim, len(documents)), documents, scorer, guards=guards).citations[0]
    return (0.0 if checked.support is None else checked.support), bool(checked.supported)


def predicted_scores(
    scorer: BaseCrossEncoder, claim: str, documents: list[Document], **options: Any
) -> tuple[list[float], float]:
    """Through `ReferencePredictor`: each document's best score for the claim, and the claim's score."""
    predictor = ReferencePredictor(scorer=scorer, threshold=0.0, verifiability=None, **options)
    per_document = [0.0] * len(documents)
    per_sentence: dict[int, float] = {}
    for ref in predictor.predict(claim, documents):
        position = ref.document_position - 1
        per_document[position] = max(per_document[position], ref.score)
        per_sentence[ref.answer_start_idx] = max(per_sentence.get(ref.answer_start_idx, 0.0), ref.score)
    return per_document, statistics.fmean(per_sentence.values()) if per_sentence else 0.0


def evidence_page(sentences: list[str]) -> tuple[Document, list[int]]:
    """A WiCE row's evidence as one document, its sentences joined by blank lines, and where each starts in it.

    Joined by blank lines, no sentence runs into the next: a span or a
    passage found in the page lies inside one of them.
    """
    starts, offset = [], 0
    for sentence in sentences:
        starts.append(offset)
        offset += len(sentence) + 2
    return Document("\n\n".join(sentences)), starts


def page_ranking(scorer: BaseCrossEncoder, claim: str, sentences: list[str], **options: Any) -> list[int]:
    """Through `ReferencePredictor` with the page as one document: the evidence sentences, best ranked first.

    The sentences are joined by blank lines, so every span the predictor
    reads lies inside one of them. The predictor returns each claim
    sentence's spans in its own ranked order (the context ranks, the scores
    are the spans' own); a sentence ranks by its best place for any claim
    sentence, then by its position.
    """
    page, starts = evidence_page(sentences)
    predictor = ReferencePredictor(scorer=scorer, threshold=0.0, verifiability=None, **options)
    best = [len(starts)] * len(sentences)
    place: dict[int, int] = {}
    for ref in predictor.predict(claim, [page]):
        rank = place.get(ref.answer_start_idx, 0)
        place[ref.answer_start_idx] = rank + 1
        index = bisect.bisect_right(starts, ref.document_start_idx) - 1
        best[index] = min(best[index], rank)
    return sorted(range(len(sentences)), key=lambda i: (best[i], i))


def score_ranking(scores: Sequence[float]) -> list[int]:
    """Indices, best score first (ties: the earlier, as the predictor's own ranking does)."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def hits(order: Sequence[int], supporting: set[int]) -> tuple[bool, bool]:
    """Whether the first-ranked sentence, and any of the first three, is in a supporting set."""
    return order[0] in supporting, bool(set(order[:3]) & supporting)


def evaluate(
    name: str, build: Callable[[], BaseCrossEncoder], ab_rows: list[dict[str, Any]], wice_rows: list[dict[str, Any]]
) -> dict[str, Any]:
    """Every quality figure of one scorer."""
    scorer = build()
    threshold = float(getattr(scorer, "support_threshold", 0.5))
    labels = [row["attribution_label"] == "attributable" for row in ab_rows]
    verdicts = [verdict(scorer, row["claim"], [Document(t) for t in row["references"]]) for row in ab_rows]
    verified = [value for value, _ in verdicts]
    supported = [flag for _, flag in verdicts]
    print(f"{name}: verify_citations on {len(ab_rows)} rows done", file=sys.stderr)
    sources: dict[str, list[int]] = {}
    for i, row in enumerate(ab_rows):
        sources.setdefault(row["src_dataset"], []).append(i)
    per_source = {
        source: (
            auroc([verified[i] for i in idx], [labels[i] for i in idx]),
            macro_f1([supported[i] for i in idx], [labels[i] for i in idx]),
            len(idx),
        )
        for source, idx in sorted(sources.items())
    }
    predicted = [predicted_scores(scorer, row["claim"], [Document(t) for t in row["references"]])[1] for row in ab_rows]
    print(f"{name}: ReferencePredictor on AttributionBench done", file=sys.stderr)
    # Hit@1 and Hit@3: each evidence sentence a document; the page as one document (with and without context).
    found: dict[str, list[tuple[bool, bool]]] = {"documents": [], "page": [], "page, no context": []}
    wice_scores: list[float] = []
    wice_labels: list[bool] = []
    for row in wice_rows:
        evidence = row["evidence"]
        supporting = {i for group in row["supporting_sentences"] for i in group}
        if supporting and evidence:
            per_document, _ = predicted_scores(scorer, row["claim"], [Document(s) for s in evidence])
            found["documents"].append(hits(score_ranking(per_document), supporting))
            found["page"].append(hits(page_ranking(scorer, row["claim"], evidence), supporting))
            alone = page_ranking(scorer, row["claim"], evidence, context_weight=0.0)
            found["page, no context"].append(hits(alone, supporting))
        if row["label"] in ("supported", "not_supported"):
            wice_scores.append(support(scorer, row["claim"], [Document(" ".join(evidence))]))
            wice_labels.append(row["label"] == "supported")
    print(f"{name}: WiCE done", file=sys.stderr)
    chosen = best_threshold(verified, labels)
    return {
        "name": name,
        "threshold": threshold,
        "auroc": auroc(verified, labels),
        "f1": macro_f1(supported, labels),
        "supported_share": sum(supported) / len(supported),
        "best_threshold": chosen,
        "best_f1": macro_f1([v >= chosen for v in verified], labels),
        "cv_f1": cross_validated_f1(verified, labels, fold_of([row["question"] for row in ab_rows])),
        "predictor_auroc": auroc(predicted, labels),
        "per_source": per_source,
        "hits": {
            framing: (statistics.fmean(h for h, _ in pairs), statistics.fmean(h for _, h in pairs)) if pairs else None
            for framing, pairs in found.items()
        },
        "wice_auroc": auroc(wice_scores, wice_labels),
    }


def predictor_cost(repeats: int = 7) -> tuple[float, float]:
    """CPU milliseconds of the default `ReferencePredictor`: 10 answer sentences, 5 documents of 2,000 characters.

    The same workload as bench/run.py's predictor row. Cold: the lexical caches
    emptied before each run; warm: the same call again.
    """
    sentences = [s.strip().capitalize() + "." for s in chunked(prose(12_000), 100)]
    docs = [Document(" ".join(sentences[i * 20 : (i + 1) * 20])[:2000]) for i in range(5)]
    reply = " ".join(sentences[100:110])
    predictor = ReferencePredictor()
    cold, warm = [], []
    for _ in range(repeats):
        LexicalSupport.clear_caches()
        start = time.process_time()
        predictor.predict(reply, docs)
        cold.append(time.process_time() - start)
        start = time.process_time()
        predictor.predict(reply, docs)
        warm.append(time.process_time() - start)
    return statistics.median(cold) * 1000, statistics.median(warm) * 1000


def truncation(ab_rows: list[dict[str, Any]]) -> str | None:
    """How many rows hold a text MiniLM truncates: references embedded whole (before) and in windows (now)."""
    try:
        from tokenizers import Tokenizer

        from langchain_refs import EmbeddingScorer
    except ImportError:
        return None
    import importlib.resources

    path = importlib.resources.files("langchain_refs.grounding") / "models" / "all-MiniLM-L6-v2.tokenizer.json"
    try:
        from langchain_refs import MiniLMEmbeddings

        pieces = EmbeddingScorer(MiniLMEmbeddings()).pieces
    except ImportError:
        return None
    tokenizer = Tokenizer.from_file(str(path))
    # The file's own settings truncate: count every token.
    tokenizer.no_truncation()
    tokenizer.no_padding()

    def too_long(texts: list[str]) -> bool:
        return any(len(e.ids) > 256 for e in tokenizer.encode_batch(texts))

    before = sum(too_long(["\n\n".join(row["references"])]) for row in ab_rows)
    now = sum(too_long([p for t in row["references"] for p in pieces(t)]) for row in ab_rows)
    return (
        f"MiniLM reads at most 256 tokens: {before} of {len(ab_rows)} AttributionBench rows have references longer "
        f"than that (embedded whole, the rest was not read); in the scorer's windows, {now} rows hold a piece "
        "that long."
    )


def unguarded(build: Callable[[], BaseCrossEncoder]) -> Callable[[], BaseCrossEncoder]:
    """``build`` with the scorer's meaning guards off: what `verify_citations` gave before them."""

    def built() -> BaseCrossEncoder:
        scorer = build()
        scorer.guards = None  # type: ignore[attr-defined]
        return scorer

    return built


def builders(names: list[str]) -> dict[str, tuple[Callable[[], BaseCrossEncoder], Callable[[], BaseCrossEncoder]]]:
    """For each scorer: how to build the one the quality figures use, and a fresh one for the cold speed figure.

    The embedding and hybrid scorers measure their quality with one shared
    embedding scorer (embedding the dev texts takes minutes, and the
    figures do not depend on a cache); their speed with a new one each.
    """
    chosen: dict[str, tuple[Callable[[], BaseCrossEncoder], Callable[[], BaseCrossEncoder]]] = {}
    shared: list[BaseCrossEncoder] = []
    for name in names:
        if name == "lexical":
            chosen["lexical (default, no model)"] = (LexicalScorer, LexicalScorer)
            continue
        if name not in ("embedding", "hybrid"):
            raise SystemExit(f"unknown scorer {name!r}: lexical, embedding or hybrid")
        try:
            from langchain_refs import EmbeddingScorer, HybridScorer, MiniLMEmbeddings

            if not shared:
                shared.append(EmbeddingScorer(MiniLMEmbeddings(threads=1)))
        except ImportError as error:
            print(f"{name} scorer skipped: {error}", file=sys.stderr)
            continue

        def fresh() -> BaseCrossEncoder:
            return EmbeddingScorer(MiniLMEmbeddings(threads=1))

        if name == "embedding":
            chosen["embedding (MiniLM int8 ONNX, embeddings extra)"] = (lambda: shared[0], fresh)
        else:
            chosen["hybrid 50/50 lexical + embedding"] = (
                lambda: HybridScorer([(LexicalScorer(), 0.5), (shared[0], 0.5)]),
                lambda: HybridScorer([(LexicalScorer(), 0.5), (fresh(), 0.5)]),
            )
    return chosen


def speed(build: Callable[[], BaseCrossEncoder], ab_rows: list[dict[str, Any]], sample: int) -> float:
    """AttributionBench rows through `verify_citations` per CPU second, on a fresh scorer with empty caches.

    The model is loaded before the clock starts; every text is analysed or embedded anew.
    """
    rows = ab_rows if sample >= len(ab_rows) else load_sample(ab_rows, sample)
    LexicalSupport.clear_caches()
    MeaningGuards.clear_caches()
    scorer = build()
    start = time.process_time()
    for row in rows:
        support(scorer, row["claim"], [Document(t) for t in row["references"]])
    cpu = time.process_time() - start
    return len(rows) / cpu if cpu else float("inf")


def hit_cell(result: dict[str, Any], framing: str) -> str:
    found = result["hits"][framing]
    return "-" if found is None else f"{found[0]:.3f} / {found[1]:.3f}"


def tables(results: list[dict[str, Any]], command: str, ab_count: int, wice_count: int, load: float) -> list[str]:
    lines = [
        f"Measured on {platform.machine()}, {os.cpu_count()} cores (load average {load:.1f} when the speeds, "
        f"measured first, began: they are CPU time, which a busy machine inflates less than wall time), Python "
        f"{platform.python_version()} with `{command}` ({ab_count} AttributionBench and {wice_count} WiCE "
        "development examples), on the paths users run: `verify_citations` (what "
        "`manage_references(verifier=...)` does) and `ReferencePredictor`.",
        "",
        "| scorer | AttributionBench AUROC | macro-F1 at the default threshold | share called supported "
        "| macro-F1, threshold cross-validated | predictor AUROC | WiCE Hit@1 / Hit@3, each sentence a document "
        "| WiCE Hit@1 / Hit@3, the page one document | WiCE AUROC (supported vs not) | pairs/s, cold |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['name']} | {r['auroc']:.3f} | {r['f1']:.3f} (at {r['threshold']:.2f}) | {r['supported_share']:.0%} "
            f"| {r['cv_f1']:.3f} (best on all: {r['best_threshold']:.2f}) | {r['predictor_auroc']:.3f} "
            f"| {hit_cell(r, 'documents')} | {hit_cell(r, 'page')} | {r['wice_auroc']:.3f} | {r['pairs_per_s']:,.0f} |"
        )
    lines += [
        "",
        "WiCE with the page as one document, each span scored alone (`context_weight=0`) instead of with a "
        "sentence of context on either side: "
        + "; ".join(f"{r['name']} {hit_cell(r, 'page, no context')}" for r in results)
        + ".",
    ]
    sources = list(results[0]["per_source"]) if results else []
    lines += [
        "",
        "Per source dataset (AttributionBench, `verify_citations`; AUROC / macro-F1 at the default threshold):",
        "",
        "| scorer | " + " | ".join(f"{s} ({results[0]['per_source'][s][2]})" for s in sources) + " |",
        "|---|" + "---|" * len(sources),
    ]
    for r in results:
        cells = " | ".join(f"{r['per_source'][s][0]:.3f} / {r['per_source'][s][1]:.3f}" for s in sources)
        lines.append(f"| {r['name']} | {cells} |")
    return lines


def context_sweep(wice_rows: list[dict[str, Any]]) -> None:
    """How the predictor's context was chosen: WiCE Hit@1 (the page one document, lexical) on a grid.

    Each setting's Hit@1 on the whole split, then the setting chosen on four
    fifths of the claims and applied to the fifth (five folds by claim).
    """
    rows = [r for r in wice_rows if r["evidence"] and any(r["supporting_sentences"])]
    scorer = LexicalScorer()
    grid = [(1, 0.0)] + [(sentences, w / 10) for sentences in (1, 2) for w in range(1, 6)]
    found: dict[tuple[int, float], list[bool]] = {}
    for sentences, weight in grid:
        options = {"context_sentences": sentences, "context_weight": weight}
        found[sentences, weight] = [
            hits(
                page_ranking(scorer, r["claim"], r["evidence"], **options),
                {i for group in r["supporting_sentences"] for i in group},
            )[0]
            for r in rows
        ]
        share = statistics.fmean(found[sentences, weight])
        print(f"context_sentences={sentences} context_weight={weight:.1f}: Hit@1 {share:.3f}")
    folds = fold_of([r["claim"] for r in rows])
    held_out: list[bool] = []
    for k in range(FOLDS):

        def train_hit(setting: tuple[int, float], fold: int = k) -> float:
            return statistics.fmean(h for h, f in zip(found[setting], folds, strict=True) if f != fold)

        chosen = max(grid, key=lambda setting: (train_hit(setting), -setting[1], -setting[0]))
        held_out += [h for h, f in zip(found[chosen], folds, strict=True) if f == k]
        print(f"fold {k}: chose context_sentences={chosen[0]} context_weight={chosen[1]:.1f}")
    print(f"Hit@1 with the setting chosen in 5-fold cross-validation: {statistics.fmean(held_out):.3f}")


# The passage scorer and the settings it was chosen against (`--passages`).
PASSAGE_SCORERS: dict[str, PairScorer] = {
    "`PASSAGE_SUPPORT` (the default: `LexicalSupport(phrase_weight=0)`)": PASSAGE_SUPPORT,
    "`LexicalSupport()` (with the phrase bonus, 0.25)": LexicalSupport(),
    "`LexicalSupport(phrase_weight=0, rarity_weight=0)`": LexicalSupport(phrase_weight=0.0, rarity_weight=0.0),
}


def passage_sentence(scorer: PairScorer, claim: str, sentences: list[str]) -> int | None:
    """Which of ``sentences`` the passage `attach_passages` gives a citation of the page (them, joined) starts in.

    The sentences are joined by blank lines, so that a passage lies inside
    one of them. None: no passage.
    """
    page, starts = evidence_page(sentences)
    passage = attach_passages(cite(claim, 1), [page], scorer).citations[0].passage
    if passage is None:
        return None
    return bisect.bisect_right(starts, passage.document_start) - 1


def passages_table(wice_rows: list[dict[str, Any]], command: str) -> str:
    """The `--passages` table: Hit@1 of each passage scorer, and the claims it alone gets right against the default."""
    rows = [r for r in wice_rows if r["evidence"] and any(r["supporting_sentences"])]
    found: dict[str, list[bool]] = {}
    for name, scorer in PASSAGE_SCORERS.items():
        found[name] = [
            passage_sentence(scorer, r["claim"], r["evidence"]) in {i for g in r["supporting_sentences"] for i in g}
            for r in rows
        ]
    default = next(iter(found.values()))
    lines = [
        f"Measured with `{command}` on the {len(rows)} WiCE development claims that have supporting sentences "
        "(the cited page one document, its sentences joined by blank lines; the passage `attach_passages` gives a "
        "citation of it, as a session does). The default was chosen on these same claims: there is no held-out "
        "split of WiCE here.",
        "",
        "| passage scorer | Hit@1 | right where the default is wrong / wrong where it is right |",
        "|---|---|---|",
    ]
    for name, hit in found.items():
        gained = sum(h and not d for h, d in zip(hit, default, strict=True))
        lost = sum(d and not h for h, d in zip(hit, default, strict=True))
        lines.append(f"| {name} | {statistics.fmean(hit):.3f} | {gained} / {lost} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, help="only the first N examples of each file")
    parser.add_argument(
        "--scorers", default="lexical,embedding,hybrid", help="comma-separated: lexical, embedding, hybrid"
    )
    parser.add_argument(
        "--speed-rows", type=int, default=300, help="AttributionBench rows timed cold (a seeded sample)"
    )
    parser.add_argument("--write-readme", action="store_true")
    parser.add_argument("--no-guards", action="store_true", help="the meaning guards off (figures only, not written)")
    parser.add_argument(
        "--context-sweep", action="store_true", help="only: how the predictor's context setting was chosen (WiCE)"
    )
    parser.add_argument(
        "--passages", action="store_true", help="only: the passage behind a citation against WiCE's supporting ones"
    )
    args = parser.parse_args()
    if args.context_sweep:
        context_sweep(load("wice_claim_dev.jsonl", args.limit))
        return
    if args.passages:
        limit = f" --limit {args.limit}" if args.limit else ""
        command = f"python bench/eval_grounding.py --passages{limit}"
        table = passages_table(load("wice_claim_dev.jsonl", args.limit), command)
        print(table)
        if args.write_readme:
            replace_section("passages", table)
        return
    load_average = os.getloadavg()[0]
    ab_rows = load("attributionbench_dev.jsonl", args.limit)
    wice_rows = load("wice_claim_dev.jsonl", args.limit)
    chosen = builders(args.scorers.split(","))
    if args.no_guards:
        if args.write_readme:
            raise SystemExit("--no-guards figures are for comparison: they are not written")
        chosen = {f"{name}, guards off": (unguarded(b), unguarded(f)) for name, (b, f) in chosen.items()}
    # Every speed first, while the machine is as it was when the load average was read; then the quality.
    speeds = {name: speed(fresh, ab_rows, args.speed_rows) for name, (_, fresh) in chosen.items()}
    cold, warm = predictor_cost()
    print("pairs/s cold: " + ", ".join(f"{name} {value:,.0f}" for name, value in speeds.items()), file=sys.stderr)
    results = []
    for name, (build, _) in chosen.items():
        results.append(evaluate(name, build, ab_rows, wice_rows) | {"pairs_per_s": speeds[name]})
    command = "python bench/eval_grounding.py" + "".join(
        f" --{flag} {value}"
        for flag, value in (("limit", args.limit), ("scorers", args.scorers), ("speed-rows", args.speed_rows))
        if value and value != parser.get_default(flag)
    )
    lines = tables(results, command, len(ab_rows), len(wice_rows), load_average)
    lines += [
        "",
        f"`ReferencePredictor()` (lexical scorer), 10 answer sentences against 5 documents of 2,000 characters: "
        f"{cold:.0f} ms CPU cold (caches emptied), {warm:.0f} ms warm.",
    ]
    found = truncation(ab_rows)
    if found:
        lines += ["", found]
    table = "\n".join(lines)
    print(table)
    if args.write_readme:
        replace_section("eval", table)


if __name__ == "__main__":
    main()
