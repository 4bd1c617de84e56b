"""Benchmarks of langchain-refs: one command prints the table (and can put it in the README).

    python bench/run.py                 # full run, prints a Markdown table
    python bench/run.py --write-readme  # ... and replaces the table in README.md
    python bench/run.py --quick         # fewer repetitions, for a smoke test

Every comparison is measured side by side in one run, interleaved (A B C A B C ...),
and reported as medians and ratios, because shared machines are noisy.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.readme import replace_section  # noqa: E402
from bench.workloads import (  # noqa: E402
    answer,
    bracket_storm,
    chunked,
    citation_dense,
    documents,
    message_stream,
    prose,
    str_stream,
)
from langchain_refs import CitationParser, MarkdownReferenceStyle, manage_references  # noqa: E402

try:
    import langchain_references
except ImportError:  # the bench extra is not installed
    langchain_references = None


def consume(runnable: Any, inputs: dict[str, Any]) -> float:
    gc.collect()
    start = time.perf_counter()
    for _ in runnable.stream(inputs):
        pass
    return time.perf_counter() - start


def interleaved(contenders: dict[str, Callable[[], float]], repeats: int) -> dict[str, float]:
    """Median seconds of each contender, run in turn A B C A B C ..."""
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, run in contenders.items():
            samples[name].append(run())
    return {name: statistics.median(times) for name, times in samples.items()}


def end_to_end(chunk_size: int, kind: str, length: int, repeats: int) -> dict[str, Any]:
    text = answer(length)
    chunks = chunked(text, chunk_size)
    inner = message_stream(chunks) if kind == "message" else str_stream(chunks)
    inputs = {"documents": documents()}
    ours = manage_references(inner, style=MarkdownReferenceStyle())
    contenders: dict[str, Callable[[], float]] = {
        "bare": lambda: consume(inner, inputs),
        "langchain-refs": lambda: consume(ours, inputs),
    }
    if langchain_references is not None:
        theirs = langchain_references.manage_references(inner)
        contenders["langchain-references 0.2.33"] = lambda: consume(theirs, inputs)
    medians = interleaved(contenders, repeats)
    bare = medians["bare"]
    return {
        "chunk_size": chunk_size,
        "kind": kind,
        "length": length,
        "chunks": len(chunks),
        "medians_s": medians,
        "ratios": {name: seconds / bare for name, seconds in medians.items()},
    }


def parser_throughput(repeats: int) -> list[dict[str, Any]]:
    size = 2_000_000
    rows = []
    for name, text in [
        ("prose", prose(size)),
        ("citation-dense", citation_dense(size)),
        ("bracket storm", bracket_storm(size)),
    ]:
        for chunk_size in (4, 4096):
            chunks = chunked(text, chunk_size)

            def run(chunks: list[str] = chunks) -> float:
                parser = CitationParser()
                gc.collect()
                start = time.perf_counter()
                for chunk in chunks:
                    parser.feed(chunk)
                parser.close()
                return time.perf_counter() - start

            seconds = statistics.median(run() for _ in range(repeats))
            rows.append({"text": name, "chunk_size": chunk_size, "mb_per_s": len(text.encode()) / seconds / 1e6})
    return rows


def holdback(chunk_size: int = 4) -> list[dict[str, Any]]:
    inputs = {"documents": documents()}
    middleware = manage_references(message_stream([]))
    rows = []
    for name, text in [
        ("answer", answer(200_000)),
        ("prose", prose(200_000)),
        ("bracket storm", bracket_storm(200_000)),
    ]:
        session = middleware.start_session(inputs)
        held_max = 0
        held_chunks = 0
        delays = []
        for chunk in chunked(text, chunk_size):
            start = time.perf_counter()
            session.feed(chunk)
            delays.append(time.perf_counter() - start)
            held = len(session.held)
            held_max = max(held_max, held)
            held_chunks += held > 0
        session.close()
        rows.append(
            {
                "text": name,
                "max_held_chars": held_max,
                "chunks_with_text_held": held_chunks,
                "median_delay_us": statistics.median(delays) * 1e6,
                "p99_delay_us": statistics.quantiles(delays, n=100)[98] * 1e6,
            }
        )
    return rows


def memory() -> list[dict[str, Any]]:
    inputs = {"documents": documents()}
    rows = []
    for text_name, block in [("prose", prose(1_000_000)), ("answer", answer(1_000_000))]:
        chunks = chunked(block, 1024)
        for keep in (False, True):
            if text_name == "prose" and keep:
                continue
            middleware = manage_references(message_stream([]), keep_citations=keep)
            for megabytes in (5, 50):
                session = middleware.start_session(inputs)
                gc.collect()
                tracemalloc.start()
                for _ in range(megabytes):
                    for chunk in chunks:
                        session.feed(chunk)
                _, peak = tracemalloc.get_traced_memory()
                tracemalloc.stop()
                rows.append(
                    {
                        "text": text_name,
                        "keep_citations": keep,
                        "stream_mb": megabytes,
                        "peak_kib": peak / 1024,
                        "citations_kept": len(session.references.citations),
                    }
                )
    return rows


def predictor_speed(repeats: int) -> dict[str, Any]:
    """ReferencePredictor with the lexical scorer: a 10-sentence answer, 5 documents of 2,000 characters."""
    from langchain_core.documents import Document

    from langchain_refs import ReferencePredictor

    text = prose(12_000)
    sentences = [s.strip().capitalize() + "." for s in chunked(text, 100)]
    documents = [Document(" ".join(sentences[i * 20 : (i + 1) * 20])[:2000]) for i in range(5)]
    answer = " ".join(sentences[100:110])
    from langchain_refs.grounding import _scoring

    predictor = ReferencePredictor()
    times = []
    for _ in range(repeats):
        # Cold each time: no analysis cached from the previous repetition.
        _scoring._analyse.cache_clear()
        _scoring._evidence.cache_clear()
        start = time.perf_counter()
        predictor.predict(answer, documents)
        times.append(time.perf_counter() - start)
    return {"median_ms": statistics.median(times) * 1000}


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def table(results: dict[str, Any]) -> str:
    lines = [
        f"Measured on {results['machine']} with `{results['command']}`.",
        "",
        "**End to end** (200,000-character answer, a citation every ~150 characters; median seconds of "
        f"{results['repeats']} interleaved runs; ratio to the bare stream):",
        "",
        "| chunks | bare stream | langchain-refs | langchain-references 0.2.33 |",
        "|---|---|---|---|",
    ]
    for row in results["end_to_end"]:
        cells = []
        for name in ("bare", "langchain-refs", "langchain-references 0.2.33"):
            if name in row["medians_s"]:
                cells.append(f"{row['medians_s'][name]:.3f} s ({row['ratios'][name]:.2f}x)")
            else:
                cells.append("not installed")
        label = f"{row['chunk_size']}-char {row['kind']}" + (
            "" if row["length"] == 200_000 else f", {row['length']:,} chars"
        )
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "**Parser alone** (no LangChain, one core; MB/s):",
        "",
        "| text | 4-char chunks | 4096-char chunks |",
        "|---|---|---|",
    ]
    by_text: dict[str, dict[int, float]] = {}
    for row in results["parser"]:
        by_text.setdefault(row["text"], {})[row["chunk_size"]] = row["mb_per_s"]
    for name, sizes in by_text.items():
        lines.append(f"| {name} | {sizes[4]:.1f} | {sizes[4096]:.1f} |")
    lines += [
        "",
        "**Holdback** (4-char chunks; bound 64):",
        "",
        "| text | most characters held | chunks with text held | median / p99 time in `feed` |",
        "|---|---|---|---|",
    ]
    for row in results["holdback"]:
        lines.append(
            f"| {row['text']} | {row['max_held_chars']} | {row['chunks_with_text_held']} | "
            f"{row['median_delay_us']:.1f} / {row['p99_delay_us']:.1f} µs |"
        )
    lines += [
        "",
        "**Memory** (peak traced while one session reads the stream in 1 KiB chunks):",
        "",
        "| text | keep_citations | 5 MB stream | 50 MB stream | citations kept (50 MB) |",
        "|---|---|---|---|---|",
    ]
    rows = results["memory"]
    for small, large in zip(rows[::2], rows[1::2], strict=True):
        lines.append(
            f"| {small['text']} | {small['keep_citations']} | {small['peak_kib']:.0f} KiB | "
            f"{large['peak_kib']:.0f} KiB | {large['citations_kept']:,} |"
        )
    lines += [
        "",
        f"**ReferencePredictor** (lexical scorer, a 10-sentence answer against 5 documents of 2,000 characters): "
        f"median {results['predictor']['median_ms']:.1f} ms.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and shorter streams")
    parser.add_argument("--write-readme", action="store_true", help="replace the table in README.md")
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    command = "python bench/run.py" + (" --quick" if args.quick else "")
    results: dict[str, Any] = {"machine": machine(), "command": command, "repeats": repeats}
    results["end_to_end"] = [
        end_to_end(4, "message", 200_000, repeats),
        end_to_end(1, "message", 50_000, repeats),
        end_to_end(32, "message", 200_000, repeats),
        end_to_end(4, "str", 200_000, repeats),
    ]
    results["parser"] = parser_throughput(repeats)
    results["holdback"] = holdback()
    results["memory"] = memory()
    results["predictor"] = predictor_speed(repeats)
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "latest.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    text = table(results)
    print(text)
    if args.write_readme:
        replace_section("bench", text)


if __name__ == "__main__":
    main()
