"""The text layer's shortcuts against the plain reading they stand for."""

from __future__ import annotations

import decimal
import itertools
import re
import string
import unicodedata
from decimal import Decimal

from hypothesis import example, given, settings
from hypothesis import strategies as st

from langchain_refs.text import STOP_WORDS, WORD, content_words, fold, stem, words
from langchain_refs.text._lexical_engine import _CAPITALISED, _names
from langchain_refs.text._words import clear_word_caches


def _kind(character: str) -> str | None:
    """What a character of a folded text is to a reader of words, as `words` documents it."""
    code = ord(character)
    if 0x3040 <= code <= 0x30FF or 0x3400 <= code <= 0x4DBF or 0x4E00 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF:
        return "alone"  # Han and kana: a word each
    if character.isascii():
        return "word" if character in string.ascii_lowercase + string.digits else None
    return "word" if unicodedata.category(character)[0] in "LMN" else None


def plain_words(folded: str) -> list[str]:
    """`words` written another way: runs of word characters, and each Han or kana character alone."""
    found: list[str] = []
    for kind, run in itertools.groupby(folded, key=_kind):
        if kind == "word":
            found.append("".join(run))
        elif kind == "alone":
            found.extend(run)
    return found


# Numbers in words, and the scales, as a reader writes them in digits (a table of its own, not the module's).
NUMBER_NAMES = dict(
    zip(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
        " seventeen eighteen nineteen".split(),
        range(20),
        strict=True,
    )
)
TENS_NAMES = {name: 10 * k for k, name in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)}
# Ranks in words, read as their number ("first" and "second" are not: as often no rank, "at first", "a second").
RANK_NAMES = {
    name: rank
    for rank, name in enumerate(
        "- - third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth"
        " fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split(),
        1,
    )
    if name != "-"
}
SCALE_PLACES = {"hundred": 2, "thousand": 3, "million": 6, "billion": 9, "trillion": 12}
LONGEST_NUMBER = 40  # characters: a longer number takes no scale, nor may a scale make one


def _as_digits(written: str, places: int = 0) -> str:
    """A number written in digits, its point moved ``places`` to the right (exact decimals): no leading zero,
    the digits after the point as written ("3.50", "3500000")."""
    with decimal.localcontext() as context:
        context.prec = 10_000
        whole, _, fraction = format(Decimal(written).scaleb(places), "f").partition(".")
    whole = whole.lstrip("0") or "0"
    return f"{whole}.{fraction}" if fraction else whole


def _is_digits(word: str) -> bool:
    return bool(word) and all(c in string.digits for c in word)


def _is_number(word: str) -> bool:
    whole, _, fraction = word.partition(".")
    return _is_digits(whole) and (not fraction or _is_digits(fraction)) and word.count(".") <= 1


