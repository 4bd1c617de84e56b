"""``langchain-refs check --engine ray`` on a local Ray: the same results as the local engine, shard by shard.

Ray starts once for the module (two CPUs) and stops at its end. Every run
is compared with the local engine on the same input: that engine is the
oracle, the Ray engine must write the same items (``claims``, ``ys``, ``Y``,
``checks`` with their evidence spans, and the input's own fields).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langchain_refs.apps import main

try:
    import pyarrow as pa
    import pyarrow.parquet as pq
    import ray
except ImportError as error:  # pragma: no cover - CI installs the ray extra
    pytest.skip(
        f'RAY ENGINE NOT TESTED: Ray Data cannot be imported ({error}); pip install -e ".[ray]"',
        allow_module_level=True,
    )

from langchain_refs.apps.check.ray_engine import check_with_ray

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "check_input.json"

_PLACES = ["harbour museum", "old bridge", "city library", "north station", "glass tower", "river mill", "town hall"]
_TOWNS = ["Lyon", "Ghent", "Porto", "Graz", "Turku", "Bergen", "Split", "Cork"]
_MATERIALS = ["red brick", "grey stone", "white marble", "steel and glass", "oak timber"]
# Rows that cannot be checked, one of each kind, and the local engine's reason for each.
_BAD = [
    ('{"response": "The tower is tall.", "reference": ', "not valid JSON"),
    ('{"response": "The tower is tall."}', "no 'reference' to check against"),
    ('{"response": 42, "reference": "The tower is tall."}', "no 'response' string to extract claims from"),
    ('["a", "line", "that", "is", "a", "list"]', "a line must be a JSON object"),
    ('{"response": "The tower is tall.", "reference": [1, 2]}', "'reference' must be a string or a list of strings"),
]


def generated_rows(n: int, *, seed: int = 14, bad_every: int = 0, uniform: bool = False) -> list[str]:
    """``n`` JSON Lines lines of RefChecker-shaped items, the same for the same arguments.

    Each response states facts about a place: most as the reference says,
    some with the wrong year (a contradiction), some with a fact the
    reference lacks (neutral), some with no claim at all. ``reference`` is a
    string or a list of strings (always a list when ``uniform``, so that the
    rows fit one Parquet schema). Every ``bad_every``-th line is a bad row,
    taken in turn from the kinds in ``_BAD``.
    """
    rng = random.Random(seed)
    lines = []
    for index in range(n):
        if bad_every and index % bad_every == bad_every - 1:
            lines.append(_BAD[(index // bad_every) % len(_BAD)][0])
            continue
        place, town = rng.choice(_PLACES), rng.choice(_TOWNS)
        year, height = rng.randint(1850, 2020), rng.randint(10, 300)
        material = rng.choice(_MATERIALS)
        facts = [
            f"The {place} in {town} opened in {year}.",
            f"It is {height} metres tall and built of {material}.",
        ]
        said_year = year if rng.random() < 0.7 else year + rng.randint(1, 40)
        response = [f"The {place} in {town} opened in {said_year}."]
        if rng.random() < 0.5:
            response.append(f"It is built of {material}, and it is {height} metres tall.")
        if rng.random() < 0.2:
            response.append(f"It was visited by {rng.randint(2, 90)} thousand people last year.")
        if rng.random() < 0.05:
            response = ["Hello! I could not find this in the documents."]
        reference: str | list[str] = facts if uniform or rng.random() < 0.5 else " ".join(facts)
        item: dict[str, Any] = {"id": index, "question": f"When did the {place} in {town} open?"}
        item |= {"response": " ".join(response), "reference": reference}
        lines.append(json.dumps(item))
    return lines


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    """One local Ray with two CPUs for the whole module, stopped at its end."""
    ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


def local_engine(source: Path, tmp_path: Path, *options: str) -> list[dict[str, Any]]:
    """The local engine's output items for ``source`` (error entries included, in input order)."""
    out = tmp_path / f"local-{source.stem}.jsonl"
    main(["check", "extract-check", "--input", str(source), "--output", str(out), "--no-progress", *options])
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def ray_results(folder: Path) -> list[dict[str, Any]]:
    """The Ray engine's results, shard names sorted: input order."""
    rows: list[dict[str, Any]] = []
    for part in sorted(folder.glob("part-*")):
        if part.suffix == ".parquet":
            rows.extend(pq.read_table(part).to_pylist())
        else:
            rows.extend(json.loads(line) for line in part.read_text(encoding="utf-8").splitlines())
    return rows


