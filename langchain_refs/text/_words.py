"""Word-level text normalisation shared by the scorers, the passage finder, the retriever and the demo."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

__all__ = [
    "NUMBER_NAMES",
    "RANK_NAMES",
    "STOP_WORDS",
    "WORD",
    "content_words",
    "fold",
    "is_number_word",
    "number_word",
    "stem",
    "words",
]

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


# A number a piece writes in digits, with a decimal point kept ("3.5") and a scale or an ordinal's ending written
# onto it ("100k", "2.5bn", "22nd"): one word, never the two of "3" and "5" (a version's "1.2.3" is left as its parts).
# A unit written onto it is a word of its own ("200mg" is "200 mg": two letters or more, or a unit's one letter: "10g",
# "5m"; "4b" and "1a" are labels); other letters, digits or "_" make no number.
_NUMERAL: Final = re.compile(
    r"(?<![\w.])([0-9]+(?:\.[0-9]+)?)"
    r"(?:(k|mn|bn|st|nd|rd|th)(?!\w|\.[0-9])|(?=[a-z]{2}|[glmshvw](?![a-z0-9_]))|(?!\w|\.[0-9]))"
)
_SUFFIX_PLACES: Final = {"k": 3, "mn": 6, "bn": 9, "st": 0, "nd": 0, "rd": 0, "th": 0}  # "22nd" is the number 22
# A scale written onto a number in capitals, which folding would lose: "$5M", "7B" (as the number guard reads them;
# a lower-case "5m" may be metres, after a currency sign it is millions: "$3m").
_WRITTEN_SCALE: Final = re.compile(r"(?:([$\u20ac\u00a3\u00a5])|(?<![\w.]))([0-9]+(?:\.[0-9]+)?)([MBm])(?!\w)")
_WRITTEN_SCALE_LETTERS: Final = frozenset("MBm")


def _scale_spelled_out(match: re.Match[str]) -> str:
    sign, digits, letter = match.groups()
    if letter == "m" and not sign:
        return match.group()
    return f"{sign or ''}{digits}{'bn' if letter == 'B' else 'mn'}"


_NUMBERS_IN_WORDS: Final = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
NUMBER_NAMES: Final[Mapping[str, int]] = MappingProxyType(_NUMBERS_IN_WORDS)
"""The numbers below a hundred that are one word, and their values: `content_words` reads them as digits.

Example:
    >>> NUMBER_NAMES["twelve"], NUMBER_NAMES["ninety"], content_words("twenty-one guns")
    (12, 90, ['21', 'gun'])
"""
RANK_NAMES: Final[Mapping[str, int]] = MappingProxyType(
    {
        word: rank
        for rank, word in enumerate(
            "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth"
            " fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split(),
            start=1,
        )
    }
)
"""The ranks up to the twentieth in words, and the numbers they rank.

`content_words` reads each as its number ("third" as "3rd" is, "3"), but
"first" and "second": as often no rank ("at first", "a second").

Example:
    >>> RANK_NAMES["third"], content_words("the third and twenty-first, a second")
    (3, ['3', '21', 'second'])
