"""The two builds: what mypyc compiles, what stays Python on purpose, and which build is running.

CI runs the case table, the oracle, the goldens and the agent paths on both builds (``.ci/run``); these tests
pin what differs between them, so that nothing in the core leans on what mypyc takes away.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import re
from collections.abc import Sequence
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Any

import pytest

import langchain_refs
from langchain_refs import (
    COMPILED,
    Citation,
    CitationVerifier,
    MarkdownReferenceStyle,
    Marker,
    Passage,
    ReferenceSession,
    Text,
    TextReferenceStyle,
)
from langchain_refs.streaming import CitationParser, SourceRegistry
from langchain_refs.text import LexicalSupport, SentenceSplitter, Span, find_passages
from tests.unit_tests.fakes import sample_documents

ROOT = Path(__file__).resolve().parents[2]


def hook_modules() -> list[str]:
    """The modules the mypyc build hook compiles, by name, as pyproject.toml lists them."""
    # Read by pattern, not tomllib: the package supports Python 3.10.
    config = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    hook = config.split("[tool.hatch.build.targets.wheel.hooks.mypyc]\n", 1)[1].split("\n[", 1)[0]
    include = re.search(r"^include = \[(.*?)\]", hook, re.MULTILINE | re.DOTALL)
    assert include is not None
    return [path.strip("/").removesuffix(".py").replace("/", ".") for path in re.findall(r'"([^"]+)"', include[1])]


def is_extension(module_name: str) -> bool:
    return str(importlib.import_module(module_name).__file__).endswith(tuple(EXTENSION_SUFFIXES))


def test_every_listed_module_is_of_the_running_build() -> None:
    """COMPILED is true exactly when every module the hook lists is an extension module: no half-compiled core."""
    modules = hook_modules()
    assert {"langchain_refs.streaming._parser", "langchain_refs.streaming._session"} <= set(modules)
    assert {name: is_extension(name) for name in modules} == dict.fromkeys(modules, COMPILED)


@pytest.mark.skipif(
    "LANGCHAIN_REFS_BUILD" not in os.environ,
    reason="LANGCHAIN_REFS_BUILD is not set: only CI, which installs a named build, checks COMPILED against it",
)
def test_the_build_is_the_one_ci_installed() -> None:
    """The build CI installed is the one imported (LANGCHAIN_REFS_BUILD=compiled or pure), not the checkout's."""
    assert os.environ["LANGCHAIN_REFS_BUILD"] in ("compiled", "pure")
    assert COMPILED is (os.environ["LANGCHAIN_REFS_BUILD"] == "compiled")
    if COMPILED:
        assert ROOT not in Path(langchain_refs.__file__).resolve().parents


@pytest.mark.parametrize(
    "module_name",
    [
        # Users subclass styles (format_reference / format_all_references, as in langchain-references 0.2.x).
        "langchain_refs.streaming._styles",
        # CitationVerifier is a runtime-checkable protocol, which mypyc cannot compile.
        "langchain_refs.streaming._protocols",
        # The run plumbing and the Runnable are async generators, which mypyc does not compile.
        "langchain_refs.streaming._plumbing",
        "langchain_refs.streaming._runnable",
        # Users subclass the lexical scorer and the sentence splitter (the scorer's engine compiles).
        "langchain_refs.text._lexical",
        "langchain_refs.text._sentences",
    ],
)
def test_what_stays_python_on_purpose(module_name: str) -> None:
    """Styles, the verifier protocol and the async plumbing are Python in both builds, and the hook leaves them."""
    assert module_name not in hook_modules()
    assert not is_extension(module_name)


def test_a_users_style_subclass_works_in_either_build() -> None:
    """A subclass of a built-in style overriding format_reference renders through the (maybe compiled) session."""

    class Bracketed(MarkdownReferenceStyle):
        def format_reference(self, ref: int, media: Any) -> str:
            return f"<{ref}>"

    style = Bracketed()
    session = ReferenceSession(sample_documents()[:2], source_key=style.source_of, style=style)
    assert session.feed("A[1](id=2) b[1](id=1).").startswith("A<1> b<2>.")


def test_a_users_scorer_and_splitter_subclasses_work_in_either_build() -> None:
    """Subclasses of LexicalSupport and SentenceSplitter are Python classes: passages are found with their overrides."""

    class Fixed(LexicalSupport):
        def score(self, text_pairs: Sequence[tuple[str, str]]) -> list[float]:
            # The last sentence wins whatever the words.
            return [float(text.startswith("Rome")) for _, text in text_pairs]

    class OnSemicolons(SentenceSplitter):
        def split(self, text: str) -> list[Span]:
            start = 0
            spans = []
            for piece in text.split(";"):
                spans.append(Span(start=start, end=start + len(piece), text=piece))
                start += len(piece) + 1
            return spans

    text = "Lyon has silk;Rome is old"
    (found,) = find_passages([("Lyon silk", text)], scorer=Fixed(), splitter=OnSemicolons())
    assert (found.excerpt, found.score) == ("Rome is old", 1.0)
    assert LexicalSupport().score([("Lyon silk", "Lyon has silk.")]) == Fixed(window=3).score([("x", "Rome.")])


