"""The Ray engine's own steps without Ray: files found, read and cut into shards, shards written and resumed.

Ray Data only runs `_split_file` and `_ShardChecker` on its workers; here
they run in this process (``in_process``), so the engine's files, markers,
summary and resuming are checked in a second, with the local engine's
`check_item` as the oracle. tests/integration_tests/test_ray_check.py runs
the same engine on a local Ray.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import json
import math
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from langchain_refs.apps import CommandError
from langchain_refs.apps.check import build_checkers, check_item

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from langchain_refs.apps.check import ray_engine  # noqa: E402 (needs pyarrow, skipped above without it)

ROWS = [
    {"id": 1, "response": "Paris is in France.", "reference": "Paris is in France."},
    {"id": 2, "response": "Rome is in Spain.", "reference": "Rome is in Italy."},
    {"id": 3, "response": 7, "reference": "x"},
    {"id": 4, "response": "Water boils at 100 degrees.", "reference": "Water boils at 100 degrees."},
    {"id": 5, "response": "Lyon is in France.", "reference": "Lyon is in France."},
]


def jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def in_process(
    _ray: Any,
    pending: list[int],
    files: list[tuple[str, str]],
    done: dict[int, dict[int, Any]],
    options: dict[str, Any],
    output: str,
    _concurrency: int | None,
) -> tuple[int, str | None, dict[str, int]]:
    """What `_check_pending` has Ray Data do, done here: each pending file cut into shards, each shard checked."""
    worker = ray_engine._ShardChecker(options=options, files=files, output=output)
    counts = dict.fromkeys(("shards", "rows", "written", "errors", "nulled"), 0)
    failed, first = 0, None
    skip = {f: sorted(m) for f, m in done.items()}
    for index in pending:
        for shard in ray_engine._split_file({"file": index}, files=files, batch_size=options["batch_size"], done=skip):
            row = {key: values[0] for key, values in worker(pa.Table.from_pylist([shard])).items()}
            if row["failure"]:
                failed, first = failed + 1, first or row["failure"]
                continue
            counts["shards"] += 1
            for key in ("rows", "written", "errors", "nulled"):
                counts[key] += row[key]
    return failed, first, counts


@pytest.fixture
def no_ray(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The engine with its shards checked in this process; the list records each time it would start Ray."""
    started: list[str] = []

    def start(address: str | None, _num_cpus: int | None) -> tuple[Any, bool]:
        started.append(address or "local")
        context = SimpleNamespace(enable_progress_bars=True)
        return SimpleNamespace(data=SimpleNamespace(DataContext=SimpleNamespace(get_current=lambda: context))), False

    monkeypatch.setattr(ray_engine, "_start_ray", start)
    monkeypatch.setattr(ray_engine, "_check_pending", in_process)
    return started


def results(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for part in sorted(folder.glob("part-*.jsonl")) for line in part.read_text().splitlines()]


# -- finding and reading the input ------------------------------------------------------------


def test_a_folder_gives_its_input_files_in_path_order_without_hidden_ones(tmp_path: Path) -> None:
    """A folder's .jsonl/.json/.parquet files, sorted by path; names starting with . or _ and other files left out."""
    for name in ("b.jsonl", "a/c.json", "a/d.parquet", ".hidden.jsonl", "_done/x.json", "notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}\n", encoding="utf-8")
    found = ray_engine.input_files(str(tmp_path))
    assert [(Path(location).relative_to(tmp_path).as_posix(), kind) for location, kind, _, _ in found] == [
        ("a/c.json", "json"),
        ("a/d.parquet", "parquet"),
        ("b.jsonl", "json"),
    ]
    assert all(size == 3 and mtime > 0 for _, _, size, mtime in found)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("missing.jsonl", "no such file or folder"),
        ("*.nothing", "matches no file"),
        ("empty", "no .jsonl, .ndjson, .json or .parquet file in this folder"),
        ("data.txt", "cannot tell its format from its name; give --input-format"),
    ],
)
def test_input_that_gives_no_file_is_one_line(tmp_path: Path, given: str, message: str) -> None:
    """A path, glob or folder with no input file, or a file of no known format: a CommandError that says so."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "data.txt").write_text("{}", encoding="utf-8")
    with pytest.raises(CommandError, match=re.escape(message)):
        ray_engine.input_files(str(tmp_path / given))


def test_a_json_lines_file_is_read_line_by_line_with_its_bad_lines_named(tmp_path: Path) -> None:
    """Each line as JSON text or its reason; NaN read as null and counted; positions are lines."""
    path = tmp_path / "in.jsonl"
    path.write_text('{"response": "a", "x": NaN}\nnot json\n\n[1]\n', encoding="utf-8")
    items, nulled, where = ray_engine._read_file(str(path), "json")
    assert where == "line"
    assert nulled == 1
    assert items[0] == (1, json.dumps({"response": "a", "x": None}), "")
    assert [(number, text, problem.split(" (")[0]) for number, text, problem in items[1:]] == [
        (2, "", "not valid JSON"),
        (4, "", "a line must be a JSON object"),
    ]


def test_a_json_list_is_read_item_by_item(tmp_path: Path) -> None:
    """A JSON list's positions are items, as the local engine names them."""
    path = tmp_path / "in.json"
    path.write_text(json.dumps([{"response": "a"}, 3]), encoding="utf-8")
    items, _, where = ray_engine._read_file(str(path), "json")
    assert where == "item"
    assert [(number, problem) for number, _, problem in items] == [(1, ""), (2, "an item must be a JSON object")]


