"""The package as users get it: pure core modules, and a wheel that carries its templates."""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def pyproject_version() -> str:
    """The version as pyproject.toml states it: the one place it is written."""
    found = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.MULTILINE)
    assert found
    return found[1]


def build_wheel(folder: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(folder), str(ROOT)],
        check=True,
    )
    (wheel,) = folder.glob("langchain_refs-*.whl")
    return wheel


def test_parser_and_registry_import_no_langchain_nor_jinja() -> None:
    """The parser, registry, session and data modules are pure Python."""
    code = textwrap.dedent(
        """
        import sys
        import langchain_refs.streaming._parser, langchain_refs.streaming._registry
        import langchain_refs.streaming._references, langchain_refs.streaming._session
        bad = sorted(m for m in sys.modules if m.split(".")[0] in ("langchain_core", "jinja2"))
        print(bad)
        """
    )
    # Import the modules without running the package __init__.
    runner = (
        "import importlib.util, sys, types\n"
        f"pkg = types.ModuleType('langchain_refs'); pkg.__path__ = [{str(ROOT / 'langchain_refs')!r}]\n"
        "sys.modules['langchain_refs'] = pkg\n"
        "wing = types.ModuleType('langchain_refs.streaming')\n"
        f"wing.__path__ = [{str(ROOT / 'langchain_refs' / 'streaming')!r}]\n"
        "sys.modules['langchain_refs.streaming'] = wing\n"
    )
    out = subprocess.run([sys.executable, "-c", runner + code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_wheel_carries_the_templates(tmp_path: Path) -> None:
    """A built wheel, installed in a fresh venv, renders every style from its own copy."""
    wheel = build_wheel(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)], check=True
    )
    venv_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # Dependencies come from this environment; the package itself only from the wheel.
    (Path(venv_site) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    script = textwrap.dedent(
        f"""
        import langchain_refs as lr
        from langchain_core.documents import Document
        assert lr.__file__.startswith({venv_site!r}), lr.__file__
        assert str(lr.styles_directory()).startswith({venv_site!r}), lr.styles_directory()
        docs = [Document("x", metadata={{"source": "b.pdf"}})]
        for style in (lr.TextReferenceStyle(), lr.MarkdownReferenceStyle(), lr.HTMLReferenceStyle(),
                      lr.EmptyReferenceStyle(), lr.TemplateReferenceStyle(name="text")):
            s = lr.ReferenceSession(docs, source_key=style.source_of, style=style)
            print(type(style).__name__, repr(s.feed("A[1](id=1)") + s.close()))
        print(lr.__version__)
        """
    )
    out = subprocess.run([str(python), "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "TextReferenceStyle 'A[1]\\n\\n- [1] b.pdf\\n'"
    assert lines[1].startswith("MarkdownReferenceStyle 'A<sup>[[1](b.pdf)]</sup>")
    assert lines[2].startswith('HTMLReferenceStyle \'A<sup class="citation">')
    assert lines[3] == "EmptyReferenceStyle 'A'"
    assert lines[5] == pyproject_version()


@pytest.mark.slow
def test_wheel_carries_the_pages_and_their_files(tmp_path: Path) -> None:
    """The chat and checking pages and every file of /static/ (scripts, styles, icon) ship in the wheel."""
    names = set(zipfile.ZipFile(build_wheel(tmp_path)).namelist())
    apps = ROOT / "langchain_refs" / "apps"
    files = [apps / "chat_ui.html", apps / "check" / "page.html", *sorted((apps / "static").iterdir())]
    assert len(files) > 6
    assert {path.relative_to(ROOT).as_posix() for path in files} <= names


def test_version_is_written_in_one_place() -> None:
    """pyproject.toml holds the version; the package reads it from its metadata and writes it nowhere else."""
    import langchain_refs

    version = pyproject_version()
    assert langchain_refs.__version__ == version
    for path in [*(ROOT / "langchain_refs").rglob("*.py"), ROOT / "langchain_refs_cli.py"]:
        assert f'"{version}"' not in path.read_text(encoding="utf-8"), path


def test_license_is_the_apache_2_text() -> None:
    """LICENSE holds the Apache License 2.0, which pyproject.toml declares."""
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.lstrip().startswith("Apache License\n                           Version 2.0, January 2004")
    assert "END OF TERMS AND CONDITIONS" in text
    assert len(text.split()) > 1500  # the whole text, not a notice
    assert 'license = "Apache-2.0"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_changelog_keeps_a_changelog() -> None:
    """CHANGELOG.md follows Keep a Changelog: an Unreleased section, then versions with their kinds of change."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## \[([^\]]+)\]", text, re.MULTILINE)
    assert versions[0] == "Unreleased"
    assert pyproject_version() in versions
    kinds = set(re.findall(r"^### (\w+)$", text, re.MULTILINE))
    assert kinds
    assert kinds <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


@pytest.mark.slow
def test_wheel_metadata_is_release_ready(tmp_path: Path) -> None:
    """The wheel names its license (and carries its text), authors and classifiers, and its script's entry."""
    with zipfile.ZipFile(build_wheel(tmp_path)) as wheel:
        info = f"langchain_refs-{pyproject_version()}.dist-info"
        headers = wheel.read(f"{info}/METADATA").decode().split("\n\n", 1)[0].splitlines()
        license_text = wheel.read(f"{info}/licenses/LICENSE").decode()
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
        names = wheel.namelist()
    assert "License-Expression: Apache-2.0" in headers
    assert "License-File: LICENSE" in headers
    assert license_text == (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert any(h.startswith("Author: ") for h in headers)
    classifiers = [h.removeprefix("Classifier: ") for h in headers if h.startswith("Classifier: ")]
    assert "Typing :: Typed" in classifiers
    assert "Programming Language :: Python :: 3" in classifiers
    assert "langchain-refs = langchain_refs_cli:main" in entry_points
    assert "langchain_refs_cli.py" in names
