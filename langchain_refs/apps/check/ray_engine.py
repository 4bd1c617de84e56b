"""``langchain-refs check --engine ray``: the check command on Ray Data, from one machine to a cluster.

The same computation as the local engine — `check_item` on every item,
with the extractor and checker of `build_checkers` — run in Ray Data's
``map_batches`` by a pool of workers that each build their extractor,
checker and scorer (or chat-model client) once, in ``__init__``.

Inputs: JSON Lines, JSON lists or Parquet; a file, a folder (every
``.jsonl``/``.ndjson``/``.json``/``.parquet`` file under it, names starting
with ``.`` or ``_`` left out) or a glob, local or any URI pyarrow opens
(``s3://``, ``gs://``, ``hdfs://``...). Files are taken in the order of
their paths, each read by one task and cut into shards of ``batch_size``
items; one Ray batch is one shard.

Output: a folder. For each shard ``part-FFFFFF-SSSSSS.jsonl`` (or
``.parquet``), F the input file's position and S the shard's: the results
in input order, with exactly the fields the local engine writes (the input
item's own fields, then ``claims``, ``ys``, ``Y``, ``checks``). Sorting the
names puts every result back in input order. In Parquet, ``ys``, ``Y``
and ``checks`` have fixed types (``Y`` is a map with ``--aggregator soft``,
read back as key/value pairs); any field whose values do not share one
Arrow type within a shard (say ``reference`` a string on one row and a list
on another) is stored in that shard as its JSON text.

Bad rows never stop the job: each is written to
``_errors/errors-FFFFFF-SSSSSS.jsonl`` as ``{"file", "line"|"item"|"row",
"error"}`` (the reason in one line) and counted in the summary. Names
starting with ``_`` are skipped by pyarrow, pandas and Ray when they read
the folder, so the folder reads as the results alone.

Resuming: a shard is complete when its marker ``_done/FFFFFF-SSSSSS.json``
exists; each shard is written to a temporary name, renamed, and its marker
written last, so a crash leaves no marker and the shard is redone. A rerun
with the same input and options skips every complete shard (and every
input file whose shards are all complete); ``_run.json`` records the
input files (path, size, modification time) and the options, and a rerun
with anything different says so, removes this engine's files from the
folder and starts over.

Example:
    >>> from langchain_refs.apps.check.ray_engine import RayCheckSummary
    >>> RayCheckSummary(rows=3, written=2, errors=1, shards=1, skipped_shards=0, output="out").exit_status
    1
"""

from __future__ import annotations

import argparse
import fnmatch
import glob
import io
import json
import logging
import math
import os
import socket
import sys
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from langchain_refs.apps._errors import CommandError, first_line, utf8_text
from langchain_refs.apps.check.items import (
    DEFAULT_CLAIM_FORMAT,
    DEFAULT_THRESHOLD,
    MODES,
    Mode,
    build_checkers,
    checked_item,
    dumps,
    empty_input_problem,
    is_json_list,
    json_data,
    model_failure,
    read_items,
    run_key,
)
from langchain_refs.grounding import is_failed_call

__all__ = ["ChatModelFailedError", "RayCheckSummary", "check_with_ray", "run_ray_check"]

INPUT_FORMATS = ("auto", "jsonl", "json", "parquet")
OUTPUT_FORMATS = ("jsonl", "parquet")
_SUFFIXES = {".jsonl": "json", ".ndjson": "json", ".json": "json", ".parquet": "parquet", ".pq": "parquet"}
# Bumped when the meaning of a written shard changes, so old shards are not reused.
_FORMAT = 1
_INSTALL = '--engine ray needs Ray Data: in a clone of langchain-refs run pip install -e ".[ray]"'


class ChatModelFailedError(RuntimeError):
    """A call of a shard's chat model failed (a network error, a quota): the shard is redone by the next run.

    Example:
        >>> str(ChatModelFailedError("the chat model failed or its reply could not be read (1 reply; ...)"))[:22]
        'the chat model failed '
    """