def _numerals(folded: str) -> list[tuple[int, int, str]]:
    """Where a folded piece writes a number in digits, scanned by hand, and the number in digits.

    A number starts at a digit that follows no word character (``\\w``: a
    letter, digit or "_") and no "."; it is its digits, a decimal point and
    digits, then "k", "mn" or "bn" if written onto it; it must be followed by
    no word character and no "." with a digit after it (without a suffix, a
    unit may follow it: two letters a to z, or one of g, l, m, s, h, v, w
    alone), else it is no number (and the scan goes on at the next character).
    """

    def wordish(i: int) -> bool:
        return 0 <= i < len(folded) and (folded[i].isalnum() or folded[i] == "_")

    def digit(i: int) -> bool:
        return 0 <= i < len(folded) and folded[i] in string.digits

    def run_end(i: int) -> int:
        while digit(i):
            i += 1
        return i

    found = []
    i = 0
    while i < len(folded):
        if not digit(i) or wordish(i - 1) or (i > 0 and folded[i - 1] == "."):
            i += 1
            continue
        whole_end = run_end(i)
        ends = [whole_end]
        if folded[whole_end : whole_end + 1] == "." and digit(whole_end + 1):
            ends.insert(0, run_end(whole_end + 1))  # the decimal is tried first
        for end in ends:
            suffix = next((s for s in ("k", "mn", "bn", "st", "nd", "rd", "th") if folded.startswith(s, end)), "")
            for written in (suffix, ""):
                stop = end + len(written)
                # With no suffix, a unit written onto the number may follow ("200mg", "10g"): two letters or
                # more, or one of a unit's letters then no letter, digit or "_" ("4b" is no number).
                two = folded[stop : stop + 2]
                after_one = folded[stop + 1 : stop + 2]
                letter = not written and (
                    (len(two) == 2 and all(c in string.ascii_lowercase for c in two))
                    or (
                        folded[stop : stop + 1] in tuple("glmshvw")
                        and not (after_one and after_one in string.ascii_lowercase + string.digits + "_")
                    )
                )
                if letter or (not wordish(stop) and not (folded[stop : stop + 1] == "." and digit(stop + 1))):
                    places = {"k": 3, "mn": 6, "bn": 9}.get(written, 0)  # "22nd": 22
                    found.append((i, stop, _as_digits(folded[i:end], places)))
                    break
            else:
                continue
            break
        i = found[-1][1] if found and found[-1][0] == i else i + 1
    return found


def _piece_reading(folded: str) -> list[str]:
    """A folded piece's words (`plain_words`), its numbers in digits as `_numerals` reads them, in words as digits."""
    read: list[str] = []
    at = 0
    for start, stop, number in _numerals(folded):
        read += [*plain_words(folded[at:start]), number]
        at = stop
    read += plain_words(folded[at:])
    # Numbers in words; "twenty-one" (a ten, then a unit, in one piece) is one.
    spelled: list[str] = []
    tens = {str(v) for v in TENS_NAMES.values()}
    names = {**NUMBER_NAMES, **RANK_NAMES}
    for word in read:
        after_ten = spelled and spelled[-1] in tens
        if after_ten and word == "first":
            spelled[-1] = str(int(spelled[-1]) + 1)  # "twenty-first" ("thirty-second" is as often a length of time)
        elif word in names and after_ten and 1 <= names[word] <= 9:
            spelled[-1] = str(int(spelled[-1]) + names[word])
        elif word in names:
            spelled.append(str(names[word]))
        else:
            spelled.append(str(TENS_NAMES.get(word, word)))
    return spelled


def _is_word_character(character: str) -> bool:
    return character.isalnum() or character == "_"


CURRENCY_SIGNS = "$\u20ac\u00a3\u00a5"


def _capital_scales(piece: str) -> str:
    """A piece with each scale written onto a number in capitals ("5M", "7B"), or "m" after a currency sign
    ("$3m"), spelled as folding keeps it ("5mn", "7bn"), scanned by hand."""
    out = []
    i = 0
    while i < len(piece):
        before = piece[i - 1] if i else ""
        if piece[i] not in string.digits or (before and (_is_word_character(before) or before == ".")):
            out.append(piece[i])
            i += 1
            continue
        end = i
        while end < len(piece) and piece[end] in string.digits:
            end += 1
        if piece[end : end + 1] == "." and piece[end + 1 : end + 2] in tuple(string.digits):
            end += 1
            while end < len(piece) and piece[end] in string.digits:
                end += 1
        letter, after = piece[end : end + 1], piece[end + 1 : end + 2]
        scale = {"M": "mn", "B": "bn"}.get(letter)
        if letter == "m" and before in tuple(CURRENCY_SIGNS):
            scale = "mn"
        if scale is not None and not (after and _is_word_character(after)):
            out.append(piece[i:end] + scale)
            i = end + 1
        else:
            out.append(piece[i:end])
            i = end
    return "".join(out)


