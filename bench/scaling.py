"""How the cost grows with the length of the input: 10k, 100k and 1M characters.

    python bench/scaling.py                 # prints the table
    python bench/scaling.py --write-readme  # ... and puts it in docs/cost.md (the scaling section)

Six inputs that were once quadratic: the parser on one long line inside an
unclosed code span, full of single backticks (fed whole, where each search for
the line end used to run to the end of the text; and in 64-character chunks), `split_sentences` on prose, range
markers (``[1](id=1-32)`` repeated) through a session that keeps no citations, and a tool result that
`ReferencesMiddleware` tags whose text is not its documents' to the letter (each one's lines joined
into one; the documents were aligned with it character by character), the same documents as JSON results,
each redacted (each document was looked for in each string), and the
meaning guards against
a source with no sentence end (each hedge's clause was searched for from the sentence's start). Linear
growth shows as a
ratio near 10 for each tenfold step. Times are CPU seconds of this process
(``time.process_time``), the best of a few timings; a size whose predecessor took
longer than the budget is skipped, since it would take at least ten times as long.
"""

from __future__ import annotations

import argparse
import gc
import logging
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_core.documents import Document  # noqa: E402

from bench.readme import replace_section  # noqa: E402
from bench.run import machine  # noqa: E402
from bench.workloads import (  # noqa: E402
    chunked,
    inline_code_line,
    message_stream,
    range_markers,
    sentences,
    zipf_prose,
)
from langchain_refs import manage_references  # noqa: E402
from langchain_refs.streaming import CitationParser  # noqa: E402
from langchain_refs.text import split_sentences  # noqa: E402

SIZES = (10_000, 100_000, 1_000_000)
CHUNK = 64


def parse(text: str, chunk_size: int) -> Callable[[], object]:
    chunks = chunked(text, chunk_size)

    def run() -> object:
        parser = CitationParser()
        for chunk in chunks:
            parser.feed(chunk)
        return parser.close()

    return run


def split(text: str) -> Callable[[], object]:
    return lambda: split_sentences(text)


def session(text: str) -> Callable[[], object]:
    chunks = chunked(text, CHUNK)
    documents = [Document(f"document {i}", metadata={"source": f"s{i}"}) for i in (1, 2, 3)]
    middleware = manage_references(message_stream([]), keep_citations=False)

    def run() -> object:
        live = middleware.start_session({"documents": documents})
        for chunk in chunks:
            live.feed(chunk)
        return live.close()

    return run


def tool_result(text: str) -> Callable[[], object]:
    """A model call of an agent whose search tool found ``text`` as documents of 2,000 characters and re-spaced them."""
    pieces = [text[start : start + 2000] for start in range(0, len(text), 2000)]
    documents = [Document(p.replace(". ", ".\n"), metadata={"source": f"s{i}"}) for i, p in enumerate(pieces)]
    content = "\n\n".join(f"Result {i + 1}: {d.page_content.replace(chr(10), ' ')}" for i, d in enumerate(documents))
    return _model_call(content, documents)


def json_tool_result(text: str) -> Callable[[], object]:
    """A model call of an agent whose search tool gave ``text`` as JSON results of 2,000 characters, each redacted."""
    import json

    pieces = [text[start : start + 2000] for start in range(0, len(text), 2000)]
    documents = [Document(p, metadata={"source": f"https://docs.example.org/{i}"}) for i, p in enumerate(pieces)]
    results = [
        {"title": f"Result {i + 1}", "url": d.metadata["source"], "content": d.page_content}
        for i, d in enumerate(documents)
    ]
    # Another middleware redacted a word of each (each document is then aligned, not found as is).
    for result in results:
        result["content"] = result["content"].replace(result["content"].split()[3], "[REDACTED]", 1)
    return _model_call(json.dumps({"results": results}), documents)


def _model_call(content: str, documents: list[Document]) -> Callable[[], object]:
    """`ReferencesMiddleware` preparing a model call after one search whose result is ``content`` (``documents``)."""
    from langchain.agents.middleware import ModelRequest
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from langchain_refs import ReferencesMiddleware

    call = {"name": "search", "args": {"query": "q"}, "id": "t", "type": "tool_call"}
    messages = [
        HumanMessage("q"),
        AIMessage("", tool_calls=[call]),
        ToolMessage(content, tool_call_id="t", artifact=documents),
    ]
    request = ModelRequest(
        model=GenericFakeChatModel(messages=iter([])), messages=messages, state={"messages": messages}
    )
    middleware = ReferencesMiddleware()

    def run() -> object:
        ReferencesMiddleware.clear_caches()  # cold: each run finds the documents anew
        return middleware.prepare(request)

    return run


