"""Numbering of sources by first use: pure Python, no LangChain."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["OwnSource", "SourceRegistry", "key_function", "resolve_source_keys"]


@dataclass(frozen=True, slots=True)
class OwnSource:
    """The source key of a document that has none: its id, else its position.

    Kept apart from real keys, so a document without ``source`` is never
    merged with another one, nor with a document whose source is ``"3"``.

    Example:
        >>> OwnSource("position 3") == OwnSource("position 3"), OwnSource("id a") == "id a"
        (True, False)
    """

    label: str


def key_function(key: object, *, option: str = "source_key") -> Callable[[Any], Any]:
    """The function giving a document's source key: ``key`` itself when callable, else its ``metadata[key]``.

    ``option`` is the name ``key`` was given as, for the error a wrong type gets.

    Example:
        >>> class Doc:
        ...     metadata = {"url": "a.org"}
        >>> key_function("url")(Doc()), key_function(len)("abc")
        ('a.org', 3)
        >>> key_function(5)
        Traceback (most recent call last):
        ...
        TypeError: source_key must be a metadata key (str) or a callable, got int
    """
    if isinstance(key, str):
        name = key
        return lambda document: document.metadata.get(name)
    if callable(key):
        return key
    msg = f"{option} must be a metadata key (str) or a callable, got {type(key).__name__}"
    raise TypeError(msg)


def resolve_source_keys(documents: Sequence[Any], key_of: Callable[[Any], Any]) -> list[Hashable]:
    """The source key of each document; `OwnSource` where a key is missing.

    Example:
        >>> class Doc:
        ...     def __init__(self, source=None, id=None):
        ...         self.metadata, self.id = ({"source": source} if source else {}), id
        >>> resolve_source_keys([Doc("a"), Doc(), Doc(id="x"), Doc("a")],
        ...                     lambda d: d.metadata.get("source"))
        ['a', OwnSource(label='position 2'), OwnSource(label='id x'), 'a']
    """
    keys: list[Hashable] = []
    for position, document in enumerate(documents, start=1):
        key = key_of(document)
        if key is None or key == "":
            doc_id = getattr(document, "id", None)
            keys.append(OwnSource(f"id {doc_id}" if doc_id else f"position {position}"))
        elif isinstance(key, Hashable):
            keys.append(key)
        else:
            keys.append(repr(key))
    return keys


class SourceRegistry:
    """Numbers sources 1, 2, 3... in order of first citation.

    Documents that share a source key share a number. Each number also
    remembers the document cited under it most recently: the list of sources
    names that one, as langchain-references 0.2.x does. A source a model
    cites natively (no document of ours) joins the same numbering by its key
    (`cite_key`); its number remembers no document (position 0).

    Example:
        >>> registry = SourceRegistry(["a#1", "a#2", "b", "b"])
        >>> registry.cite(3), registry.cite(2), registry.cite(4)
        (1, 2, 1)
        >>> registry.numbered()
        [(1, 'b', [3, 4]), (2, 'a#2', [2])]
        >>> registry.last_cited()
        [4, 2]
    """

    __slots__ = ("_keys", "_last", "_numbers", "_positions", "_sources")

    def __init__(self, source_keys: Sequence[Hashable]) -> None:
        self._keys = list(source_keys)
        self._numbers: dict[Hashable, int] = {}
        self._sources: list[Hashable] = []
        self._positions: list[list[int]] = []
        self._last: list[int] = []

    def __len__(self) -> int:
        return len(self._keys)

    def source_key(self, position: int) -> Hashable:
        """The source key of the document at a 1-based position.

        Example:
            >>> SourceRegistry(["a", "b"]).source_key(2)
            'b'
        """
        return self._keys[position - 1]

    def number_if_cited(self, position: int) -> int | None:
        """The number the document's source already has, or None.

        Example:
            >>> SourceRegistry(["a"]).number_if_cited(1) is None
            True
        """
        return self._numbers.get(self._keys[position - 1])

    def next_number(self) -> int:
        """The number the next new source would get.

        Example:
            >>> SourceRegistry(["a"]).next_number()
            1
        """
        return len(self._sources) + 1

    def cite(self, position: int) -> int:
        """Record a citation of the document at ``position``; return its number.

        Example:
            >>> SourceRegistry(["a", "a"]).cite(2)
            1
        """
        key = self._keys[position - 1]
        number = self._numbers.get(key)
        if number is None:
            self._sources.append(key)
            self._positions.append([position])
            self._last.append(position)
            number = self._numbers[key] = len(self._sources)
        else:
            if position not in self._positions[number - 1]:
                self._positions[number - 1].append(position)
            self._last[number - 1] = position
        return number

    def number_of_key(self, key: Hashable) -> int | None:
        """The number a source key already has, or None.

        Example:
            >>> registry = SourceRegistry(["a"])
            >>> registry.cite(1), registry.number_of_key("a"), registry.number_of_key("b")
            (1, 1, None)
        """
        return self._numbers.get(key)

    def cite_key(self, key: Hashable) -> int:
        """Record a citation of a source by its key alone (no document); return its number.

        A key that documents share gets their number; a new key gets the next
        one, with no document positions (its last cited position is 0).

        Example:
            >>> registry = SourceRegistry(["a"])
            >>> registry.cite_key("https://b.org"), registry.cite_key("a"), registry.cite(1)
            (1, 2, 2)
            >>> registry.last_cited()
            [0, 1]
        """
        number = self._numbers.get(key)
        if number is None:
            self._sources.append(key)
            self._positions.append([])
            self._last.append(0)
            number = self._numbers[key] = len(self._sources)
        return number

    def uncited(self) -> list[tuple[Hashable, list[int]]]:
        """``(source key, positions)`` of every source none of whose documents is cited, first document first.

        Example:
            >>> registry = SourceRegistry(["a", "b", "a", "c"])
            >>> registry.cite(2)
            1
            >>> registry.uncited()
            [('a', [1, 3]), ('c', [4])]
        """
        found: dict[Hashable, list[int]] = {}
        numbers = self._numbers
        for position, key in enumerate(self._keys, start=1):
            if key not in numbers:
                found.setdefault(key, []).append(position)
        return list(found.items())

    def last_cited(self) -> list[int]:
        """For each number in order, the position of the document cited under it last (0: none).

        Example:
            >>> registry = SourceRegistry(["a", "a"])
            >>> registry.cite(2), registry.cite(1), registry.last_cited()
            (1, 1, [1])
        """
        return list(self._last)

    def numbered(self) -> list[tuple[int, Hashable, list[int]]]:
        """``(number, source key, cited positions)`` for every cited source.

        Example:
            >>> SourceRegistry(["a"]).numbered()
            []
        """
        return [
            (number, key, list(positions))
            for number, (key, positions) in enumerate(zip(self._sources, self._positions, strict=False), start=1)
        ]
