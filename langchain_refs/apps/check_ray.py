"""Moved to `langchain_refs.apps.check.ray_engine`: this old path gives its names, with a ``DeprecationWarning``."""

from __future__ import annotations

from typing import Any

from langchain_refs.apps._moved import moved_name
from langchain_refs.apps.check.ray_engine import __all__ as __all__


def __getattr__(name: str) -> Any:
    return moved_name(__name__, "langchain_refs.apps.check.ray_engine", name)