def test_a_parquet_file_is_read_as_json_data(tmp_path: Path) -> None:
    """Parquet rows become JSON items: NaN and infinities null (counted), dates ISO text, decimals and bytes text."""
    path = tmp_path / "in.parquet"
    table = pa.table(
        {
            "response": ["a", "b"],
            "score": [math.nan, 1.5],
            "day": [datetime.date(2024, 5, 1), None],
            "price": [decimal.Decimal("1.25"), None],
            "raw": [b"caf\xc3\xa9", b"\xff"],
            "span": [datetime.timedelta(seconds=90), None],
        }
    )
    pq.write_table(table, path)
    items, nulled, where = ray_engine._read_file(str(path), "parquet")
    assert (where, nulled) == ("row", 1)
    first, second = (json.loads(text) for _, text, _ in items)
    assert first == {"response": "a", "score": None, "day": "2024-05-01", "price": "1.25", "raw": "café", "span": 90.0}
    assert second["raw"] == "\ufffd"
    assert second["score"] == 1.5


def test_a_file_that_is_not_utf8_is_a_value_error(tmp_path: Path) -> None:
    """A file that is not UTF-8 fails with the byte and its offset (the caller makes it one bad row)."""
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"response": "\xff"}\n')
    with pytest.raises(ValueError, match="not UTF-8 text \\(byte 0xff at offset 14\\)"):
        ray_engine._read_file(str(path), "json")


# -- shards ------------------------------------------------------------------------------------


def test_a_file_is_cut_into_shards_of_batch_size_and_done_shards_are_skipped(tmp_path: Path) -> None:
    """Five items, two a shard: three shards, in order; a shard already done is not given again."""
    files = [(str(jsonl(tmp_path / "in.jsonl", ROWS)), "json")]
    shards = list(ray_engine._split_file({"file": 0}, files=files, batch_size=2, done={0: [1]}))
    assert [(s["shard"], s["shards"], s["numbers"]) for s in shards] == [(0, 3, [1, 2]), (2, 3, [5])]
    assert [json.loads(text)["id"] for text in shards[0]["items"]] == [1, 2]


def test_numbers_read_as_null_are_counted_once_per_file(tmp_path: Path) -> None:
    """A file's count of nulled numbers rides on its first shard only, so the summary adds it once."""
    path = tmp_path / "in.jsonl"
    path.write_text('{"x": NaN}\n{"x": Infinity}\n{"x": 1}\n', encoding="utf-8")
    shards = list(ray_engine._split_file({"file": 0}, files=[(str(path), "json")], batch_size=1, done={}))
    assert [s["nulled"] for s in shards] == [2, 0, 0]


def test_a_file_that_cannot_be_read_is_one_bad_row(tmp_path: Path) -> None:
    """An unreadable file is one shard of one row holding the reason: the other files go on."""
    path = tmp_path / "in.json"
    path.write_text("[1, 2", encoding="utf-8")
    (shard,) = ray_engine._split_file({"file": 0}, files=[(str(path), "json")], batch_size=10, done={})
    assert shard["numbers"] == [0]
    assert shard["problems"][0].startswith("cannot read this file: not valid JSON")


