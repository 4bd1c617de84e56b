"""The text layer: sentences, words, lexical support and passages, in pure Python.

No LangChain, no Jinja2, no I/O, and nothing from the other wings: the
streaming, grounding and agents wings all stand on it.

Example:
    >>> from langchain_refs.text import find_passages
    >>> find_passages([("Lyon silk", "Rome is old. Lyon has silk.")])[0].excerpt
    'Lyon has silk.'
"""

from langchain_refs.text._lexical import LexicalSupport
from langchain_refs.text._lexical_engine import stemmed_words
from langchain_refs.text._passages import PASSAGE_SUPPORT, PairScorer, PassageFinder, PassageSpan, find_passages
from langchain_refs.text._sentences import (
    DEFAULT_ABBREVIATIONS,
    DEFAULT_SPLITTER,
    EXTENDED_ABBREVIATIONS,
    SentenceSplitter,
    Span,
    sentence_windows,
    split_sentences,
    window_indices,
)
from langchain_refs.text._words import NUMBER_NAMES, RANK_NAMES, STOP_WORDS, WORD, content_words, fold, stem, words

__all__ = [
    "DEFAULT_ABBREVIATIONS",
    "DEFAULT_SPLITTER",
    "EXTENDED_ABBREVIATIONS",
    "NUMBER_NAMES",
    "PASSAGE_SUPPORT",
    "RANK_NAMES",
    "STOP_WORDS",
    "WORD",
    "LexicalSupport",
    "PairScorer",
    "PassageFinder",
    "PassageSpan",
    "SentenceSplitter",
    "Span",
    "content_words",
    "find_passages",
    "fold",
    "sentence_windows",
    "split_sentences",
    "stem",
    "stemmed_words",
    "window_indices",
    "words",
]
