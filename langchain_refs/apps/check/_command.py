"""``langchain-refs check``: claim extraction and checking over JSON files.

Input: a JSON list, or JSON Lines, of objects in RefChecker's shape:
``response`` (and optionally ``question``) to extract from, ``reference`` (a
string or a list of strings) to check against, ``claims`` for ``check``.
The file is read as UTF-8 (a leading byte-order mark is fine).
Output: the same objects with ``claims`` added (``extract``), and ``Y`` (the
aggregated label) and ``ys`` (one label per claim) added (``check``), plus
``checks`` with each claim's score and evidence spans. A ``.jsonl`` output is
written as JSON Lines, anything else as a JSON list. The output is always
standard JSON: numbers JSON cannot hold (``NaN``, ``Infinity``, or too large
for a float, such as ``1e999``) are read as ``null``, and the command says
how many it changed.

An item or JSON Lines line that cannot be processed is named on stderr and
written as ``{"error": ..., "line": n}`` (``"item": n`` in a JSON list); the
others go on, and the exit status is 1. So is an item for which the chat
model (``--model``) failed or gave a reply that could not be read: its
result would hold a default (no claims, or Neutral) where the model said
nothing. It is not saved as done, and the progress is kept: running the
command again asks the model about those items alone.

Progress is saved after every item in ``OUTPUT.partial.jsonl``: after a crash
or Ctrl-C, run the same command again and the items already done are not
redone (an output to a stream, such as ``/dev/stdout`` or ``-``, keeps none). The
saved progress belongs to one input (its bytes) and one set of options
(mode, aggregator, model, claim format, threshold): a different input or
option is reported on stderr and the work starts over.

An input that cannot be read (missing, not UTF-8, not JSON nor JSON Lines,
nested too deeply, an integer too long for Python), an input with no items
(an empty file or an empty list) or an output that cannot be written stops
the command with one line on stderr and exit status 2; Ctrl-C stops it with
exit status 130, the progress kept. An item holding text that UTF-8 cannot
write (a lone surrogate such as ``"\\ud800"``) is an error record.

Example:
    >>> from langchain_refs.apps import build_parser
    >>> build_parser().parse_args(["check", "extract", "--input", "in.jsonl", "--output", "out.jsonl"]).engine
    'local'
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import secrets
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TextIO

from langchain_refs.apps._errors import CommandError, at_least_one, utf8_text
from langchain_refs.apps.check.items import (
    DEFAULT_CLAIM_FORMAT,
    DEFAULT_THRESHOLD,
    MODEL_FAILED,
    Checkers,
    OptionNotUsed,
    build_checkers,
    checked_item,
    dumps,
    empty_input_problem,
    is_json_list,
    model_failure,
    option_not_used,
    read_items,
    run_key,
)

__all__ = ["add_check_command", "run_check"]

_NON_FINITE = "NaN, Infinity or a number too large for a float"

# Bumped when the meaning of a saved result changes, so old progress is not reused.
_PROGRESS_FORMAT = 2


def _process(item: dict[str, Any], args: argparse.Namespace, checkers: Checkers) -> tuple[dict[str, Any], str | None]:
    """One item's result, or why it cannot be checked: `checked_item`, as the Ray engine and the page use it."""
    return checked_item(item, mode=args.mode, aggregator=args.aggregator, checkers=checkers)


def _progress(done: int, total: int, stream: TextIO) -> None:
    width = 30
    filled = width * done // max(total, 1)
    stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
    if done == total:
        stream.write("\n")
    stream.flush()


def _read_input(source: Path) -> tuple[bytes, str]:
    try:
        data = source.read_bytes()
    except FileNotFoundError:
        msg = f"{source}: no such file"
        raise CommandError(msg) from None
    except IsADirectoryError:
        msg = f"{source}: is a folder, not a file"
        raise CommandError(msg) from None
    except OSError as error:
        msg = f"{source}: cannot read it ({error.strerror or error})"
        raise CommandError(msg) from None
    try:
        return data, utf8_text(data)
    except ValueError as error:
        msg = f"{source}: not UTF-8 text ({error}); save it as UTF-8 and run again"
        raise CommandError(msg) from None


