"""Answers another middleware edited after they were rewritten: offsets moved, the model's own text dropped.

A middleware's ``after_model`` may edit the answer ReferencesMiddleware has
rewritten: LangChain's ``PIIMiddleware(..., apply_to_output=True)`` redacts an
e-mail address in it. The edit wins. Three things of ours still describe the
text as it was rendered, and would undo the edit or point at the wrong
characters:

- the model's own text (``response_metadata[MODEL_TEXT_KEY]``), which the
  next turn's history is built from: it still holds what was redacted;
- each citation's claim (``text`` and its offsets) in the references data;
- the ``Citation`` annotations' ``start_index``/``end_index``.

The wrapper's answer is stamped with `text_check` (a digest of its text and
the length of each text block, never the text) as it leaves the model call.
An answer whose text no longer matches its stamp was edited: `realigned`
moves every offset onto the edited text (aligning the text as rendered, got
back by rendering the model's text again, with the edited one) and drops the
model's text, so the model reads its earlier answer as edited.

Example:
    >>> from langchain_core.messages import AIMessage
    >>> rendered = AIMessage("Write to a@b.org[1].", response_metadata={})
    >>> stamped = rendered.model_copy(update={"response_metadata": {TEXT_CHECK_KEY: text_check(rendered)}})
    >>> was_edited(stamped)
    False
    >>> was_edited(stamped.model_copy(update={"content": "Write to [REDACTED_EMAIL][1]."}))
    True
"""

from __future__ import annotations

import bisect
import copy
import difflib
import hashlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from langchain_core.messages import AIMessage

__all__ = ["TEXT_CHECK_KEY", "OffsetMap", "realigned", "text_check", "was_edited"]

TEXT_CHECK_KEY: Final = "langchain_refs_text_check"
"""``response_metadata`` key of the stamp `text_check` puts on a rewritten answer."""

# Offsets of the references data that point into the answer's text (a citation's marker and claim).
_STARTS: Final = ("start", "text_start")
_ENDS: Final = ("end", "text_end")


def _text_blocks(message: AIMessage) -> list[str]:
    """The texts of ``message``'s text blocks, in order (a ``str`` content is one)."""
    if isinstance(message.content, str):
        return [message.content]
    texts: list[str] = []
    for block in message.content:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
    return texts


def text_check(message: AIMessage) -> dict[str, Any]:
    """A stamp of ``message``'s text: its SHA-256 and the length of each text block (not the text).

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> text_check(AIMessage("abc"))["blocks"]
        [3]
    """
    texts = _text_blocks(message)
    return {"sha256": hashlib.sha256("".join(texts).encode()).hexdigest(), "blocks": [len(t) for t in texts]}