@dataclass(frozen=True, slots=True, kw_only=True)
class RayCheckSummary:
    """What a Ray run did: counted over every shard, those done by earlier runs included.

    ``rows``: items read (a file that cannot be read counts as one);
    ``written``: results written; ``errors``: items in the errors output;
    ``shards``: complete shards; ``skipped_shards``: those found complete from
    an earlier run; ``failed_shards``: shards whose work raised an unexpected
    error (not marked complete: run again to redo them), ``first_failure``
    the first such error; ``nulled_numbers``: numbers JSON cannot hold
    (NaN, Infinity) read as null.

    Example:
        >>> summary = RayCheckSummary(rows=2, written=2, errors=0, shards=1, skipped_shards=1, output="out")
        >>> summary.exit_status, json.loads(summary.to_json())["skipped_shards"]
        (0, 1)
    """

    rows: int
    written: int
    errors: int
    shards: int
    skipped_shards: int
    output: str
    failed_shards: int = 0
    first_failure: str | None = None
    nulled_numbers: int = 0

    @property
    def exit_status(self) -> int:
        """0 when every item was written, 1 when some were not (as the local engine).

        Example:
            >>> RayCheckSummary(rows=1, written=1, errors=0, shards=1, skipped_shards=0, output="o").exit_status
            0
        """
        return 0 if not self.errors and not self.failed_shards else 1

    def to_json(self) -> str:
        """The summary as one line of JSON, as the command prints it on stderr.

        Example:
            >>> RayCheckSummary(rows=1, written=1, errors=0, shards=1, skipped_shards=0, output="o").to_json()[:22]
            '{"engine": "ray", "row'
        """
        return dumps({"engine": "ray", **asdict(self)})


# -- files ---------------------------------------------------------------------


def _pyarrow_fs() -> Any:
    try:
        import pyarrow.fs as pafs  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise CommandError(_INSTALL) from None
    return pafs


def _filesystem(location: str) -> tuple[Any, str]:
    """The pyarrow file system and path of a local path or a URI."""
    pafs = _pyarrow_fs()
    if "://" in location:
        try:
            fs, path = pafs.FileSystem.from_uri(location)
        except Exception as error:  # pyarrow raises several kinds for an unknown scheme or bucket
            msg = f"{location}: cannot open this location ({first_line(error)})"
            raise CommandError(msg) from None
        return fs, str(path)
    return pafs.LocalFileSystem(), str(Path(location).expanduser().absolute())


def _location(template: str, path: str) -> str:
    """``path`` of the file system of ``template`` as a location a worker can open again."""
    return f"{template.split('://', 1)[0]}://{path}" if "://" in template else path


def _kind(path: str, input_format: str) -> str | None:
    if input_format != "auto":
        return "json" if input_format in ("json", "jsonl") else "parquet"
    return _SUFFIXES.get(Path(path).suffix.lower())


def _hidden(path: str, base: str) -> bool:
    relative = path[len(base) :].lstrip("/")
    return any(part.startswith((".", "_")) for part in relative.split("/"))


