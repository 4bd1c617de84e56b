"""The text of a message's content, for the apps that show it (terminal, chat page)."""

from __future__ import annotations

from typing import Any

__all__ = ["content_text", "reasoning_text"]


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


def reasoning_text(message: Any) -> str:
    """The reasoning a message (chunk) carries, as LangChain's standard ``content_blocks`` read it.

    Read only from a message with a block other than text or with
    ``reasoning_content`` in its ``additional_kwargs`` (the usual chunk has
    neither: reading its standard blocks would cost a translation per chunk).

    Example:
        >>> from langchain_core.messages import AIMessageChunk
        >>> reasoning_text(AIMessageChunk([{"type": "reasoning", "reasoning": "Hm."}, {"type": "text", "text": "Hi"}]))
        'Hm.'
        >>> reasoning_text(AIMessageChunk("Hi", additional_kwargs={"reasoning_content": "So."}))
        'So.'
    """
    content = message.content
    other = isinstance(content, list) and any(isinstance(b, dict) and b.get("type") != "text" for b in content)
    if not other and not isinstance(message.additional_kwargs.get("reasoning_content"), str):
        return ""
    pieces: list[str] = []
    for block in message.content_blocks:
        if block["type"] == "reasoning" and isinstance(block.get("reasoning"), str):
            pieces.append(block.get("reasoning", ""))
    return "".join(pieces)