def was_edited(message: AIMessage) -> bool:
    """Whether ``message`` carries a `text_check` stamp its text no longer matches.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> was_edited(AIMessage("never stamped"))
        False
    """
    stamp = message.response_metadata.get(TEXT_CHECK_KEY)
    return isinstance(stamp, Mapping) and dict(stamp) != text_check(message)


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetMap:
    """Where the offsets of one text fall in an edited copy of it (by aligning the two).

    An offset in text both share moves with it; a start inside an edited run
    moves to the run's start and an end to its end, so a span that held an
    edited run holds its replacement.

    Example:
        >>> offsets = OffsetMap.between("Mail a@b.org: Paris.", "Mail [REDACTED]: Paris.")
        >>> offsets.start(14), offsets.end(20)
        (17, 23)
        >>> offsets.start(5), offsets.end(12)
        (5, 15)
    """

    old_starts: tuple[int, ...]
    """Start of each aligned run in the old text (equal runs and edited runs, in order)."""
    runs: tuple[tuple[str, int, int, int, int], ...]
    """``(tag, old start, old end, new start, new end)`` per run, as difflib gives them."""

    @classmethod
    def between(cls, old: str, new: str, keep: Sequence[tuple[int, int]] = ()) -> OffsetMap:
        """The map from offsets in ``old`` to offsets in ``new``.

        A text taken out or put in where the same characters stand on either
        side can be aligned in several places ("France[1]. It has 9 million
        people[1]." less its second sentence: difflib takes out "e[1]. It has 9
        million peopl"); it is slid to where it starts and ends at word and
        sentence bounds (`_slid`), so that the spans around it keep their text; never through a span of
        ``keep`` (the citations' markers) where a place around it does as well.

        Example:
            >>> old, new = "Paris is in France[1]. It has 9 people[1]. End", "Paris is in France[1]. End"
            >>> offsets = OffsetMap.between(old, new)
            >>> new[: offsets.end(18)], offsets.start(23) == offsets.end(38)
            ('Paris is in France', True)
        """
        runs = _slid(difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes(), old, new, keep)
        return cls(old_starts=tuple(run[1] for run in runs), runs=runs)

    def _run(self, offset: int) -> tuple[str, int, int, int, int] | None:
        if not self.runs:
            return None
        position = max(0, bisect.bisect_right(self.old_starts, offset) - 1)
        return self.runs[position]

    def start(self, offset: int) -> int:
        """Where a span starting at ``offset`` starts in the new text."""
        run = self._run(offset)
        if run is None:
            return 0
        tag, i1, i2, j1, j2 = run
        if tag == "equal" and offset < i2:
            return j1 + offset - i1
        if offset >= i2:  # the end of the old text
            return j2
        return j1

    def end(self, offset: int) -> int:
        """Where a span ending at ``offset`` ends in the new text."""
        run = self._run(offset - 1) if offset > 0 else self._run(0)
        if run is None:
            return 0
        tag, i1, _, j1, j2 = run
        if offset == 0:
            return 0
        if tag == "equal":
            return j1 + offset - i1
        return j2