def _piece_content(piece: str) -> list[tuple[bool, str]]:
    """A piece's content words before the scales: folded, thousands commas out, read, stop words out, stemmed.

    Each with whether it is a scale word in the singular (then not stemmed yet).
    """
    folded = re.sub(r"(?<=\d),(?=\d\d\d(?!\d))", "", fold(_capital_scales(piece)))
    read = [word for word in _piece_reading(folded) if word not in STOP_WORDS]
    return [(word in SCALE_PLACES, word if word in SCALE_PLACES else stem(word)) for word in read]


SPACES_IN_NUMBERS = "\u00a0\u202f\u2009"  # no-break and thin spaces: a plain one sets no thousands apart


def _groups_after(pieces: list[str], spaces: list[str], i: int) -> int:
    """How many pieces after ``pieces[i]`` (a number's head) are its groups of thousands (0: none).

    Each group is a piece of three digits after one space; all the spaces no-break or thin ones (any run of
    groups), or all plain ones (a run ending in a group "000"). A group is three digits alone, but the last may
    end in marks (no word character). The longest run.
    """
    typeset = spaces[i] in tuple(SPACES_IN_NUMBERS) if i < len(spaces) else False
    kinds = tuple(SPACES_IN_NUMBERS) if typeset else (" ",)
    taken = 0
    j = i + 1
    while j < len(pieces) and spaces[j - 1] in kinds:
        group = pieces[j]
        if not (len(group) >= 3 and all(c in string.digits for c in group[:3])):
            break
        if any(_is_word_character(c) for c in group[3:]):
            break
        if typeset or group[:3] == "000":
            taken = j - i
        if len(group) > 3:
            break  # marks after it: the last group
        j += 1
    return taken


def _thousands_joined(text: str) -> str:
    """The text with the spaces of numbers written in groups of three ("25 000") taken out, scanned by pieces.

    A number's head is the last 1-3 digits of a piece, with no word character, "." or "," before them in it;
    its groups are `_groups_after`.
    """
    parts = re.split(r"(\s)", text)  # the pieces at even indices (maybe empty), one whitespace character between
    pieces, spaces = parts[0::2], parts[1::2]
    out = []
    i = 0
    while i < len(pieces):
        piece = pieces[i]
        digits = len(piece) - len(piece.rstrip(string.digits))
        before = piece[-digits - 1] if digits < len(piece) else ""
        taken = 0
        if 1 <= digits <= 3 and before not in (".", ",") and not (before and _is_word_character(before)):
            taken = _groups_after(pieces, spaces, i)
        out.append(piece + "".join(pieces[i + 1 : i + taken + 1]))
        i += taken
        if i < len(spaces):
            out.append(spaces[i])
        i += 1
    return "".join(out)