@pytest.mark.parametrize(
    ("markers", "complete"),
    [
        ({0: {"shards": 2}, 1: {"shards": 2}}, True),
        ({0: {"shards": 2}}, False),
        ({0: {"shards": 1}, 1: {"shards": 2}}, False),
        ({}, False),
    ],
)
def test_a_file_is_complete_when_every_shard_has_its_marker(markers: dict[int, Any], complete: bool) -> None:
    """Complete means a marker for each of the shards the markers say the file has, and they agree."""
    assert ray_engine._complete(markers) is complete


# -- the whole engine, its shards checked in this process ------------------------------------------


def test_the_engine_writes_the_local_engines_results_and_counts_them(tmp_path: Path, no_ray: list[str]) -> None:
    """Results in input order, each exactly check_item's; the bad row in _errors; the summary counts it all."""
    source, out = jsonl(tmp_path / "in.jsonl", ROWS), tmp_path / "out"
    summary = ray_engine.check_with_ray(str(source), str(out), batch_size=2)
    checkers = build_checkers()
    expected = [check_item(row, checkers=checkers) for row in ROWS if row["id"] != 3]
    assert results(out) == expected
    assert [json.loads(line) for line in (out / "_errors" / "errors-000000-000001.jsonl").read_text().splitlines()] == [
        {"file": str(source), "line": 3, "error": "no 'response' string to extract claims from"}
    ]
    assert (summary.rows, summary.written, summary.errors, summary.shards, summary.skipped_shards) == (5, 4, 1, 3, 0)
    assert summary.exit_status == 1
    assert no_ray == ["local"]


def test_a_rerun_with_every_shard_complete_starts_no_ray(tmp_path: Path, no_ray: list[str]) -> None:
    """Run again with the same input and options: every shard is skipped, Ray is not started, the counts stand."""
    source, out = jsonl(tmp_path / "in.jsonl", ROWS[:2]), tmp_path / "out"
    first = ray_engine.check_with_ray(str(source), str(out), batch_size=1)
    again = ray_engine.check_with_ray(str(source), str(out), batch_size=1)
    assert no_ray == ["local"]
    assert (again.rows, again.written, again.shards, again.skipped_shards) == (2, 2, 2, 2)
    assert (first.skipped_shards, first.exit_status, again.exit_status) == (0, 0, 0)


def test_a_rerun_redoes_only_the_shard_whose_marker_is_missing(tmp_path: Path, no_ray: list[str]) -> None:
    """A crash before a shard's marker: that shard alone is redone, and the results are whole again."""
    source, out = jsonl(tmp_path / "in.jsonl", ROWS[:4]), tmp_path / "out"
    ray_engine.check_with_ray(str(source), str(out), batch_size=2)
    (out / "_done" / "000000-000001.json").unlink()
    (out / "part-000000-000001.jsonl").unlink()
    again = ray_engine.check_with_ray(str(source), str(out), batch_size=2)
    assert (again.shards, again.skipped_shards) == (2, 1)
    assert [r["id"] for r in results(out)] == [1, 2, 4]