def realigned(edited: AIMessage, rendered: AIMessage | None) -> AIMessage:
    """``edited`` with our offsets moved onto its text and the model's own text dropped.

    Args:
        edited: the answer as another middleware left it (`was_edited` is true).
        rendered: the answer as it was rendered, got back by rendering the
            model's text again; None, or a rendering that does not match the
            stamp, when it cannot be got back: then the claims' texts and
            offsets are set to None and the annotations dropped, since
            nothing says where they now fall.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> rendered = AIMessage("Mail a@b.org: Paris is big[1].", response_metadata={
        ...     "references": {"citations": [{"start": 26, "end": 29, "text_start": 0, "text_end": 26,
        ...                                   "text": "Mail a@b.org: Paris is big"}]}})
        >>> stamp = {TEXT_CHECK_KEY: text_check(rendered), "langchain_refs_model_text": "raw"}
        >>> edited = rendered.model_copy(update={"content": "Mail [EMAIL]: Paris is big[1].",
        ...     "response_metadata": {**rendered.response_metadata, **stamp}})
        >>> fixed = realigned(edited, rendered)
        >>> fixed.response_metadata["references"]["citations"][0]["text"]
        'Mail [EMAIL]: Paris is big'
        >>> sorted(fixed.response_metadata)
        ['references']
    """
    metadata = {
        k: v
        for k, v in edited.response_metadata.items()
        if k not in (TEXT_CHECK_KEY, "langchain_refs_model_text", "langchain_refs_model_text_blocks")
    }
    stamp = edited.response_metadata.get(TEXT_CHECK_KEY)
    old_blocks = _text_blocks(rendered) if rendered is not None else None
    if rendered is None or not isinstance(stamp, Mapping) or text_check(rendered) != dict(stamp):
        old_blocks = None
    new_text = "".join(_text_blocks(edited))
    old_text = "".join(old_blocks) if old_blocks is not None else None
    references = metadata.get("references")
    citations = references.get("citations") if isinstance(references, Mapping) else None
    citations = citations if isinstance(citations, list) else []
    markers = sorted(
        (c["start"], c["end"])
        for c in citations
        if isinstance(c, Mapping) and isinstance(c.get("start"), int) and isinstance(c.get("end"), int)
    )
    offsets = OffsetMap.between(old_text, new_text, markers) if old_text is not None else None
    # The claims (as they stood) of the citations whose marker the edit took out: their annotations go with them.
    gone: set[tuple[int, int]] = set()
    # Claims whose text the alignment took out though it still stands before their kept marker (two sentences
    # alike, one taken out: the other's words may be aligned with the one taken out): (before) -> (now).
    found_again: dict[tuple[int, int], tuple[int, int]] = {}
    if isinstance(references, Mapping) and citations:
        references = copy.deepcopy(dict(references))
        kept: list[Any] = []
        # Per citation the edit took out: it as it stood, its claim's text and what stood before its marker.
        dropped: list[tuple[dict[str, Any], str, str]] = []
        emptied: list[tuple[int, tuple[int, int], str, str]] = []  # kept ones whose claim the move emptied (where)
        for citation in references["citations"]:
            if isinstance(citation, dict):
                marker = _marker(citation, old_text)
                claim = (citation.get("text_start"), citation.get("text_end"))
                marked_at = citation.get("start")
                # The claim as it stood, and what stood between it and its marker.
                said, gap = "", ""
                if old_text is not None and all(isinstance(v, int) for v in (*claim, marked_at)):
                    said, gap = old_text[claim[0] : claim[1]], old_text[claim[1] : marked_at]
                before = dict(citation)
                _move(citation, offsets, new_text)
                if marker and _marker(citation, new_text) != marker:
                    # The edit took its marker out: the reader no longer sees the citation.
                    if isinstance(claim[0], int) and isinstance(claim[1], int):
                        gone.add((claim[0], claim[1]))
                        dropped.append((before, said, gap))
                    continue
                # Its claim emptied by the move: looked for again before its marker, below.
                now_start, now_end = citation.get("text_start"), citation.get("text_end")
                was_start, was_end = claim
                if (
                    said
                    and isinstance(was_start, int)
                    and isinstance(was_end, int)
                    and isinstance(now_start, int)
                    and isinstance(now_end, int)
                    and now_end <= now_start
                ):
                    emptied.append((len(kept), (was_start, was_end), said, gap))
            kept.append(citation)
        for position, claim, said, gap in emptied:
            citation = kept[position]
            again = _claim_before_marker(citation, said, gap, new_text)
            if again is not None:
                found_again[claim] = again
                citation["text_start"], citation["text_end"] = again
                citation["text"] = new_text[again[0] : again[1]]
                continue
            # Its marker may be another's alike whose claim stands before it (two citations "[2]", one taken
            # out): the one whose claim the reader sees there is the one kept.
            for index, (other, other_said, other_gap) in enumerate(dropped):
                again = _claim_before_marker(citation, other_said, other_gap, new_text)
                same_marker = isinstance(other.get("marker"), str) and other.get("marker") == citation.get("marker")
                if again is None or not same_marker:
                    continue
                old_claim = (other["text_start"], other["text_end"])
                gone.discard(old_claim)
                gone.add(claim)
                found_again[old_claim] = again
                kept[position] = {
                    **other,
                    "start": citation["start"],
                    "end": citation["end"],
                    "text_start": again[0],
                    "text_end": again[1],
                    "text": new_text[again[0] : again[1]],
                }
                del dropped[index]
                break
        references["citations"] = kept
        _uncited_listed_as_consulted(references)
        metadata["references"] = references
    if isinstance(metadata.get("citations"), list):
        # The annotations of the whole text (all of a str answer's): moved as the blocks' are.
        metadata["citations"] = _moved_annotations(metadata["citations"], offsets, gone, found_again=found_again)
    content = _realigned_content(edited.content, old_blocks, markers, gone, found_again)
    return edited.model_copy(update={"content": content, "response_metadata": metadata})


