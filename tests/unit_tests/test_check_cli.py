"""`langchain-refs check` on bad files, interruptions and saved progress: one line, never a traceback."""

from __future__ import annotations

import importlib
import json
import math
import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langchain_refs.apps import main
from langchain_refs.apps.check import _command
from langchain_refs.apps.check import items as check_items

A = [
    {"response": "Paris is in France.", "reference": "Paris is in France."},
    {"response": "Rome is in Italy.", "reference": "Rome is in Italy."},
    {"response": "Berlin is in Germany.", "reference": "Berlin is in Germany."},
    {"response": "Madrid is in Spain.", "reference": "Madrid is in Spain."},
]
B = [
    {"response": "Water boils at 100 degrees.", "reference": "Water boils at 100 degrees."},
    {"response": "Ice melts at 0 degrees.", "reference": "Ice melts at 0 degrees."},
]


def run(*args: str) -> int:
    return main(["check", *args, "--no-progress"])


def write_json(path: Path, items: Any) -> Path:
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def one_line(err: str) -> str:
    """The only line written on stderr (fails when there are more, or a traceback)."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def interrupt_on_call(monkeypatch: pytest.MonkeyPatch, n: int) -> list[str]:
    """Make the per-item step raise KeyboardInterrupt (Ctrl-C) on its n-th call; returns the responses seen."""
    real = _command._process
    seen: list[str] = []

    def process(item: dict[str, Any], *args: Any) -> dict[str, Any]:
        seen.append(item["response"])
        if len(seen) == n:
            raise KeyboardInterrupt
        return real(item, *args)

    monkeypatch.setattr(_command, "_process", process)
    return seen


def count_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    real = _command._process
    seen: list[str] = []
    monkeypatch.setattr(_command, "_process", lambda item, *a: (seen.append(item["response"]), real(item, *a))[1])
    return seen


# -- saved progress -----------------------------------------------------------


def test_ctrl_c_says_how_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C mid-file exits 130 with one line saying to run again; the rerun does only what is left."""
    source, out = write_json(tmp_path / "a.json", A), tmp_path / "out.json"
    interrupt_on_call(monkeypatch, 3)
    assert run("extract", "--input", str(source), "--output", str(out)) == 130
    line = one_line(capsys.readouterr().err)
    assert line.startswith("interrupted — run again to resume")
    assert "2 of 4 items saved" in line
    assert not out.exists()
    seen = count_calls(monkeypatch)
    assert run("extract", "--input", str(source), "--output", str(out)) == 0
    assert seen == ["Berlin is in Germany.", "Madrid is in Spain."]
    assert [r["response"] for r in json.loads(out.read_text())] == [item["response"] for item in A]


