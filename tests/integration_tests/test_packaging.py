"""The package as users get it: pure core modules, and a wheel that carries its templates."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
    )
    (wheel,) = tmp_path.glob("langchain_refs-*.whl")
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
    assert lines[5] == "0.1.0"
