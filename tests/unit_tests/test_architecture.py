"""The package's wings and how they may import each other, read from the source.

The map of the package in ``docs/how-it-works.md`` is written from the same
table and the modules' docstrings, and a test fails when it falls behind:

    python -m tests.unit_tests.test_architecture --write   # rewrite the map
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "langchain_refs"
HOW_IT_WORKS = ROOT / "docs" / "how-it-works.md"

# Each wing (a subpackage, or a shared module at the top) and the others it may import, lowest first.
MAY_IMPORT: dict[str, tuple[str, ...]] = {
    "_inputs": (),
    "text": (),
    "streaming": ("text", "_inputs"),
    "grounding": ("streaming", "text", "_inputs"),
    "agents": ("streaming", "text", "_inputs"),
    "apps": ("agents", "grounding", "streaming", "text", "_inputs"),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports() -> dict[str, set[tuple[str, str]]]:
    """Each module of the package -> the (module, name) pairs it imports from the package, lazy ones too."""
    found: dict[str, set[tuple[str, str]]] = {}
    for path in PACKAGE.rglob("*.py"):
        name = module_name(path)
        edges: set[tuple[str, str]] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("langchain_refs"):
                edges.update((node.module, alias.name) for alias in node.names)
            elif isinstance(node, ast.Import):
                edges.update((a.name, "") for a in node.names if a.name.startswith("langchain_refs"))
        found[name] = edges
    return found


def wing(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_module_is_seen() -> None:
    """The scan finds the wings (a scan that saw nothing would pass every rule)."""
    wings = {wing(m) for m in imports()}
    assert {"text", "streaming", "grounding", "apps", "_inputs"} <= wings


def test_text_layer_is_pure_python() -> None:
    """The text layer imports the standard library only: no LangChain, no Jinja2, no regex package."""
    outside: set[tuple[str, str]] = set()
    for path in (PACKAGE / "text").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            outside.update(
                (path.name, name)
                for name in names
                if not name.startswith("langchain_refs.text")
                and name.split(".")[0] not in sys.stdlib_module_names
                and name != "__future__"
            )
    assert outside == set()


def test_every_subpackage_is_a_wing_of_the_table() -> None:
    """A new wing is a decision: each subpackage and shared module at the top is in the table of who imports whom."""
    found = {wing(m) for m in imports()} - {"", "__main__"}
    assert found == set(MAY_IMPORT)


@pytest.mark.parametrize("name", list(MAY_IMPORT))
def test_each_wing_imports_only_the_wings_below_it(name: str) -> None:
    """No wing imports upward: streaming stands on text, grounding and agents on streaming, apps on all."""
    bad = {
        (m, target)
        for m, edges in imports().items()
        if wing(m) == name
        for target, _ in edges
        if wing(target) not in (name, *MAY_IMPORT[name])
    }
    assert bad == set()


def private_module(target: str) -> bool:
    """Whether ``target`` is a private module inside a wing (``langchain_refs.streaming._references``)."""
    return any(part.startswith("_") for part in target.split(".")[2:])


def test_no_wing_imports_a_private_module_of_another() -> None:
    """A wing reaches another only through its public face: ``from langchain_refs.streaming import X``."""
    bad = {
        (m, target)
        for m, edges in imports().items()
        if wing(m) in MAY_IMPORT
        for target, _ in edges
        if private_module(target) and wing(target) != wing(m)
    }
    assert bad == set()


def test_the_package_root_reads_no_private_module_but_one() -> None:
    """The root re-exports the wings' public faces; the one private module it reads is named here, with why.

    ``streaming._runnable.old_name``: what a module's ``__getattr__`` gives for the
    old name ``CitationMiddleware``, which streaming's public face imports but does not export.
    """
    edges = imports()["langchain_refs"]
    assert {(target, name) for target, name in edges if private_module(target)} == {
        ("langchain_refs.streaming._runnable", "old_name")
    }


def test_no_module_imports_a_private_name_of_another() -> None:
    """``from x import _helper`` across modules is how drift starts: share public names (dunders are not private)."""
    bad = {
        (m, target, name)
        for m, edges in imports().items()
        for target, name in edges
        if name.startswith("_") and not (name.startswith("__") and name.endswith("__")) and target != m
    }
    assert bad == set()


def test_no_import_circle() -> None:
    """Following imports (lazy ones included) never leads back to where it started."""
    graph = imports()

    def resolve(target: str) -> str:
        # ``from langchain_refs.streaming import x`` runs the wing's __init__, which is a module too.
        return target if target in graph else target.rsplit(".", 1)[0]

    edges = {m: {resolve(t) for t, _ in e} - {m} for m, e in graph.items()}
    # The wings' __init__ files re-export their own modules; a module importing its wing's
    # public face from inside the wing would be a circle, and is caught like any other.
    state: dict[str, int] = {}
    circles: list[list[str]] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                circles.append([*trail[trail.index(nxt) :], nxt] if nxt in trail else [node, nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert circles == []


# -- the map in docs/how-it-works.md ---------------------------------------------------------

MAP_START = "<!-- The package map: written by python -m tests.unit_tests.test_architecture --write (do not edit) -->"
MAP_END = "<!-- End of the package map -->"
NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def summary(path: Path) -> str:
    """The first line of a module's docstring, its reStructuredText quoting as Markdown's."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return doc.splitlines()[0].replace("``", "`") if doc else ""


def package_map() -> str:
    """The map of the package, from its modules' docstrings and the table of who may import whom."""
    wings = [name for name in MAY_IMPORT if (PACKAGE / name).is_dir()]
    shared = [name for name in MAY_IMPORT if not (PACKAGE / name).is_dir()]
    rows: list[tuple[str, str]] = [
        (f"{path.name}", summary(path)) for path in (PACKAGE / "__init__.py", PACKAGE / "__main__.py")
    ]
    rows += [(f"{name}.py", summary(PACKAGE / f"{name}.py")) for name in shared]
    for name in wings:
        rows.append((f"{name}/", summary(PACKAGE / name / "__init__.py")))
        rows += [
            (f"  {sub.parent.name}/", summary(sub))
            for sub in sorted((PACKAGE / name).glob("*/__init__.py"))
            if not sub.parent.name.startswith("_")
        ]
    width = max(len(name) for name, _ in rows) + 2
    tree = "\n".join(f"  {name.ljust(width)}{text}" for name, text in rows)
    table = "\n".join(
        f"| `{name}` | {', '.join(f'`{below}`' for below in MAY_IMPORT[name]) or 'nothing of the package'} |"
        for name in MAY_IMPORT
    )
    named = ", ".join(f"`{name}`" for name in wings)
    shared_named = ", ".join(f"`{name}`" for name in shared)
    return f"""{MAP_START}
The package has {NUMBERS[len(wings)]} wings, {named}, and one module they all share, {shared_named}:

```text
langchain_refs/
{tree}
```

Imports run one way only; each wing may import the wings on its row and nothing else:

| wing | may import |
| --- | --- |
{table}
{MAP_END}"""


def written_map() -> str:
    text = HOW_IT_WORKS.read_text(encoding="utf-8")
    start, end = text.find(MAP_START), text.find(MAP_END)
    assert 0 <= start < end, f"{HOW_IT_WORKS.name} lost its map markers"
    return text[start : end + len(MAP_END)]


def test_the_map_in_how_it_works_is_the_package_as_it_is() -> None:
    """docs/how-it-works.md's map of the wings is written from the source: it cannot fall behind."""
    assert written_map() == package_map(), "run: python -m tests.unit_tests.test_architecture --write"


def test_how_it_works_counts_the_parsers_states() -> None:
    """The parser's states, as how-it-works.md names and counts them, are the parser's own."""
    from langchain_refs.streaming._parser import _Mode

    text = HOW_IT_WORKS.read_text(encoding="utf-8")
    assert f"one of {NUMBERS[len(_Mode)]} states" in text
    assert all(f"*{state.value}*" in text for state in _Mode)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Write the package map into docs/how-it-works.md.")
    parser.add_argument("--write", action="store_true", help="rewrite the map (else: say whether it is current)")
    if not parser.parse_args().write:
        sys.exit(0 if written_map() == package_map() else 1)
    HOW_IT_WORKS.write_text(HOW_IT_WORKS.read_text(encoding="utf-8").replace(written_map(), package_map()))
