"""The package's wings and how they may import each other, read from the source."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "langchain_refs"


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


def test_text_layer_imports_no_other_wing() -> None:
    """The text layer is the base: streaming, grounding and agents stand on it, it stands on none of them."""
    bad = {
        (m, target)
        for m, edges in imports().items()
        if wing(m) == "text"
        for target, _ in edges
        if wing(target) != "text"
    }
    assert bad == set()


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


def test_streaming_stands_on_the_text_layer_only() -> None:
    """Streaming imports only itself, the text layer and the shared input checks."""
    bad = {
        (m, target)
        for m, edges in imports().items()
        if wing(m) == "streaming"
        for target, _ in edges
        if wing(target) not in ("streaming", "text", "_inputs")
    }
    assert bad == set()


def test_streaming_imports_neither_grounding_nor_apps() -> None:
    """The heart stands alone: a verifier reaches it through a protocol."""
    bad = {
        (m, target)
        for m, edges in imports().items()
        if wing(m) == "streaming"
        for target, _ in edges
        if wing(target) in ("grounding", "apps")
    }
    assert bad == set()


def test_grounding_does_not_import_apps() -> None:
    """Grounding is a library; apps stand on it, not the other way round."""
    bad = {
        (m, target)
        for m, edges in imports().items()
        if wing(m) == "grounding"
        for target, _ in edges
        if wing(target) == "apps"
    }
    assert bad == set()


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