def input_files(inputs: str | Sequence[str], input_format: str = "auto") -> list[tuple[str, str, int, int]]:
    """``(location, kind, size, mtime_ns)`` of every input file, in path order; kind is json or parquet.

    Raises:
        CommandError: a path that does not exist, a glob or a folder with no
            input file, a file whose format cannot be told from its name.

    Example:
        >>> input_files("no/such/file.jsonl")
        Traceback (most recent call last):
        ...
        langchain_refs.apps.CommandError: no/such/file.jsonl: no such file or folder
    """
    pafs = _pyarrow_fs()
    found: list[tuple[str, str, int, int]] = []
    for given in [inputs] if isinstance(inputs, str) else list(inputs):
        fs, path = _filesystem(given)
        if any(c in given for c in "*?["):
            if "://" in given:
                base = path[: min(path.find(c) for c in "*?[" if c in path)].rsplit("/", 1)[0]
                infos = fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
                matched = [i for i in infos if i.type == pafs.FileType.File and fnmatch.fnmatch(i.path, path)]
            else:
                names = glob.glob(str(Path(given).expanduser()), recursive=True)
                matched = [i for i in fs.get_file_info([str(Path(n).absolute()) for n in names]) if i.is_file]
            if not matched:
                msg = f"{given}: matches no file"
                raise CommandError(msg)
            chosen = matched
        else:
            info = fs.get_file_info(path)
            if info.type == pafs.FileType.NotFound:
                msg = f"{given}: no such file or folder"
                raise CommandError(msg)
            if info.type == pafs.FileType.Directory:
                infos = fs.get_file_info(pafs.FileSelector(path, recursive=True))
                chosen = [
                    i
                    for i in infos
                    if i.is_file and not _hidden(i.path, path) and (input_format != "auto" or _kind(i.path, "auto"))
                ]
                if not chosen:
                    msg = f"{given}: no .jsonl, .ndjson, .json or .parquet file in this folder"
                    raise CommandError(msg)
            else:
                chosen = [info]
        for info in sorted(chosen, key=lambda i: i.path):
            kind = _kind(info.path, input_format)
            if kind is None:
                msg = f"{_location(given, info.path)}: cannot tell its format from its name; give --input-format"
                raise CommandError(msg)
            mtime = info.mtime_ns if info.mtime_ns is not None else -1
            found.append((_location(given, info.path), kind, info.size or 0, mtime))
    return found


def _read_file(location: str, kind: str) -> tuple[list[tuple[int, str, str]], int, str]:
    """Each item of one file as ``(number, JSON text or "", reason or "")``, the nulled numbers, a position word.

    The word is the local engine's for a position in the file: ``line``,
    ``item``, or ``row`` of Parquet.
    """
    fs, path = _filesystem(location)
    count = [0]
    if kind == "parquet":
        import pyarrow.parquet as pq  # type: ignore[import-untyped,unused-ignore]

        rows: list[tuple[int, str, str]] = []
        with fs.open_input_file(path) as handle:
            for batch in pq.ParquetFile(handle).iter_batches():
                for row in batch.to_pylist():
                    rows.append((len(rows) + 1, dumps(json_data(row, count)), ""))
        return rows, count[0], "row"
    with fs.open_input_stream(path) as handle:
        data = handle.read()
    try:
        text = utf8_text(data)
    except ValueError as error:
        msg = f"not UTF-8 text ({error})"
        raise ValueError(msg) from None
    try:
        # ASCII JSON between the reader and the workers: an item holding a lone surrogate
        # ("\\ud800") travels as its escape, and fails alone in its worker, not its whole file in Arrow.
        items = [
            (number, "" if item is None else json.dumps(item, allow_nan=False), problem or "")
            for number, item, problem in read_items(location, text, count=count)
        ]
    except CommandError as error:  # a JSON list that cannot be read: the whole file is one bad row
        raise ValueError(str(error).removeprefix(f"{location}: ")) from None
    return items, count[0], "item" if is_json_list(text) else "line"


def _split_file(
    row: dict[str, Any], *, files: list[tuple[str, str]], batch_size: int, done: dict[int, list[int]]
) -> Iterator[dict[str, Any]]:
    """Ray ``flat_map``: one input file -> one row per shard not complete yet."""
    index = int(row["file"])
    location, kind = files[index]
    try:
        items, nulled, where = _read_file(location, kind)
    except Exception as error:  # a file that cannot be read is one bad row; the others go on
        items, nulled, where = [(0, "", f"cannot read this file: {first_line(error)}")], 0, "line"
    shards = math.ceil(len(items) / batch_size)
    skip = set(done.get(index, ()))
    for shard in range(shards):
        if shard in skip:
            continue
        part = items[shard * batch_size : (shard + 1) * batch_size]
        yield {
            "file": index,
            "shard": shard,
            "shards": shards,
            "where": where,
            "numbers": [n for n, _, _ in part],
            "items": [text for _, text, _ in part],
            "problems": [problem for _, _, problem in part],
            # Counted once per file, on its first shard.
            "nulled": nulled if shard == 0 else 0,
        }


