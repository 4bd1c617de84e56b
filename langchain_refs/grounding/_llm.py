"""What the grounding wing's LLM-backed parts share: reading a model's reply."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["json_in_reply"]


def json_in_reply(text: str) -> Any:
    """The first JSON object or list in a reply, tolerating prose and code fences around it.

    Example:
        >>> json_in_reply('Sure: ```json\\n{"claims": []}\\n```')
        {'claims': []}
    """
    for match in re.finditer(r"[\[{]", text):
        try:
            value, _ = json.JSONDecoder().raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        return value
    msg = "no JSON in the reply"
    raise ValueError(msg)
