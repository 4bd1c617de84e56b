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
from collections.abc import Mapping
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
    def between(cls, old: str, new: str) -> OffsetMap:
        """The map from offsets in ``old`` to offsets in ``new``."""
        runs = tuple(difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes())
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
        k: v for k, v in edited.response_metadata.items() if k not in (TEXT_CHECK_KEY, "langchain_refs_model_text")
    }
    stamp = edited.response_metadata.get(TEXT_CHECK_KEY)
    old_blocks = _text_blocks(rendered) if rendered is not None else None
    if rendered is None or not isinstance(stamp, Mapping) or text_check(rendered) != dict(stamp):
        old_blocks = None
    new_text = "".join(_text_blocks(edited))
    references = metadata.get("references")
    if isinstance(references, Mapping):
        references = copy.deepcopy(dict(references))
        offsets = OffsetMap.between("".join(old_blocks), new_text) if old_blocks is not None else None
        for citation in references.get("citations") or []:
            if isinstance(citation, dict):
                _move(citation, offsets, new_text)
        metadata["references"] = references
    content = _realigned_content(edited.content, old_blocks)
    return edited.model_copy(update={"content": content, "response_metadata": metadata})


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


def _realigned_content(content: str | list[Any], old_blocks: list[str] | None) -> str | list[Any]:
    """``content`` with each text block's annotations moved (or dropped where nothing says where they go)."""
    if isinstance(content, str):
        return content
    texts = [b for b in content if isinstance(b, Mapping) and b.get("type") == "text"]
    same_shape = old_blocks is not None and len(old_blocks) == len(texts) + sum(isinstance(b, str) for b in content)
    out: list[Any] = []
    position = 0
    for block in content:
        if isinstance(block, str):
            position += 1
            out.append(block)
            continue
        if not (isinstance(block, Mapping) and block.get("type") == "text"):
            out.append(block)
            continue
        old = old_blocks[position] if same_shape and old_blocks is not None else None
        position += 1
        annotations = block.get("annotations")
        if not annotations:
            out.append(block)
            continue
        moved: list[Any] = []
        if old is not None:
            offsets = OffsetMap.between(old, block.get("text", ""))
            for annotation in annotations:
                annotation = dict(annotation)
                if isinstance(annotation.get("start_index"), int):
                    annotation["start_index"] = offsets.start(annotation["start_index"])
                if isinstance(annotation.get("end_index"), int):
                    annotation["end_index"] = offsets.end(annotation["end_index"])
                moved.append(annotation)
        fixed = {k: v for k, v in block.items() if k != "annotations"}
        if moved:
            fixed["annotations"] = moved
        out.append(fixed)
    return out