# -- the output folder -------------------------------------------------------


def _name(file: int, shard: int) -> str:
    return f"{file:06d}-{shard:06d}"


def _write(fs: Any, path: str, data: bytes) -> None:
    """Write ``data`` to a temporary name beside ``path``, then rename it: readers never see half a file."""
    folder, _, name = path.rpartition("/")
    temporary = f"{folder}/_tmp.{name}"
    with fs.open_output_stream(temporary) as out:
        out.write(data)
    fs.move(temporary, path)


def _arrow_types(mode: str, aggregator: str, claims_are_triplets: bool) -> dict[str, Any]:
    import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]

    span = pa.struct([("reference", pa.int64()), ("start", pa.int64()), ("end", pa.int64()), ("score", pa.float64())])
    guard = pa.struct(
        [("name", pa.string()), ("reason", pa.string()), ("claim_value", pa.string()), ("source_value", pa.string())]
    )
    check = pa.struct([("label", pa.string()), ("score", pa.float64()), ("evidence", pa.list_(span)), ("guard", guard)])
    # The item's own fields (`_parquet`): the same types in every shard.
    types: dict[str, Any] = {"response": pa.string(), "question": pa.string(), "reference": pa.list_(pa.string())}
    if mode != "check":
        claim = pa.list_(pa.string()) if claims_are_triplets else pa.string()
        types["claims"] = pa.list_(claim)
    if mode != "extract":
        types["ys"] = pa.list_(pa.string())
        types["Y"] = pa.map_(pa.string(), pa.float64()) if aggregator == "soft" else pa.string()
        types["checks"] = pa.list_(check)
    return types