def test_progress_of_another_input_is_not_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An interrupted extract on A, then extract-check on B with the same --output: B's items only, said so."""
    a, b, out = write_json(tmp_path / "a.json", A), write_json(tmp_path / "b.json", B), tmp_path / "out.json"
    interrupt_on_call(monkeypatch, 4)
    assert run("extract", "--input", str(a), "--output", str(out)) == 130
    capsys.readouterr()
    seen = count_calls(monkeypatch)
    assert run("extract-check", "--input", str(b), "--output", str(out)) == 0
    err = capsys.readouterr().err
    assert "saved progress is from another input or other options; starting over" in err
    assert seen == ["Water boils at 100 degrees.", "Ice melts at 0 degrees."]
    results = json.loads(out.read_text())
    assert [r["response"] for r in results] == ["Water boils at 100 degrees.", "Ice melts at 0 degrees."]
    assert all("Y" in r for r in results)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("extract", ["extract-check"]),  # another mode
        ("extract", ["extract", "--aggregator", "soft"]),  # another option
        ("extract-check", ["extract-check", "--threshold", "0.9"]),  # another threshold
    ],
)
def test_progress_of_other_options_is_not_reused(
    first: str,
    second: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The same input under another mode or option starts over: every item is processed again."""
    source, out = write_json(tmp_path / "a.json", A), tmp_path / "out.json"
    interrupt_on_call(monkeypatch, 3)
    assert run(first, "--input", str(source), "--output", str(out)) == 130
    seen = count_calls(monkeypatch)
    assert run(second[0], "--input", str(source), "--output", str(out), *second[1:]) == 0
    assert "starting over" in capsys.readouterr().err
    assert len(seen) == 4


def test_same_bytes_with_another_name_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Progress is keyed to the input's content, not its name: a copy of the file resumes."""
    source, out = write_json(tmp_path / "a.json", A), tmp_path / "out.json"
    interrupt_on_call(monkeypatch, 2)
    assert run("extract", "--input", str(source), "--output", str(out)) == 130
    copy = tmp_path / "copy.json"
    copy.write_bytes(source.read_bytes())
    seen = count_calls(monkeypatch)
    assert run("extract", "--input", str(copy), "--output", str(out)) == 0
    assert "resuming: 1 items already done" in capsys.readouterr().err
    assert len(seen) == 3


def test_progress_line_cut_short_is_redone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A progress line cut short by a crash is redone, and the records appended after it stay readable."""
    source, out = write_json(tmp_path / "a.json", A), tmp_path / "out.json"
    interrupt_on_call(monkeypatch, 3)
    assert run("extract", "--input", str(source), "--output", str(out)) == 130
    partial = tmp_path / "out.json.partial.jsonl"
    partial.write_text(partial.read_text()[:-10], encoding="utf-8")  # the second record loses its end
    seen = interrupt_on_call(monkeypatch, 2)
    assert run("extract", "--input", str(source), "--output", str(out)) == 130
    assert seen == ["Rome is in Italy.", "Berlin is in Germany."]
    seen = count_calls(monkeypatch)
    assert run("extract", "--input", str(source), "--output", str(out)) == 0
    assert seen == ["Berlin is in Germany.", "Madrid is in Spain."]
    assert [r["response"] for r in json.loads(out.read_text())] == [item["response"] for item in A]


# -- files that cannot be read or written: one line, exit 2 -----------------------


def test_missing_input_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing input file is one line naming it, exit 2."""
    assert run("extract", "--input", str(tmp_path / "nope.json"), "--output", str(tmp_path / "o.json")) == 2
    assert one_line(capsys.readouterr().err) == f"langchain-refs: {tmp_path / 'nope.json'}: no such file"


@pytest.mark.parametrize("option", ["--input", "--output"])
def test_an_empty_file_name_is_named(option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--input "" or --output "" says the name is empty (not that "." is a folder), one line, exit 2."""
    names = {"--input": str(write_json(tmp_path / "a.json", A)), "--output": str(tmp_path / "o.json"), option: ""}
    with pytest.raises(SystemExit) as stop:
        run("extract", "--input", names["--input"], "--output", names["--output"])
    assert stop.value.code == 2
    assert one_line(capsys.readouterr().err).endswith(
        f"argument {option}: is empty: give a file name (see langchain-refs check --help)"
    )


def test_input_that_is_not_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Latin-1 input is one line saying it is not UTF-8, with the offending byte, exit 2."""
    source = tmp_path / "latin1.json"
    source.write_bytes('[{"response": "Café au lait."}]'.encode("latin-1"))
    assert run("extract", "--input", str(source), "--output", str(tmp_path / "o.json")) == 2
    assert "not UTF-8 text (byte 0xe9 at offset 18)" in one_line(capsys.readouterr().err)


def test_missing_output_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An output in a folder that does not exist is one line naming the folder, exit 2, nothing written."""
    source = write_json(tmp_path / "a.json", A)
    target = tmp_path / "nowhere" / "o.json"
    assert run("extract", "--input", str(source), "--output", str(target)) == 2
    assert f"the folder {tmp_path / 'nowhere'} does not exist" in one_line(capsys.readouterr().err)
    assert not (tmp_path / "nowhere").exists()


def test_an_output_that_is_a_link_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    """--output a symbolic link: the file it names gets the results; the link is not replaced by a file."""
    source = write_json(tmp_path / "a.json", A)
    (tmp_path / "results").mkdir()
    real = tmp_path / "results" / "o.json"
    real.write_text("old", encoding="utf-8")
    real.chmod(0o640)
    link = tmp_path / "o.json"
    link.symlink_to(real)
    assert run("extract", "--input", str(source), "--output", str(link)) == 0
    assert link.is_symlink()
    assert len(json.loads(real.read_text(encoding="utf-8"))) == len(A)
    assert real.stat().st_mode & 0o777 == 0o640  # the file keeps its permissions
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["o.json"]  # no temporary file left


def test_a_file_beside_the_output_named_like_a_temporary_one_is_left_alone(tmp_path: Path) -> None:
    """The command's own temporary file never takes the name of a file the user has (``o.json.tmp``)."""
    source = write_json(tmp_path / "a.json", A)
    mine = tmp_path / "o.json.tmp"
    mine.write_text("the user's", encoding="utf-8")
    assert run("extract", "--input", str(source), "--output", str(tmp_path / "o.json")) == 0
    assert mine.read_text(encoding="utf-8") == "the user's"
    assert len(json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))) == len(A)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
