"""The text of a message's content, for the apps that show it (terminal, chat page)."""

from __future__ import annotations

from typing import Any

__all__ = ["content_text"]


def content_text(content: Any) -> str:
    """The text of a message's content, whatever its shape; other blocks are left out.

    A string is itself; a list contributes its strings and the ``text`` of its
    ``{"type": "text"}`` blocks, in order; anything else (reasoning, images,
    tool calls) contributes nothing.

    Example:
        >>> content_text(["a", {"type": "text", "text": "<b>"}, {"type": "reasoning", "reasoning": "x"}])
        'a<b>'
    """
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    pieces = []
    for block in content:
        if isinstance(block, str):
            pieces.append(block)
        elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            pieces.append(block["text"])
    return "".join(pieces)