def _uncited_listed_as_consulted(references: dict[str, Any]) -> None:
    """The sources no citation left names moved from ``references`` to ``consulted`` (the model was given them).

    An edit that takes out every citation of a source (a guardrail that
    replaces the answer) leaves a source listed that the text no longer cites.

    Example:
        >>> refs = {"citations": [], "consulted": [],
        ...         "references": [{"number": 1, "source": "p.html", "title": "P", "document_positions": [2]}]}
        >>> _uncited_listed_as_consulted(refs)
        >>> refs["references"], refs["consulted"]
        ([], [{'source': 'p.html', 'title': 'P', 'document_positions': [2]}])
    """
    listed = references.get("references")
    if not isinstance(listed, list):
        return
    cited = {c.get("number") for c in references["citations"] if isinstance(c, Mapping)}
    kept: list[Any] = []
    uncited: list[Mapping[str, Any]] = []
    for reference in listed:
        (uncited if isinstance(reference, Mapping) and reference.get("number") not in cited else kept).append(reference)
    if not uncited:
        return
    references["references"] = kept
    consulted = references.get("consulted")
    consulted = list(consulted) if isinstance(consulted, list) else []
    consulted += [
        {"source": r.get("source"), "title": r.get("title"), "document_positions": r.get("document_positions", [])}
        for r in uncited
    ]
    references["consulted"] = consulted


def _marker(citation: Mapping[str, Any], text: str | None) -> str | None:
    """The marker ``citation`` has in ``text`` (None: no text, or no offsets)."""
    start, end = citation.get("start"), citation.get("end")
    if text is None or not isinstance(start, int) or not isinstance(end, int):
        return None
    return text[start:end]


def _claim_before_marker(citation: Mapping[str, Any], said: str, gap: str, new_text: str) -> tuple[int, int] | None:
    """Where a kept citation's claim stands now, when the move emptied it but ``said`` stands before its marker.

    ``said``: the claim as it stood; ``gap``: what stood between it and the marker. Two sentences alike, one
    taken out: the alignment may give the kept one's words to the one taken out.
    """
    start, end, marker = citation.get("text_start"), citation.get("text_end"), citation.get("start")
    if not said or not isinstance(start, int) or not isinstance(end, int) or not isinstance(marker, int):
        return None
    at = marker - len(gap) - len(said)
    if end <= start and at >= 0 and new_text[at:marker] == said + gap:
        return at, at + len(said)
    return None


def _moved_annotations(
    annotations: list[Any],
    offsets: OffsetMap | None,
    gone: Collection[tuple[int, int]] = (),
    base: int = 0,
    *,
    found_again: Mapping[tuple[int, int], tuple[int, int]] | None = None,
    new_base: int = 0,
) -> list[Any]:
    """``annotations`` with their spans moved; those whose text the edit took out (or all: no ``offsets``) dropped.

    ``gone``: the claims (in the whole text as it stood) of citations the edit took out; ``base``: where the
    annotations' block started in it (``new_base``: in the edited text); ``found_again``: claims put back
    before their marker (see `realigned`).
    """
    if offsets is None:
        return []
    moved: list[Any] = []
    for annotation in annotations:
        start, end = (
            (annotation.get("start_index"), annotation.get("end_index"))
            if isinstance(annotation, Mapping)
            else (None, None)
        )
        if isinstance(start, int) and isinstance(end, int):
            new_start, new_end = offsets.start(start), offsets.end(end)
            again = (found_again or {}).get((base + start, base + end))
            if again is not None:
                new_start, new_end = again[0] - new_base, again[1] - new_base
            if (end > start and new_end <= new_start) or (base + start, base + end) in gone:
                continue  # its claim, or its citation, was taken out
            annotation = {**annotation, "start_index": new_start, "end_index": new_end}
        moved.append(annotation)
    return moved


