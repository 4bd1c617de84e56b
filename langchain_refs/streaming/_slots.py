"""How a frozen value's pure-Python ``__init__`` sets its fields: through each slot's own setter."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

__all__ = ["slot_setters"]


def slot_setters(cls: type) -> tuple[Any, ...]:
    """Each field slot's own ``__set__`` of a slotted dataclass, in field order.

    A frozen value's pure-Python ``__init__`` sets its fields through these,
    past the frozen ``__setattr__`` as ``object.__setattr__`` would, for about
    half its cost (a compiled class stores its fields itself: not for it).

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True, slots=True)
        ... class Point:
        ...     x: int
        >>> point = object.__new__(Point)
        >>> slot_setters(Point)[0](point, 3)
        >>> point
        Point(x=3)
    """
    return tuple(cls.__dict__[field.name].__set__ for field in fields(cls))