def plain_content_words(text: str) -> list[str]:
    """The reading `content_words` stands for: every word of the folded text, stop words left out, stemmed.

    Numbers as a reader reads them: thousands commas left out, and no-break or thin spaces between groups of
    three (plain ones too before a last "000"); a decimal one word; a scale written onto a number in capitals
    ("5M", "7B") as "mn" or "bn"; a scale word in the singular applied to the number before it ("3.5 million"
    is "3500000"; "thousands" is a word) or to "half" and "quarter" ("two and a half million", "three quarters
    of a million"); a smaller whole number after a scale added to it ("three hundred and thirty", "two thousand
    five hundred"; in digits below a thousand); numbers and ranks in words in digits.
    """
    text = _thousands_joined(text)
    found: list[tuple[bool, str]] = []  # (a scale word in the singular, the word)
    for piece in text.split():
        found += _piece_content(piece)
    read: list[str] = []
    opened: tuple[int, int] | None = None  # (where in read, its zeros): a whole number a scale ended
    for k, (scale, word) in enumerate(found):
        if scale:
            places = SCALE_PLACES[word]
            if opened is not None and opened[0] != len(read) - 2:
                opened = None
            last = read[-1] if read else None
            if last in ("half", "quarter"):
                share = Decimal("0.5") if last == "half" else Decimal("0.25")
                count = read[-2] if len(read) > 1 else ""
                if last == "half" and _is_digits(count) and len(count) <= 2:
                    share += int(count)
                    del read[-2]
                elif last == "quarter" and count in ("1", "2", "3"):
                    share *= int(count)
                    del read[-2]
                read[-1] = _as_digits(str(share), places)
                opened = None
                continue
            if last is not None and _is_number(last) and len(last) <= LONGEST_NUMBER:
                scaled = _as_digits(last, places)
                if len(scaled) <= LONGEST_NUMBER:
                    read[-1] = scaled
                    if _is_digits(scaled) and int(scaled) % 10**places == 0:
                        if opened is not None and int(scaled) < 10 ** opened[1]:
                            read[-2:] = [str(int(read[-2]) + int(scaled))]
                        opened = (len(read) - 1, places)
                    else:
                        opened = None
                    continue
            read.append(stem(word))
            opened = None
            continue
        if opened is not None and opened[0] == len(read) - 1 and _is_digits(word):
            following = found[k + 1] if k + 1 < len(found) else (False, "")
            smaller_scale = following[0] and SCALE_PLACES[following[1]] < opened[1]
            if not smaller_scale and 0 < int(word) < 10 ** min(opened[1], 3):
                read[-1] = str(int(read[-1]) + int(word))  # "three hundred and thirty": 330
                opened = None
                continue
            if smaller_scale:
                read.append(word)  # "two thousand five hundred": the five is scaled first
                continue
        read.append(word)
        opened = None
    return read


@settings(max_examples=500, deadline=None)
@given(text=st.text(max_size=80))
def test_words_is_its_plain_reading(text: str) -> None:
    """`words` of any folded text are those of the reading written another way (`plain_words`)."""
    assert words(fold(text)) == plain_words(fold(text))


# Whitespace of every kind, letters that fold or decompose (ligatures, accents, dotted I, final sigma,
# full-width and superscript digits), combining marks, punctuation and markers.
TRICKY = (
    " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2007\u200a\u2028\u2029\u202f\u205f\u3000"
    "aAeEsSzZ09\u0130\u0131\u03a3\u03c3\u03c2\u00df\ufb01\ufb02\u00bd\u00b2\u00b3\u2460\uff21\uff19"
    "\u00e9\u00c9\u00f1\u00d1\u0301\u0308\u0327\u01c5\u338f\u2103\u2122.,;:!?'\"()[]-_/"
)
TEXTS = st.one_of(
    st.text(alphabet=TRICKY, max_size=80),
    st.text(max_size=80),
    st.lists(st.sampled_from([*sorted(STOP_WORDS)[:20], "Paris", "migrating", "2.5", "U.S.", "é", "\u0301"])).map(
        " ".join
    ),
    # Numbers in digits and in words, with scales, decimals, versions and thousands commas.
    st.lists(
        st.sampled_from(
            [
                "3.5",
                "1.2.3",
                "1,000",
                "100k",
                "2.5bn",
                "3mn",
                "1.2m",
                "x3.5",
                "3.5.",
                ".5",
                "3.5_",
                "007",
                "0.50",
                "twenty",
                "one",
                "twenty-one",
                "Hundred",
                "hundreds",
                "million",
                "of",
                "thousand",
                "-",
                ".",
                ",",
                "7",
                "٣",
                "²",
                "thirty-twelve",
                "5.",
                "5.a",
                "thousands",
                "millions",
                "3.10",
                "1" * 45,
                "05",
                # Units and scales written onto numbers, shares and ranks, thousands set apart by spaces.
                "200mg",
                "2.0L",
                "100kg",
                "$5M",
                "7B",
                "$3m",
                "5M",
                "half",
                "quarter",
                "quarters",
                "first",
                "third",
                "twenty-first",
                "twenty-second",
                "second",
                "000",
                "500,",
                "050",
                "25",
                "1\u00a0000",
                "12\u202f500",
                "25 000",
                "1 250 000",
                "2 250",
                "000,",
                "4B",
                "1a",
                "10g",
                "5gx",
                "\u20ac7B",
                "thirty-second",
                "000x",
                "000.",
                "(1",
            ]
        ),
        max_size=10,
    ).map(lambda parts: "".join(p if p in "-.," else p + " " for p in parts)),
)