def ray_errors(folder: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for part in sorted((folder / "_errors").glob("errors-*.jsonl"))
        for line in part.read_text(encoding="utf-8").splitlines()
    ]


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_example_file_gives_what_the_local_engine_gives(tmp_path: Path) -> None:
    """On examples/check_input.json (a JSON list), every Ray result equals the local engine's, in order."""
    expected = local_engine(EXAMPLE, tmp_path)
    summary = check_with_ray(str(EXAMPLE), str(tmp_path / "out"), batch_size=3, concurrency=1)
    assert ray_results(tmp_path / "out") == expected
    assert (summary.rows, summary.written, summary.errors, summary.shards) == (4, 4, 0, 2)
    assert summary.exit_status == 0


def test_two_thousand_rows_match_the_local_engine_and_bad_rows_are_counted(tmp_path: Path) -> None:
    """2,000 generated rows: the same items as the local engine; the 40 bad rows in the errors output, counted."""
    source = write_lines(tmp_path / "rows.jsonl", generated_rows(2000, bad_every=50))
    expected = local_engine(source, tmp_path)
    summary = check_with_ray(str(source), str(tmp_path / "out"), batch_size=300)
    good = [item for item in expected if "error" not in item]
    results = ray_results(tmp_path / "out")
    assert len(results) == 1960
    assert [r["id"] for r in results] == [g["id"] for g in good]
    for name in ("claims", "ys", "Y", "checks"):
        assert [r[name] for r in results] == [g[name] for g in good], name
    assert results == good  # every field, in the same order of keys
    # The labels are not all alike: the comparison covers every verdict.
    assert {r["Y"] for r in results} == {"Entailment", "Neutral", "Contradiction", "Abstain"}
    errors = ray_errors(tmp_path / "out")
    assert [e["line"] for e in errors] == list(range(50, 2001, 50))
    for error in errors:
        assert error["file"] == str(source)
        assert error["error"].startswith(_BAD[(error["line"] // 50 - 1) % len(_BAD)][1])
    assert [(e["line"], e["error"]) for e in errors] == [(x["line"], x["error"]) for x in expected if "error" in x]
    assert (summary.rows, summary.written, summary.errors, summary.shards) == (2000, 1960, 40, 7)
    assert summary.exit_status == 1


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_lone_surrogate_is_an_error_record_for_its_row_alone(suffix: str, tmp_path: Path) -> None:
    """A row holding a lone surrogate is an error record, as with the local engine; its shard's other rows are kept."""
    rows = [json.loads(line) for line in generated_rows(6)]
    rows[1]["response"] = "The tower \ud800 is tall."
    rows[4]["note"] = "\udfff"  # in a field the check never reads
    source = tmp_path / f"rows{suffix}"
    # json.dumps writes each lone surrogate as its escape, as a JSON file holds it.
    source.write_text("".join(json.dumps(r) + "\n" for r in rows) if suffix == ".jsonl" else json.dumps(rows))
    expected = local_engine(source, tmp_path)
    summary = check_with_ray(str(source), str(tmp_path / "out"), batch_size=10, concurrency=1)
    where = "line" if suffix == ".jsonl" else "item"
    assert [e.get(where) for e in expected if "error" in e] == [2, 5]
    assert ray_results(tmp_path / "out") == [e for e in expected if "error" not in e]
    assert [r["id"] for r in ray_results(tmp_path / "out")] == [0, 2, 3, 5]
    assert [(e[where], e["error"]) for e in ray_errors(tmp_path / "out")] == [
        (2, "holds \\ud800, a lone surrogate that UTF-8 cannot write"),
        (5, "holds \\udfff, a lone surrogate that UTF-8 cannot write"),
    ]
    assert (summary.rows, summary.written, summary.errors, summary.failed_shards) == (6, 4, 2, 0)


def test_no_deprecated_ray_api_is_used(tmp_path: Path) -> None:
    """A run gives no RayDeprecationWarning (Ray 2.60 deprecates ray_remote_args for removal in 2.64)."""
    from ray.util.annotations import RayDeprecationWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_with_ray(str(EXAMPLE), str(tmp_path / "out"), batch_size=3, concurrency=1)
    assert [str(w.message) for w in caught if issubclass(w.category, RayDeprecationWarning)] == []


@pytest.mark.slow
def test_a_local_ray_starts_whatever_a_crashed_ray_left_behind(tmp_path: Path) -> None:
    """Without --address, a current-cluster file naming a Ray that is gone does not stop the command."""
    # Ray keeps its files under $TMPDIR/ray: a short folder of this test's own (Ray's socket paths are short).
    temporary = Path(tempfile.mkdtemp(prefix="lr-ray-", dir="/tmp"))
    try:
        (temporary / "ray").mkdir()
        with socket.socket() as nothing:  # a port nothing listens on, as after a crash
            nothing.bind(("127.0.0.1", 0))
            gone = nothing.getsockname()[1]
        (temporary / "ray" / "ray_current_cluster").write_text(f"127.0.0.1:{gone}")
        env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | {"TMPDIR": str(temporary)}
        out = tmp_path / "out"
        argv = ["check", "extract-check", "--engine", "ray", "--input", str(EXAMPLE), "--output", str(out)]
        done = subprocess.run(
            [sys.executable, "-m", "langchain_refs", *argv, "--concurrency", "1", "--no-progress"],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads(done.stderr.strip().splitlines()[-1])["written"] == 4
        assert ray_results(out) == local_engine(EXAMPLE, tmp_path)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def test_rerun_skips_complete_shards_and_redoes_the_rest(tmp_path: Path) -> None:
    """A rerun writes only the shard whose marker is missing; the output ends the same."""
    source = write_lines(tmp_path / "rows.jsonl", generated_rows(200, bad_every=40))
    out = tmp_path / "out"
    first = check_with_ray(str(source), str(out), batch_size=50, concurrency=1)
    assert first.shards == 4
    before = ray_results(out), ray_errors(out)
    parts = sorted(out.glob("part-*"))
    stamps = {p: p.stat().st_mtime_ns for p in parts}
    # Shard 2 as a crash would leave it: written but not marked complete.
    (out / "_done" / "000000-000002.json").unlink()
    (out / "part-000000-000002.jsonl").write_text("half a line", encoding="utf-8")
    second = check_with_ray(str(source), str(out), batch_size=50, concurrency=1)
    assert (second.shards, second.skipped_shards, second.rows, second.errors) == (4, 3, 200, 5)
    assert [p for p in parts if p.stat().st_mtime_ns != stamps[p]] == [out / "part-000000-000002.jsonl"]
    assert (ray_results(out), ray_errors(out)) == before
    # All complete: Ray is not even asked.
    third = check_with_ray(str(source), str(out), batch_size=50, address="ray://nowhere:1")
    assert (third.shards, third.skipped_shards, third.written) == (4, 4, first.written)


def test_parquet_folder_in_parquet_out(tmp_path: Path) -> None:
    """A folder of Parquet files in, Parquet shards out: the same items as the local engine (soft Y as a map)."""
    lines = generated_rows(400, seed=7, uniform=True)
    source = write_lines(tmp_path / "rows.jsonl", lines)
    folder = tmp_path / "in"
    folder.mkdir()
    rows = [json.loads(line) for line in lines]
    pq.write_table(pa.Table.from_pylist(rows[:250]), folder / "part-a.parquet")
    pq.write_table(pa.Table.from_pylist(rows[250:]), folder / "part-b.parquet")
    expected = local_engine(source, tmp_path, "--aggregator", "soft")
    summary = check_with_ray(
        str(folder), str(tmp_path / "out"), aggregator="soft", output_format="parquet", batch_size=200
    )
    assert (summary.rows, summary.written, summary.shards) == (400, 400, 3)
    results = ray_results(tmp_path / "out")
    assert all(isinstance(r["Y"], list) for r in results)  # a Parquet map reads back as (key, value) pairs
    assert [r | {"Y": dict(r["Y"])} for r in results] == expected


def test_parquet_shards_read_as_one_table(tmp_path: Path) -> None:
    """Shards whose items differ in shape (a reference as one text or a list, a question or none) read as one table.

    The documented schema: ``reference`` a list of texts (one text is a list of one), ``question``
    always a column (null where the item had none); otherwise the local engine's items.
    """
    rows = [json.loads(line) for line in generated_rows(8, seed=5)]
    for row in rows[:4]:
        del row["question"]  # the first shards have no question, the last ones do
    for row in rows[:2] + rows[6:]:
        row["reference"] = " ".join(row["reference"]) if isinstance(row["reference"], list) else row["reference"]
    for row in rows[2:6]:
        row["reference"] = row["reference"] if isinstance(row["reference"], list) else [row["reference"]]
    source = write_lines(tmp_path / "mixed.jsonl", [json.dumps(row) for row in rows])
    expected = local_engine(source, tmp_path)
    summary = check_with_ray(str(source), str(tmp_path / "out"), output_format="parquet", batch_size=2)
    assert (summary.rows, summary.written, summary.shards) == (8, 8, 4)
    table = pq.read_table(tmp_path / "out")  # the whole folder, as pandas and Ray read it
    assert table.schema.field("reference").type == pa.list_(pa.string())
    documented = [
        {
            "question": None,
            **item,
            "reference": [item["reference"]] if isinstance(item["reference"], str) else item["reference"],
        }
        for item in expected
    ]
    assert sorted(table.to_pylist(), key=lambda r: r["id"]) == documented


def test_glob_reads_every_file_in_path_order(tmp_path: Path) -> None:
    """A glob of JSON Lines files: results in file order, errors naming their file and line."""
    lines = generated_rows(90, seed=3, bad_every=30)
    folder = tmp_path / "in"
    folder.mkdir()
    write_lines(folder / "b.jsonl", lines[45:])
    write_lines(folder / "a.jsonl", lines[:45])
    write_lines(folder / "not-matched.jsonl", lines[:5])
    expected = [item for item in local_engine(write_lines(tmp_path / "all.jsonl", lines), tmp_path) if "id" in item]
    out = tmp_path / "out"
    summary = check_with_ray(str(folder / "?.jsonl"), str(out), batch_size=20, concurrency=1)
    assert [p.name[5:18] for p in sorted(out.glob("part-*"))] == [
        "000000-000000", "000000-000001", "000000-000002", "000001-000000", "000001-000001", "000001-000002",
    ]  # fmt: skip
    assert ray_results(out) == expected
    errors = ray_errors(out)
    assert [(Path(e["file"]).name, e["line"]) for e in errors] == [("a.jsonl", 30), ("b.jsonl", 15), ("b.jsonl", 45)]
    assert (summary.rows, summary.errors) == (90, 3)


def test_command_starts_over_on_other_results_and_prints_one_summary_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Results of another run are cleared (said on stderr); the command ends with one JSON summary line, exit 1."""
    source = write_lines(tmp_path / "rows.jsonl", generated_rows(30, bad_every=10))
    out = tmp_path / "out"
    (out / "_done").mkdir(parents=True)
    (out / "_run.json").write_text('{"key": "another run"}', encoding="utf-8")
    (out / "part-000000-000007.jsonl").write_text('{"stale": true}\n', encoding="utf-8")
    (out / "_done" / "000000-000007.json").write_text('{"shards": 8, "rows": 5}', encoding="utf-8")
    (out / "notes.txt").write_text("the user's own file", encoding="utf-8")
    argv = ["check", "extract-check", "--engine", "ray", "--input", str(source), "--output", str(out)]
    status = main([*argv, "--concurrency", "1", "--no-progress"])
    assert status == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert f"{out}: holds results of another input or other options; starting over" in err
    summary = json.loads(err[-1])
    assert {k: summary[k] for k in ("engine", "rows", "written", "errors", "shards", "skipped_shards")} == {
        "engine": "ray",
        "rows": 30,
        "written": 27,
        "errors": 3,
        "shards": 1,
        "skipped_shards": 0,
    }
    files = sorted(p.name for p in out.iterdir() if p.is_file())
    assert files == ["_run.json", "notes.txt", "part-000000-000000.jsonl"]
    assert [r["id"] for r in ray_results(out)] == [i for i in range(30) if i % 10 != 9]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--input", "{tmp}/missing.jsonl", "--output", "{tmp}/out"], "missing.jsonl: no such file or folder"),
        (["--input", "{tmp}/*.parquet", "--output", "{tmp}/out"], "*.parquet: matches no file"),
        (["--input", "{tmp}/rows.jsonl", "--output", "{tmp}/rows.jsonl"], "is a file; --output of --engine ray"),
        (["--input", "{tmp}/rows.txt", "--output", "{tmp}/out"], "cannot tell its format from its name"),
    ],
)
def test_bad_command_input_is_one_line(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bad inputs or output of --engine ray: one line on stderr, exit 2, no traceback."""
    write_lines(tmp_path / "rows.jsonl", generated_rows(3))
    write_lines(tmp_path / "rows.txt", generated_rows(3))
    argv = ["check", "extract-check", "--engine", "ray", *(a.format(tmp=tmp_path) for a in args)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert message in err
    assert "Traceback" not in err


def test_files_this_command_did_not_write_are_never_removed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An output folder with part-* files but no _run.json is refused in one line, its files kept."""
    source = write_lines(tmp_path / "rows.jsonl", generated_rows(3))
    out = tmp_path / "out"
    out.mkdir()
    (out / "part-00000.parquet").write_bytes(b"the user's own data")
    argv = ["check", "extract-check", "--engine", "ray", "--input", str(source), "--output", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"langchain-refs: {out}: holds part-* or _done files this command did not write; " + (
        "choose an empty or new folder"
    )
    assert (out / "part-00000.parquet").read_bytes() == b"the user's own data"


def test_a_shard_that_fails_unexpectedly_is_not_marked_complete(tmp_path: Path) -> None:
    """A worker error that is not a bad row (say, the model's server is down) leaves the shard to the next run."""
    from langchain_refs.apps.check import ray_engine
    from langchain_refs.apps.check.items import Checkers

    options = {"mode": "extract-check", "aggregator": "strict", "model": None, "claim_format": "triplet"}
    options |= {"threshold": 0.4, "output_format": "jsonl"}
    (tmp_path / "_done").mkdir()
    worker = ray_engine._ShardChecker(options=options, files=[("in.jsonl", "json")], output=str(tmp_path))

    class Down:
        def check_batch(self, *_: Any) -> Any:
            raise ConnectionError("the model's server hung up\nsecond line")

    worker.checkers = Checkers(extractor=worker.checkers.extractor, checker=Down())
    shard = {"file": 0, "shard": 3, "shards": 4, "where": "line", "numbers": [1], "nulled": 0}
    shard |= {"items": [json.dumps({"response": "Paris is in France.", "reference": "Paris."})], "problems": [""]}
    summary = worker(pa.Table.from_pylist([shard]))
    assert summary["failure"] == ["ConnectionError: the model's server hung up"]
    assert list(tmp_path.rglob("*")) == [tmp_path / "_done"]


def test_unreachable_cluster_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--address where no Ray listens: one line saying so at once (Ray alone retries for minutes)."""
    source = write_lines(tmp_path / "rows.jsonl", generated_rows(3))
    argv = ["check", "extract-check", "--engine", "ray", "--input", str(source), "--output", str(tmp_path / "out")]
    assert main([*argv, "--address", "127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("langchain-refs: cannot reach the Ray cluster at 127.0.0.1:1 (Connection refused)"), err
    assert len(err.strip().splitlines()) == 1


def test_the_callers_ray_session_and_progress_setting_are_kept(tmp_path: Path) -> None:
    """In a process already in a Ray session, the session stays and the progress-bar setting is put back."""
    context = ray.data.DataContext.get_current()
    before = context.enable_progress_bars
    try:
        context.enable_progress_bars = False
        check_with_ray(str(EXAMPLE), str(tmp_path / "out"), batch_size=50, concurrency=1, progress=True)
        assert ray.is_initialized()
        assert context.enable_progress_bars is False
    finally:
        context.enable_progress_bars = before


def test_a_ray_session_it_started_is_ended(tmp_path: Path) -> None:
    """With no Ray session, check_with_ray starts a local one and ends it before it returns."""
    ray.shutdown()
    try:
        summary = check_with_ray(str(EXAMPLE), str(tmp_path / "out"), batch_size=50, concurrency=1, num_cpus=1)
        assert (summary.rows, summary.written, summary.failed_shards) == (4, 4, 0)
        assert not ray.is_initialized()
    finally:
        # The module's session again, for any test after this one (the fixture ends it).
        if not ray.is_initialized():
            ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