def _some_json_or_exit(source: Path, text: str) -> None:
    """Stop with one line when the input holds no items, or no line of it is JSON (it is some other file).

    A JSON Lines file some of whose lines are JSON goes on: its other lines
    are error records, as the module's docstring says.
    """
    empty = empty_input_problem(text)
    if empty is not None:
        msg = f"{source}: {empty}"
        raise CommandError(msg)
    if is_json_list(text):
        return  # a list that cannot be read is reported by read_items
    if sum(1 for line in text.splitlines() if line.strip()) > 1 and _is_json(text):
        # One JSON value over many lines (pretty-printed), some of them JSON alone (a string of a list).
        msg = f"{source}: one JSON value, not a list of items; put the items in a JSON list or write one per line"
        raise CommandError(msg)
    first_error: tuple[int, json.JSONDecodeError] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            json.loads(line)
        except json.JSONDecodeError as problem:
            first_error = first_error or (number, problem)
            continue
        except (ValueError, RecursionError):
            return  # JSON that Python cannot read: the line's error record says why
        return
    if first_error is not None and _is_json(text):
        msg = f"{source}: one JSON value, not a list of items; put the items in a JSON list or write one per line"
        raise CommandError(msg)
    if first_error is not None:
        number, error = first_error
        msg = (
            f"{source}: not JSON, nor JSON Lines (line {number}: {error.msg} at column {error.colno}); "
            "give a JSON list or JSON Lines of items"
        )
        raise CommandError(msg)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _check_output(target: Path) -> None:
    if target.is_dir():
        msg = f"{target}: is a folder; give a file name for --output"
        raise CommandError(msg)
    if not target.parent.is_dir():
        msg = f"{target}: the folder {target.parent} does not exist; create it or choose another --output"
        raise CommandError(msg)


def _run_key(data: bytes, args: argparse.Namespace) -> str:
    """What a saved result depends on: the input's bytes and every option that changes results."""
    return run_key([_PROGRESS_FORMAT, args.mode, args.aggregator, args.model, args.claim_format, args.threshold], data)


def _saved(partial: Path, key: str, total: int) -> dict[int, dict[str, Any]] | None:
    """The results saved by an earlier run of the same key; None when the file belongs to another run."""
    done: dict[int, dict[str, Any]] = {}
    try:
        lines = partial.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as error:
        msg = f"{partial}: cannot read the saved progress ({error.strerror or error})"
        raise CommandError(msg) from None
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a line cut short by the crash: that item is redone
        if not isinstance(record, dict):
            continue
        if record.get("run") != key:
            return None
        position, item = record.get("position"), record.get("item")
        if isinstance(position, int) and 0 <= position < total and isinstance(item, dict):
            done[position] = item
    return done