def _parquet(rows: list[dict[str, Any]], types: dict[str, Any]) -> bytes:
    """One shard's results as Parquet, in one schema across shards for the item's own and the computed fields.

    ``reference`` is always a list of texts (a single text is a list of one) and ``question``
    always a column (null where an item has none), so that the folder reads as one table; the
    computed fields have fixed types; any other field is typed by its shard, as JSON text when
    its values are of mixed types.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = list(dict.fromkeys(["response", "question", "reference", *(name for row in rows for name in row)]))
    columns = {}
    for name in names:
        values = [row.get(name) for row in rows]
        if name == "reference":
            values = [[value] if isinstance(value, str) else value for value in values]
        try:
            columns[name] = pa.array(values, type=types.get(name))
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            columns[name] = pa.array([None if v is None else dumps(v) for v in values], type=pa.string())
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue()


class _ShardChecker:
    """Ray ``map_batches`` worker: builds the extractor and checker once, then checks and writes whole shards."""

    def __init__(self, *, options: dict[str, Any], files: list[tuple[str, str]], output: str) -> None:
        # Once per worker: the scorer's tables, or the chat model's client, are not rebuilt per row.
        self.checkers = build_checkers(
            model=options["model"], claim_format=options["claim_format"], threshold=options["threshold"]
        )
        self.mode: Mode = options["mode"]
        self.aggregator: str = options["aggregator"]
        self.output_format: str = options["output_format"]
        self.types = _arrow_types(
            self.mode, self.aggregator, options["model"] is not None and options["claim_format"] == "triplet"
        )
        self.files = files
        self.output = output
        self.fs, self.root = _filesystem(output)

    def __call__(self, batch: Any) -> dict[str, list[Any]]:
        summary: dict[str, list[Any]] = {
            key: [] for key in ("file", "shard", "rows", "written", "errors", "nulled", "failure")
        }
        for shard in batch.to_pylist():
            try:
                written, errors = self._shard(shard)
                failure = ""
            except Exception as error:  # e.g. a model's network error: the shard is redone by the next run
                written, errors, failure = 0, 0, f"{type(error).__name__}: {first_line(error)}"
            summary["file"].append(shard["file"])
            summary["shard"].append(shard["shard"])
            summary["rows"].append(len(shard["numbers"]))
            summary["written"].append(written)
            summary["errors"].append(errors)
            summary["nulled"].append(shard["nulled"])
            summary["failure"].append(failure)
        return summary

    def _shard(self, shard: dict[str, Any]) -> tuple[int, int]:
        location = self.files[shard["file"]][0]
        results: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for number, text, problem in zip(shard["numbers"], shard["items"], shard["problems"], strict=True):
            if not problem:
                result, problem = checked_item(
                    json.loads(text), mode=self.mode, aggregator=self.aggregator, checkers=self.checkers
                )
                failed = None if problem else model_failure(result)
                if failed is not None and any(map(is_failed_call, result["warnings"])):
                    # Not a bad row: the model's call may go through next time. The shard fails; the next run redoes it.
                    raise ChatModelFailedError(failed)
                problem = problem or failed  # a reply that could not be read: an error row, as a bad row is
            if problem:
                record: dict[str, Any] = {"file": location}
                if number:  # 0: the whole file could not be read
                    record[shard["where"]] = number
                record["error"] = problem
                errors.append(record)
            else:
                results.append(result)
        name = _name(shard["file"], shard["shard"])
        if results:
            if self.output_format == "parquet":
                data = _parquet(results, self.types)
            else:
                data = "".join(dumps(r) + "\n" for r in results).encode()
            _write(self.fs, f"{self.root}/part-{name}.{self.output_format}", data)
        if errors:
            lines = "".join(dumps(e) + "\n" for e in errors)
            _write(self.fs, f"{self.root}/_errors/errors-{name}.jsonl", lines.encode())
        marker = {
            "file": location,
            "shard": shard["shard"],
            "shards": shard["shards"],
            "rows": len(shard["numbers"]),
            "written": len(results),
            "errors": len(errors),
            "nulled": shard["nulled"],
        }
        # Written last: its presence says the shard's files are in place.
        _write(self.fs, f"{self.root}/_done/{name}.json", dumps(marker).encode())
        return len(results), len(errors)


def _read_json(fs: Any, path: str) -> Any:
    try:
        with fs.open_input_stream(path) as handle:
            return json.loads(handle.read())
    except (OSError, ValueError):
        return None


def _prepare_output(output: str, key: str, options: dict[str, Any]) -> tuple[Any, str, dict[int, dict[int, Any]]]:
    """Make the output folder ready; the markers of the shards already complete, by file and shard."""
    pafs = _pyarrow_fs()
    fs, root = _filesystem(output)
    info = fs.get_file_info(root)
    if info.type == pafs.FileType.File:
        msg = f"{output}: is a file; --output of --engine ray is a folder"
        raise CommandError(msg)
    try:
        fs.create_dir(root, recursive=True)
    except OSError as error:
        msg = f"{output}: cannot create the output folder ({first_line(error)})"
        raise CommandError(msg) from None
    run = _read_json(fs, f"{root}/_run.json")
    done: dict[int, dict[int, Any]] = {}
    if isinstance(run, dict) and run.get("key") == key:
        for marker_info in fs.get_file_info(pafs.FileSelector(f"{root}/_done", allow_not_found=True)):
            stem = marker_info.base_name.removesuffix(".json")
            file, _, shard = stem.partition("-")
            marker = _read_json(fs, marker_info.path) if marker_info.base_name.endswith(".json") else None
            if isinstance(marker, dict) and file.isdigit() and shard.isdigit():
                done.setdefault(int(file), {})[int(shard)] = marker
        return fs, root, done
    if fs.get_file_info(f"{root}/_run.json").type == pafs.FileType.File:  # ours, of another run (or unreadable)
        print(f"{output}: holds results of another input or other options; starting over", file=sys.stderr)
        _clear(fs, root)
    elif any(_ours(info.base_name) for info in fs.get_file_info(pafs.FileSelector(root))):
        # No _run.json: these files are not this engine's, and are never removed.
        msg = f"{output}: holds part-* or _done files this command did not write; choose an empty or new folder"
        raise CommandError(msg)
    for folder in ("_done", "_errors"):
        fs.create_dir(f"{root}/{folder}", recursive=True)
    _write(fs, f"{root}/_run.json", dumps({"key": key, "options": options}, indent=2).encode())
    return fs, root, done


def _ours(name: str) -> bool:
    return name.startswith(("part-", "_tmp.")) or name in ("_run.json", "_done", "_errors")


def _clear(fs: Any, root: str) -> None:
    """Remove this engine's files (and only those) from the output folder."""
    pafs = _pyarrow_fs()
    for folder in ("_done", "_errors"):
        if fs.get_file_info(f"{root}/{folder}").type == pafs.FileType.Directory:
            fs.delete_dir(f"{root}/{folder}")
    for info in fs.get_file_info(pafs.FileSelector(root)):
        if info.is_file and _ours(info.base_name):
            fs.delete_file(info.path)


