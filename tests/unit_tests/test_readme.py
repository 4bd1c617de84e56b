"""The README's and the docs' code runs, its printed samples are true, and CI runs the README's test command.

Each python block of a page is a complete program, run on its own, unless the
page says that its examples continue one Python session: then they run in
order in one namespace. A ``text`` block right after a python block is what it
prints.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.DOTALL | re.MULTILINE)
ONE_SESSION = "The examples on this page continue one Python session"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


# Pages other engineers write; the lead adds them to the nav when they merge.
def blocks(page: Path = ROOT / "README.md") -> list[tuple[str, str]]:
    return [(m[1], m[2]) for m in BLOCK.finditer(page.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_python_blocks_print_what_the_page_shows(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each python block runs (alone, or in one session where the page says so); a text block after it is its output."""
    monkeypatch.chdir(ROOT)  # the examples name files of the repository by relative paths
    found = blocks(page)
    one_session = ONE_SESSION in page.read_text(encoding="utf-8")
    shared: dict[str, object] = {"__name__": "docs"}
    for index, (language, code) in enumerate(found):
        if language != "python":
            continue
        namespace = shared if one_session else {"__name__": "docs"}
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"{page.name} block {index}", "exec"), namespace)
        following = found[index + 1] if index + 1 < len(found) else None
        if following and following[0] == "text":
            assert out.getvalue().rstrip("\n") == following[1].rstrip("\n"), f"{page.name} block {index}"


def test_the_pages_hold_the_examples() -> None:
    """The README has its quick start, and the docs at least ten more examples, all of them run above."""
    assert sum(language == "python" for language, _ in blocks()) >= 1
    assert sum(language == "python" for page in PAGES[1:] for language, _ in blocks(page)) >= 10


def test_ci_runs_the_readme_commands() -> None:
    """The README shows a demo command and a test command; .ci/run runs the test command."""
    demo_line, test_line = next(code for language, code in blocks() if language == "bash").strip().splitlines()
    assert "langchain-refs demo" in demo_line
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in test_line.split(" && "):
        assert command in ci, command


def test_readme_demo_sample_is_what_the_demo_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """The sample terminal output in the README is what `langchain-refs demo` prints."""
    from langchain_refs.apps import main

    sample = next(code for language, code in blocks() if language == "text" and code.startswith("$ langchain-refs"))
    command, expected = sample.split("\n", 1)
    question = command.split('"')[1]
    main(["demo", "--delay", "0", question])
    assert capsys.readouterr().out.rstrip("\n") == expected.rstrip("\n")


def test_readme_fits_on_a_screen_or_two_and_links_every_docs_page() -> None:
    """The README is under 250 lines and its table links each page of the docs site."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 250
    for page in PAGES[1:]:
        if page.name != "index.md":
            assert f"](docs/{page.name})" in readme, page.name


def test_every_docs_page_is_in_the_site_nav() -> None:
    """mkdocs.yml lists each page of docs/ in its nav, and only pages that exist."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r"^  - [^:]+: (\S+\.md)$", config, re.MULTILINE))
    present = {page.name for page in PAGES[1:]}
    assert listed == present


@pytest.mark.parametrize(
    ("section", "page"),
    [
        ("bench", "docs/cost.md"),
        ("scaling", "docs/cost.md"),
        ("eval", "docs/grounding.md"),
        ("claims", "docs/checking.md"),
        ("ray", "docs/ray.md"),
    ],
)
def test_generated_tables_live_in_their_docs_page(section: str, page: str) -> None:
    """Each generated table's markers are in one docs page, where its command (--write-readme) writes it."""
    from bench.readme import section_page

    assert section_page(section) == ROOT / page


def test_a_generated_table_is_written_into_its_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """replace_section rewrites only the text between the markers, in the page that holds them."""
    import bench.readme

    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# Title\n", encoding="utf-8")
    page = tmp_path / "docs" / "cost.md"
    page.write_text("before\n<!-- bench:start -->\nold\n<!-- bench:end -->\nafter\n", encoding="utf-8")
    monkeypatch.setattr(bench.readme, "ROOT", tmp_path)
    monkeypatch.setattr(bench.readme, "README", tmp_path / "README.md")
    bench.readme.replace_section("bench", "| new | table |")
    expected = "before\n<!-- bench:start -->\n| new | table |\n<!-- bench:end -->\nafter\n"
    assert page.read_text(encoding="utf-8") == expected
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == "# Title\n"
    with pytest.raises(SystemExit, match="must be in one page, found in no page"):
        bench.readme.replace_section("ray", "x")