@settings(max_examples=500, deadline=None)
@given(text=TEXTS, cold=st.booleans())
@example(text="\u03a3 \u03a3\u0391 \ufb01sh\u00a0caf\u00e9 \u00bd x\u0301y", cold=True)
@example(text="0.1:HUNDRED:0 0 hundred 5", cold=True)
def test_content_words_is_the_plain_reading(text: str, cold: bool) -> None:
    """Read piece by piece through the cache, the content words of any text are those of the plain reading."""
    if cold:
        clear_word_caches()
    assert content_words(text) == plain_content_words(text)
    assert content_words(text) == plain_content_words(text)  # once more, from the cache


def test_no_whitespace_folds_into_a_word() -> None:
    """What the piece-by-piece reading rests on: no whitespace character folds into a letter or digit."""
    for code in range(0x110000):
        char = chr(code)
        if char.isspace():
            assert not words(fold(char)), hex(code)
            assert not words(unicodedata.normalize("NFKD", char.lower())), hex(code)


def test_long_pieces_are_read_but_not_kept() -> None:
    """A piece longer than the cache keeps is read all the same."""
    text = "migrating" * 20 + " Paris"
    assert content_words(text) == plain_content_words(text)


def test_a_citation_with_its_passage_is_replace_s() -> None:
    """`attach_passages` copies a citation field by field: the same as `dataclasses.replace`, every field known."""
    from dataclasses import fields, replace

    from langchain_refs.streaming._passages import _CITATION_FIELDS, with_passage
    from langchain_refs.streaming._references import Citation, Passage

    assert tuple(f.name for f in fields(Citation)) == _CITATION_FIELDS
    citation = Citation(
        number=3,
        document_positions=(2, 5),
        start=10,
        end=13,
        text_start=1,
        text_end=10,
        text="Paris is",
        marker="[3](id=2, 5)",
        support=0.5,
        supported=True,
        unsupported_reason="x",
        native={"a": 1},
    )
    passage = Passage(document_position=2, document_start=0, document_end=4, excerpt="Bye.", score=0.25)
    copied = with_passage(citation, passage)
    assert copied == replace(citation, passage=passage)
    assert all(getattr(copied, f.name) is getattr(replace(citation, passage=passage), f.name) for f in fields(Citation))


# The claim patterns as first written: each tried at every position of a claim.
PLAIN_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z]+")
# Capitals after every kind of character that decides whether they start a name: word characters
# (letters of any script, digits, "_"), sentence ends, whitespace of every kind, the claim's start.
CLAIMS = st.one_of(
    TEXTS,
    st.text(alphabet="AMZamz09_.!?,;'-\u00e9\u00c9\u01c5\u0663\u2163 \t\n\xa0\u2003", max_size=40),
)


@settings(max_examples=1000, deadline=None)
@given(text=CLAIMS)
@example(text="Paris. Lyon!\tRome_Milan \u00e9Nice \u00a0Oslo 1.5,2 3..4")
def test_the_claim_patterns_find_what_their_plain_forms_find(text: str) -> None:
    """Names and numbers: the patterns that skip to the next capital or digit find what the plain ones find."""
    assert _CAPITALISED.findall(text) == PLAIN_CAPITALISED.findall(text)
    names = PLAIN_CAPITALISED.findall(text)
    assert _names(text) == {stem(w) for w in WORD.findall(fold(" ".join(names)))}