def _slid(
    runs: Sequence[tuple[str, int, int, int, int]], old: str, new: str, keep: Sequence[tuple[int, int]] = ()
) -> tuple[tuple[str, int, int, int, int], ...]:
    """``runs`` with each text taken out or put in between two equal runs slid to its best bounds (`_bounds`).

    A place that cuts through a span of ``keep`` (in ``old``) comes after every place that does not.
    """
    out = list(runs)
    for position in range(1, len(out) - 1):
        tag, i1, i2, j1, j2 = out[position]
        before, after = out[position - 1], out[position + 1]
        if tag not in ("delete", "insert") or before[0] != "equal" or after[0] != "equal":
            continue
        # The run's text, in the text that holds it; the equal runs either side bound how far it slides.
        text, start, end = (old, i1, i2) if tag == "delete" else (new, j1, j2)
        low = start - (before[2] - before[1])
        high = end + (after[2] - after[1])
        left = start
        while left > low and text[left - 1] == text[left - 1 + end - start]:
            left -= 1
        right = start
        while right + end - start < high and text[right] == text[right + end - start]:
            right += 1

        # Where the run stands in the old text, placed at ``at``: a text taken out spans it, one put in is a point.
        def cuts(at: int, tag: str = tag, i1: int = i1, start: int = start, end: int = end) -> bool:
            first = i1 + at - start
            last = first + (end - start if tag == "delete" else 0)
            return any(s < x < e for s, e in keep for x in (first, last))

        best = max(range(left, right + 1), key=lambda at: (not cuts(at), _bounds(text, at, at + end - start), at))
        shift = best - start
        if shift:
            out[position - 1] = (*before[:2], before[2] + shift, before[3], before[4] + shift)
            out[position] = (tag, i1 + shift, i2 + shift, j1 + shift, j2 + shift)
            out[position + 1] = ("equal", after[1] + shift, after[2], after[3] + shift, after[4])
    return tuple(run for run in out if run[0] != "equal" or run[2] > run[1] or run[4] > run[3])


def _bounds(text: str, start: int, end: int) -> int:
    """How well ``text[start:end]`` is cut: two points per end at a space, one per end at a mark, not in a word."""
    spaced = (start == 0 or text[start - 1].isspace() or text[start].isspace()) + (
        end == len(text) or text[end].isspace() or text[end - 1].isspace()
    )
    return (
        2 * spaced
        + (start == 0 or not text[start - 1].isalnum())
        + (not text[start].isalnum())
        + (not text[end - 1].isalnum())
        + (end == len(text) or not text[end].isalnum())
    )


def _move(citation: dict[str, Any], offsets: OffsetMap | None, new_text: str) -> None:
    """Move one citation's marker and claim offsets (None where they cannot be moved), re-read its claim."""
    for key in (*_STARTS, *_ENDS):
        value = citation.get(key)
        if not isinstance(value, int):
            continue
        citation[key] = None if offsets is None else offsets.start(value) if key in _STARTS else offsets.end(value)
    start, end = citation.get("text_start"), citation.get("text_end")
    if "text" in citation:
        citation["text"] = new_text[start:end] if isinstance(start, int) and isinstance(end, int) else None


def _realigned_content(
    content: str | list[Any],
    old_blocks: list[str] | None,
    markers: Sequence[tuple[int, int]] = (),
    gone: Collection[tuple[int, int]] = (),
    found_again: Mapping[tuple[int, int], tuple[int, int]] | None = None,
) -> str | list[Any]:
    """``content`` with each text block's annotations moved (or dropped where nothing says where they go).

    ``markers`` and ``gone`` as `realigned` reads them, in the whole text as it stood.
    """
    if isinstance(content, str):
        return content
    texts = [b for b in content if isinstance(b, Mapping) and b.get("type") == "text"]
    same_shape = old_blocks is not None and len(old_blocks) == len(texts) + sum(isinstance(b, str) for b in content)
    out: list[Any] = []
    position = 0
    new_base = 0  # where the block starts in the edited text
    for block in content:
        if isinstance(block, str):
            position += 1
            new_base += len(block)
            out.append(block)
            continue
        if not (isinstance(block, Mapping) and block.get("type") == "text"):
            out.append(block)
            continue
        old = old_blocks[position] if same_shape and old_blocks is not None else None
        base = sum(len(text) for text in old_blocks[:position]) if old_blocks is not None else 0
        position += 1
        annotations = block.get("annotations")
        block_base, new_base = new_base, new_base + len(block.get("text") or "")
        if not annotations:
            out.append(block)
            continue
        keep = [(s - base, e - base) for s, e in markers if old is not None and base <= s and e <= base + len(old)]
        offsets = OffsetMap.between(old, block.get("text", ""), keep) if old is not None else None
        moved = _moved_annotations(annotations, offsets, gone, base, found_again=found_again, new_base=block_base)
        fixed = {k: v for k, v in block.items() if k != "annotations"}
        if moved:
            fixed["annotations"] = moved
        out.append(fixed)
    return out