def csv_export(size: int) -> str:
    """A source with no sentence end (single line ends end none): rows full of hedges, asides, "after", shares."""
    head = "drug,dose,effect,notes\nibuprofen,200 mg,reduces pain and fever,take with food\n"
    row = "naproxen, which may help, 220 mg, could cause upset after meals if taken with half of a dose\n"
    return (head + row * (size // len(row) + 1))[:size]


_AFTER_CLAIM = "Ibuprofen reduces pain and fever after one dose."
_PLAIN_CLAIM = "Ibuprofen reduces pain and fever in adults."


def guards(text: str) -> Callable[[], object]:
    """The meaning guards (all on) of two claims against ``text``, cold: theirs and the scorer's caches emptied."""
    from langchain_refs.grounding import MeaningGuards
    from langchain_refs.text import LexicalSupport

    checker = MeaningGuards()

    def run() -> object:
        MeaningGuards.clear_caches()
        LexicalSupport.clear_caches()
        # One claim with "after" (a comparison the antonym guard may find turned round), one the conditions bear on.
        return [checker.check(claim, text) for claim in (_AFTER_CLAIM, _PLAIN_CLAIM)]

    return run


WORKLOADS: list[tuple[str, Callable[[int], str], Callable[[str], Callable[[], object]]]] = [
    (
        "`CitationParser`, one long line in an unclosed code span, fed whole",
        inline_code_line,
        lambda text: parse(text, len(text)),
    ),
    (
        f"`CitationParser`, the same line in {CHUNK}-char chunks",
        inline_code_line,
        lambda text: parse(text, CHUNK),
    ),
    ("`split_sentences`, prose", sentences, split),
    (
        f"range markers `[1](id=1-32)`, session with `keep_citations=False`, 3 documents ({CHUNK}-char chunks)",
        range_markers,
        session,
    ),
    (
        "`ReferencesMiddleware`, one model call: a tool result of documents of 2,000 characters (prose over 20,000 "
        "words), each re-spaced",
        zipf_prose,
        tool_result,
    ),
    (
        "`ReferencesMiddleware`, one model call: a JSON tool result of documents of 2,000 characters (prose over "
        "20,000 words), each redacted",
        zipf_prose,
        json_tool_result,
    ),
    (
        "`MeaningGuards().check`, two claims against a source with no sentence end (a CSV export full of hedges, "
        'asides, "after" and shares), cold',
        csv_export,
        guards,
    ),
]


def cpu_seconds(run: Callable[[], object], repeats: int) -> float:
    """CPU seconds per run: the best of ``repeats`` timings, each of enough runs to last about 0.2 s."""
    gc.collect()
    start = time.process_time()
    run()
    first = time.process_time() - start
    if first > 2.0:  # slow enough to time once
        return first
    loops = max(1, min(1000, int(0.2 / max(first, 1e-6))))
    best = first
    for _ in range(repeats):
        gc.collect()
        start = time.process_time()
        for _ in range(loops):
            run()
        best = min(best, (time.process_time() - start) / loops)
    return best


def measure(repeats: int, budget: float) -> list[dict[str, Any]]:
    rows = []
    for name, make_text, make_run in WORKLOADS:
        seconds: list[float | None] = []
        for size in SIZES:
            previous = seconds[-1] if seconds else 0.0
            if previous is None or previous > budget:
                seconds.append(None)
                continue
            seconds.append(cpu_seconds(make_run(make_text(size)), repeats))
            print(f"{name}: {size:,} chars {seconds[-1]:.4f} s", file=sys.stderr)
        rows.append({"workload": name, "seconds": seconds})
    return rows


def cell(seconds: float | None, budget: float) -> str:
    return f"{seconds:.4f}" if seconds is not None else f"skipped (over {budget:g} s before)"


def ratio(small: float | None, large: float | None) -> str:
    if small is None or large is None:
        return "n/a"
    return f"{large / small:.1f}x" if small > 0 else "n/a"


def table(rows: list[dict[str, Any]], command: str, budget: float) -> str:
    lines = [
        "**Scaling** (CPU seconds per run, best of a few timings, for inputs of 10,000, 100,000 and "
        "1,000,000 characters, and the growth per tenfold step: linear is about 10x). "
        f"Measured on {machine()} with `{command}`.",
        "",
        "| input | 10k | 100k | 1M | 10k → 100k | 100k → 1M |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        s = row["seconds"]
        lines.append(
            f"| {row['workload']} | {cell(s[0], budget)} | {cell(s[1], budget)} | {cell(s[2], budget)} | "
            f"{ratio(s[0], s[1])} | {ratio(s[1], s[2])} |"
        )
    return "\n".join(lines)


def code_state() -> str:
    """The commit measured, and whether the working tree had changes on top of it."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "langchain_refs"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (no git)"
    return commit + (" with uncommitted changes in langchain_refs/" if dirty else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write-readme", action="store_true", help="replace the scaling section of docs/cost.md")
    parser.add_argument("--repeats", type=int, default=3, help="runs per size; the best counts (default 3)")
    parser.add_argument(
        "--budget", type=float, default=30.0, help="skip a size when the one before took longer (seconds, default 30)"
    )
    args = parser.parse_args()
    # Count what logging costs but print nothing: a quadratic input can log millions of lines.
    package_logger = logging.getLogger("langchain_refs")
    package_logger.addHandler(logging.NullHandler())
    package_logger.propagate = False
    print(f"code: {code_state()}", file=sys.stderr)
    rows = measure(args.repeats, args.budget)
    text = table(rows, "python bench/scaling.py", args.budget)
    print(text)
    if args.write_readme:
        replace_section("scaling", text)


if __name__ == "__main__":
    main()