def test_a_shard_whose_chat_model_failed_is_not_complete_and_the_next_run_redoes_it(
    tmp_path: Path, no_ray: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--model down: no Abstain is written for the shard, which fails (said in the summary); back up, it is done."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from langchain_refs.apps.check import items

    class Down(FakeListChatModel):
        def _call(self, *args: Any, **kwargs: Any) -> str:
            raise ConnectionError("connection refused")

    source, out = jsonl(tmp_path / "in.jsonl", ROWS[:2]), tmp_path / "out"
    monkeypatch.setattr(items, "load_model", lambda spec: Down(responses=["unused"]))
    down = ray_engine.check_with_ray(str(source), str(out), mode="extract", model="fake:m", batch_size=1)
    assert (down.failed_shards, down.shards, down.written, down.exit_status) == (2, 0, 0, 1)
    assert down.first_failure is not None
    assert down.first_failure.startswith("ChatModelFailedError: the chat model failed or its reply could not be read")
    assert results(out) == []
    monkeypatch.setattr(items, "load_model", lambda spec: FakeListChatModel(responses=['{"claims": ["A claim."]}']))
    up = ray_engine.check_with_ray(str(source), str(out), mode="extract", model="fake:m", batch_size=1)
    assert (up.failed_shards, up.shards, up.written, up.exit_status) == (0, 2, 2, 0)
    assert [r["claims"] for r in results(out)] == [["A claim."]] * 2


def test_a_reply_that_cannot_be_read_is_an_error_row_and_the_shard_completes(
    tmp_path: Path, no_ray: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model that answers, but not in a form that can be read: another run would not do better; an error row."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from langchain_refs.apps.check import items

    source, out = jsonl(tmp_path / "in.jsonl", ROWS[:2]), tmp_path / "out"
    replies = ["I would rather not say.", '{"claims": ["A claim."]}']
    monkeypatch.setattr(items, "load_model", lambda spec: FakeListChatModel(responses=replies))
    summary = ray_engine.check_with_ray(str(source), str(out), mode="extract", model="fake:m", batch_size=2)
    assert (summary.failed_shards, summary.shards, summary.written, summary.errors) == (0, 1, 1, 1)
    (error,) = [json.loads(line) for line in (out / "_errors" / "errors-000000-000000.jsonl").read_text().splitlines()]
    assert (error["line"], error["error"][:52]) == (1, "the chat model failed or its reply could not be read")
    assert [r["claims"] for r in results(out)] == [["A claim."]]


def test_other_options_start_over_and_clear_only_this_engines_files(
    tmp_path: Path, no_ray: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Another mode on the same folder: said on stderr, this engine's files replaced, the user's own file kept."""
    source, out = jsonl(tmp_path / "in.jsonl", ROWS[:2]), tmp_path / "out"
    ray_engine.check_with_ray(str(source), str(out), batch_size=1)
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    summary = ray_engine.check_with_ray(str(source), str(out), mode="extract", batch_size=2)
    assert "holds results of another input or other options; starting over" in capsys.readouterr().err
    assert sorted(p.name for p in out.glob("part-*")) == ["part-000000-000000.jsonl"]
    assert all("ys" not in r for r in results(out))
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert summary.skipped_shards == 0


def test_a_folder_of_someone_elses_part_files_is_refused(tmp_path: Path, no_ray: list[str]) -> None:
    """part-* files with no _run.json were not written by this engine: refused, never removed, Ray never started."""
    source, out = jsonl(tmp_path / "in.jsonl", ROWS[:1]), tmp_path / "out"
    out.mkdir()
    (out / "part-0.jsonl").write_text("theirs", encoding="utf-8")
    with pytest.raises(CommandError, match="this command did not write"):
        ray_engine.check_with_ray(str(source), str(out))
    assert (out / "part-0.jsonl").read_text(encoding="utf-8") == "theirs"
    assert no_ray == []


def test_an_output_that_is_a_file_is_refused(tmp_path: Path, no_ray: list[str]) -> None:
    """--output of the Ray engine is a folder: a file there is one line."""
    source, out = jsonl(tmp_path / "in.jsonl", ROWS[:1]), tmp_path / "out.jsonl"
    out.write_text("", encoding="utf-8")
    with pytest.raises(CommandError, match="is a file; --output of --engine ray is a folder"):
        ray_engine.check_with_ray(str(source), str(out))


def test_parquet_shards_hold_the_local_engines_results(tmp_path: Path, no_ray: list[str]) -> None:
    """Parquet out: the computed fields typed, reference a list of texts, another field of mixed types as JSON text."""
    rows = [{**ROWS[0], "tag": 7}, {**ROWS[1], "reference": ["Rome is in Italy.", "Rome is old."], "tag": "b"}]
    source, out = jsonl(tmp_path / "in.jsonl", rows), tmp_path / "out"
    ray_engine.check_with_ray(str(source), str(out), output_format="parquet")
    table = pq.read_table(out / "part-000000-000000.parquet")
    assert table.column("Y").to_pylist() == [check_item(r, checkers=build_checkers())["Y"] for r in rows]
    # Written by hand: a single reference text is a list of one; the mixed field is JSON text.
    assert table.column("reference").to_pylist() == [[ROWS[0]["reference"]], ["Rome is in Italy.", "Rome is old."]]
    assert table.column("tag").to_pylist() == ["7", '"b"']


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "judge"}, "mode must be extract, check or extract-check, got 'judge'"),
        ({"aggregator": "mean"}, "aggregator must be strict, soft or major, got 'mean'"),
        ({"output_format": "csv"}, "output format one of"),
        ({"concurrency": 0}, "--concurrency must be at least 1, got 0"),
        ({"num_cpus": -1}, "--num-cpus must be at least 1, got -1"),
    ],
)
def test_bad_options_are_one_line_before_any_work(
    tmp_path: Path, no_ray: list[str], options: dict[str, Any], message: str
) -> None:
    """Each bad option is a CommandError naming it; no folder is made and Ray is not started."""
    with pytest.raises(CommandError, match=re.escape(message)):
        ray_engine.check_with_ray(str(tmp_path / "in.jsonl"), str(tmp_path / "out"), **options)
    assert not (tmp_path / "out").exists()
    assert no_ray == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "the file is empty; give a JSON list or JSON Lines of items"),
        (" \n\n", "the file is empty; give a JSON list or JSON Lines of items"),
        ("[ ]\n", "the JSON list is empty; there is nothing to check"),
    ],
)
def test_an_input_with_no_item_is_refused_as_the_local_engine_refuses_it(
    tmp_path: Path, no_ray: list[str], capsys: pytest.CaptureFixture[str], text: str, problem: str
) -> None:
    """An empty file or list: exit 2 and the local engine's own line, before Ray starts or a folder is made."""
    from langchain_refs.apps import main

    source = tmp_path / "answers.jsonl"
    source.write_text(text, encoding="utf-8")
    lines = {}
    for engine, out in (("local", "out.json"), ("ray", "out")):
        assert (
            main(["check", "extract", "--engine", engine, "--input", str(source), "--output", str(tmp_path / out)]) == 2
        )
        lines[engine] = capsys.readouterr().err.strip()
    assert lines["ray"] == lines["local"] == f"langchain-refs: {source}: {problem}"
    assert no_ray == []
    assert not (tmp_path / "out").exists()
    # Several input files, none with an item: one line too; one file with items among empty ones goes on.
    (tmp_path / "more.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(CommandError, match=r"^none of the 2 input files holds an item to check \(the first, "):
        ray_engine.check_with_ray(str(tmp_path / "*.jsonl"), str(tmp_path / "out"))
    jsonl(tmp_path / "rows.jsonl", ROWS[:1])
    assert ray_engine.check_with_ray(str(tmp_path / "*.jsonl"), str(tmp_path / "out")).rows == 1


# -- the command -------------------------------------------------------------------------------


def command_args(source: Path, out: Path) -> argparse.Namespace:
    values = dict.fromkeys(("model", "input_format", "output_format", "batch_size", "concurrency", "address"))
    values |= {"input": str(source), "output": str(out), "mode": "extract-check", "aggregator": "strict"}
    return argparse.Namespace(**values, claim_format="triplet", threshold=0.4, progress=False)


def test_the_command_prints_one_summary_line_and_exits_with_its_status(
    tmp_path: Path, no_ray: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """run_ray_check: the summary as one JSON line on stderr, exit 1 when a row failed."""
    source = jsonl(tmp_path / "in.jsonl", ROWS)
    assert ray_engine.run_ray_check(command_args(source, tmp_path / "out")) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert json.loads(line) | {"output": ""} == {
        "engine": "ray",
        "rows": 5,
        "written": 4,
        "errors": 1,
        "shards": 1,
        "skipped_shards": 0,
        "output": "",
        "failed_shards": 0,
        "first_failure": None,
        "nulled_numbers": 0,
    }


def test_ctrl_c_in_the_command_is_status_130_and_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C during a Ray run: exit 130 and a line saying complete shards are kept."""

    def interrupted(*_: Any, **__: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(ray_engine, "check_with_ray", interrupted)
    assert ray_engine.run_ray_check(command_args(tmp_path / "in.jsonl", tmp_path / "out")) == 130
    assert capsys.readouterr().err.strip() == (
        f"interrupted — run again to resume (complete shards are kept in {tmp_path / 'out'})"
    )