def test_an_output_that_is_a_pipe_is_written_to_and_stays_a_pipe(tmp_path: Path) -> None:
    """--output a named pipe (as a shell's process substitution gives): the reader gets the results."""
    source = write_json(tmp_path / "a.json", A)
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    read: list[str] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_text(encoding="utf-8")), daemon=True)
    reader.start()
    assert run("extract", "--input", str(source), "--output", str(fifo)) == 0
    reader.join(timeout=30)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert len(json.loads(read[0])) == len(A)


class DownModel(FakeListChatModel):
    """A chat model whose server does not answer the first ``failures`` calls (then it answers from its list)."""

    failures: int = 10**6
    calls: int = 0

    def _call(self, *args: Any, **kwargs: Any) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionError("connection refused")
        return super()._call(*args, **kwargs)


def down_for_the_first_item(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """``--model fake:m`` a model down for its first call only, then extracting one claim; the input B, the output."""
    model = DownModel(failures=1, responses=['{"claims": ["Ice melts at 0 degrees."]}'] * 4)
    monkeypatch.setattr(check_items, "load_model", lambda spec: model)
    return write_json(tmp_path / "a.json", B), tmp_path / "o.json"


def test_an_item_whose_chat_model_failed_is_an_error_not_a_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--model down: no Neutral nor Abstain is written where the model said nothing; exit 1, each item named."""
    monkeypatch.setattr(check_items, "load_model", lambda spec: DownModel(responses=["unused"]))
    source = write_json(tmp_path / "a.json", B)
    out = tmp_path / "o.json"
    assert run("extract-check", "--input", str(source), "--output", str(out), "--model", "fake:m") == 1
    err = capsys.readouterr().err
    assert "item 1: the chat model failed or its reply could not be read (1 reply; the first: " in err
    assert "ConnectionError('connection refused')" in err
    assert "0 items written" in err
    records = json.loads(out.read_text(encoding="utf-8"))
    assert [set(r) for r in records] == [{"error", "item"}] * len(B)
    assert records[1]["error"].startswith("the chat model failed or its reply could not be read (1 reply; ")


def test_after_a_run_where_the_chat_model_failed_running_again_asks_about_those_items_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The model down for the first item only: exit 1, the progress kept; the next run asks about that item alone."""
    source, out = down_for_the_first_item(tmp_path, monkeypatch)
    assert run("extract", "--input", str(source), "--output", str(out), "--model", "fake:m") == 1
    assert "the chat model failed on 1: run again to ask about those alone" in capsys.readouterr().err
    assert (tmp_path / "o.json.partial.jsonl").exists()
    seen = count_calls(monkeypatch)
    assert run("extract", "--input", str(source), "--output", str(out), "--model", "fake:m") == 0
    assert seen == [B[0]["response"]]
    assert [r["claims"] for r in json.loads(out.read_text(encoding="utf-8"))] == [["Ice melts at 0 degrees."]] * 2
    assert not (tmp_path / "o.json.partial.jsonl").exists()


def test_an_item_whose_chat_model_failed_is_asked_again_when_the_run_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The model down for the first item, then Ctrl-C: the resumed run asks about that item again, not only the rest."""
    source, out = down_for_the_first_item(tmp_path, monkeypatch)
    interrupt_on_call(monkeypatch, 2)
    assert run("extract", "--input", str(source), "--output", str(out), "--model", "fake:m") == 130
    assert "(0 of 2 items saved in " in capsys.readouterr().err
    assert (tmp_path / "o.json.partial.jsonl").read_text(encoding="utf-8") == ""  # the failed item not saved as done
    seen = count_calls(monkeypatch)
    assert run("extract", "--input", str(source), "--output", str(out), "--model", "fake:m") == 0
    assert seen == [item["response"] for item in B]
    assert [r["claims"] for r in json.loads(out.read_text(encoding="utf-8"))] == [["Ice melts at 0 degrees."]] * len(B)


@pytest.mark.skipif(not Path("/dev/stdout").exists(), reason="no /dev/stdout on this system")
@pytest.mark.parametrize("stdout", ["pipe", "file opened for >>"])
def test_an_output_to_dev_stdout_goes_where_the_shell_sent_it(stdout: str, tmp_path: Path) -> None:
    """--output /dev/stdout: the results reach the pipe, or are appended to the file of a ``>>``; no progress file."""
    source = write_json(tmp_path / "a.json", A)
    command = [sys.executable, "-m", "langchain_refs", "check", "extract", "--input", str(source)]
    command += ["--output", "/dev/stdout", "--no-progress"]
    if stdout == "pipe":
        done = subprocess.run(command, capture_output=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert len(json.loads(done.stdout)) == len(A)
        assert not Path("/dev/stdout.partial.jsonl").exists()  # a stream cannot be resumed: no progress, none in /dev
        return
    log = tmp_path / "log.txt"
    log.write_text("HEADER\n", encoding="utf-8")
    with log.open("a", encoding="utf-8") as appended:
        done = subprocess.run(command, stdout=appended, stderr=subprocess.PIPE, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    header, results = log.read_text(encoding="utf-8").split("\n", 1)
    assert header == "HEADER"
    assert len(json.loads(results)) == len(A)


@pytest.mark.skipif(not Path("/dev/stdout").exists(), reason="no /dev/stdout on this system")
def test_a_dash_is_standard_input_and_output_and_no_file_is_named_dash(tmp_path: Path) -> None:
    """``--input - --output -``: read from the pipe, written to it (the list ends in a line end); no file "-"."""
    command = [sys.executable, "-m", "langchain_refs", "check", "extract", "--input", "-", "--output", "-"]
    done = subprocess.run(command, input=json.dumps(A).encode(), capture_output=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(b"]\n")
    assert [r["response"] for r in json.loads(done.stdout)] == [item["response"] for item in A]
    assert list(tmp_path.iterdir()) == []


def test_a_json_list_output_ends_with_a_line_end(tmp_path: Path) -> None:
    """A terminal or ``cat`` puts what follows on a line of its own."""
    source = write_json(tmp_path / "a.json", A)
    out = tmp_path / "o.json"
    assert run("extract", "--input", str(source), "--output", str(out), "--no-progress") == 0
    assert out.read_text(encoding="utf-8").endswith("]\n")


def test_a_parquet_output_of_the_local_engine_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The local engine writes JSON: a .parquet name would hold JSON text, so it is refused, the fix named."""
    source = write_json(tmp_path / "a.json", A)
    assert run("extract", "--input", str(source), "--output", str(tmp_path / "o.parquet")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "Parquet is --engine ray's (--output-format parquet)" in err
    assert not (tmp_path / "o.parquet").exists()


@pytest.mark.skipif(not Path("/dev/stdout").exists(), reason="no /dev/stdout on this system")
def test_a_reader_of_dev_stdout_that_leaves_is_no_error_and_a_closed_stderr_no_crash(tmp_path: Path) -> None:
    """`--output /dev/stdout | head`: the reader leaving is not an error (exit 0, nothing said), stderr closed too."""
    source = write_json(tmp_path / "a.json", A)
    command = [sys.executable, "-m", "langchain_refs", "check", "extract", "--input", str(source)]
    command += ["--output", "/dev/stdout"]
    # The reader closed before a byte is written (a pipe whose reading end is shut); stderr closed (`2>&-`).
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(command, stdout=write, stderr=subprocess.DEVNULL, timeout=120, cwd=tmp_path)
    finally:
        os.close(write)
    assert done.returncode == 0
    # Stderr closed: its messages go nowhere, never into the results written to /dev/stdout.
    done = subprocess.run(
        command, capture_output=False, stdout=subprocess.PIPE, timeout=120, cwd=tmp_path, preexec_fn=lambda: os.close(2)
    )
    assert done.returncode == 0
    assert len(json.loads(done.stdout)) == len(A)


def test_deeply_nested_json_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A JSON list nested 100,000 deep is one line, exit 2 (Python's parser would raise RecursionError)."""
    source = tmp_path / "deep.json"
    source.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert run("extract", "--input", str(source), "--output", str(tmp_path / "o.json")) == 2
    assert one_line(capsys.readouterr().err).endswith("cannot read this JSON: nested too deeply to read")


def test_integer_longer_than_python_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An integer of 5,000 digits in a JSON list is one line saying so, exit 2."""
    source = tmp_path / "big.json"
    source.write_text('[{"response": "Paris is in France.", "n": ' + "7" * 5000 + "}]", encoding="utf-8")
    assert run("extract", "--input", str(source), "--output", str(tmp_path / "o.json")) == 2
    assert "an integer of 5000 digits" in one_line(capsys.readouterr().err)


def test_json_lines_that_cannot_be_read_are_named_and_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In JSON Lines, a too-deep line and a too-long integer are named and skipped; the rest is done; exit 1."""
    source = tmp_path / "in.jsonl"
    source.write_text(
        json.dumps(A[0]) + "\n"
        '{"response": "x", "deep": ' + "[" * 100_000 + "}\n"
        '{"response": "x", "n": ' + "1" * 5000 + "}\n" + json.dumps(A[1]) + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    assert run("extract", "--input", str(source), "--output", str(out)) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{source}: line 2: cannot read this JSON: nested too deeply to read; skipped" in err
    assert f"{source}: line 3: cannot read this JSON: an integer of 5000 digits" in err
    assert "2 items written" in err
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r.get("response") for r in results] == ["Paris is in France.", None, None, "Rome is in Italy."]
    assert results[1] == {"error": "cannot read this JSON: nested too deeply to read", "line": 2}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("hello\nthis is a note, not JSON\n", "not JSON, nor JSON Lines (line 1: Expecting value at column 1)"),
        ("<html><body>a page</body></html>", "not JSON, nor JSON Lines (line 1: Expecting value at column 1)"),
        ("", "the file is empty"),
        ("  \n\n", "the file is empty"),
        ("[ \n ]", "the JSON list is empty"),
        ('{\n  "response": "Paris is in France."\n}\n', "one JSON value, not a list of items"),
        # Pretty-printed, one of its lines JSON alone (the string of a list): still one value, not JSON Lines.
        ('{\n  "response": "Paris.",\n  "reference": [\n    "Paris."\n  ]\n}\n', "one JSON value, not a list of items"),
    ],
)
def test_input_that_is_not_json_or_holds_no_items(
    content: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file that is not JSON nor JSON Lines, or holds no items: one line saying so, exit 2, nothing written."""
    source = tmp_path / "in.txt"
    source.write_text(content, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert run("extract-check", "--input", str(source), "--output", str(out)) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"langchain-refs: {source}: {expected}"), line
    assert list(tmp_path.iterdir()) == [source]


def test_json_lines_with_some_lines_that_are_not_json_go_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """JSON Lines whose first line is not JSON but others are: that line is an error record, the rest is done."""
    source = tmp_path / "in.jsonl"
    source.write_text("a header line\n" + json.dumps(A[0]) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert run("extract", "--input", str(source), "--output", str(out)) == 1
    results = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert results[0]["line"] == 1
    assert results[1]["claims"] == ["Paris is in France."]
    assert "1 item written to" in capsys.readouterr().err


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_lone_surrogate_is_an_error_record_for_its_item_alone(
    suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An item holding a lone surrogate (in a field checked or not) is an error record; the others are written."""
    items = [A[0], {**A[1], "response": "Rome \ud800 is in Italy."}, {**A[2], "note": "\udfff"}, A[3]]
    source = tmp_path / f"in{suffix}"
    # json.dumps writes each lone surrogate as its escape, as a JSON file holds it.
    source.write_text(
        "".join(json.dumps(i) + "\n" for i in items) if suffix == ".jsonl" else json.dumps(items), encoding="utf-8"
    )
    out = tmp_path / "out.jsonl"
    assert run("extract-check", "--input", str(source), "--output", str(out)) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    where = "line" if suffix == ".jsonl" else "item"
    assert f"{source}: {where} 2: holds \\ud800, a lone surrogate that UTF-8 cannot write; skipped" in err
    assert f"{source}: {where} 3: holds \\udfff, a lone surrogate that UTF-8 cannot write; skipped" in err
    results = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r.get("response") for r in results] == ["Paris is in France.", None, None, "Madrid is in Spain."]
    assert results[1] == {"error": "holds \\ud800, a lone surrogate that UTF-8 cannot write", where: 2}
    assert [r.get("Y") for r in results] == ["Entailment", None, None, "Entailment"]


def test_utf8_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    """A UTF-8 file that starts with a byte-order mark (as Windows tools write) reads like one without."""
    plain, marked = write_json(tmp_path / "plain.json", A), tmp_path / "marked.json"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    lines = tmp_path / "marked.jsonl"
    lines.write_bytes(b"\xef\xbb\xbf" + "\n".join(json.dumps(item) for item in A).encode())
    assert run("extract-check", "--input", str(plain), "--output", str(tmp_path / "p.json")) == 0
    assert run("extract-check", "--input", str(marked), "--output", str(tmp_path / "m.json")) == 0
    assert run("extract-check", "--input", str(lines), "--output", str(tmp_path / "l.jsonl")) == 0
    expected = json.loads((tmp_path / "p.json").read_text())
    assert json.loads((tmp_path / "m.json").read_text()) == expected
    assert [json.loads(line) for line in (tmp_path / "l.jsonl").read_text().splitlines()] == expected


def strict_json(text: str) -> Any:
    """Parse JSON as the standard defines it: NaN and Infinity are not JSON."""

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in JSON output")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_numbers_json_cannot_hold_are_written_as_null(
    suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """NaN, Infinity, -Infinity and 1e999 in the input come out as null, and the command says how many."""
    source = tmp_path / "nan.json"
    source.write_text(
        '[{"response": "Paris is in France.", "reference": "Paris is in France.", '
        '"a": NaN, "b": Infinity, "c": -Infinity, "d": 1e999, "e": 0.5}]',
        encoding="utf-8",
    )
    out = tmp_path / f"out{suffix}"
    assert run("extract-check", "--input", str(source), "--output", str(out)) == 0
    text = out.read_text()
    result = strict_json(text)[0] if suffix == ".json" else strict_json(text.splitlines()[0])
    assert [result[k] for k in "abcde"] == [None, None, None, None, 0.5]
    assert "4 numbers JSON cannot hold" in capsys.readouterr().err


def test_scores_that_are_not_finite_are_written_as_null(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checker score of NaN (say, from a model's reply) is written as null, never as NaN."""
    from langchain_refs.grounding import ClaimCheck

    class NaNChecker:
        def check_batch(self, claims: list[Any], references: list[str], question: Any) -> list[ClaimCheck]:
            return [ClaimCheck(label="Neutral", score=math.nan) for _ in claims]

    monkeypatch.setattr(check_items, "ScorerClaimChecker", lambda threshold: NaNChecker())
    source, out = write_json(tmp_path / "a.json", A[:1]), tmp_path / "out.json"
    assert run("extract-check", "--input", str(source), "--output", str(out)) == 0
    assert [c["score"] for c in strict_json(out.read_text())[0]["checks"]] == [None]


# -- any other failure: one line -------------------------------------------------


def test_unexpected_error_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An error nobody planned for (a model's network error, a bug) is one line with its type, exit 2."""

    def fail(*_: Any) -> dict[str, Any]:
        raise ConnectionError("the model's server hung up\nand a long second line")

    monkeypatch.setattr(_command, "_process", fail)
    source = write_json(tmp_path / "a.json", A)
    assert run("extract", "--input", str(source), "--output", str(tmp_path / "o.json")) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith("langchain-refs: ConnectionError: the model's server hung up")


def test_unexpected_error_traceback_on_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """LANGCHAIN_REFS_DEBUG=1 lets the error through, for a bug report."""
    monkeypatch.setenv("LANGCHAIN_REFS_DEBUG", "1")
    monkeypatch.setattr(_command, "_process", lambda *_: 1 / 0)
    source = write_json(tmp_path / "a.json", A)
    with pytest.raises(ZeroDivisionError):
        run("extract", "--input", str(source), "--output", str(tmp_path / "o.json"))


@pytest.mark.parametrize("value", ["nan", "1.5", "-0.1", "many"])
def test_threshold_must_be_a_share(value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--threshold takes a number from 0 to 1 (argparse's usage error, exit 2)."""
    with pytest.raises(SystemExit) as stop:
        run("check", "--input", "in.json", "--output", str(tmp_path / "o.json"), "--threshold", value)
    assert stop.value.code == 2
    assert "must be a number from 0 to 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "value"),
    [("--address", "ray://head:10001"), ("--batch-size", "10"), ("--concurrency", "2"), ("--output-format", "parquet")],
)
def test_ray_options_need_the_ray_engine(
    option: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An option of the Ray engine given to the local one is one line and exit 2, not silently ignored."""
    source = write_json(tmp_path / "a.json", A)
    assert run("extract", "--input", str(source), "--output", str(tmp_path / "o.json"), option, value) == 2
    assert one_line(capsys.readouterr().err) == f"langchain-refs: {option}: only with --engine ray"
    assert not (tmp_path / "o.json").exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["extract", "--claim-format", "subsentence"], "--claim-format: only with --model"),
        (["extract", "--threshold", "0.9"], "--threshold: only when claims are checked (check, extract-check)"),
        (["check", "--claim-format", "triplet", "--model", "fake:m"], "--claim-format: only when claims are extracted"),
        (["check", "--threshold", "0.9", "--model", "fake:m"], "--threshold: only for the offline checker"),
    ],
)
def test_an_option_the_run_would_not_use_is_refused(
    arguments: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An option the mode or the model does not use is one line and exit 2, not silently ignored."""
    source = write_json(tmp_path / "a.json", A)
    assert run(arguments[0], "--input", str(source), "--output", str(tmp_path / "o.json"), *arguments[1:]) == 2
    assert one_line(capsys.readouterr().err).startswith(f"langchain-refs: {message}")
    assert not (tmp_path / "o.json").exists()


def test_the_output_may_not_be_the_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--output naming the input file would overwrite it: one line and exit 2, the input untouched."""
    source = write_json(tmp_path / "a.json", A)
    before = source.read_bytes()
    assert run("extract", "--input", str(source), "--output", str(tmp_path / "." / "a.json")) == 2
    assert one_line(capsys.readouterr().err).startswith("langchain-refs: --output is the input file")
    assert source.read_bytes() == before


def test_check_help_is_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    """`check --help` shows its description without reStructuredText's double backticks."""
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = capsys.readouterr().out
    assert "Input: a JSON list, or JSON Lines, of objects in RefChecker's shape:" in out
    assert "response (and optionally question) to extract from" in out
    assert "``" not in out


def test_serve_help_says_what_host_and_port_are(capsys: pytest.CaptureFixture[str]) -> None:
    """`serve --help` gives a line of help for --host and for --port."""
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = capsys.readouterr().out
    assert re.search(r"--host HOST +the address to listen on", out), out
    assert re.search(r"--port PORT +the port to listen on", out), out


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("langchain_refs.apps.checking", "langchain_refs.apps.check.items"),
        ("langchain_refs.apps.check_page", "langchain_refs.apps.check.page"),
        ("langchain_refs.apps.check_ray", "langchain_refs.apps.check.ray_engine"),
    ],
)
def test_old_check_module_paths_still_give_their_names_with_a_deprecation_warning(old: str, new: str) -> None:
    """The checking modules moved into apps/check: each old path gives the same public names, each with a warning."""
    moved, home = importlib.import_module(old), importlib.import_module(new)
    assert moved.__all__ == home.__all__
    for name in home.__all__:
        with pytest.warns(DeprecationWarning, match=re.escape(f"{old} moved to {new}")):
            assert getattr(moved, name) is getattr(home, name)
    with pytest.raises(AttributeError, match="_process"):
        moved._process  # noqa: B018 (only the public names are forwarded)


def test_the_checking_packages_public_names() -> None:
    """apps.check's __all__ is pinned: the checking API, the engines' entry points; the page's routes are apart."""
    from langchain_refs.apps import check

    assert check.__all__ == [
        "MODES",
        "Checkers",
        "ClaimChecking",
        "ClaimExtraction",
        "Mode",
        "RayCheckSummary",
        "build_checkers",
        "check_item",
        "check_with_ray",
        "checked_item",
        "dumps",
        "is_json_list",
        "read_items",
        "read_json_text",
        "run_ray_check",
    ]


def test_the_checking_api_needs_no_web_server() -> None:
    """Importing apps.check loads neither Starlette nor the page (they are the serve extra's), nor Ray."""
    code = "import sys, langchain_refs.apps.check; print(sorted({'starlette', 'ray', 'pyarrow'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