def test_a_verifier_is_recognised_by_its_protocol_in_either_build() -> None:
    """CitationVerifier stays a runtime-checkable protocol: isinstance works on any object with verify_citations."""

    class Verifier:
        def verify_citations(self, references: Any, documents: Any) -> Any:
            return references

    assert isinstance(Verifier(), CitationVerifier)
    assert not isinstance(object(), CitationVerifier)


def test_a_patched_core_method_is_seen_by_the_pure_build_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Patching CitationParser._take reaches the parser's own calls in pure Python only: compiled calls are direct.

    Nothing in the package patches its core; the parser test that records transitions by patching runs on the
    pure build only (it is skipped in the compiled one).
    """
    calls: list[Any] = []
    take = CitationParser._take
    monkeypatch.setattr(CitationParser, "_take", lambda self, event: (calls.append(event), take(self, event))[1])
    assert CitationParser().feed("`code` [1](id=1)")[0].text == "`code` "  # type: ignore[union-attr]
    assert bool(calls) is not COMPILED


@pytest.mark.parametrize(
    ("cls", "args"),
    [(CitationParser, ()), (ReferenceSession, ([],)), (SourceRegistry, ([],))],
    ids=["CitationParser", "ReferenceSession", "SourceRegistry"],
)
def test_a_python_subclass_of_the_core_works_in_the_pure_build_only(cls: type, args: tuple[Any, ...]) -> None:
    """The compiled core's classes take no Python subclass (mypyc: TypeError); nothing in the package makes one."""
    kwargs = {"source_key": str, "style": TextReferenceStyle()} if cls is ReferenceSession else {}
    subclass = type("Sub", (cls,), {})
    if COMPILED:
        with pytest.raises(TypeError, match="interpreted classes cannot inherit from compiled"):
            subclass(*args, **kwargs)
    else:
        assert isinstance(subclass(*args, **kwargs), cls)


def test_styles_stay_subclassable_when_the_session_is_compiled() -> None:
    """The text style's subclass keeps Python attributes of its own: styles are never native classes."""

    class Tagged(TextReferenceStyle):
        tag = "x"

    style = Tagged()
    style.extra = 1  # type: ignore[attr-defined]
    assert style.extra == 1  # type: ignore[attr-defined]


def test_the_compiled_build_is_asked_for_never_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """hatchling runs the mypyc hook only with HATCH_BUILD_HOOK_ENABLE_MYPYC=1: pip install and the wheel stay pure."""
    wheel = pytest.importorskip("hatchling.builders.wheel")
    monkeypatch.delenv("HATCH_BUILD_HOOK_ENABLE_MYPYC", raising=False)
    monkeypatch.delenv("HATCH_BUILD_HOOKS_ENABLE", raising=False)
    assert "mypyc" not in wheel.WheelBuilder(str(ROOT)).config.hook_config
    monkeypatch.setenv("HATCH_BUILD_HOOK_ENABLE_MYPYC", "1")
    config = wheel.WheelBuilder(str(ROOT)).config
    assert "mypyc" in config.hook_config
    assert "hatch-mypyc==0.16.0" in config.dependencies


@pytest.mark.parametrize(
    "value",
    [
        Text(text="Paris"),
        Marker(raw="[1](id=2)", ids=(2,)),
        Citation(
            number=1,
            document_positions=(2,),
            start=5,
            end=8,
            text_start=0,
            text_end=5,
            text="Paris",
            marker="[1](id=2)",
        ),
        Passage(document_position=1, document_start=13, document_end=32, excerpt="Paris is in France.", score=0.9),
    ],
    ids=["Text", "Marker", "Citation", "Passage"],
)
def test_the_streamed_values_are_frozen_dataclasses_in_either_build(value: Any) -> None:
    """Text, Marker, Citation and Passage keep their own __init__ (compiled: straight into the slots), stay frozen."""
    first = dataclasses.fields(value)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, first, getattr(value, first))
    copy = dataclasses.replace(value)
    assert copy == value
    assert hash(copy) == hash(value)
    assert repr(copy) == repr(value)
    assert dataclasses.asdict(copy) == dataclasses.asdict(value)


def test_a_passage_sets_each_field_from_its_own_keyword() -> None:
    """Passage's own __init__ (either build) stores each keyword in its field, and takes no other."""
    passage = Passage(document_position=1, document_start=13, document_end=32, excerpt="Paris.", score=0.9)
    assert dataclasses.asdict(passage) == {
        "document_position": 1,
        "document_start": 13,
        "document_end": 32,
        "excerpt": "Paris.",
        "score": 0.9,
    }
    with pytest.raises(TypeError):
        Passage(document_position=1, document_start=13, document_end=32, excerpt="Paris.", score=0.9, extra=1)  # type: ignore[call-arg]


def test_the_values_know_which_build_they_are_in() -> None:
    """The modules' own test for a compiled build (their functions are native) agrees with COMPILED."""
    from langchain_refs.streaming import _parser, _references

    assert _parser._NATIVE is COMPILED
    assert _references._NATIVE is COMPILED
