"""What the prompt tells the model, so that it cites as the parser expects."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from langchain_core.documents.base import Document

__all__ = ["FORMAT_REFERENCES", "format_documents"]

FORMAT_REFERENCES: Final = (
    "When referencing the documents, add a citation right after. "
    'Use "[NUMBER](id=ID_NUMBER)" for the citation '
    '(e.g. "The Space Needle is in Seattle [1](id=55)[2](id=12).").'
)
"""The prompt sentence asking for ``[NUMBER](id=ID_NUMBER)`` citations.

The same words as langchain-references, so prompts tuned for it keep working.
"""


def format_documents(documents: Sequence[Document]) -> str:
    """Number the documents for the prompt the way citations will refer to them.

    Document ``k`` (1-based, in list order) is wrapped in ``<document id=k>``,
    the id the model must write in ``[n](id=k)``.

    Example:
        >>> from langchain_core.documents import Document
        >>> print(format_documents([Document("Paris is in France.")]))
        <document id=1>
        Paris is in France.
        </document>
    """
    return "\n".join(
        f"<document id={position}>\n{document.page_content}\n</document>"
        for position, document in enumerate(documents, start=1)
    )