"""
# Numbers in words read as their digits ("twelve" is "12", "twenty-one" "21"), ranks too ("third" is "3"; a scale
# word is applied to the number before it by `content_words`).
_SPELLED_UNITS: Final = {word: value for word, value in NUMBER_NAMES.items() if value < 20}
_SPELLED_TENS: Final = {word: value for word, value in NUMBER_NAMES.items() if value >= 20}
_SPELLED_ORDINALS: Final = {word: rank for word, rank in RANK_NAMES.items() if word not in ("first", "second")}
# The scale words `content_words` applies to the number before them, each with its power of ten.
_SCALE_WORDS: Final = {"hundred": 2, "thousand": 3, "million": 6, "billion": 9, "trillion": 12}
# A share of a scale: "half a million" is 500000, "a quarter million" 250000, "three quarters of a million" 750000.
_SHARES: Final = {"half": "0.5", "quarter": "0.25"}


def number_word(digits: str, places: int = 0) -> str:
    """A number in digits as `content_words` writes it, its point moved ``places`` to the right (a scale).

    No leading zero, and no point left bare; the digits written after the
    point stay ("Python 3.10" is no 3.1, "10.30" no 10.3). Exact at any length.

    Example:
        >>> number_word("3.50"), number_word("3.5", 6), number_word("007"), number_word("0.25", 2)
        ('3.50', '3500000', '7', '25')
    """
    whole, _, fraction = digits.partition(".")
    fraction += "0" * (places - len(fraction))
    whole, fraction = (whole + fraction[:places]).lstrip("0") or "0", fraction[places:]
    return f"{whole}.{fraction}" if fraction else whole


def is_number_word(word: str) -> bool:
    """Whether a content word is a number (as `number_word` writes it).

    Example:
        >>> is_number_word("3.5"), is_number_word("1990"), is_number_word("2nd")
        (True, True, False)
    """
    return word.isascii() and word.replace(".", "", 1).isdigit()


def _piece_words(folded: str) -> list[str]:
    """The words of a folded piece, its numbers as `number_word` writes them (decimals, scales, number words)."""
    found: list[str] = []
    last = 0
    for match in _NUMERAL.finditer(folded):
        found += words(folded[last : match.start()])
        found.append(number_word(match.group(1), _SUFFIX_PLACES[match.group(2)] if match.group(2) else 0))
        last = match.end()
    found += words(folded[last:]) if last else words(folded)
    read: list[str] = []
    for word in found:
        value = _SPELLED_UNITS.get(word)
        if value is None:
            # After a ten, "first" too: "twenty-first" is 21 ("first" alone is a word; "thirty-second" is as often
            # a length of time).
            after_ten = read and read[-1] in _TENS_WRITTEN and word == "first"
            value = 1 if after_ten else _SPELLED_ORDINALS.get(word)
        if value is not None:
            if read and read[-1] in _TENS_WRITTEN and 0 < value < 10:
                read[-1] = str(int(read[-1]) + value)  # "twenty-one", "twenty-first"
            else:
                read.append(str(value))
        elif word in _SPELLED_TENS:
            read.append(str(_SPELLED_TENS[word]))
        elif word in _SCALE_WORDS:
            read.append(_SCALE_MARK + word)  # applied to the number before it, if one stands there (`content_words`)
        else:
            read.append(word)
    return read


_TENS_WRITTEN: Final = frozenset(str(value) for value in _SPELLED_TENS.values())


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
        if folded.isascii() and folded.isalpha() and folded.islower() and folded not in _NUMBER_NAMES:
            found: tuple[str, ...] = (stem(folded),) if folded not in STOP_WORDS else ()  # one plain word: most
        else:
            if _WRITTEN_SCALE_LETTERS.intersection(piece):
                folded = fold(_WRITTEN_SCALE.sub(_scale_spelled_out, piece))
                if "," in folded:
                    folded = _THOUSANDS_COMMA.sub("", folded)
            found = tuple(w if w[0] == _SCALE_MARK else stem(w) for w in _piece_words(folded) if w not in STOP_WORDS)
        if len(piece) <= _LONGEST_PIECE_KEPT:
            if len(self) >= _PIECES_KEPT:
                self.clear()
            self[piece] = found
        return found


_NUMBER_NAMES: Final = frozenset([*_SPELLED_UNITS, *_SPELLED_TENS, *_SPELLED_ORDINALS, *_SCALE_WORDS])
# A scale word in the singular ("million", not "millions of") is marked with this by `_PieceWords` until
# `content_words` applies it (no word starts with it).
_SCALE_MARK: Final = "#"
_MARKED_SCALES: Final = {_SCALE_MARK + word: places for word, places in _SCALE_WORDS.items()}
# Thousands set apart by a no-break or thin space, as typesetting sets them ("25\u00a0000", "1\u202f000\u202f000"), or
# by plain spaces before a last "000" ("25 000", "1 250 000"): one number. Other plain spaces set nothing apart
# ("Take 2 250 mg tablets" is two tablets, "pages 100 200 300" a list).
_SPACED_THOUSANDS: Final = re.compile(
    r"(?<![\w.,])[0-9]{1,3}(?:(?:[\u00a0\u202f\u2009][0-9]{3})+|(?: [0-9]{3})* 000)(?=[^\w\s]*(?:\s|$))"
)
# The longest number a scale is applied to, or makes (in characters): a text of "million million ..." stays linear.
_LONGEST_NUMBER: Final = 40
_PIECES_KEPT: Final = 65_536
_LONGEST_PIECE_KEPT: Final = 40
_PIECE_WORDS: Final = _PieceWords()


def content_words(text: str) -> list[str]:
    """The stemmed content words of ``text``, in order, each number as one word of its digits (`number_word`).

    A number's thousands commas (or spaces: no-break ones, or plain ones
    before a last "000") are left out ("1,000", "1\u00a0000" and "1 000"
    are "1000"), its decimal point kept ("3.5"), a scale applied ("3.5
    million", "3.5M", "3.5mn" and "3,500,000" are "3500000"; "half a million"
    is "500000"), a unit written onto it read apart ("200mg" is "200 mg"), and
    numbers and ranks in words read as digits ("twelve", "twenty-one",
    "third"; "two thousand five hundred" is "2500").

    Example:
        >>> content_words("How are the citations renumbered? Migrate, migrating!")
        ['citation', 'renumber', 'migrat', 'migrat']
        >>> content_words("Two towns of 1,000 people, 3.5 million in all")
        ['2', 'town', '1000', 'peopl', '3500000']
    """
    if (" 000" in text or not text.isascii()) and _SPACED_THOUSANDS.search(text):
        # Spaces inside a number (an ASCII text without " 000" has none: one flag and one search in C to tell).
        text = _SPACED_THOUSANDS.sub(_without_spaces, text)
    words: list[str] = []
    pieces = _PIECE_WORDS
    for piece in text.split():
        # A loop: faster than chaining a map of the look-ups, interpreted and (much) more so compiled.
        words += pieces[piece]
    if _MARKED_SCALES.keys().isdisjoint(words):
        return words
    return _marks_applied(words)


def _without_spaces(match: re.Match[str]) -> str:
    return "".join(match.group().split())


def _marks_applied(found: list[str]) -> list[str]:
    """``found`` with each scale word (marked, singular) applied to the number just before it ("2", "hundred": "200").

    A scale word with no number before it is its plain word ("a million
    thanks"; "thousands" is never marked), or a share of it after "half" or
    "quarter" ("half a million", "two and a half million", "three quarters
    of a million"). A smaller whole number just after a scale takes the place
    of its zeros ("three hundred and thirty" is "330": "and" is a stop word,
    so no word stands between them; "two thousand five hundred" is "2500";
    one written in digits, below a thousand). Other numbers stay apart ("1
    million in 2019"). Numbers longer than ``_LONGEST_NUMBER`` characters
    take no scale.

    Example:
        >>> _marks_applied(["3", "#hundred", "30", "#thousand", "peopl", "2019", "#million", "thank"])
        ['330000', 'peopl', '2019000000', 'thank']
        >>> _marks_applied(["#million", "thank", "half", "#million", "2", "#thousand", "5", "#hundred"])
        ['million', 'thank', '500000', '2500']
    """
    read: list[str] = []
    # ``read[opened]`` is a whole number a scale ended, with ``zeros`` zeros a smaller number may take the place of.
    opened, zeros = -1, 0
    for k, word in enumerate(found):
        places = _MARKED_SCALES.get(word)
        last = read[-1] if read else ""
        if places is not None:
            opened = opened if opened == len(read) - 2 else -1
            if last in _SHARES:
                read[-1] = number_word(_share(last, read), places)
                opened = -1
                continue
            scaled = number_word(last, places) if is_number_word(last) and len(last) <= _LONGEST_NUMBER else ""
            if not 0 < len(scaled) <= _LONGEST_NUMBER:
                read.append(stem(word[1:]))
                opened = -1
                continue
            read[-1] = scaled
            if not (scaled.isdigit() and (scaled == "0" or scaled.endswith("0" * places))):
                opened = -1
                continue
            if opened >= 0 and len(scaled) <= zeros:
                # "two thousand five hundred": the hundreds in place of the thousand's zeros.
                read.pop()
                read[-1] = read[-1][: -len(scaled)] + scaled
            opened, zeros = len(read) - 1, places
            continue
        if opened == len(read) - 1 and word.isascii() and word.isdigit():
            digits = word.lstrip("0")
            after = _MARKED_SCALES.get(found[k + 1], 0) if k + 1 < len(found) else 0
            if 0 < len(digits) <= min(zeros, 3) and not 0 < after < zeros:
                # "three hundred and thirty": the tens and units in place of the hundred's last two zeros.
                read[-1] = read[-1][: -len(digits)] + digits
                opened = -1
                continue
            if 0 < after < zeros:
                # "two thousand five hundred": the five is scaled first (``opened`` stays).
                read.append(word)
                continue
        read.append(word)
        opened = -1
    return read


def _share(word: str, read: list[str]) -> str:
    """The share of a scale "half" or "quarter" (``read[-1]``) makes, taking a count before it out of ``read``."""
    count = read[-2] if len(read) > 1 else ""
    if word == "half" and count.isascii() and count.isdigit() and len(count) <= 2:
        read.pop()
        return count + ".5"  # "two and a half million"
    if word == "quarter" and count in ("1", "2", "3"):
        read.pop()
        return ("0.25", "0.5", "0.75")[int(count) - 1]  # "three quarters of a million"
    return _SHARES[word]


def clear_word_caches() -> None:
    """Forget every word (and piece of text) stemmed so far (for benchmarks that measure a cold start).

    Example:
        >>> clear_word_caches()
    """
    stem.cache_clear()
    _PIECE_WORDS.clear()
