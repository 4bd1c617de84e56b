"""Old import paths of modules that moved: each still gives its public names, with a ``DeprecationWarning``.

Example:
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     moved_name("langchain_refs.apps.checking", "langchain_refs.apps.check.items", "MODES")
    ('extract', 'check', 'extract-check')
    >>> str(caught[0].message)
    'langchain_refs.apps.checking moved to langchain_refs.apps.check.items'
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

__all__ = ["moved_name"]


def moved_name(old: str, new: str, name: str) -> Any:
    """``name`` of the module ``new``, asked for through its old path ``old`` (a module's ``__getattr__``).

    Raises:
        AttributeError: ``name`` is not a public name of ``new``.
    """
    module = importlib.import_module(new)
    if name not in module.__all__:
        msg = f"module {old!r} has no attribute {name!r}"
        raise AttributeError(msg)
    warnings.warn(f"{old} moved to {new}", DeprecationWarning, stacklevel=3)
    return getattr(module, name)