def _write_output(target: Path, results: list[dict[str, Any]]) -> None:
    """Write the results to ``target``, whole or not at all where that can be done.

    A regular file (new or old) is written through a temporary file beside it
    then moved into place, so an interruption never leaves half an output; a
    link is followed, the link kept. A stream (``/dev/stdout``, a pipe, a
    device: any path through ``/dev`` or ``/proc``, or to what is not a file)
    is written to as it is, appended to: it cannot be replaced, and a shell's
    ``>>`` keeps what came before.
    """
    text = "".join(dumps(r) + "\n" for r in results) if target.suffix == ".jsonl" else dumps(results, indent=2) + "\n"
    try:
        real = _regular_file(target)
        if real is None:
            with target.open("a", encoding="utf-8") as out:
                out.write(text)
            return
        # A name no other file has (O_EXCL): a file beside the output is never written over.
        temporary = real.with_name(f".{real.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with open(descriptor, "w", encoding="utf-8") as out:
                out.write(text)
            if real.exists():
                shutil.copymode(real, temporary)  # the output keeps the permissions it had
            os.replace(temporary, real)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
    except BrokenPipeError:
        raise  # the reader of a pipe left (e.g. `| head`): not an error (`main` says so)
    except OSError as error:
        msg = f"{target}: cannot write the output ({error.strerror or error})"
        raise CommandError(msg) from None


def _regular_file(target: Path) -> Path | None:
    """The file ``target`` names, its links followed (new or a regular file); None for a stream.

    A stream is what is reached through ``/dev`` or ``/proc`` (`_through_system_folders`), or what is not a file.
    """
    if _through_system_folders(target):
        return None
    real = Path(os.path.realpath(target))
    return None if real.exists() and not real.is_file() else real


def _through_system_folders(target: Path) -> bool:
    """Whether ``target`` or a link on its way stands in ``/dev`` or ``/proc``.

    ``/dev/stdout`` is a link to ``/proc/self/fd/1``, which names the shell's
    redirection: a pipe, or a file opened for ``>>``.

    Example:
        >>> _through_system_folders(Path("/dev/stdout")), _through_system_folders(Path("out.json"))
        (True, False)
    """
    path = Path(os.path.abspath(target))
    for _ in range(40):  # as many links as the system follows
        if path.parts[1:2] in (("dev",), ("proc",)):
            return True
        if not path.is_symlink():
            return False
        path = Path(os.path.abspath(path.parent / os.readlink(path)))
    return False


def run_check(args: argparse.Namespace) -> int:
    """Run ``extract``, ``check`` or ``extract-check`` over a file (or, with ``--engine ray``, over many).

    The local engine, step by step: refuse the Ray engine's options, read the
    input, build the extractor and checker, take up the progress an earlier
    run saved, check each item not done yet (saving each result as it comes),
    and write the output.
    """
    _options_that_apply(args)
    if args.engine == "ray":
        if _STANDARD_STREAMS & {args.input, args.output}:
            msg = (
                "--engine ray reads files and writes a folder of shards: "
                "'-' (standard input or output) is the local engine's"
            )
            raise CommandError(msg)
        from langchain_refs.apps.check.ray_engine import run_ray_check

        return run_ray_check(args)
    _refuse_ray_options(args)
    source, target = Path(args.input), Path(args.output)
    read = _read(source, target)
    checkers = build_checkers(model=args.model, claim_format=args.claim_format, threshold=args.threshold)
    # A stream (``/dev/stdout``) cannot be resumed: its progress is not kept (nor written into /dev).
    partial = None if _through_system_folders(target) else target.with_name(target.name + ".partial.jsonl")
    key = _run_key(read.data, args)
    done = _resume(partial, key, len(read.items))
    terminal = sys.stderr is not None and sys.stderr.isatty()  # None: stderr closed (`2>&-`)
    show = args.progress or (args.progress is None and terminal and len(read.items) > 20)
    try:
        _check_and_save(read, done, partial=partial, key=key, args=args, checkers=checkers, show=show)
    except KeyboardInterrupt:
        if show:
            sys.stderr.write("\n")  # off the progress bar's line
        if partial is None:
            print(f"interrupted — nothing is saved for an output to {target}: run again to start over", file=sys.stderr)
            return 130
        saved = sum(1 for result in done.values() if not _model_failed(result))
        saved_count = f"{saved} of {len(read.items)} items saved in {partial}"
        print(f"interrupted — run again to resume ({saved_count})", file=sys.stderr)
        return 130
    return _finish(read, done, target=target, partial=partial)


# An option given that the run would not use (`option_not_used`), in the command's words.
_NOT_USED: Final[dict[OptionNotUsed, str]] = {
    "claim format without a model": (
        "--claim-format: only with --model (the offline extractor reads sentences, in no format)"
    ),
    "claim format to check": "--claim-format: only when claims are extracted (extract, extract-check)",
    "threshold to extract": "--threshold: only when claims are checked (check, extract-check)",
    "threshold with a model": (
        "--threshold: only for the offline checker (with --model, the model gives each label itself)"
    ),
}


def _options_that_apply(args: argparse.Namespace) -> None:
    """Refuse an option this run would not use (it would be ignored without a word), then fill in the defaults.

    Also refuse, locally, an output that is the input file: writing the results would overwrite it
    (the Ray engine refuses any output that is a file: it writes a folder of shards).
    """
    unused = option_not_used(
        args.mode,
        with_model=args.model is not None,
        claim_format_given=args.claim_format is not None,
        threshold_given=args.threshold is not None,
    )
    if unused is not None:
        raise CommandError(_NOT_USED[unused])
    source, target = Path(args.input), Path(args.output)
    if args.engine != "ray" and target.suffix.lower() == ".parquet":
        msg = (
            f"--output {args.output}: the local engine writes JSON (a list, or JSON Lines for .jsonl); "
            "Parquet is --engine ray's (--output-format parquet)"
        )
        raise CommandError(msg)
    if args.engine != "ray" and source.is_file() and target.exists() and source.samefile(target):
        msg = f"--output is the input file ({args.input}): the results would overwrite it; write them elsewhere"
        raise CommandError(msg)
    args.claim_format = args.claim_format or DEFAULT_CLAIM_FORMAT
    args.threshold = DEFAULT_THRESHOLD if args.threshold is None else args.threshold


def _refuse_ray_options(args: argparse.Namespace) -> None:
    ray_only = [
        name
        for name, value in (
            ("--address", args.address),
            ("--batch-size", args.batch_size),
            ("--concurrency", args.concurrency),
            ("--input-format", args.input_format),
            ("--output-format", args.output_format),
        )
        if value is not None
    ]
    if ray_only:
        msg = f"{', '.join(ray_only)}: only with --engine ray"
        raise CommandError(msg)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Input:
    """The input file, read: its bytes, its items, the word for a position in it, the numbers read as null."""

    source: Path
    data: bytes
    items: list[tuple[int, dict[str, Any] | None, str | None]]
    where: str  # "line" (JSON Lines) or "item" (a JSON list)
    nulled: int


def _read(source: Path, target: Path) -> _Input:
    """The input's items; one line and exit 2 for an input that cannot be read or an output that cannot be written."""
    data, text = _read_input(source)
    _check_output(target)
    _some_json_or_exit(source, text)
    changed = [0]
    items = list(read_items(source, text, count=changed))
    where = "item" if is_json_list(text) else "line"
    return _Input(source=source, data=data, items=items, where=where, nulled=changed[0])


def _resume(partial: Path | None, key: str, total: int) -> dict[int, dict[str, Any]]:
    """The results an earlier run of the same input and options saved, said on stderr; none from another run."""
    saved = _saved(partial, key, total) if partial is not None and partial.exists() else {}
    if saved is None:
        print(f"{partial}: saved progress is from another input or other options; starting over", file=sys.stderr)
    elif saved:
        print(f"resuming: {len(saved)} items already done in {partial}", file=sys.stderr)
    return saved or {}


def _check_and_save(
    read: _Input,
    done: dict[int, dict[str, Any]],
    *,
    partial: Path | None,
    key: str,
    args: argparse.Namespace,
    checkers: Checkers,
    show: bool,
) -> None:
    """Check each item not in ``done``, adding its result there and saving it to ``partial`` as it comes (if any)."""
    try:
        progress = io.StringIO() if partial is None else partial.open("a" if done else "w", encoding="utf-8")
    except OSError as error:
        msg = f"{partial}: cannot save progress ({error.strerror or error})"
        raise CommandError(msg) from None
    with progress:
        if done and partial is not None and not partial.read_bytes().endswith(b"\n"):
            progress.write("\n")  # end a line cut short by the crash, so the next record stands alone
        for position, (number, item, unreadable) in enumerate(read.items):
            if position not in done:
                result, problem = _result(item, unreadable, args, checkers)
                if problem is not None:
                    off_the_bar = "\n" if show else ""
                    print(f"{off_the_bar}{read.source}: {read.where} {number}: {problem}; skipped", file=sys.stderr)
                    result = {"error": problem, read.where: number}
                if problem is None or not problem.startswith(MODEL_FAILED):
                    # A model that failed may answer next time: that item is not saved, so a resumed run redoes it.
                    progress.write(dumps({"run": key, "position": position, "item": result}) + "\n")
                    progress.flush()
                done[position] = result
            if show:
                _progress(position + 1, len(read.items), sys.stderr)


def _finish(read: _Input, done: dict[int, dict[str, Any]], *, target: Path, partial: Path | None) -> int:
    """Write the output, drop the saved progress, say what was done: 0, or 1 when an item was skipped."""
    _write_output(target, [done[i] for i in range(len(read.items))])
    # The items whose model failed were not saved: the progress is kept, so that running again asks about those alone.
    redo = sum(1 for result in done.values() if _model_failed(result))
    if partial is not None and not redo:
        partial.unlink()
    if read.nulled:
        print(f"{read.source}: {read.nulled} numbers JSON cannot hold ({_NON_FINITE}) written as null", file=sys.stderr)
    # An error record, this run's or a saved one, is exactly {"error", <where>}: a result always adds fields.
    failures = sum(1 for result in done.values() if set(result) == {"error", read.where})
    written = len(read.items) - failures
    print(f"{written} item{'' if written == 1 else 's'} written to {target}; {failures} skipped", file=sys.stderr)
    if redo and partial is not None:
        again = f"the chat model failed on {redo}: run again to ask about those alone (progress in {partial})"
        print(again, file=sys.stderr)
    return 0 if not failures else 1


def _model_failed(result: dict[str, Any]) -> bool:
    """Whether ``result`` is the error record of an item whose chat model failed: not saved, asked again next run."""
    return str(result.get("error", "")).startswith(MODEL_FAILED)


def _result(
    item: dict[str, Any] | None, error: str | None, args: argparse.Namespace, checkers: Checkers
) -> tuple[dict[str, Any], str | None]:
    """One item's result, or the reason it is skipped (a chat model's failed reply is one: it is redone next run)."""
    if error is not None or item is None:
        return {}, error or "not a JSON object"
    result, problem = _process(item, args, checkers)
    failed = None if problem is not None else model_failure(result)
    return ({}, failed) if failed is not None else (result, problem)


def _file_name(text: str) -> str:
    """A file name as given (an empty one would be read as the current folder)."""
    if not text.strip():
        msg = "is empty: give a file name"
        raise argparse.ArgumentTypeError(msg)
    return text


# What `-` stands for.
_STANDARD_STREAMS: Final = frozenset({"/dev/stdin", "/dev/stdout"})


def _input_name(text: str) -> str:
    """`_file_name`, ``-`` being standard input (``/dev/stdin``)."""
    return _stream_or_file(text, "/dev/stdin", "standard input")


def _output_name(text: str) -> str:
    """`_file_name`, ``-`` being standard output (``/dev/stdout``, a stream: no progress is kept)."""
    return _stream_or_file(text, "/dev/stdout", "standard output")


def _stream_or_file(text: str, device: str, what: str) -> str:
    if text != "-":
        return _file_name(text)
    if not os.path.exists(device):
        msg = f"'-' ({what}) has no {device} on this system: give a file name"
        raise argparse.ArgumentTypeError(msg)
    return device


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 1:  # also refuses nan
        msg = f"must be a number from 0 to 1, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def add_check_command(commands: Any) -> None:
    """Add the ``check`` sub-command to the ``langchain-refs`` parser."""
    check = commands.add_parser(
        "check",
        help="extract claims from responses and check them against references (RefChecker-style JSON)",
        # The module's docstring without its reStructuredText quoting: a terminal shows it as it is.
        description=__doc__.split("\n\nExample:")[0].replace("``", "") if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("mode", choices=["extract", "check", "extract-check"])
    check.add_argument(
        "--input", required=True, type=_input_name, help="a JSON list or JSON Lines file (- for standard input)"
    )
    check.add_argument(
        "--output",
        required=True,
        type=_output_name,
        help="where to write the results (.jsonl for JSON Lines; - for standard output)",
    )
    check.add_argument("--aggregator", choices=["strict", "soft", "major"], default="strict")
    check.add_argument("--model", help="provider:name of a chat model for extraction and checking (else offline)")
    check.add_argument(
        "--claim-format", choices=["triplet", "subsentence"], help=f"with --model ({DEFAULT_CLAIM_FORMAT})"
    )
    check.add_argument(
        "--threshold",
        type=_share,
        help=f"support from 0 to 1 needed for Entailment (offline checker; {DEFAULT_THRESHOLD})",
    )
    check.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None, help="show a progress bar")
    ray = check.add_argument_group(
        "Ray engine",
        "--engine ray runs the same check on Ray Data: --input may be a file, a folder or a glob (local or a URI), "
        "--output is a folder of shards; a rerun skips the shards already complete",
    )
    ray.add_argument("--engine", choices=["local", "ray"], default="local", help="where the work runs")
    ray.add_argument("--address", help="a Ray cluster to join (default: RAY_ADDRESS, else a local Ray)")
    ray.add_argument("--batch-size", type=at_least_one, help="items per Ray batch and per output shard (1000)")
    ray.add_argument("--concurrency", type=at_least_one, help="Ray workers (default: one per CPU)")
    ray.add_argument("--input-format", choices=["auto", "jsonl", "json", "parquet"], help="auto: from file names")
    ray.add_argument("--output-format", choices=["jsonl", "parquet"], help="format of the shards (jsonl)")
    check.set_defaults(run=run_check)
