"""Moved to `langchain_refs.apps.check.page`: this old path still gives its names, with a ``DeprecationWarning``."""

from __future__ import annotations

from typing import Any

from langchain_refs.apps._moved import moved_name
from langchain_refs.apps.check.page import __all__ as __all__


def __getattr__(name: str) -> Any:
    return moved_name(__name__, "langchain_refs.apps.check.page", name)