# -- Ray -------------------------------------------------------------------------


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise CommandError(_INSTALL) from None
    return ray


def _start_ray(address: str | None, num_cpus: int | None) -> tuple[Any, bool]:
    """Join the cluster at ``address`` (or ``RAY_ADDRESS``), else start a light local Ray.

    A process already in a Ray session (``ray.init`` called before) keeps it.
    Returns Ray and whether this call started the session (then the caller
    ends it).
    """
    ray = _ray()
    if address:  # asked for by name: checked even when this process is already in a Ray session
        _reachable(address)
    if ray.is_initialized():
        return ray, False
    # Ray's own progress bars stay; its start-up chatter and dashboard do not.
    quiet: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING, "log_to_driver": True}
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address:
        _reachable(address)
    try:
        if address:
            ray.init(address=address, **quiet)
        else:
            # "local": a new local Ray, never the cluster named in Ray's current-cluster file,
            # which a Ray that crashed may have left behind with nothing listening.
            ray.init(address="local", num_cpus=num_cpus or os.cpu_count() or 1, **quiet)
    except (ConnectionError, RuntimeError, ValueError) as error:
        where = f"the Ray cluster at {address}" if address else "a local Ray"
        msg = f"cannot start {where}: {first_line(error)}"
        raise CommandError(msg) from None
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    return ray, True


def _reachable(address: str) -> None:
    """Fail in one line when nothing listens at ``host:port``: Ray itself retries for minutes."""
    host, _, port = address.split("://", 1)[-1].rpartition(":")
    if not host or not port.isdigit():
        return  # "auto", "local" and the like: Ray resolves them
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except OSError as error:
        msg = (
            f"cannot reach the Ray cluster at {address} ({error.strerror or first_line(error)}); "
            "start it with ray start --head, or check --address / RAY_ADDRESS"
        )
        raise CommandError(msg) from None


