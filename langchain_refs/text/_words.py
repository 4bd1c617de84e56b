"""Word-level text normalisation shared by the scorers, the passage finder, the retriever and the demo."""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Final

__all__ = ["STOP_WORDS", "WORD", "content_words", "fold", "stem", "words"]

STOP_WORDS: Final = frozenset(
    """a an and are as at be been being but by can could did do does doing for from had has have having he her
    here hers him his how i if in into is it its itself just me more most my no nor not of off on once only or
    other our ours out over own same she should so some such than that the their theirs them then there these
    they this those through to too under until up very was we were what when where which while who whom why
    will with would you your yours also about any all each both few further again against because before
    after above below between during s t tell please""".split()
)
"""Function words that carry no claim on their own."""

# A comma between thousands ("1,000"): read as no mark, so that "1,000" and "1000" are one word.
_THOUSANDS_COMMA: Final = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")

# Apostrophes split words: "Carey's" is "carey" (and a stop-word "s").
WORD: Final = re.compile(r"[a-z0-9]+")
"""A word of a folded ASCII text (`words` reads any text: other scripts too).

Example:
    >>> WORD.findall(fold("Carey's 2nd album"))
    ['carey', 's', '2nd', 'album']
"""

# Han ideographs, hiragana and katakana: written without spaces, each character is read as a word.
_ONE_CHARACTER_WORDS: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def words(folded: str) -> list[str]:
    """The words of a folded text (`fold`), in any script: runs of letters, marks and digits.

    An ASCII text's are `WORD`'s. Elsewhere a word is a run of letters,
    combining marks and digits (Cyrillic, Greek, Arabic, Devanagari...), and
    each Han, hiragana or katakana character is a word of its own (those
    scripts do not put spaces between words).

    Example:
        >>> words(fold("Paris est la capitale")), words(fold("Москва — столица")), words("東京は首都")
        (['paris', 'est', 'la', 'capitale'], ['москва', 'столица'], ['東', '京', 'は', '首', '都'])
    """
    if folded.isascii():
        return WORD.findall(folded)
    found: list[str] = []
    run: list[str] = []
    for character in folded:
        if character.isascii():
            # As `WORD` reads it (an upper-case letter that NFKD makes, as of "™", is none).
            part = "a" <= character <= "z" or "0" <= character <= "9"
        elif _ONE_CHARACTER_WORDS.match(character):
            if run:
                found.append("".join(run))
                run = []
            found.append(character)
            continue
        else:
            part = unicodedata.category(character)[0] in "LMN"
        if part:
            run.append(character)
        elif run:
            found.append("".join(run))
            run = []
    if run:
        found.append("".join(run))
    return found


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """A light suffix-stripping stem: plurals, -ing, -ed and a final -e.

    Example:
        >>> [stem(w) for w in ["sources", "numbered", "migrating", "migrate", "is"]]
        ['sourc', 'number', 'migrat', 'migrat', 'is']
    """
    for suffix in ("ies", "ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


class _WithoutCombiningMarks(dict[int, int | None]):
    """A `str.translate` table that drops combining marks, filled in as characters are first seen.

    One `unicodedata.combining` call per distinct character instead of one
    per character of every text: the table holds at most the characters the
    process has folded.
    """

    def __missing__(self, code: int) -> int | None:
        kept = None if unicodedata.combining(chr(code)) else code
        self[code] = kept
        return kept


_DROP_COMBINING_MARKS: Final = _WithoutCombiningMarks()


def fold(text: str) -> str:
    """Lower case without accents.

    Example:
        >>> fold("Café Ünïcode")
        'cafe unicode'
    """
    lowered = text.lower()
    if lowered.isascii():
        # Nothing to decompose: the common case, and the costly one to do by hand.
        return lowered
    return unicodedata.normalize("NFKD", lowered).translate(_DROP_COMBINING_MARKS)


class _PieceWords(dict[str, tuple[str, ...]]):
    """The stemmed content words of each whitespace-separated piece of text, filled in as pieces are first seen.

    No word crosses whitespace (no whitespace character folds into a letter
    or digit, nor does one change how its neighbours fold), so a text's
    content words are its pieces' in turn: one look-up per piece of every
    text read, instead of a regular-expression search, a stop-word test and a
    stem per word. Long pieces are read but not kept; the table is emptied
    when it outgrows ``_PIECES_KEPT`` (then refilled as pieces come again),
    so that it stays small in a long-lived process.
    """

    def __missing__(self, piece: str) -> tuple[str, ...]:
        folded = fold(piece)
        if "," in folded:
            folded = _THOUSANDS_COMMA.sub("", folded)
        found = tuple(stem(w) for w in words(folded) if w not in STOP_WORDS)
        if len(piece) <= _LONGEST_PIECE_KEPT:
            if len(self) >= _PIECES_KEPT:
                self.clear()
            self[piece] = found
        return found


_PIECES_KEPT: Final = 65_536
_LONGEST_PIECE_KEPT: Final = 40
_PIECE_WORDS: Final = _PieceWords()


def content_words(text: str) -> list[str]:
    """The stemmed content words of ``text``, in order (a number's thousands commas left out: "1,000" is "1000").

    Example:
        >>> content_words("How are the citations renumbered? Migrate, migrating!")
        ['citation', 'renumber', 'migrat', 'migrat']
        >>> content_words("Two towns of 1,000 people")
        ['two', 'town', '1000', 'peopl']
    """
    words: list[str] = []
    pieces = _PIECE_WORDS
    for piece in text.split():
        # A loop: faster than chaining a map of the look-ups, interpreted and (much) more so compiled.
        words += pieces[piece]
    return words


def clear_word_caches() -> None:
    """Forget every word (and piece of text) stemmed so far (for benchmarks that measure a cold start).

    Example:
        >>> clear_word_caches()
    """
    stem.cache_clear()
    _PIECE_WORDS.clear()
