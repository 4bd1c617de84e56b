"""A griffe extension for the API reference: the package's ``Example:`` sections are read as examples.

The docstrings follow langchain-core's Google style, which titles the section
``Example:``; griffe knows only ``Examples:`` and would render the doctest
lines as Markdown (where ``['x']`` reads as a link).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    """Retitle each ``Example:`` section ``Examples:`` before griffe parses the docstring."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Called by griffe for every object it loads."""
        if obj.docstring is not None:
            obj.docstring.value = _EXAMPLE.sub(r"\1Examples:", obj.docstring.value)