def check_with_ray(
    inputs: str | Sequence[str],
    output: str,
    *,
    mode: Mode = "extract-check",
    aggregator: str = "strict",
    model: str | None = None,
    claim_format: str = DEFAULT_CLAIM_FORMAT,
    threshold: float = DEFAULT_THRESHOLD,
    input_format: str = "auto",
    output_format: str = "jsonl",
    batch_size: int = 1000,
    concurrency: int | None = None,
    address: str | None = None,
    num_cpus: int | None = None,
    progress: bool | None = None,
) -> RayCheckSummary:
    """Check every item of ``inputs`` on Ray Data and write the results as shards in the folder ``output``.

    Args:
        inputs: a file, a folder, a glob, or a list of them; local or a URI.
        output: the output folder (created when missing); a local path or a URI.
        mode: ``extract``, ``check`` or ``extract-check``.
        aggregator: ``strict``, ``soft`` or ``major``.
        model: ``provider:name`` of a chat model (each worker loads it), else the offline checker.
        claim_format: ``triplet`` or ``subsentence``, with ``model``.
        threshold: the offline checker's support for Entailment, 0 to 1.
        input_format: ``auto`` (from each file's name), ``jsonl``, ``json`` or ``parquet``.
        output_format: ``jsonl`` or ``parquet``.
        batch_size: items per Ray batch and per output shard.
        concurrency: workers (each builds its checker once); default one per CPU of the cluster.
        address: a Ray cluster to join (else ``RAY_ADDRESS``, else a local Ray is started).
            A Ray session this call starts, it ends before returning (a local
            Ray takes a few seconds to start); a session the process is
            already in is used and kept: call ``ray.init()`` first to check
            several inputs in one session.
        num_cpus: CPUs of the local Ray this starts (default: the machine's).
        progress: show Ray Data's progress bars (None: Ray's own default).

    Returns:
        The summary, counted over all shards, those of earlier runs included.

    Raises:
        CommandError: bad options, inputs or output, or Ray missing or unreachable (one line).

    Example:
        >>> check_with_ray("in.jsonl", "out", batch_size=0)
        Traceback (most recent call last):
        ...
        langchain_refs.apps.CommandError: --batch-size must be at least 1, got 0
    """
    if mode not in MODES:
        msg = f"mode must be extract, check or extract-check, got {mode!r}"
        raise CommandError(msg)
    if aggregator not in ("strict", "soft", "major"):
        msg = f"aggregator must be strict, soft or major, got {aggregator!r}"
        raise CommandError(msg)
    if input_format not in INPUT_FORMATS or output_format not in OUTPUT_FORMATS:
        msg = f"input format must be one of {INPUT_FORMATS} and output format one of {OUTPUT_FORMATS}"
        raise CommandError(msg)
    for name, value in (("--batch-size", batch_size), ("--concurrency", concurrency), ("--num-cpus", num_cpus)):
        if value is not None and value < 1:
            msg = f"{name} must be at least 1, got {value}"
            raise CommandError(msg)
    if model is not None:
        build_checkers(model=model, claim_format=claim_format)  # fails here, in one line, not in every worker
    options = {
        "mode": mode,
        "aggregator": aggregator,
        "model": model,
        "claim_format": claim_format,
        "threshold": threshold,
        "output_format": output_format,
        "batch_size": batch_size,
    }
    found = input_files(inputs, input_format)
    _refuse_empty_input(inputs, found)
    # The shards depend on the options and each input file's path, size and modification time.
    key = run_key([_FORMAT, options, found])
    _, _, done = _prepare_output(output, key, options)
    files = [(location, kind) for location, kind, _, _ in found]
    complete = {f for f, markers in done.items() if _complete(markers)}
    pending = [index for index in range(len(files)) if index not in complete]
    old = [marker for markers in done.values() for marker in markers.values()]
    totals = {k: sum(int(m.get(k, 0)) for m in old) for k in ("rows", "written", "errors", "nulled")}
    shards, failed, first_failure = len(old), 0, None
    if pending:
        ray, started = _start_ray(address, num_cpus)
        try:
            context = ray.data.DataContext.get_current()
            bars = context.enable_progress_bars
            try:
                if progress is not None:
                    context.enable_progress_bars = progress
                failed, first_failure, checked = _check_pending(ray, pending, files, done, options, output, concurrency)
            finally:
                context.enable_progress_bars = bars
        finally:
            # The process is left as it was found: its progress-bar setting, and no Ray session this call began.
            if started:
                ray.shutdown()
        shards += checked["shards"]
        for k in ("rows", "written", "errors", "nulled"):
            totals[k] += checked[k]
    return RayCheckSummary(
        rows=totals["rows"],
        written=totals["written"],
        errors=totals["errors"],
        shards=shards,
        skipped_shards=len(old),
        output=output,
        failed_shards=failed,
        first_failure=first_failure,
        nulled_numbers=totals["nulled"],
    )


# An input file larger than this holds an item or a line that is not one: it is not read to find out.
_SMALL_FILE = 4096


