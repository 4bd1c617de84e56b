"""A whole-text reference implementation of the default marker grammar.

Written from the rules in the parser's header, not from its code, for the
differential tests: the parser streams and holds back, this reads the whole
answer line by line and looks ahead as far as it likes. Only the ``[n](id=k)``
syntax is modelled. ``bound`` is the parser's ``max_holdback``; it matters in
two places only: a marker longer than it is text, and an unclosed code span
on a line that goes on for more than ``bound`` characters after its first
backtick is code to the end of the line.

`render` then plays a `ReferenceSession` with `TextReferenceStyle` over
`sample_documents()`: numbers by source in order of first use, invalid ids
dropped, a source cited again right beside itself written once, and the list
of cited sources at the end.
"""

from __future__ import annotations

import re

from langchain_refs import Marker, Text
from langchain_refs.streaming import Event

LINE_BREAK = re.compile(r"(\r\n|\r|\n)")
FENCE_OPEN = re.compile(r"[ \t>]*(`{3,}|~{3,})")
MARKER = re.compile(r"\[[ \t]*(?:NUMBER|[-+]?[0-9]+)[ \t]*\]\([ \t]*id[ \t]*=([^)]*)\)")
ID_LIST_CHARS = set("0123456789-, \t")
SINGLE = re.compile(r"-?[0-9]+")
RANGE = re.compile(r"([0-9]+)[ \t]*-[ \t]*([0-9]+)")
RANGE_LIMIT = 32
DIGIT_LIMIT = 9


class Out:
    """Collects events, merging neighbouring text."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def text(self, text: str) -> None:
        if not text:
            return
        if self.events and isinstance(self.events[-1], Text):
            self.events[-1] = Text(text=self.events[-1].text + text)
        else:
            self.events.append(Text(text=text))

    def marker(self, marker: Marker) -> None:
        self.events.append(marker)


def significant_digits(number: str) -> int:
    return len(number.replace("-", "").lstrip("0"))


def read_ids(id_list: str) -> tuple[list[int], list[str]]:
    ids: list[int] = []
    rest: list[str] = []
    for item in (part.strip(" \t") for part in id_list.split(",")):
        single = SINGLE.fullmatch(item)
        span = RANGE.fullmatch(item)
        if single and significant_digits(item) <= DIGIT_LIMIT:
            ids.append(int(item))
        elif span and max(significant_digits(span[1]), significant_digits(span[2])) <= DIGIT_LIMIT:
            low, high = int(span[1]), int(span[2])
            if low <= high and high - low + 1 <= RANGE_LIMIT:
                ids += list(range(low, high + 1))
            else:
                rest.append(item)
        else:
            rest.append(item)
    return ids, rest


def marker_at(line: str, index: int, bound: int) -> Marker | None:
    found = MARKER.match(line, index)
    if found is None or len(found[0]) > bound or not set(found[1]) <= ID_LIST_CHARS:
        return None
    ids, rest = read_ids(found[1])
    if not ids and any(item != "" for item in rest):
        return None
    return Marker(raw=found[0], ids=tuple(ids), malformed=tuple(rest))


def closing_run(line: str, start: int, width: int) -> int | None:
    """The end of the first run of exactly ``width`` backticks from ``start``."""
    for run in re.finditer(r"`+", line[start:]):
        if len(run[0]) == width:
            return start + run.end()
    return None


def prose(line: str, index: int, bound: int, out: Out) -> None:
    """Read the rest of one line (no line break in it) as prose."""
    while index < len(line):
        char = line[index]
        if char == "`":
            width = len(re.match(r"`+", line[index:])[0])  # type: ignore[index]
            end = closing_run(line, index + width, width)
            if end is None and len(line) - index <= bound:
                # No closer and a short rest of line: ordinary backticks.
                out.text(line[index : index + width])
                index += width
                continue
            end = len(line) if end is None else end
            out.text(line[index:end])
            index = end
            continue
        if char == "[":
            marker = marker_at(line, index, bound)
            if marker is not None:
                out.marker(marker)
                index += len(marker.raw)
                continue
        out.text(char)
        index += 1


def oracle_events(answer: str, bound: int) -> list[Event]:
    """The events the parser should give for the whole ``answer``."""
    out = Out()
    parts = LINE_BREAK.split(answer)
    fence: tuple[str, int] | None = None
    for number in range(0, len(parts), 2):
        line = parts[number]
        if fence is None:
            opening = FENCE_OPEN.match(line)
            if opening is None:
                prose(line, 0, bound, out)
            else:
                fence = (opening[1][0], len(opening[1]))
                out.text(line)
        else:
            closing = re.match(r"[ \t>]*(" + re.escape(fence[0]) + "+)", line)
            if closing is not None and len(closing[1]) >= fence[1]:
                fence = None
                out.text(line[: closing.end()])
                prose(line, closing.end(), bound, out)
            else:
                out.text(line)
        if number + 1 < len(parts):
            out.text(parts[number + 1])
    return out.events


SOURCES = {1: "a.html#chap1", 2: "a.html#chap2", 3: "b.pdf", 4: "b.pdf", 5: "c.pdf", 6: "d.csv", 7: None}
SOURCES[8] = "https://e.org/x"
LABELS = {7: "untitled document", 8: "E & co (https://e.org/x)"}


def render(events: list[Event]) -> str:
    """What `ReferenceSession` with `TextReferenceStyle` writes for these events."""
    numbers: dict[object, int] = {}
    first_document: dict[int, int] = {}
    beside: set[int] = set()
    pieces: list[str] = []
    for event in events:
        if isinstance(event, Text):
            if event.text:
                beside.clear()
            pieces.append(event.text)
            continue
        for doc in event.ids:
            if doc not in SOURCES:
                continue
            key = SOURCES[doc] if SOURCES[doc] is not None else ("own", doc)
            if key not in numbers:
                numbers[key] = len(numbers) + 1
                first_document[numbers[key]] = doc
            number = numbers[key]
            if number not in beside:
                beside.add(number)
                pieces.append(f"[{number}]")
    if numbers:
        pieces.append("\n\n")
        for number in sorted(first_document):
            doc = first_document[number]
            pieces.append(f"- [{number}] {LABELS.get(doc, SOURCES[doc])}\n")
    return "".join(pieces)
