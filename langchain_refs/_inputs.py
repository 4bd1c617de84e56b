"""The input checks every wing shares: a dict with documents under a key.

Example:
    >>> from langchain_core.documents import Document
    >>> document_text(Document("Paris is in France."))
    'Paris is in France.'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.documents.base import BaseMedia

__all__ = ["checked_documents", "checked_documents_key", "document_text", "documents_from", "input_value"]


def input_value(input: Any, key: str, owner: str, what: str) -> Any:
    """``input[key]``, or a ValueError naming the key, what it holds and who needs it.

    Example:
        >>> input_value({"answer": "Paris"}, "answer", "ReferencePredictor", "the answer")
        'Paris'
    """
    if not isinstance(input, Mapping) or key not in input:
        msg = f"{owner} expects a dict with {what} under {key!r}"
        raise ValueError(msg)
    return input[key]


def checked_documents_key(key: object) -> str:
    """``key`` itself when it is a str (the input's key holding the documents), else a TypeError saying so.

    Example:
        >>> checked_documents_key("docs")
        'docs'
        >>> checked_documents_key(5)
        Traceback (most recent call last):
        ...
        TypeError: documents_key must be the input's key (a str) holding the documents, got int
    """
    if not isinstance(key, str):
        msg = f"documents_key must be the input's key (a str) holding the documents, got {type(key).__name__}"
        raise TypeError(msg)
    return key


def documents_from(input: Any, documents_key: str, caller: str = "manage_references()") -> Sequence[BaseMedia]:
    """``input[documents_key]`` checked to be a list of documents, or a ValueError saying what is wrong.

    ``caller`` names who needs the documents in the message (the predictor
    and the filters say so).

    Example:
        >>> from langchain_core.documents import Document
        >>> documents_from({"documents": [Document("x")]}, "documents")[0].page_content
        'x'
        >>> documents_from({"docs": []}, "documents", "ReferencePredictor")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: the input has no 'documents' key: ReferencePredictor needs the list ...
    """
    if not isinstance(input, Mapping):
        msg = f"{caller} expects a dict holding the documents under {documents_key!r}; got {type(input).__name__}"
        raise ValueError(msg)
    if documents_key not in input:
        msg = (
            f"the input has no {documents_key!r} key: {caller} needs the list "
            f"of documents (Document/BaseMedia) the model was shown under it; "
            f"keys present: {sorted(map(str, input))}"
        )
        raise ValueError(msg)
    return checked_documents(input[documents_key], caller, f"input[{documents_key!r}]")


def checked_documents(documents: Any, caller: str, name: str = "documents") -> Sequence[BaseMedia]:
    """``documents`` checked to be a list of documents, or a ValueError naming ``name`` and what is wrong.

    Example:
        >>> checked_documents(["Paris."], "verify_citations()")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: verify_citations(): documents[0] is a str, expected a Document (...); a text becomes one ...
    """
    if not isinstance(documents, Sequence) or isinstance(documents, str):
        msg = f"{caller}: {name} must be a list of Document/BaseMedia, got {type(documents).__name__}"
        raise ValueError(msg)
    for position, document in enumerate(documents):
        if not isinstance(document, BaseMedia):
            msg = (
                f"{caller}: {name}[{position}] is a {type(document).__name__}, "
                f"expected a Document (langchain_core.documents.base.BaseMedia)"
            )
            if isinstance(document, Mapping) and "page_content" in document:
                msg += "; a dict with page_content becomes one with Document(**item)"
            elif isinstance(document, str):
                msg += "; a text becomes one with Document(text)"
            raise ValueError(msg)
    return documents


def document_text(document: BaseMedia) -> str:
    """The text of a document (a `Blob` without text has none).

    Example:
        >>> from langchain_core.documents.base import Blob
        >>> document_text(Blob(data=b"bytes"))
        ''
    """
    text = getattr(document, "page_content", None)
    return text if isinstance(text, str) else ""