def _refuse_empty_input(inputs: str | Sequence[str], found: list[tuple[str, str, int, int]]) -> None:
    """A `CommandError` when no input file holds an item, as the local engine refuses one: Ray is not started.

    Only small JSON files are read (an empty file, ``[]``): an input with a
    Parquet file or a larger file goes on, its rows counted by the run.
    """
    problems = []
    for location, kind, size, _ in found:
        if kind != "json" or size > _SMALL_FILE:
            return
        fs, path = _filesystem(location)
        with fs.open_input_stream(path) as handle:
            data = handle.read()
        try:
            problem = empty_input_problem(utf8_text(data))
        except ValueError:  # not UTF-8: the run says so in the file's error row
            return
        if problem is None:
            return
        problems.append((location, problem))
    if len(problems) == 1:
        # The name as given, as the local engine writes it.
        name = inputs if isinstance(inputs, str) and not any(c in inputs for c in "*?[") else problems[0][0]
        msg = f"{name}: {problems[0][1]}"
        raise CommandError(msg)
    if problems:
        first, problem = problems[0]
        msg = f"none of the {len(problems)} input files holds an item to check (the first, {first}: {problem})"
        raise CommandError(msg)


def _check_pending(
    ray: Any,
    pending: list[int],
    files: list[tuple[str, str]],
    done: dict[int, dict[int, Any]],
    options: dict[str, Any],
    output: str,
    concurrency: int | None,
) -> tuple[int, str | None, dict[str, int]]:
    """Check the input files numbered ``pending`` on Ray: failed shards, the first failure, and counts."""
    failed, first_failure = 0, None
    counts = dict.fromkeys(("shards", "rows", "written", "errors", "nulled"), 0)
    workers = concurrency or max(1, int(ray.cluster_resources().get("CPU", 1)))
    to_check = ray.data.from_items([{"file": i} for i in pending], override_num_blocks=len(pending)).flat_map(
        _split_file,
        fn_kwargs={
            "files": files,
            "batch_size": options["batch_size"],
            "done": {f: sorted(m) for f, m in done.items()},
        },
        # Reading is light beside checking: it never waits for a CPU the workers hold.
        num_cpus=0,
    )
    # One shard per block (for this dataset only): a block goes to one worker whole, and a file's
    # shards would otherwise share one block and leave all workers but one idle.
    to_check.context.target_max_block_size = 1
    dataset = to_check.map_batches(
        _ShardChecker,
        fn_constructor_kwargs={"options": options, "files": files, "output": output},
        batch_size=1,
        batch_format="pyarrow",
        # A pool of up to `workers` actors, all started at once; fewer stay when there are fewer shards.
        compute=ray.data.ActorPoolStrategy(min_size=1, max_size=workers, initial_size=workers),
        num_cpus=1,
    )
    for row in dataset.iter_rows():
        if row["failure"]:
            failed += 1
            first_failure = first_failure or str(row["failure"])
            continue
        counts["shards"] += 1
        for k in ("rows", "written", "errors", "nulled"):
            counts[k] += int(row[k])
    return failed, first_failure, counts


def _complete(markers: dict[int, Any]) -> bool:
    """Whether every shard of one input file has its marker (each marker says how many shards the file has)."""
    counts = {m.get("shards") for m in markers.values()}
    return len(counts) == 1 and set(markers) == set(range(int(counts.pop() or 0)))


def run_ray_check(args: argparse.Namespace) -> int:
    """``langchain-refs check --engine ray``: run `check_with_ray` and print its summary, one JSON line on stderr."""
    try:
        summary = _run_from_args(args)
    except KeyboardInterrupt:
        print(f"interrupted — run again to resume (complete shards are kept in {args.output})", file=sys.stderr)
        return 130
    print(summary.to_json(), file=sys.stderr)
    return summary.exit_status


def _run_from_args(args: argparse.Namespace) -> RayCheckSummary:
    return check_with_ray(
        args.input,
        args.output,
        mode=args.mode,
        aggregator=args.aggregator,
        model=args.model,
        claim_format=args.claim_format,
        threshold=args.threshold,
        input_format=args.input_format or "auto",
        output_format=args.output_format or "jsonl",
        batch_size=args.batch_size or 1000,
        concurrency=args.concurrency,
        address=args.address,
        progress=args.progress,
    )
