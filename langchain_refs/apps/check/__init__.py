"""Checking claims against sources: one item's check, and the three places that run it.

- `langchain_refs.apps.check.items`: what ``langchain-refs check`` does to
  one item (`check_item`, with the extractor and checker of
  `build_checkers`) and how items are read from JSON text; every engine and
  the checking page call it, so they cannot drift apart.
- ``langchain_refs.apps.check._command``: the ``check`` sub-command, the
  local engine (one file, progress saved after every item).
- `langchain_refs.apps.check.ray_engine`: ``check --engine ray``, the same
  check on Ray Data (`check_with_ray`).
- `langchain_refs.apps.check.page`: the checking page and ``POST /api/check``
  (`check_routes`, the ``serve`` extra: imported from there, not here).

The old paths ``langchain_refs.apps.checking``, ``langchain_refs.apps.check_page``
and ``langchain_refs.apps.check_ray`` still import, with a ``DeprecationWarning``.

Example:
    >>> from langchain_refs.apps.check import build_checkers, check_item
    >>> check_item({"response": "Paris is in France.", "reference": "Paris is in France."},
    ...            checkers=build_checkers())["Y"]
    'Entailment'
"""

from langchain_refs.apps.check.items import (
    MODES,
    Checkers,
    ClaimChecking,
    ClaimExtraction,
    Mode,
    build_checkers,
    check_item,
    checked_item,
    dumps,
    is_json_list,
    read_items,
    read_json_text,
)
from langchain_refs.apps.check.ray_engine import RayCheckSummary, check_with_ray, run_ray_check

__all__ = [
    "MODES",
    "Checkers",
    "ClaimChecking",
    "ClaimExtraction",
    "Mode",
    "RayCheckSummary",
    "build_checkers",
    "check_item",
    "check_with_ray",
    "checked_item",
    "dumps",
    "is_json_list",
    "read_items",
    "read_json_text",
    "run_ray_check",
]
