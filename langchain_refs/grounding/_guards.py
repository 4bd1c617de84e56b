"""Meaning guards: small named rules that stop a claim from being called supported on wording alone.

The offline scorers read words, not meaning: "The Eiffel Tower is 450 metres
tall" shares almost every word with "The Eiffel Tower is 330 metres tall".
Each guard here reads one thing a claim asserts and looks for it in the
claim's evidence; when it is missing or disagrees, the guard gives a
`GuardFinding`: which guard fired, the label it calls for (Contradiction when
the evidence states the same thing with the value changed, Neutral when the
value is simply not there), the claim's value, the evidence's value and one
line saying why ("the sources say 330 metres, not 450 metres").

The guards, each switched on or off in `MeaningGuards`:

- ``number``: every number, year, amount or quantity of the claim (in
  digits, or in words from ten up: "twelve", "two million") is stated by the
  evidence, in digits or in words ("330" and "three hundred and thirty" are
  one value; "1,000" and "1000" too). "about", "over", "nearly"... allow a
  nearby value; a scale written on it counts ("100k", "$5M", "2.5bn").
  Another number in the same slot (the same unit, or the same word before
  it) is a Contradiction.
- ``name``: every name or other capitalised word of the claim (not the
  first word of a sentence, unless a second capitalised word follows it)
  is in the evidence, in any case and inflection ("Paris", "paris",
  "Parisian"; "Carey's" for "Carey"), as an abbreviation ("NASA", "U.S."
  for "United States"; "TV" for "television"; "U. S." with spaces), as a
  country's other name ("British" for "Britain", "U.S." for "American";
  `_NATIONS`), written as one word ("A.V. Club": "avclub"), a hyphenated
  name's parts without its prefix ("Neo-Babylonian": "Babylon"), or as a
  part of a longer name that the evidence writes as a name ("Neil
  Armstrong" where the evidence says "Armstrong"; "Rebecca Bunch" where it
  says "Rebecca"). Another capitalised word in the same slot (the same two
  words before or after it), or next to the name's part ("Crazy
  Ex-Girlfriend" for "Protectorate Ex-Girlfriend"), is a Contradiction.
- ``polarity``: the evidence sentence that shares most of the claim's words
  must not state un-negated what the claim negates, nor negate what the
  claim states. Negations are "not", "n't", "no", "never", "no longer",
  "without", "none"...; "not only ... but", "not just", "no doubt" negate
  nothing, and a negated negative word ("not uncommon") is a double negation
  that affirms. A claim that negates needs a negation in the evidence
  sentence that states it ("failed", "lacks", "impossible", "remains" for
  "does not change" count); a negation in a condition ("if not treated"), a
  question ("why it is not") or a quotation is not the claim's own.
- ``antonym``: a word of a small built-in list (before/after, more/less,
  first/last, increase/decrease, won/lost, all/some, always/sometimes...)
  that the best evidence sentence replaces by its opposite.
- ``hedge``: a claim stated plainly where every sentence stating it says it
  only may be so, or only under a condition the claim drops.
- ``role``: two parties of the claim the other way round in the sentence
  that states it ("Oracle acquired Cerner" against "Cerner acquired Oracle").

Each guard reads only what it needs; the evidence's analysis is cached, so the
same evidence against many claims is read once. Pure Python, no model.
"""

from __future__ import annotations

import bisect
import collections
import dataclasses
import functools
import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Final, Literal, NamedTuple

from langchain_refs.streaming import checked_flag
from langchain_refs.text import DEFAULT_SPLITTER, NUMBER_NAMES, RANK_NAMES, STOP_WORDS, fold, stem, stemmed_words

__all__ = [
    "ANTONYMS",
    "CITATION_MARKER",
    "GuardFinding",
    "MeaningGuards",
    "antonym_guard",
    "checked_guards",
    "hedge_guard",
    "name_guard",
    "negates_the_reason",
    "negating_verb",
    "number_guard",
    "polarity_guard",
    "role_guard",
    "says_negated",
]

GuardName = Literal["number", "name", "polarity", "antonym", "hedge", "role"]
"""The names of the guards, as `GuardFinding.guard` gives them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GuardFinding:
    """Why a claim is not supported: the guard that fired and what the evidence says instead.

    ``label`` is ``Contradiction`` when the evidence states the same thing
    with the value changed, ``Neutral`` when the value is missing from it.
    ``source_value`` is the evidence's value (None when it has none);
    ``start``/``end`` locate the evidence sentence that holds it, as offsets
    in the evidence text the guard read (None when there is none).

    Example:
        >>> finding = number_guard("The tower is 450 metres tall.", "The tower is 330 metres tall.")
        >>> finding.guard, finding.label, finding.reason
        ('number', 'Contradiction', 'the sources say 330 metres, not 450 metres')
    """

    guard: GuardName
    label: str
    claim_value: str
    source_value: str | None
    reason: str
    start: int | None = None
    end: int | None = None

    def to_dict(self) -> dict[str, object]:
        """JSON-ready data.

        Example:
            >>> number_guard("It has 12 bridges.", "It has bridges.").to_dict()["source_value"] is None
            True
        """
        return {f.name: getattr(self, f.name) for f in fields(self)}


# ---- reading a text: tokens with their offsets, case and kind ----

# An abbreviation with dots ("U.S."), a number (with separators, a decimal part, an ordinal or decade
# suffix), a word (with inner apostrophes or hyphens), or a mark that ends a clause.

# A half of the day may be written onto it ("9:30am", "7:30PM", "9:30a.m.").
_CLOCK_PATTERN: Final = (
    r"(?<![\w.,:])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?:(?i:[ap]m)(?!\w)|(?i:[ap]\.m\.))?(?![\w:]|[.,]\d)"
)
_GLUED_HALF: Final = re.compile(r"[ap]\.?m\.?$")
_CLOCK: Final = re.compile(_CLOCK_PATTERN)
_TOKEN = re.compile(
    r"(?P<degrees>\u00b0\s?[CF])(?![A-Za-z])"
    r"|(?P<millions>(?<=[$\u20ac\u00a3\u00a5])\d+(?:[.,]\d+)*m)(?![\w])"  # "$3m": millions after a currency sign
    r"|(?P<abbr>(?:[A-Za-z]\.){2,})"
    # A time of day ("9:45", "21:05:30"): one number, not two split by a colon that would end a sentence.
    r"|(?P<clock>" + _CLOCK_PATTERN + ")"
    # A number, with its suffix ("2nd", "1990s", "100k"), or with a unit written onto it ("10km", "5mg", "1.2m").
    # Thousands set apart by no-break or thin spaces ("25\u00a0000", "1\u202f000\u202f000"), or by plain ones before a
    # last "000" ("25 000"); other plain spaces set none apart ("Take 2 250 mg tablets" is two tablets).
    r"|(?P<spaced>(?<![\w.,\-\u2212])\d{1,3}(?:(?:[\u00a0\u202f\u2009]\d{3})+|(?: \d{3})* 000)(?![\w\-]|[.,]\d))"
    r"|(?P<num>(?:(?<![\w.,\-\u2212])[-\u2212](?=\d))?\d+(?:[.,]\d+)*"
    r"(?:(?:st|nd|rd|th|s|k|K|M|B|mn|bn)(?![\w])|(?![\w])|(?=[A-Za-z\u00b5\u03bc]+(?![\w]))))"
    r"|(?P<word>[^\W\d_][\w]*(?:['\u2019\-][^\W\d_]+)*)"
    r"|(?P<mark>[,;:.!?()\u2013\u2014\[\]%\"\u201c\u201d\n])"
)
CITATION_MARKER: Final = re.compile(
    r"\[\s*\d+(?:\s*[,;\u2013-]\s*\d+)*\s*\](?:\(id=[^)]*\))?"  # [3], [2, 5], [2](id=5)
    r"|\[\^\d+\]"  # a Markdown footnote: [^1]
    r"|\u3010\d+(?::\d+)?\u2020[^\u3011\n]{0,40}\u3011"  # an assistant's 【3†source】
    r"|(?<![\d.])<sup>\s*\[?\s*\d+(?:\s*,\s*\d+)*\s*\]?\s*</sup>"  # HTML: <sup>1</sup> (10<sup>6</sup> a power)
    r"|\[(?i:source|doc|document|ref)\s*\d+\]"  # [Source 2], [doc1]
)
"""A citation marker in an answer's text: a reference to a source, not a number the claim states.

Example:
    >>> CITATION_MARKER.sub("", "Paris[1] is big[^2], old\u30103\u2020web\u3011 and near[Source 4].")
    'Paris is big, old and near.'
"""
_SENTENCE_END: Final = frozenset({".", "!", "?", ":", "\n", '"', "\u201c", "\u201d"})
_CLAUSE_END: Final = frozenset({",", ";", ":", ".", "!", "?", "(", ")", "\u2013", "\u2014", "\n"})


class _Token(NamedTuple):
    kind: str  # "abbr", "num", "word", "mark"
    text: str
    low: str  # folded
    start: int
    end: int
    initial: bool  # first word of a sentence


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group())


@functools.lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[_Token, ...]:
    """The tokens of a text (cached: evidence repeats), citation markers left out."""
    if "[" in text or "<" in text or "\u3010" in text:
        text = CITATION_MARKER.sub(_blank, text)
    lowered = text.lower() if text.isascii() else None
    found: list[_Token] = []
    initial = True
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or "mark"
        if kind == "degrees":
            kind = "word"  # "\u00b0C": a unit, read as the word after its number
        elif kind in ("spaced", "clock"):
            kind = "num"
        elif kind == "millions":
            # "$3m": money is never in metres, so the "m" is a million, read as the scale written "M" is.
            start, end = match.span()
            value = text[start : end - 1] + "M"
            found.append(_Token("num", value, value.lower(), start, end, initial))
            initial = False
            continue
        start, end = match.span()
        if kind == "mark":
            value = match.group()
            found.append(_Token("mark", value, value, start, end, False))
            if value in _SENTENCE_END:
                initial = True
            continue
        if kind == "word" and text.endswith(("'s", "\u2019s"), start, end):
            end -= 2  # a possessive: "Carey's" is Carey
        value = text[start:end]
        low = lowered[start:end] if lowered is not None else value.lower() if value.isascii() else fold(value)
        found.append(_Token(kind, value, low, start, end, initial))
        initial = False
    return tuple(found)


# ---- numbers ----

_UNITS: Final = {**NUMBER_NAMES, "dozen": 12}
_ORDINAL_WORDS: Final = RANK_NAMES
_SCALES: Final = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000,
                  "trillion": 1_000_000_000_000}  # fmt: skip
# The stems of numbers in words (`_may_cover`).
_NUMBER_NAME_STEMS: Final = frozenset(stem(word) for word in [*_UNITS, *_SCALES])
# A scale written onto a number: "100k", "$5M", "2.5bn", "7B" (a lower-case "m" is metres as often: left alone).
_SCALE_SUFFIXES: Final = {"k": 1_000, "K": 1_000, "M": 1_000_000, "mn": 1_000_000, "bn": 1_000_000_000,
                          "B": 1_000_000_000}  # fmt: skip
# Words before a number that make it approximate or a bound: the evidence's value may differ a little.
# ("than" is no bound of its own: "more than" is over, "less than" under; "rose to 5%" is 5%.)
_ABOUT: Final = frozenset({"about", "around", "approximately", "nearly", "almost", "roughly", "some", "circa",
                           "c", "estimated", "approx", "close"})  # fmt: skip
_OVER: Final = frozenset({"over", "more", "least", "above", "exceeding", "exceeds", "plus"})
_UNDER: Final = frozenset({"under", "less", "fewer", "below", "most", "within"})
# Words that bound a value only with the word after them: "greater than", "up to" ("up 5%" is a rise).
_BOUND_WITH: Final = {
    **dict.fromkeys(["greater", "larger", "higher", "bigger"], ("than", "over")),
    **dict.fromkeys(["lower", "smaller"], ("than", "under")),
    "up": ("to", "under"),
}
# Units spelled several ways: one name each.
_UNIT_NAMES: Final = {
    "m": "metre", "meter": "metre", "meters": "metre", "metres": "metre", "km": "kilometre",
    "kilometers": "kilometre", "kilometres": "kilometre", "kilometer": "kilometre", "ft": "foot", "feet": "foot",
    "%": "percent", "per": "percent", "pc": "percent", "kg": "kilogram", "kilograms": "kilogram", "lb": "pound",
    "lbs": "pound", "pounds": "pound", "mi": "mile", "miles": "mile", "yrs": "year", "years": "year",
    "cm": "centimetre", "centimetres": "centimetre", "centimeters": "centimetre", "centimeter": "centimetre",
    "mm": "millimetre", "millimetres": "millimetre", "millimeters": "millimetre", "millimeter": "millimetre",
    "g": "gram", "grams": "gram", "mg": "milligram", "milligrams": "milligram", "litres": "litre", "liter": "litre",
    "liters": "litre", "hr": "hour", "hrs": "hour", "min": "minute", "mins": "minute", "minutes": "minute",
    "oz": "ounce", "ounces": "ounce", "tonnes": "tonne", "tons": "tonne", "ton": "tonne",
    "mcg": "microgram", "\u00b5g": "microgram", "\u03bcg": "microgram", "micrograms": "microgram",
    "\u00b0c": "celsius", "\u00b0 c": "celsius", "\u00b0f": "fahrenheit", "\u00b0 f": "fahrenheit",
    "celsius": "celsius", "fahrenheit": "fahrenheit", "mph": "mile per hour", "kph": "kilometre per hour",
    "kmh": "kilometre per hour", "am": "a.m.", "pm": "p.m.",
}  # fmt: skip
_SCALES_OF_HEAT: Final = frozenset({"celsius", "fahrenheit"})
# A unit of length over one of time, written with a slash: "km/h" (the slash is no token).
_PER_TIME: Final = {"h": "hour", "hr": "hour", "s": "second"}
# Units of measure and currencies (as `_unit_after` names them), each with what it measures: the same value in
# another unit of the same kind is another quantity ("330 feet" is not "330 metres", "30 dollars" not "30 euros").
# A unit of two kinds ("pounds": weight or money) and "percent" are left out.
_MEASURES: Final = {
    **dict.fromkeys(["metre", "kilometre", "centimetre", "millimetre", "foot", "mile", "inch", "yard"], "length"),
    **dict.fromkeys(["kilogram", "gram", "milligram", "microgram", "tonne", "ounce"], "mass"),
    **dict.fromkeys(["celsius", "fahrenheit"], "temperature"),
    **dict.fromkeys(["kilometre per hour", "mile per hour", "metre per second"], "speed"),
    **dict.fromkeys(["a.m.", "p.m."], "time of day"),
    **dict.fromkeys(["litre", "gallon"], "volume"),
    **dict.fromkeys(["hour", "minute", "second", "day", "week", "month", "year"], "time"),
    **dict.fromkeys(["dollar", "euro", "sterling", "franc", "rupe", "yuan"], "money"),
    **dict.fromkeys(["acr", "hectar"], "area"),
}
# A currency written before its number: "$30", "\u20ac5" ("\u00a5" is yen or yuan: left out).
_CURRENCY_SIGNS: Final = {"$": "dollar", "\u20ac": "euro", "\u00a3": "sterling"}
# A claim that may give a quantity a unit of measure: a currency sign, then a number; or a number (its scale
# after it: "6.4 billion miles", "5k miles"), then a word (or "%") that `_unit_after` reads as a unit of measure.
_SIGN_OR_UNIT: Final = re.compile(
    r"[$\u20ac\u00a3\u00a5]\s?\d|\d(?:\s?(?i:" + "|".join(_SCALES) + r")\s|(?:bn|mn|[kKMB])\s)?\s?"
    r"(\u00b0\s?[CF]|%|[A-Za-z\u00b5\u03bc]+)"
    # A number in words, then a word: "two hundred miles", "three hundred and thirty metres".
    r"|(?<![A-Za-z])(?i:" + "|".join(_UNITS) + r")(?:\s(?i:" + "|".join(_SCALES) + r"))?\s([A-Za-z]+)"
)


@dataclass(frozen=True, slots=True)
class _Quantity:
    value: float
    unit: str | None  # the word after it (normalised)
    before: str | None  # the content word before it
    year: bool
    decade: bool
    bound: str | None  # "about", "over", "under" or None
    spelled: bool  # written in words
    start: int
    end: int
    ordinal: bool = False  # "second", "2nd": a rank, held only against another rank in its slot
    per: str | None = None  # the time it is a rate of: "a month", "per day", "yearly"
    step: float | None = None  # "42.2": the value's last decimal place (0.1), a claim rounding the sources' to it
    or_million: bool = False  # "1.2m": metres or millions (money aside, the text does not say which)
    label: bool = False  # a name's number, after a capitalised word or a word that numbers things: "Chapter 3"
    dotted: float | None = None  # a time of day as some write it with a dot: "9:15" is "9.15" (its value: minutes)
    minutes: float | None = None  # a time of day, in minutes after midnight: "9:15 pm", "21:15" and "9 pm" are one
    either_half: bool = False  # a time of day that says no half of the day: "8:15" may be 8:15 pm
    half_said: bool = False  # a time of day with its half of the day written: "8:15 pm", "9 am"


_ORDINAL_OR_DECADE: Final = re.compile(r"(?:st|nd|rd|th|s)$")
_THOUSANDS: Final = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
# Thousands set apart by dots, a decimal comma maybe after them: "1.500.000", "1.234,5" (not "1.500": 1.5 as often).
_DOTTED_THOUSANDS: Final = re.compile(r"\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?|\d{1,3}\.\d{3},\d+")


def _number_value(token: str) -> tuple[float, bool] | None:
    """The value of a number token ("1,000", "2.5", "21st", "1990s") and whether it names a decade."""
    if not token.isascii() or " " in token:
        token = "".join(token.split())  # thousands set apart by spaces
    decade = token.endswith("s") and not token.endswith(("st",)) and token[:-1].isdigit()
    body = _ORDINAL_OR_DECADE.sub("", token)
    sign = -1.0 if body.startswith(("-", "\u2212")) else 1.0
    body = body.lstrip("-\u2212")
    if _THOUSANDS.fullmatch(body):
        body = body.replace(",", "")
    elif _DOTTED_THOUSANDS.fullmatch(body):
        body = body.replace(".", "").replace(",", ".")
    elif "," in body:
        body = (
            body.replace(",", ".", 1)
            if body.count(",") == 1 and len(body.split(",")[1]) != 3
            else body.replace(",", "")
        )
    try:
        return sign * float(body), decade
    except ValueError:
        return None


def _is_content(token: _Token) -> bool:
    return token.kind in ("word", "abbr") and token.low not in STOP_WORDS


def _unit_after(tokens: Sequence[_Token], at: int) -> str | None:
    if at < len(tokens):
        nxt = tokens[at]
        if nxt.text == "%":
            return "percent"
        if nxt.kind == "word":
            if nxt.low in _SCALES or nxt.low in STOP_WORDS:
                return None
            unit = _UNIT_NAMES.get(nxt.low) or stem(nxt.low)
            per = tokens[at + 1] if at + 1 < len(tokens) else None
            if nxt.low in ("degree", "degrees") and per is not None and _UNIT_NAMES.get(per.low) in _SCALES_OF_HEAT:
                return _UNIT_NAMES[per.low]  # "100 degrees Celsius" is 100 \u00b0C
            if unit in ("kilometre", "metre", "mile") and per is not None and per.start == nxt.end + 1:
                time = _PER_TIME.get(per.low)
                return f"{unit} per {time}" if time is not None else unit
            return unit
    return None


# What a value may be a rate of ("4.5% per year", "500 mg a day", "twice weekly"), one name each.
_TIMES: Final = {
    **{word: word for word in ("second", "minute", "hour", "day", "week", "month", "year", "decade", "century")},
    "annum": "year", "hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month", "yearly": "year",
    "annually": "year", "quarter": "quarter", "quarterly": "quarter",
}  # fmt: skip
_RATE_WORDS: Final = frozenset({"per", "a", "an", "each", "every"})
_FROM_THEN: Final = frozenset({"ago", "after", "later", "earlier", "into"})


def _rate_after(tokens: Sequence[_Token], at: int) -> str | None:
    """The time a value is a rate of, read at token ``at`` (after its number and unit): "per day", "a month"."""
    if at < len(tokens) and tokens[at].low == "cent":  # "5 per cent a year": the unit's second word
        at += 1
    first = tokens[at].low if at < len(tokens) else None
    if first in _TIMES and first.endswith("ly"):
        return _TIMES[first]
    if first in _RATE_WORDS and at + 1 < len(tokens):
        # "a year after", "a decade ago": a time from then, no rate.
        following = tokens[at + 2].low if at + 2 < len(tokens) else None
        if first != "per" and following in _FROM_THEN:
            return None
        return _TIMES.get(tokens[at + 1].low)
    return None


# Fractions, read as the share they are (a percentage, about): "a quarter of", "two-thirds", "one in four".
_FRACTION_WORDS: Final = {
    "half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fifth": 5, "fifths": 5,
    "tenth": 10, "tenths": 10,
}  # fmt: skip
_FRACTION_AFTER_A: Final = frozenset({"of"})
# What a fraction may start with: "a"/"an", "half", a number word (a number in digits is tested too).
_FRACTION_STARTS: Final = frozenset({"a", "an", "half"}) | frozenset(_UNITS)
_HALF_BEFORE: Final = frozenset({"of", "the", "its", "their", "his", "her", "our", "all"})
# Before "half", these make it a part of a period, not a share: "the second half of the year".
_NOT_A_SHARE_AFTER: Final = frozenset({"and", "a", "first", "second", "last", "latter", "former", "other", "back"})


def _count(token: _Token | None) -> float | None:
    """The whole number a token writes (digits, or a word below a hundred), else None."""
    if token is None:
        return None
    if token.kind == "num" and token.low.isdigit():
        return float(token.low)
    if token.kind == "word" and token.low != "zero":
        value = _spelled(token.low)
        return None if value is None else float(value)
    return None


def _spelled(low: str) -> int | None:
    """The number a word below a hundred writes ("twelve", "twenty-five"), else None."""
    value = _UNITS.get(low)
    if value is None and "-" in low:
        parts = low.split("-")
        if all(part in _UNITS for part in parts):
            value = sum(_UNITS[part] for part in parts)
    return value


# What a share of a scale may start with: "half a million", "a quarter of a million", "three quarters of a million".
_SCALE_SHARE_STARTS: Final = frozenset({"a", "an", "half"}) | frozenset(_UNITS)


def _share_of_scale(tokens: Sequence[_Token], i: int) -> tuple[float, int] | None:
    """The value a share of a scale starting at token ``i`` writes, and the index after it; else None.

    "half a million" (500,000), "a half million", "a quarter of a million", "a quarter million", "three
    quarters of a billion".
    """
    at = i + 1 if tokens[i].low in ("a", "an") else i
    if at >= len(tokens):
        return None
    low = tokens[at].low
    if low == "half":
        share, at = 0.5, at + 1
    elif low == "quarter" and at > i:
        share, at = 0.25, at + 1
    elif at == i and _count(tokens[at]) in (1.0, 2.0, 3.0) and at + 1 < len(tokens):
        if tokens[at + 1].low not in ("quarter", "quarters"):
            return None
        share, at = 0.25 * (_count(tokens[at]) or 0.0), at + 2
    else:
        return None
    if at < len(tokens) and tokens[at].low == "of":
        at += 1
    if at < len(tokens) and tokens[at].low in ("a", "an"):
        at += 1
    if at < len(tokens) and tokens[at].low in _SCALES:
        return _scaled(share, _SCALES[tokens[at].low]), at + 1
    return None


def _fraction_at(tokens: Sequence[_Token], i: int) -> tuple[float, int] | None:
    """The share (in percent) a fraction starting at token ``i`` writes, and the index after it; else None.

    "a quarter of", "three quarters", "two-thirds", "one-third", "half of", "one in four", "3 out of 10". Not a
    rank ("the third quarter", "second half"), nor "two and a half" (a number), nor "5 in 2020".
    """
    token = tokens[i]
    low = token.low
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    before = tokens[i - 1].low if i else None
    if token.kind == "word" and "-" in low:  # "two-thirds", "one-quarter"
        numerator, _, denominator = low.partition("-")
        if numerator in _UNITS and denominator in _FRACTION_WORDS and _UNITS[numerator]:
            return 100 * _UNITS[numerator] / _FRACTION_WORDS[denominator], i + 1
        return None
    if low == "half" and before not in _NOT_A_SHARE_AFTER and after is not None and after.low in _HALF_BEFORE:
        return 50.0, i + 1
    if after is None:
        return None
    if low in ("a", "an") and after.low in _FRACTION_WORDS and after.low != "half":
        following = tokens[i + 2].low if i + 2 < len(tokens) else None
        return (100 / _FRACTION_WORDS[after.low], i + 2) if following in _FRACTION_AFTER_A else None
    top = _count(token)
    if top is None or before in ("the", "and"):
        return None
    if after.low in _FRACTION_WORDS and after.low != "half" and top < _FRACTION_WORDS[after.low]:
        following = tokens[i + 2].low if i + 2 < len(tokens) else None
        # "three quarters of", "one third of" ("two quarters in a row" is a time).
        return (100 * top / _FRACTION_WORDS[after.low], i + 2) if following == "of" else None
    # "one in four", "3 out of 10": a share of a whole number of at most a thousand, never a year.
    if after.low == "in":
        at = i + 3 if i + 2 < len(tokens) and tokens[i + 2].low == "every" else i + 2  # "one in every four"
    elif after.low == "out" and i + 2 < len(tokens) and tokens[i + 2].low == "of":
        at = i + 3
    else:
        return None
    bottom = _count(tokens[at]) if at < len(tokens) else None
    if bottom is None or not top < bottom <= 1000:
        return None
    return 100 * top / bottom, at + 1


def _bound_before(tokens: Sequence[_Token], start: int) -> str | None:
    """How the words before a number at token ``start`` bound it: "about", "over", "under" or None."""
    bound = None
    for at in range(max(0, start - 3), start):
        t = tokens[at]
        if t.kind != "word":
            continue
        if t.low in _ABOUT:
            bound = "about"
        elif t.low in _OVER:
            bound = "over"
        elif t.low in _UNDER:
            bound = "under"
        elif t.low in _BOUND_WITH and tokens[at + 1].low == _BOUND_WITH[t.low][0]:
            bound = _BOUND_WITH[t.low][1]
        else:
            continue
        if bound != "about" and at and tokens[at - 1].low in ("not", "no"):
            bound = "under" if bound == "over" else "over"  # "not less than 10" is at least 10
    return bound


def _quantities(tokens: Sequence[_Token]) -> tuple[_Quantity, ...]:
    found: list[_Quantity] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        value: float | None = None
        decade = False
        spelled = False
        scaled = False  # a scale applied: "100k", "2.5 million"
        start = i
        ordinal = False
        of_scale = _share_of_scale(tokens, i) if token.low in _SCALE_SHARE_STARTS else None
        share = (
            _fraction_at(tokens, i)
            if of_scale is None and (token.low in _FRACTION_STARTS or "-" in token.low or token.kind == "num")
            else None
        )
        if share is not None:
            # A share is its percentage to within a point or two ("a third" is 33%), or bounded as written
            # ("more than half", "nearly a third").
            value, i = round(share[0], 1), share[1]
            found.append(
                _Quantity(
                    value=value, unit="percent", before=None, year=False, decade=False,
                    bound=_bound_before(tokens, start) or "share", spelled=False, start=token.start,
                    end=tokens[i - 1].end,
                )
            )  # fmt: skip
            continue
        clock: tuple[float, float | None] | None = None
        after: str | None = None
        if of_scale is not None:
            (value, i), spelled = of_scale, True
        elif token.kind == "num" and ":" in token.low:
            glued = _GLUED_HALF.search(token.low)
            written = token.low[: glued.start()] if glued else token.low
            after = glued.group() if glued else tokens[i + 1].low if i + 1 < len(tokens) else None
            clock = _clock_minutes(written, after)
            value = clock[0]
            i += 2 if after in _DAY_HALVES and not glued else 1
        elif token.kind == "num":
            ordinal = token.low.endswith(("st", "nd", "rd", "th")) and token.low[-3:-2].isdigit()
            scale = _SCALE_SUFFIXES.get(token.text[-2:]) or _SCALE_SUFFIXES.get(token.text[-1])
            read = _number_value(token.low.rstrip("kmbn") if scale else token.low)
            scaled = scale is not None
            if read is None:
                i += 1
                continue
            value, decade = read
            places = _decimal_places(token.low)
            step = 10.0**-places if places else None
            value = _scaled(value, scale or 1)
            i += 1
            # "2.5 million", "5 thousand"
            while i < len(tokens) and tokens[i].low in _SCALES:
                value = _scaled(value, _SCALES[tokens[i].low])
                step = step and _scaled(step, _SCALES[tokens[i].low])
                scaled = True
                i += 1
            if step is not None and scale:
                step = _scaled(step, scale)
        elif token.kind == "word" and (_spelled(token.low) is not None or token.low in _SCALES):
            value, spelled = 0.0, True
            current = 0.0
            while i < len(tokens) and (
                _spelled(tokens[i].low) is not None or tokens[i].low in _SCALES or tokens[i].low == "and"
            ):
                low = tokens[i].low
                if low == "and":
                    # "three hundred and sixty-five"
                    if i + 1 < len(tokens) and _spelled(tokens[i + 1].low) is not None and current:
                        i += 1
                        continue
                    if current and [t.low for t in tokens[i + 1 : i + 3]] == ["a", "half"]:
                        current += 0.5  # "two and a half", "one and a half million"
                        i += 3
                        continue
                    break
                units = _spelled(low)
                if units is not None:
                    current += units
                else:
                    current = (current or 1) * _SCALES[low]
                    if _SCALES[low] >= 1_000:
                        value += current
                        current = 0.0
                i += 1
            value += current
        elif token.kind == "word" and token.low in _ORDINAL_WORDS:
            value, spelled, ordinal = float(_ORDINAL_WORDS[token.low]), True, True
            i += 1
        else:
            i += 1
            continue
        last = tokens[i - 1]
        unit = "clock" if clock is not None else _unit_after(tokens, i)
        minutes = clock[0] if clock is not None else None
        half_said = clock is not None and after in _DAY_HALVES
        if unit in ("a.m.", "p.m.") and token.low.isdigit() and 1 <= value <= 12:
            half_said = True
            # "9 pm" is the time of day "21:00" is (it keeps its unit: "9 am" is another value of it than "9 pm").
            minutes = _clock_minutes(f"{token.low}:00", unit)[0]
        before = next((stem(t.low) for t in reversed(tokens[max(0, start - 3) : start]) if _is_content(t)), None)
        bound = _bound_before(tokens, start)
        # A sign in words ("minus 12", "12 degrees below zero"); a dash after a number is a range's ("5 -10").
        before_number = tokens[start - 1] if start else None
        if before_number is not None and (before_number.low == "minus" or (value < 0 and before_number.kind == "num")):
            value = -value
        after_unit = [t.low for t in tokens[i + 1 : i + 3]] if unit else [t.low for t in tokens[i : i + 2]]
        if after_unit in (["below", "zero"], ["below", "freezing"]):
            value = -abs(value)
        # A unit's word ends the quantity as written; a time of day ends with itself (or its "pm").
        text_end = tokens[i].end if unit and clock is None and i < len(tokens) else last.end
        if i + 1 < len(tokens) and (
            (unit == "percent" and tokens[i].low == "per" and tokens[i + 1].low == "cent")
            or (unit in _SCALES_OF_HEAT and tokens[i].low in ("degree", "degrees"))
        ):
            text_end = tokens[i + 1].end  # "5 per cent", "100 degrees Celsius": the unit's two words
        if unit is not None and " per " in unit and i + 1 < len(tokens) and tokens[i + 1].low in _PER_TIME:
            text_end = tokens[i + 1].end  # "km/h"
        per = _rate_after(tokens, i + 1 if unit else i)
        is_year = not spelled and not decade and value.is_integer() and 1000 <= value <= 2100 and token.low.isdigit()
        # A lower-case "m" written onto the number, no currency before it: "population 1.2m" is no height.
        or_million = unit == "metre" and tokens[i].text == "m" and tokens[i].start == last.end and not spelled
        # "Chapter 3", "Year 3 pupils", "Room 12": the number names one, it counts nothing.
        named_by = tokens[start - 1] if start else None
        label = (
            named_by is not None
            and named_by.kind == "word"
            and named_by.low not in STOP_WORDS
            and (named_by.text[:1].isupper() or named_by.low in _LABEL_WORDS)
        )
        found.append(
            _Quantity(
                value=value,
                unit=unit,
                before=before,
                year=is_year,
                decade=decade,
                bound=bound,
                spelled=spelled,
                start=token.start,
                end=text_end,
                ordinal=ordinal,
                per=per,
                # A measure may be rounded ("42.2 km"), not a name's number ("Python 3.1" is no 3.12).
                # Only a unit of measure or a percentage tells a measure ("3.1 added" is no rounding of 3.12).
                step=step if token.kind == "num" and (unit in _MEASURES or unit == "percent" or scaled) else None,
                or_million=or_million,
                label=label,
                dotted=clock[1] if clock is not None else None,
                minutes=minutes,
                half_said=half_said,
                # "8:15" may be 8:15 pm; "08:15", a 24-hour clock's, may not.
                either_half=clock is not None
                and after not in _DAY_HALVES
                and not token.low.startswith("0")
                and 1 <= int(token.low.split(":")[0]) <= 12,
            )
        )
    return tuple(found)


_DAY_HALVES: Final = frozenset({"am", "pm", "a.m.", "p.m."})


def _clock_parts(text: str, quantity: _Quantity) -> frozenset[float]:
    """The numbers a time of day is written with: ``{21.0, 15.0}`` for "21:15"."""
    written = _GLUED_HALF.sub("", text[quantity.start : quantity.end].split()[0].lower())
    return frozenset(float(part) for part in written.split(":"))


def _clock_minutes(written: str, after: str | None) -> tuple[float, float | None]:
    """A time of day in minutes after midnight (``after``: the word after it, "pm" adds twelve hours), and as dotted.

    The dotted reading ("9.15" for "9:15") is for a time written with no
    "am" or "pm" after it: which half of the day "9.15" is, it does not say.

    Example:
        >>> _clock_minutes("9:15", "pm"), _clock_minutes("12:30", "am"), _clock_minutes("9:15", None)
        ((1275.0, None), (30.0, None), (555.0, 9.15))
    """
    parts = [int(part) for part in written.split(":")]
    hours, minutes = parts[0], parts[1]
    if after in ("pm", "p.m.") and hours < 12:
        hours += 12
    elif after in ("am", "a.m.") and hours == 12:
        hours = 0
    seconds = parts[2] if len(parts) > 2 else 0
    dotted = parts[0] + minutes / 100 if len(parts) == 2 and after not in _DAY_HALVES else None
    return hours * 60 + minutes + seconds / 60, dotted


# Words a number after them names one of (it counts nothing): "chapter 3", "year 3", "room 12".
_LABEL_WORDS: Final = frozenset(
    "chapter year grade page section article room level stage season episode volume part phase step round act book "
    "class form floor row seat lane gate platform verse figure table appendix item number no game match week "
    "day term unit apartment flat suite building block route highway".split()
)


def _scaled(value: float, scale: float) -> float:
    """``value * scale`` to twelve significant digits: "1.1 billion" is 1,100,000,000, not 1,100,000,000.0000002."""
    return float(f"{value * scale:.12g}")


def _decimal_places(token: str) -> int:
    """How many decimal places a number token writes ("42.195": 3; "1,000": 0; "2,5": 1, a decimal comma).

    Example:
        >>> [_decimal_places(t) for t in ("42.195", "1,000", "2,5", "1,234.5", "7", "1.2m")]
        [3, 0, 1, 1, 0, 1]
    """
    body = token.rstrip("abcdefghijklmnopqrstuvwxyzKMB")
    if "." in body:
        return len(body) - body.rindex(".") - 1 if body.count(".") == 1 else 0
    if body.count(",") == 1 and len(body) - body.index(",") - 1 != 3:
        return len(body) - body.index(",") - 1
    return 0


# How far a claim's rounding may move the sources' value, as a share of it.
_ROUNDING_SHARE: Final = 0.05
# How far a share ("a third") may stand from a percentage written in digits ("33%", "35%"), in points.
_SHARE_POINTS: Final = 2.0


def _near(stated: float, claimed: Sequence[_Quantity]) -> set[float]:
    """The values of ``claimed`` within the reach of "about" of ``stated``, a value the sources give as approximate."""
    return {q.value for q in claimed if q.bound is None and not q.year and abs(q.value - stated) <= 0.15 * abs(stated)}


def _agrees(claimed: _Quantity, values: frozenset[float] | set[float]) -> bool:
    if claimed.value in values:
        return True
    # Only a bound, a decade or a rounding lets another value agree (`_close`): a plain one is looked up.
    if (claimed.bound is not None or claimed.decade or claimed.step is not None) and any(
        _close(claimed, value) for value in values
    ):
        return True
    if claimed.or_million:  # "1.2m": millions too, rounded as written ("1.2m" for 1,249,000)
        step = _scaled(claimed.step, 1_000_000) if claimed.step is not None else None
        millions = dataclasses.replace(
            claimed, value=_scaled(claimed.value, 1_000_000), unit=None, step=step, or_million=False
        )
        return _agrees(millions, values)
    return False


def _close(claimed: _Quantity, stated: float) -> bool:
    """Whether the evidence's value agrees with the claim's, its bound ("about", "over"...) allowed for."""
    value = claimed.value
    if stated == value:
        return True
    if (
        claimed.bound is None
        and claimed.step is not None
        and abs(stated - value) <= claimed.step * 0.5000001
        and abs(value) >= 10 * claimed.step
        and abs(stated - value) <= _ROUNDING_SHARE * abs(stated)
    ):
        # "42.2 km" for 42.195 km, "1.2m" for 1,249,000: the sources' value rounded to the claim's last
        # place, which keeps two significant digits at least, and by a twentieth of it at most ("0.1 mg"
        # is no rounding of 0.05 mg, nor "0.3 percent" of 0.25 percent).
        return True
    if claimed.decade:
        return value <= stated < value + 10
    if claimed.bound == "about":
        return abs(stated - value) <= 0.15 * abs(value)
    if claimed.bound == "share":
        return abs(stated - value) <= _SHARE_POINTS
    if claimed.bound == "over":
        return value <= stated <= 1.5 * value
    if claimed.bound == "under":
        return 0.5 * value <= stated <= value
    return False


# ---- what the guards read in a text, once per text (cached: the same evidence faces many claims) ----


@dataclass(frozen=True, slots=True)
class _Sentence:
    start: int
    end: int
    tokens: tuple[_Token, ...]
    words: frozenset[str]  # stemmed content words
    negated: tuple[tuple[str, ...], ...]  # each negation's scope, in order
    negations: tuple[int, ...]  # where each of those negations stands (token indices)


@dataclass(frozen=True, slots=True)
class _Lexicon:
    """What the name guard looks a name up in."""

    folded: frozenset[str]  # every word, folded, and each part of a hyphenated word
    stems: frozenset[str]
    prefixes: frozenset[str]  # the first five letters of words of five letters or more
    initials: frozenset[str]  # initials of runs of capitalised words ("United States" -> "us")
    abbreviations: frozenset[str]  # abbreviations written in the text, letters only ("U.S." -> "us")
    names: frozenset[str]  # words written capitalised inside a sentence, folded: the text's names
    capitalised: frozenset[str]  # words (and parts, and first five letters) written capitalised anywhere, folded
    nations: frozenset[str]  # the countries the text names, by name, demonym or abbreviation (`_NATIONS`)


_INITIALS_SKIP: Final = frozenset({"of", "and", "the", "for", "de", "in", "on", "&"})

# Countries whose name, demonym and abbreviation share no first five letters: each way of naming one.
# A name here stands for no other ("England" is not "the UK"). Abbreviations count only written in capitals.
_NATIONS: Final = {
    "united states": ("united states", "america", "american", "americans", "US", "USA"),
    "united kingdom": ("united kingdom", "britain", "great britain", "british", "briton", "britons", "brits", "UK"),
    "netherlands": ("netherlands", "holland", "dutch"),
    "switzerland": ("switzerland", "swiss"),
    "france": ("france", "french"),
    "spain": ("spain", "spanish", "spaniard", "spaniards"),
    "ireland": ("ireland", "irish"),
    "denmark": ("denmark", "danish", "dane", "danes"),
    "sweden": ("sweden", "swedish", "swede", "swedes"),
    "finland": ("finland", "finnish", "finn", "finns"),
    "norway": ("norway", "norwegian", "norwegians"),
    "poland": ("poland", "polish", "pole", "poles"),
    "turkey": ("turkey", "turkish", "turk", "turks"),
    "greece": ("greece", "greek", "greeks"),
    "china": ("china", "chinese", "PRC"),
    "wales": ("wales", "welsh"),
    "scotland": ("scotland", "scottish", "scots", "scot"),
    "england": ("england", "english"),
    "philippines": ("philippines", "philippine", "filipino", "filipinos"),
    "thailand": ("thailand", "thai"),
    "iraq": ("iraq", "iraqi", "iraqis"),
    "iran": ("iran", "iranian", "iranians"),
    "peru": ("peru", "peruvian", "peruvians"),
    "cuba": ("cuba", "cuban", "cubans"),
}
# Each way of naming a country, folded, with the country: words, phrases (two words) and abbreviations.
_NATION_WORDS: Final = {form: nation for nation, forms in _NATIONS.items() for form in forms if form.islower()}
_NATION_FIRST_WORDS: Final = frozenset(form.split()[0] for form in _NATION_WORDS if " " in form)
_NATION_ABBREVIATIONS: Final = {
    form.lower(): nation for nation, forms in _NATIONS.items() for form in forms if form.isupper()
}
# Initials written with spaces: "U. S.", "J. R. R.".
_SPACED_INITIALS: Final = re.compile(r"\b(?:[A-Z]\. ){1,}[A-Z]\.")


def _capitalised(token: _Token) -> bool:
    return token.kind in ("word", "abbr") and token.text[:1].isupper()


@functools.lru_cache(maxsize=8192)
def _quantities_of(text: str) -> tuple[_Quantity, ...]:
    return _quantities(_tokens(text))


_NUMBER_ANYWHERE: Final = re.compile(
    r"(?=[\dzotfsenhmbdq])(?:\d+|\b(?:" + "|".join([*_UNITS, *_SCALES, *_ORDINAL_WORDS, *_FRACTION_WORDS]) + r")\b)",
    re.IGNORECASE,
)
# How much text around a number is read for its slot (the words before it, its unit after it).
_NUMBER_WINDOW: Final = 60


@functools.lru_cache(maxsize=8192)
def _quantities_near(text: str) -> tuple[_Quantity, ...]:
    """The quantities of a text, read in windows around its numbers: the rest of a long text is not tokenised."""
    windows: list[tuple[int, int]] = []
    for match in _NUMBER_ANYWHERE.finditer(text):
        start = max(0, match.start() - _NUMBER_WINDOW)
        start = text.rfind(" ", 0, start) + 1 if start else 0
        end = text.find(" ", min(len(text), match.end() + _NUMBER_WINDOW))
        end = len(text) if end < 0 else end
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(windows[-1][1], end))
        else:
            windows.append((start, end))
    found: list[_Quantity] = []
    for start, end in windows:
        tokens = tuple(t._replace(start=t.start + start, end=t.end + start) for t in _tokens(text[start:end]))
        found.extend(_quantities(tokens))
    return tuple(found)


@functools.lru_cache(maxsize=8192)
def _lexicon(text: str) -> _Lexicon:
    tokens = _tokens(text)
    folded: set[str] = set()
    names: set[str] = set()
    capitalised: set[str] = set()
    abbreviations: set[str] = set()
    initials: set[str] = set()
    run: list[str] = []
    # One pass: every word, the capitalised ones (names inside a sentence), abbreviations, initials of runs.
    for token in (*tokens, _END):
        kind, low = token.kind, token.low
        if kind != "mark":
            folded.add(low)
            if "-" in low:
                folded.update(low.split("-"))
            if kind == "abbr":
                abbreviations.add(low.replace(".", ""))
            if token.text[:1].isupper():
                if kind == "word" and len(low) >= 2 and token.text.isupper():
                    abbreviations.add(low)
                if not token.initial and len(low) >= 2 and low not in STOP_WORDS:
                    names.add(low)
                for part in low.split("-") if "-" in low else (low,):
                    capitalised.add(part)
                    capitalised.add(part[:5])
                run.append(low[:1])
                continue
            if kind == "word" and low in _INITIALS_SKIP and run:
                continue
        for first in range(len(run) - 1):
            initials.update("".join(run[first:last]) for last in range(first + 2, len(run) + 1))
        run = []
    if ". " in text:
        abbreviations |= {m.group().replace(". ", "").replace(".", "").lower() for m in _SPACED_INITIALS.finditer(text)}
    nations = {_NATION_WORDS[w] for w in folded & _NATION_WORDS.keys()}
    if folded & _NATION_FIRST_WORDS:
        words = [t.low for t in tokens if t.kind == "word"]
        nations |= {_NATION_WORDS[f"{a} {b}"] for a, b in itertools.pairwise(words) if f"{a} {b}" in _NATION_WORDS}
    nations |= {_NATION_ABBREVIATIONS[a] for a in abbreviations if a in _NATION_ABBREVIATIONS}
    return _Lexicon(
        folded=frozenset(folded),
        stems=frozenset(stem(w) for w in folded),
        prefixes=frozenset(w[:5] for w in folded if len(w) >= 5),
        initials=frozenset(initials),
        abbreviations=frozenset(abbreviations),
        names=frozenset(names),
        capitalised=frozenset(capitalised),
        nations=frozenset(nations),
    )


_WORD_OR_NUMBER: Final = re.compile(r"[a-z0-9]+")
# A number in digits, with its minus sign ("-12", "\u221212"; not the dash of "1990-2000").
_DIGITS: Final = re.compile(r"(?:(?<![\w.,\-\u2212])[-\u2212](?=\d))?\d+(?:[.,]\d+)*")


# Where a sentence ends, and how much of the mark is the sentence's: ". " keeps its period, a line break nothing.
_BOUNDARIES: Final = ((". ", 1), ("! ", 1), ("? ", 1), ("\n", 0), ('."', 2), ('?"', 2), ('!"', 2))


def _around_offset(text: str, at: int) -> _Sentence:
    """The sentence of ``text`` around offset ``at``, found by looking for its ends near it (no full split)."""
    start, end = _bounds(text, at)
    return _piece(text[start:end], start)


@functools.lru_cache(maxsize=256)
def _sentence_marks(text: str) -> tuple[list[int], list[int], list[int]]:
    """Where sentences of ``text`` may start and end, read once (cached): the bounds `_bounds` bisects.

    The offsets just past each boundary mark (where a sentence may start), in order; and each mark's own offset
    with where the sentence before it ends (the mark's kept characters after it), in order of the mark.
    """
    found = sorted(
        (match.start(), len(mark), kept) for mark, kept in _BOUNDARIES for match in re.finditer(re.escape(mark), text)
    )
    return sorted(at + size for at, size, _ in found), [at for at, _, _ in found], [at + kept for at, _, kept in found]


def _bounds(text: str, at: int) -> tuple[int, int]:
    """Where the sentence around offset ``at`` starts and ends, by the nearest sentence ends on either side.

    The text's boundaries are found once and bisected: reading around every offset a guard reads costs no search
    through a long text (one with no sentence end was searched to its ends each time: quadratic).
    """
    starts, marks, ends = _sentence_marks(text)
    # The start: just past the last mark that ends before ``at`` (as `str.rfind` bounded by ``at`` finds one).
    first = bisect.bisect_right(starts, at) - 1
    start = starts[first] if first >= 0 else 0
    # The end: the nearest mark at or after ``at`` with its kept characters (0 to 2), so only the marks within two
    # characters of the first one can end the sentence sooner.
    k = bisect.bisect_left(marks, at)
    end = len(text)
    for m in range(k, len(marks)):
        if marks[m] > marks[k] + 2:
            break
        end = min(end, ends[m])
    # Spaces at either end are no part of the sentence.
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _may_cover(claim: _Sentence, text: str, share: float) -> bool:
    """Whether ``text`` may hold ``share`` of the claim's content words (by the scorer's cached reading).

    A number in words ("two", "hundred") is taken as held: the scorer reads
    numbers as their digits ("three hundred" is "300"), which no word of the
    claim's own reading matches.
    """
    words = claim.words
    held = len(words & stemmed_words(text)[0]) + len(words & _NUMBER_NAME_STEMS)
    return held >= share * len(words)


@functools.lru_cache(maxsize=8192)
def _piece(text: str, start: int) -> _Sentence:
    return _sentence(_tokens(text), start, start + len(text))


# Thousands set apart by a space ("1 000", "12\u00a0500"): read as one number too, beside its parts.
_SPACED_THOUSANDS: Final = re.compile(r"(?<![\d.,])\d{1,3}(?:[ \u00a0\u202f\u2009]\d{3})+(?![\d.,]\d|\d)")


@functools.lru_cache(maxsize=8192)
def _digit_values(text: str) -> frozenset[float]:
    """The values of the numbers a text writes in digits: the cheap look-up, before any tokenising."""
    values = [_number_value(n) for n in _DIGITS.findall(text)]
    values += [_number_value(re.sub(r"\D", "", n)) for n in _SPACED_THOUSANDS.findall(text)]
    return frozenset(v[0] for v in values if v is not None)


@functools.lru_cache(maxsize=8192)
def _count_values(text: str) -> frozenset[float]:
    """`_digit_values` less the numbers a text writes only as ranks ("3rd"): what may back a count of things."""
    ranks = {_number_value(n.group()) for n in _DIGITS.finditer(text) if _RANK_ENDING.match(text, n.end())}
    if not ranks:
        return _digit_values(text)
    counts = {_number_value(n.group()) for n in _DIGITS.finditer(text) if not _RANK_ENDING.match(text, n.end())}
    counts |= {_number_value(re.sub(r"\D", "", n)) for n in _SPACED_THOUSANDS.findall(text)}
    return frozenset(v[0] for v in counts if v is not None)


_RANK_ENDING: Final = re.compile(r"(?:st|nd|rd|th)(?![^\W\d_])")


@functools.lru_cache(maxsize=8192)
def _sentences_of(text: str) -> tuple[_Sentence, ...]:
    tokens = _tokens(text)
    starts = [t.start for t in tokens]
    found = []
    for span in DEFAULT_SPLITTER.split(text):
        first, last = bisect.bisect_left(starts, span.start), bisect.bisect_left(starts, span.end)
        found.append(_sentence(tokens[first:last], span.start, span.end))
    return tuple(found)


@functools.lru_cache(maxsize=8192)
def _whole(text: str) -> _Sentence:
    """A claim read as one sentence."""
    return _sentence(_tokens(text), 0, len(text))


_END: Final = _Token("mark", ".", ".", 0, 0, False)


# ---- polarity ----

# The words that negate, and those after which a negation negates nothing (the claim checker reads them too).
NEGATIONS: Final = frozenset(
    {"not", "no", "never", "none", "nothing", "nobody", "neither", "nor", "cannot", "without", "nowhere"}
)
# A negation followed by one of these negates nothing: "not only", "not just", "no doubt", "no wonder".
NOT_NEGATING: Final = frozenset({"only", "just", "doubt", "question", "wonder", "sooner", "less", "matter"})
# Words of a negation's scope that say nothing of what is negated: "no longer", "not even".
SCOPE_ENDS: Final = frozenset({"because", "although", "though", "whereas", "unless"})
"""Words that start another clause: a negation of a word before them bears on nothing after them.

"should not take aspirin because of the risk" negates taking aspirin, not the risk; "not because of the risk"
(the word right after the negation) negates the reason.
"""
_BE: Final = frozenset({"is", "are", "was", "were", "am", "be", "been", "being"})
_AUXILIARIES: Final = _BE | frozenset(
    "do does did can could will would shall should may might must has have had".split()
)


def negates_the_reason(negation: str, previous: str | None, following: str | None) -> bool:
    """Whether a negation before a `SCOPE_ENDS` word (nothing negated between) negates what that word opens.

    ``previous`` and ``following`` are the words on either side of the negation. A plain "not" beside a form of
    "be" negates the reason ("The delay was not because of the weather", "has not been because of demand"), and
    so does one after a word that is no auxiliary ("resigned not because of the scandal"); a "not" cut short after
    another auxiliary ("planned to, but did not because of the shortage", "couldn't because"), "no", "none" and
    "nothing" negate what came before.

    Example:
        >>> negates_the_reason("not", "was", "because"), negates_the_reason("not", "did", "because")
        (True, False)
        >>> negates_the_reason("not", "resigned", "because"), negates_the_reason("no", "said", "because")
        (True, False)
    """
    return negation == "not" and (previous in _BE or following in _BE or previous not in _AUXILIARIES)


_SCOPE_SKIP: Final = frozenset({"longer", "even", "yet", "ever", "always", "necessarily", "also"})
_SCOPE_WORDS: Final = 4
_SCOPE_REACH: Final = 8
_NEGATIVE_PREFIXES: Final = ("un", "in", "im", "il", "ir", "dis", "non")


def _is_negation(token: _Token) -> bool:
    return token.kind == "word" and (token.low in NEGATIONS or token.low.endswith(("n't", "n\u2019t")))


def _sentence(tokens: tuple[_Token, ...], start: int, end: int) -> _Sentence:
    negations = _negated(tokens)
    return _Sentence(
        start=start,
        end=end,
        tokens=tokens,
        words=frozenset(stem(t.low) for t in tokens if _is_content(t) and not _is_negation(t)),
        negated=tuple(scope for _, scope in negations),
        negations=tuple(at for at, _ in negations),
    )


# Verbs that negate the verb after their "to" ("failed to improve" is "did not improve"), and those that negate
# what follows them ("lacks support" is "has no support"). Not before a number or a determiner: "sales declined to
# 5%", "declined to the lowest level" say how far, not that something was not done.
_NEGATING_BEFORE_TO: Final = frozenset(
    "fail fails failed failing refuse refuses refused refusing decline declines declined declining"
    " neglect neglects neglected neglecting unable".split()
)
_LACKING: Final = frozenset({"lack", "lacks", "lacked", "lacking"})
_NOT_AN_ACT: Final = frozenset({"the", "a", "an", "its", "their", "his", "her", "our", "about", "around", "some"})
# "declined to" also says how far a value fell: before these it names a level, not an act ("declined to five
# percent", "to zero", "to record lows", "to nearly half", "to under 500", "to this level").
_A_LEVEL: Final = frozenset(
    "this that these those under below over nearly almost roughly approximately just record historic new half less"
    " more fewer low lows level levels".split()
)


def negating_verb(word: str, following: str | None, after: str | None, then: str | None = None) -> int | None:
    """How many words after a lowered ``word`` its negation's scope starts, when it is a verb that negates; else None.

    ``following`` and ``after`` are the two lowered words after it. "lacks support": 1; "failed to improve": 2;
    "declined to 5%", "failed." : None. The claim checker reads negations with it too.

    Example:
        >>> negating_verb("failed", "to", "improve"), negating_verb("declined", "to", "the")
        (2, None)
        >>> negating_verb("lacks", "support", None)
        1
    """
    if word in _LACKING:
        return 1
    if word in _NEGATING_BEFORE_TO and following == "to" and after:
        if after in _NOT_AN_ACT or not after[0].isalpha():
            return None
        if word.startswith("declin") and (
            after in _A_LEVEL
            or after in _UNITS
            or after in _SCALES
            or after.startswith("pre-")
            or after.split("-")[0] in _UNITS  # "one-third"
            or (after in ("single", "double") and then in ("digits", "digit", "figures"))  # ``then``: the next word
        ):
            return None
        return 2
    return None


def _scope_start(tokens: Sequence[_Token], i: int) -> int | None:
    """Where the scope of a negation at token ``i`` starts, or None when token ``i`` negates nothing.

    A negation word ("not", "never", "n't"), or a verb that negates (`negating_verb`).
    """
    token = tokens[i]
    if _is_negation(token):
        return i + 1
    if token.kind != "word" or (token.low not in _LACKING and token.low not in _NEGATING_BEFORE_TO):
        return None
    following, after, then = (tokens[i + k].low if i + k < len(tokens) else None for k in (1, 2, 3))
    reach = negating_verb(token.low, following, after, then)
    return None if reach is None else i + reach


def _negated(tokens: Sequence[_Token]) -> list[tuple[int, tuple[str, ...]]]:
    """Each negation of the text (its token index) with the content words it covers (its scope)."""
    scopes = []
    for i in range(len(tokens)):
        first = _scope_start(tokens, i)
        if first is None:
            continue
        if first < len(tokens) and tokens[first].low in NOT_NEGATING:
            continue
        scope: list[str] = []
        for other in tokens[first : first + _SCOPE_REACH]:
            # Another clause's word ends it, unless it comes first after a "not" that negates the reason.
            if (
                (other.kind == "mark" and other.text in _CLAUSE_END)
                or len(scope) == _SCOPE_WORDS
                or (
                    other.low in SCOPE_ENDS
                    and (
                        scope
                        or not negates_the_reason(
                            tokens[i].low,
                            tokens[i - 1].low if i else None,
                            tokens[i + 1].low if i + 1 < len(tokens) else None,
                        )
                    )
                )
            ):
                break
            if _is_negation(other):
                break
            if _is_content(other) and other.low not in _SCOPE_SKIP:
                scope.append(stem(other.low))
        if scope:
            scopes.append((i, tuple(scope)))
    return scopes


def _double_negation(scope: tuple[str, ...], other_words: frozenset[str]) -> bool:
    """A negated negative word whose positive the other text states: "not uncommon" for "common"."""
    for word in scope:
        for prefix in _NEGATIVE_PREFIXES:
            if word.startswith(prefix) and len(word) - len(prefix) >= 3 and word[len(prefix) :] in other_words:
                return True
    return False


def _flipped(negating: _Sentence, affirming: _Sentence) -> tuple[str, ...] | None:
    """A phrase that ``negating`` negates and ``affirming`` states un-negated.

    Stated: ``affirming`` has the phrase's first word (what the negation
    bears on) and two of its words (or its only one), none of them inside
    a negation of its own.
    """
    for scope in negating.negated:
        if _double_negation(scope, affirming.words):
            continue
        found = [word for word in scope if word in affirming.words]
        if (
            found
            and found[0] == scope[0]
            and len(found) >= min(2, len(scope))
            and not any(set(found) & set(other) for other in affirming.negated)
        ):
            return tuple(found)
    return None


# ---- antonyms ----

# Words whose opposite is made with a negative prefix, by prefix (the antonym guard's pairs).
_PREFIXED: Final = {
    # Adjectives only: a verb's participle ("known", "continued", "employed") reads as a paraphrase as often
    # ("little is known" is "largely unknown"; "continued until 2010" is "discontinued in 2010").
    "un": "able available aware certain clear common conventional ethical fair healthy lawful likely official"
    " popular profitable reliable safe stable constitutional",
    "in": "valid accessible accurate adequate complete consistent correct effective sufficient visible formal",
    "im": "possible mature moral perfect practical",
    "ir": "regular responsible relevant reversible",
    "dis": "honest loyal",
}
ANTONYMS: Final[tuple[tuple[frozenset[str], frozenset[str]], ...]] = tuple(
    (frozenset(a.split()), frozenset(b.split()))
    for a, b in (
        ("before", "after"),
        ("more", "less fewer"),
        ("first", "last"),
        ("increase increased increases increasing", "decrease decreased decreases decreasing"),
        ("rise rose risen rises rising", "fall fell fallen falls falling"),
        ("won win wins winning winner", "lost lose loses losing loser"),
        ("higher", "lower"),
        ("highest", "lowest"),
        ("larger bigger", "smaller"),
        ("largest biggest", "smallest"),
        ("longest", "shortest"),
        ("older elder", "younger"),
        ("oldest eldest", "youngest"),
        ("earlier", "later"),
        ("earliest", "latest"),
        ("best", "worst"),
        ("better", "worse"),
        ("maximum", "minimum"),
        ("majority", "minority"),
        ("north northern", "south southern"),
        ("east eastern", "west western"),
        ("above", "below"),
        ("inside", "outside"),
        ("positive", "negative"),
        ("true", "false"),
        ("legal", "illegal"),
        # A word and the one its negative prefix makes: "valid", "invalid".
        *((word, f"{prefix}{word}") for prefix, words in _PREFIXED.items() for word in words.split()),
        ("open", "closed"),
        ("alive", "dead"),
        ("approved approve approves", "rejected reject rejects banned ban bans"),
        ("success successful", "failure unsuccessful"),
        ("gain gained gains", "loss lost losses"),
        ("import imports imported", "export exports exported"),
        ("buy bought buys", "sell sold sells"),
        ("birth born", "death died"),
        ("strong stronger strongest", "weak weaker weakest"),
        ("cheap cheaper cheapest", "expensive"),
        # Quantifiers and frequencies: a claim that changes "all" to "some" says another thing.
        ("all every", "some few several"),
        ("most many", "few"),
        ("always usually", "sometimes rarely seldom occasionally"),
        ("often frequently", "rarely seldom"),
    )
)
"""Pairs of word sets whose words say opposite things: the antonym guard's small built-in list."""


def _opposite_table() -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for a, b in ANTONYMS:
        for word in a:
            table.setdefault(word, set()).update(b)
        for word in b:
            table.setdefault(word, set()).update(a)
    return {word: frozenset(found) for word, found in table.items()}


_OPPOSITES: Final = _opposite_table()
_OPPOSITE_WORDS: Final = frozenset(_OPPOSITES)


# ---- the guards ----


def _best_sentence(claim: _Sentence, evidence: str) -> tuple[_Sentence, float] | None:
    """The evidence sentence sharing most of the claim's content words, and the share of them it holds.

    The sentences are compared by the scorer's cached reading of them; only the best one is tokenised.
    """
    if not claim.words:
        return None
    spans = _spans_of(evidence)
    if not spans:
        return None
    words = claim.words

    def shared(span: tuple[int, int]) -> int:
        return len(words & stemmed_words(evidence[span[0] : span[1]])[0])

    # Only the sentences that may share a word are read. Where none shares one, the first sentence is the best,
    # as when every sentence is read (a look by letters may keep a sentence that shares none: "cat" in "concatenate").
    start, end = max(_spans_holding(evidence, words) or spans[:1], key=shared)
    if (start, end) != spans[0] and shared((start, end)) == 0:
        start, end = spans[0]
    best = _piece(evidence[start:end], start)
    return best, _coverage(claim, best)


@functools.lru_cache(maxsize=8192)
def _spans_of(text: str) -> tuple[tuple[int, int], ...]:
    return tuple((span.start, span.end) for span in DEFAULT_SPLITTER.split(text))


def _spans_holding(evidence: str, words: Iterable[str]) -> tuple[tuple[int, int], ...]:
    """The sentences of the evidence that may hold one of ``words`` (stems), by a look at its lowered text.

    A stem is the start of its word ("migrat"; "study" is "studi" in "studies"): a sentence whose text holds
    no stem's first letters shares none of them, and need not be read. Not ASCII: every sentence.
    """
    spans = _spans_of(evidence)
    if not evidence.isascii():
        return spans
    lowered = _lowered(evidence)
    keys = {(word[:-1] if word.endswith("y") else word)[:5] for word in words}
    return tuple(span for span in spans if any(lowered.find(key, *span) >= 0 for key in keys))


def _as_written(start: int, end: int, text: str) -> str:
    return " ".join(text[start:end].split())


def _list_marker(tokens: Sequence[_Token], quantity: _Quantity) -> bool:
    """A number that opens a sentence followed by "." or ")": a list item's number, not a claim."""
    at = next(i for i, t in enumerate(tokens) if t.start == quantity.start)
    return tokens[at].initial and at + 1 < len(tokens) and tokens[at + 1].text in (".", ")")


_MAYBE_NUMBER: Final = re.compile(
    r"\d|\b(?:ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty"
    r"|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|billion|trillion|dozen|"
    + "|".join([*_ORDINAL_WORDS, *_FRACTION_WORDS])
    # A share in small number words: "one in four", "two out of three".
    + r"|(?:one|two|three|four|five|six|seven|eight|nine)\s+(?:in|out\s+of)\s)",
    re.IGNORECASE,
)


_NUMBER_WORD: Final = re.compile(_MAYBE_NUMBER.pattern.replace("\\d|", "", 1), re.IGNORECASE)


@functools.lru_cache(maxsize=8192)
def _digit_strings(text: str) -> frozenset[str]:
    """The numbers ``text`` writes in digits, each with the letters glued to it ("5M" is no "5k", "3rd" no "3")."""
    return frozenset(_GLUED_DIGITS.findall(text))


_GLUED_DIGITS: Final = re.compile(_DIGITS.pattern + r"[^\W\d_]*")


_YEAR_DASH: Final = re.compile(r"\d{4}[-\u2013]$")


def _is_count(quantity: _Quantity) -> bool:
    """Whether a quantity counts things ("3 editions"): no rank, no label ("Chapter 3"), a month after it neither."""
    return (
        not quantity.ordinal and not quantity.label and quantity.unit is not None and quantity.unit not in _MONTH_UNITS
    )


def _range_end(text: str, quantity: _Quantity) -> bool:
    """The short end of a range of years: the "19" of "2018-19"."""
    return bool(_YEAR_DASH.search(text, max(0, quantity.start - 5), quantity.start))


def number_guard(claim: str, evidence: str) -> GuardFinding | None:
    """Every number the claim states is in the evidence (digits or words); another in its slot contradicts.

    Example:
        >>> number_guard("It is 330 m tall.", "It is three hundred and thirty metres tall.") is None
        True
        >>> number_guard("It opened in 1902.", "It opened in 1889.").reason
        'the sources say 1889, not 1902'
        >>> number_guard("It has 12 bridges.", "The city has many bridges.").reason
        'the sources do not state 12 bridges'
    """
    if not _MAYBE_NUMBER.search(claim):
        return None
    if _may_measure(claim):
        changed = _changed_unit(claim, evidence)
        if changed is not None:
            return changed
    changed = _changed_terms(claim, evidence)
    if changed is not None:
        return changed
    # The common case first: every number of the claim written in digits, each one written in the evidence too
    # (not for a time of day: "9:00 am" writes the digits of "9:00 pm").
    if (
        not _NUMBER_WORD.search(claim)
        and _digit_strings(claim) <= _digit_strings(evidence)
        and not (":" in claim and _CLOCK.search(claim))
    ):
        return None
    # "one of", "two countries": numbers in words below ten are too often a paraphrase to hold to (a rank is not).
    held = [q for q in _quantities_of(claim) if not (q.spelled and q.value < 10 and not q.ordinal)]
    if not held:
        return None
    digits, counts = _digit_values(evidence), _count_values(evidence)
    # A count of things ("3 editions") is no rank the sources give ("the 3rd edition"); a date's day may be one.
    # A time of day is no plain number ("1:00" is no 60): `_time_of_day` reads it.
    claimed = [q for q in held if q.unit == "clock" or not _agrees(q, counts if _is_count(q) else digits)]
    if not claimed:
        return None
    stated = _quantities_near(evidence)
    ranks = {q.value for q in stated if q.ordinal} - {q.value for q in stated if not q.ordinal}
    values = {q.value for q in stated if q.unit != "clock"}
    values |= {_scaled(q.value, 1_000_000) for q in stated if q.or_million}
    # A time of day written with a colon agrees with the same time written with a dot, both ways.
    values |= {q.dotted for q in stated if q.dotted is not None}
    # A value the sources give as approximate ("about 520") allows one near it ("500").
    values |= {v for q in stated if q.bound == "about" and not q.year for v in _near(q.value, claimed)}
    # A share the sources write ("a third") allows a percentage within a point or two of it ("33%").
    values |= {
        c.value for q in stated if q.bound == "share" for c in claimed if abs(c.value - q.value) <= _SHARE_POINTS
    }
    tokens = _tokens(claim)
    # A value the claim states itself (of another of its slots: "300 km ... and 120 km") is no other value.
    mine = {q.value for q in held}
    for quantity in claimed:
        said = _as_written(quantity.start, quantity.end, claim)
        if quantity.minutes is not None:
            read = _time_of_day(quantity, claim, stated, digits | values)
            if read is True:
                continue
            if read is not False:
                return _contradicted(said, read, evidence)
        if (
            # A time of day is no plain number ("1:00" is no 60 minutes), but its dotted form may be ("9.15").
            (quantity.unit != "clock" and _agrees(quantity, values - ranks if _is_count(quantity) else values))
            or quantity.dotted in values
            or _list_marker(tokens, quantity)
            or _range_end(claim, quantity)
        ):
            continue
        for other in stated:
            # The same unit, or the same word before and no other unit ("330 metres" is not "1,083 feet").
            if quantity.minutes is not None or other.minutes is not None:
                continue  # a time of day is another value only of a time of day in its slot (`_time_of_day`)
            same_slot = other.ordinal == quantity.ordinal and (
                (quantity.unit is not None and other.unit == quantity.unit)
                or (
                    quantity.before is not None
                    and other.before == quantity.before
                    and (quantity.unit is None or other.unit is None)
                )
            )
            if other.year == quantity.year and same_slot and other.value not in mine:
                return _contradicted(said, other, evidence)
        if quantity.ordinal:
            continue  # a rank the sources do not give ("a second time") is no claim of a number
        return GuardFinding(
            guard="number", label="Neutral", claim_value=said, source_value=None,
            reason=f"the sources do not state {said}",
        )  # fmt: skip
    return None


def _contradicted(said: str, other: _Quantity, evidence: str) -> GuardFinding:
    """The number guard's Contradiction: the evidence states ``other`` where the claim says ``said``."""
    value = _as_written(other.start, other.end, evidence)
    sentence = _around_offset(evidence, other.start)
    return GuardFinding(
        guard="number",
        label="Contradiction",
        claim_value=said,
        source_value=value,
        reason=f"the sources say {value}, not {said}",
        start=sentence.start if sentence else other.start,
        end=sentence.end if sentence else other.end,
    )


def _same_time(one: _Quantity, other: _Quantity, *, half_said: bool = False) -> bool:
    """Whether two times of day may be the same: "8:15" (no half of the day said) is 8:15 pm too.

    With ``half_said``, only where the other says its half ("5:00" is "5 pm", but "runs 1:30" is not "at 13:30").
    """
    if one.minutes == other.minutes:
        return True
    if half_said:
        either = (one.either_half and other.half_said) or (other.either_half and one.half_said)
    else:
        either = one.either_half or other.either_half
    return either and abs((one.minutes or 0) - (other.minutes or 0)) == 720


def _time_of_day(
    quantity: _Quantity, claim: str, stated: Sequence[_Quantity], known: frozenset[float] | set[float]
) -> _Quantity | bool:
    """A claimed time of day against the evidence: True when it gives it; the other time it gives in its slot; False.

    Its slot is the word before it ("departs at 9:15"): any other time of day
    ("at 10:00 the pastor read John 3:16") says nothing of it, and only there,
    or against a time that says its half of the day, is a time with no half
    of the day said the time twelve hours on ("sunset at 8:15" for "sunset at
    8:15 pm", "9:00 to 5:00" for "9 am to 5 pm"; "runs 1:30" is not "starts
    at 13:30"). The hour alone in its slot backs a time on the hour ("opens
    at 9" for "opens at 9:00").
    Where no time stands in its slot, its numbers written anywhere ("verse 16
    of John 3", "won 21-15", "five past eight") back it, as they did before it
    was read as a time.
    """
    times = [other for other in stated if other.minutes is not None]
    if any(_same_time(quantity, other, half_said=True) for other in times):
        return True
    if quantity.before is not None:
        slot = [other for other in times if other.before == quantity.before]
        if any(_same_time(quantity, other) for other in slot):
            return True
        if any(o.minutes is None and o.before == quantity.before and o.value == quantity.dotted for o in stated):
            return True  # "opens at 9:00" where it says "opens at 9" (or "nine"), another time beside it
        if slot:
            return slot[0]
    if quantity.unit == "clock":
        return _clock_parts(claim, quantity) <= known
    return False


_BOUNDS_SAID: Final = {"over": "a lower bound", "under": "an upper bound"}


def _changed_terms(claim: str, evidence: str) -> GuardFinding | None:
    """A value of the claim the evidence states only with the opposite bound, or as a rate of another time.

    "More than 10 hours" against "up to 10 hours" (a lower bound for an upper one); "4.5% per month" against
    "4.5% per year". Only the evidence's quantities of the same value, year-ness and unit are read: a value it
    also states with the claim's bound or rate (or with none) agrees.
    """
    # The claim's own quantities first (cached, and few): most bound nothing and are rates of nothing.
    termed = [q for q in _quantities_of(claim) if q.bound in _BOUNDS_SAID or q.per is not None]
    if not termed:
        return None
    stated = _quantities_near(evidence)
    for quantity in termed:
        bound = quantity.bound if quantity.bound in _BOUNDS_SAID else None
        same = [
            other
            for other in stated
            if other.value == quantity.value and other.year == quantity.year and other.unit == quantity.unit
        ]
        if not same:
            continue
        opposed = [
            other
            for other in same
            if (bound is not None and other.bound in _BOUNDS_SAID and other.bound != bound)
            or (quantity.per is not None and other.per is not None and other.per != quantity.per)
        ]
        if len(opposed) < len(same):
            continue  # stated as the claim states it (or plainly) somewhere
        other = opposed[0]
        said, value = _with_sign(quantity, claim), _with_sign(other, evidence)
        if quantity.per is not None and other.per is not None and other.per != quantity.per:
            reason = f"the sources say {value} per {other.per}, not {said} per {quantity.per}"
        else:
            reason = f"the sources give {value} as {_BOUNDS_SAID[str(other.bound)]}, not as {_BOUNDS_SAID[str(bound)]}"
        sentence = _around_offset(evidence, other.start)
        return GuardFinding(
            guard="number", label="Contradiction", claim_value=said, source_value=value, reason=reason,
            start=sentence.start, end=sentence.end,
        )  # fmt: skip
    return None


def _with_sign(quantity: _Quantity, text: str) -> str:
    """A quantity as ``text`` writes it, with the currency sign before it: "$500"."""
    sign = quantity.start and text[quantity.start - 1] in _CURRENCY_SIGNS
    return _as_written(quantity.start - sign, quantity.end, text)


def _may_measure(claim: str) -> bool:
    """Whether a claim may give a quantity a unit of measure or a currency (read before its quantities are)."""
    for match in _SIGN_OR_UNIT.finditer(claim):
        unit = match.group(1) or match.group(2)
        if unit is None or unit == "%":
            return True
        low = unit.lower()
        if (_UNIT_NAMES.get(low) or stem(low)) in _MEASURES or low in ("degree", "degrees"):
            return True
    return False


def _measure(text: str, quantity: _Quantity) -> str | None:
    """The unit of measure or currency of a quantity of ``text``: a sign before it, or the word after it."""
    sign = _CURRENCY_SIGNS.get(text[quantity.start - 1]) if quantity.start else None
    if sign is not None:
        return sign
    return quantity.unit if quantity.unit in _MEASURES else None


def _changed_unit(claim: str, evidence: str) -> GuardFinding | None:
    """A quantity of the claim whose value the evidence states only in another unit ("330 feet" for 330 metres)."""
    # The evidence's quantities by value: each of the claim's looks up its own (a claim of thousands stays linear).
    stated: dict[float, list[tuple[_Quantity, str | None]]] = {}
    for other in _quantities_near(evidence):
        stated.setdefault(other.value, []).append((other, _measure(evidence, other)))
    for quantity in _quantities_of(claim):
        unit = _measure(claim, quantity)
        if unit is None:
            continue
        same = stated.get(quantity.value, [])
        # Stated in the claim's unit, with no unit said, or as something else (5 days for 5 metres): nothing
        # changed that can be told.
        kind = _MEASURES[unit]
        if not same or any(theirs is None or theirs == unit or _MEASURES[theirs] != kind for _, theirs in same):
            continue
        other, theirs = same[0]
        # A currency sign before the number is part of what is written.
        said = _as_written(quantity.start - (unit != quantity.unit), quantity.end, claim)
        value = _as_written(other.start - (theirs != other.unit), other.end, evidence)
        sentence = _around_offset(evidence, other.start)
        return GuardFinding(
            guard="number", label="Contradiction", claim_value=said, source_value=value,
            reason=f"the sources say {value}, not {said}", start=sentence.start, end=sentence.end,
        )  # fmt: skip
    return None


def _names(tokens: Sequence[_Token]) -> list[list[int]]:
    """Runs of capitalised words (token indices) that read as names.

    A sentence's first word is left out of its run (it is capitalised
    whatever it is), unless it is an abbreviation; so are one-letter words.
    """
    runs: list[list[int]] = []
    run: list[int] = []
    for i, token in enumerate((*tokens, _END)):
        name = _capitalised(token) and token.low not in STOP_WORDS and len(token.low) >= 2
        if name and token.initial and not token.text.isupper():
            continue
        if name:
            run.append(i)
            continue
        if run:
            runs.append(run)
        run = []
    return runs


# Prefixes written with a hyphen before a name: "Neo-Babylonian" names Babylon.
_NAME_PREFIXES: Final = frozenset(
    {"neo", "pre", "post", "anti", "pro", "non", "ex", "mid", "pan", "proto", "pseudo", "sub", "trans", "ultra"}
)
# Abbreviations of one word, read as the word.
_UNIT_SYMBOLS: Final = {"celsius": ("\u00b0c", "\u00b0 c"), "fahrenheit": ("\u00b0f", "\u00b0 f")}
_WORD_ABBREVIATIONS: Final = {"tv": "television", "dr": "doctor", "st": "saint", "mt": "mount", "jr": "junior"}


def _word_in(low: str, evidence: _Lexicon) -> bool:
    """A word of a name in the evidence: the same word, its stem, or a word sharing its first five letters."""
    return low in evidence.folded or stem(low) in evidence.stems or (len(low) >= 5 and low[:5] in evidence.prefixes)


def _nation(token: _Token) -> str | None:
    """The country a word or an abbreviation in capitals names (`_NATIONS`), or None."""
    if token.kind == "abbr" or token.text.isupper():
        return _NATION_ABBREVIATIONS.get(token.low.replace(".", ""))
    return _NATION_WORDS.get(token.low)


def _name_in(token: _Token, evidence: _Lexicon) -> bool:
    low = token.low
    if low in evidence.folded or stem(low) in evidence.stems:
        return True
    # A hyphenated name whose every part is in the evidence, a prefix ("Neo-") left aside: "Neo-Babylonian".
    if "-" in low and all(_word_in(part, evidence) for part in low.split("-") if part not in _NAME_PREFIXES):
        return True
    # A country by another of its names: "British" for "Britain", "U.S." for "American".
    nation = _nation(token)
    if nation is not None and nation in evidence.nations:
        return True
    if low in _WORD_ABBREVIATIONS and _WORD_ABBREVIATIONS[low] in evidence.folded:
        return True
    # A unit named after someone, written as its symbol: "degrees Celsius" for "\u00b0C".
    if not evidence.folded.isdisjoint(_UNIT_SYMBOLS.get(low, ())):
        return True
    # An abbreviation of the claim ("NASA", "U.S.") for a name the evidence spells out, or written the same.
    letters = low.replace(".", "")
    if (token.kind == "abbr" or token.text.isupper()) and (
        letters in evidence.initials or letters in evidence.abbreviations
    ):
        return True
    # Inflection: "Canadian" for "Canada", "Parisian" for "Paris".
    return len(low) >= 5 and low[:5] in evidence.prefixes


def _written_as_name(token: _Token, evidence: _Lexicon) -> bool:
    """Whether the evidence writes a word of the claim's name capitalised: itself, a part of it, or an inflection."""
    parts = [p for p in token.low.replace(".", "").split("-") if p not in _NAME_PREFIXES] or [token.low]
    return any(p in evidence.capitalised or p[:5] in evidence.capitalised for p in parts)


def _abbreviated(tokens: Sequence[_Token], at: int, abbreviations: frozenset[str]) -> bool:
    """A capitalised word of the claim inside a name whose initials the evidence writes ("Court of Justice": ICJ)."""
    if not abbreviations:
        return False
    first = last = at
    while first > 0 and (_capitalised(tokens[first - 1]) or tokens[first - 1].low in _INITIALS_SKIP):
        first -= 1
    while last + 1 < len(tokens) and (_capitalised(tokens[last + 1]) or tokens[last + 1].low in _INITIALS_SKIP):
        last += 1
    letters = "".join(t.low[:1] if _capitalised(t) else " " for t in tokens[first : last + 1])
    offset = at - first
    for abbreviation in abbreviations:
        found = letters.replace(" ", "").find(abbreviation) if len(abbreviation) >= 2 else -1
        if found >= 0:
            # Map back: the run's capitalised words, in order, without the skipped ones.
            capitals = [i for i, t in enumerate(tokens[first : last + 1]) if _capitalised(t)]
            if offset in capitals[found : found + len(abbreviation)]:
                return True
    return False


_MONTHS: Final = frozenset(
    "january february march april may june july august september october november december".split()
)
# The months as `_unit_after` names a word after a number ("22 June": "jun").
_MONTH_UNITS: Final = frozenset(stem(month) for month in _MONTHS)


def _in_parentheses(tokens: Sequence[_Token], at: int) -> bool:
    """An abbreviation the claim gives for the words before it: "(CTR)"."""
    return 0 < at < len(tokens) - 1 and tokens[at - 1].text == "(" and tokens[at + 1].text == ")"


_QUOTED: Final = re.compile(r"(?<!\w)['\u2018\"\u201c].+?['\u2019\"\u201d](?!\w)")


def _quoted(text: str, at: int) -> bool:
    """Whether offset ``at`` of ``text`` stands inside quotation marks."""
    return any(m.start() < at < m.end() for m in _QUOTED.finditer(text))


def _defined_here(tokens: Sequence[_Token], at: int) -> bool:
    """An abbreviation the claim spells out itself: "the cardiothoracic ratio (CTR)"."""
    letters = tokens[at].low.replace(".", "")
    words = [
        t.low for t in tokens[max(0, at - len(letters) - 4) : at] if t.kind == "word" and t.low not in _INITIALS_SKIP
    ]
    return len(letters) >= 2 and "".join(w[:1] for w in words[-len(letters) :]) == letters


# A word written with a capital (the name guard's candidates, the claim's first word included): after
# anything but a letter, so "_Lyon_" and "1900Lyon" are read too.
_CAPITALISED_WORD: Final = re.compile(r"(?<![A-Za-z])[A-Z][\w'\u2019.\-]*")


def name_guard(claim: str, evidence: str) -> GuardFinding | None:
    """Every name of the claim is in the evidence (case, inflection, abbreviations and name parts allowed).

    Example:
        >>> name_guard("The Louvre museum is in London.", "The Louvre museum is in Paris.").reason
        'the sources say Paris, not London'
        >>> name_guard("It is armstrong's first step.", "Neil Alden Armstrong stepped out.") is None
        True
        >>> name_guard("On 21 July Neil Armstrong walked on the Moon.", "Armstrong walked on the moon.") is None
        True
    """
    # The scorer's own reading of the evidence (cached): content-word stems and their first five letters.
    stems, prefixes = stemmed_words(evidence)

    def quickly_found(low: str) -> bool:
        parts = _WORD_OR_NUMBER.findall(low)
        return all(stem(p) in stems for p in parts) or (len(low) >= 5 and low[:5] in prefixes)

    # The common case without reading the claim's tokens: every word that may be a name (capitalised, not
    # a stop word nor the claim's very first word) is in the evidence. ASCII only: the pattern knows ASCII
    # capitals. Only the first word is let off here: where later sentences start is `_tokens`'s to say
    # ("e.g. Lyon" starts none), in the full reading below.
    first = len(claim) - len(claim.lstrip())
    if claim.isascii() and all(
        quickly_found(low) or low in STOP_WORDS or len(low) < 2 or (m.start() == first and not m.group().isupper())
        for m in _CAPITALISED_WORD.finditer(claim)
        for low in (m.group().lower(),)
    ):
        return None
    tokens = _tokens(claim)
    runs = [run for run in _names(tokens) if not all(quickly_found(tokens[i].low) for i in run)]
    if not runs:
        return None
    lexicon = _lexicon(evidence)
    for run in runs:
        # A sentence's first word before the name is a part of it when the evidence writes it as a name:
        # "Rebecca Bunch sings" where the evidence says "sung by Rebecca".
        before = tokens[run[0] - 1] if run[0] else None
        if before is not None and before.initial and _capitalised(before) and before.low in lexicon.names:
            run = [run[0] - 1, *run]
        together = _found_together(tokens, run, lexicon)
        missing = [
            i
            for i in run
            if i not in together and not _name_in(tokens[i], lexicon) and not _currency_of(tokens, i, claim, evidence)
        ]
        if not missing:
            continue
        # A longer name whose other parts the evidence has, as a name: "Neil Armstrong" for "Armstrong" passes,
        # unless the evidence puts another name where the missing part stands ("Lance Armstrong"). A part the
        # evidence writes only in lower case is a common word there: "the empire" names no "Neo-Assyrian Empire".
        if len(missing) < len(run) and any(_written_as_name(tokens[i], lexicon) for i in run if i not in missing):
            clash = _part_clash(tokens, run, missing, evidence)
            if clash is None:
                continue
            value, sentence = clash
            said = " ".join(tokens[i].text for i in run)
            return GuardFinding(
                guard="name", label="Contradiction", claim_value=said, source_value=value,
                reason=f"the sources say {value}, not {said}", start=sentence.start, end=sentence.end,
            )  # fmt: skip
        # The whole name as an abbreviation in the evidence: "United States", "Court of Justice" for "US", "ICJ".
        if all(_abbreviated(tokens, i, lexicon.abbreviations) for i in missing):
            continue
        # An abbreviation the claim defines itself: "the cardiothoracic ratio (CTR)".
        if all(_in_parentheses(tokens, i) or (tokens[i].text.isupper() and _defined_here(tokens, i)) for i in missing):
            continue
        said = " ".join(tokens[i].text for i in run)
        found = _name_in_slot(tokens, run, evidence)
        # Words of a quoted title ("'I Want to Go Outside'") and months (a date's detail the evidence often
        # leaves out) count only when the evidence has another in their place.
        if found is None and all(_quoted(claim, tokens[i].start) or tokens[i].low in _MONTHS for i in missing):
            continue
        if found is not None:
            value, sentence = found
            return GuardFinding(
                guard="name", label="Contradiction", claim_value=said, source_value=value,
                reason=f"the sources say {value}, not {said}", start=sentence.start, end=sentence.end,
            )  # fmt: skip
        return GuardFinding(
            guard="name", label="Neutral", claim_value=said, source_value=None,
            reason=f"the sources do not mention {said}",
        )  # fmt: skip
    return None


# A country's letters written onto its currency: "US$5", "5 million US dollars".
_CURRENCY_COUNTRIES: Final = {"us": "$", "u.s.": "$", "usd": "$"}


def _currency_of(tokens: Sequence[_Token], at: int, claim: str, evidence: str) -> bool:
    """Whether the word at ``at`` names the country of a currency the evidence writes by its sign ("US$" for "$").

    Example:
        >>> _currency_of(_tokens("It raised US$5 million."), 2, "It raised US$5 million.", "It raised $5 million.")
        True
    """
    sign = _CURRENCY_COUNTRIES.get(tokens[at].low)
    # The sign alone in the evidence: "C$5" and "A$5" are other dollars.
    if sign is None or not re.search(rf"(?<![A-Za-z]){re.escape(sign)}", evidence):
        return False
    after = tokens[at + 1] if at + 1 < len(tokens) else None
    return claim.startswith(sign, tokens[at].end) or (after is not None and after.low.startswith("dollar"))


def _found_together(tokens: Sequence[_Token], run: list[int], evidence: _Lexicon) -> set[int]:
    """Words of a name the evidence has together: a country in two words, or words written as one.

    "United States" for "American"; "The A.V. Club" for "avclub", "Play Station" for "PlayStation".
    """
    found: set[int] = set()
    for first in range(len(run) - 1):
        for last in range(first + 1, len(run)):
            if run[last] - run[first] != last - first:
                break  # not one stretch of the claim
            words = [tokens[i].low for i in run[first : last + 1]]
            nation = _NATION_WORDS.get(" ".join(words))
            joined = "".join(ch for word in words for ch in word if ch.isalnum())
            if (nation is not None and nation in evidence.nations) or joined in evidence.folded:
                found.update(run[first : last + 1])
    return found


def _part_clash(
    tokens: Sequence[_Token], run: list[int], missing: list[int], evidence: str
) -> tuple[str, _Sentence] | None:
    """Where the evidence writes a found part of the name next to another capitalised word than the claim's.

    "Lana June Rey" against "Lana Del Rey": "Rey" follows "Del", not "June".
    """
    claimed = {t.low for t in tokens}
    for i in missing:
        for neighbour, step in ((i + 1, -1), (i - 1, 1)):
            if neighbour not in run or neighbour in missing:
                continue
            part = tokens[neighbour].low
            theirs = _tokens(evidence)
            for at, token in enumerate(theirs):
                if token.low != part:
                    continue
                other = at + step
                if 0 <= other < len(theirs) and _capitalised(theirs[other]) and theirs[other].low != tokens[i].low:
                    # A stop word or a word the claim has too clashes with nothing; nor does a sentence's first word,
                    # unless the part follows it, capitalised ("Bantu Education Act was passed in 1953").
                    if theirs[other].low in STOP_WORDS or theirs[other].low in claimed:
                        continue
                    if theirs[other].initial and not (step < 0 and _capitalised(token)):
                        continue
                    first, last = (other, at) if step < 0 else (at, other)
                    value = " ".join(t.text for t in theirs[first : last + 1])
                    sentence = _around_offset(evidence, token.start)
                    return value, sentence
    return None


def _around(tokens: Sequence[_Token], first: int, last: int) -> tuple[tuple[str, ...], str | None]:
    """The two tokens before a run (folded) and the one after it."""
    before = tuple(t.low for t in tokens[max(0, first - 2) : first])
    after = tokens[last + 1].low if last + 1 < len(tokens) else None
    return before, after


# The share of the claim's other content words a sentence must hold before a name in the same slot contradicts.
_SLOT_COVERAGE: Final = 0.5


def _name_in_slot(tokens: Sequence[_Token], run: list[int], evidence: str) -> tuple[str, _Sentence] | None:
    """Another name of the evidence standing where the claim's stands: the same two tokens before, the same after."""
    before, after = _around(tokens, run[0], run[-1])
    if len(before) < 2:
        return None
    said = {tokens[i].low for i in run}
    # The rest of the claim, which the sentence must state too: the name's slot alone ("of the") is not enough.
    rest = frozenset(stem(t.low) for t in tokens if _is_content(t) and not _is_negation(t)) - {stem(w) for w in said}
    for sentence in _sentences_of(evidence):
        if rest and len(rest & sentence.words) < _SLOT_COVERAGE * len(rest):
            continue
        for other in _names(sentence.tokens):
            if _around(sentence.tokens, other[0], other[-1]) == (before, after):
                words = [sentence.tokens[i] for i in other]
                if not said & {w.low for w in words}:
                    return " ".join(w.text for w in words), sentence
    return None


# Lower case only (the text is lowered first): a case-blind pattern costs twice as much on long evidence. Each
# scanning pattern opens on a class of the first letters it can match: the engine rejects other offsets at once.
_NEGATION_CUE: Final = re.compile(
    r"(?=[ncwfrdul'\u2019])(?:\b(?:n(?:o(?:t|ne|thing|body|where)?|e(?:ver|ither)|or)|cannot|without"
    r"|(?:fail(?:s|ed|ing)?|refus(?:e|es|ed|ing)|declin(?:e|es|ed|ing)|neglect(?:s|ed|ing)?|unable) to"
    r"|lack(?:s|ed|ing)?)|n['\u2019]t)\b"
)


def _lower(text: str) -> str:
    """``text`` in lower case, offsets kept (a text whose lower case is longer is kept as it is)."""
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else text


# The same, kept for the evidence texts that several guards search.
_lowered: Final = functools.lru_cache(maxsize=256)(_lower)


_NEXT_WORDS: Final = re.compile(r"[a-z]+|[,;:.!?()]")


@functools.lru_cache(maxsize=1024)
def _negation_cues(evidence: str) -> tuple[tuple[int, str | None], ...]:
    """Each negation of a text (where it starts) with the stem of the first content word it bears on."""
    lowered = _lowered(evidence)
    return tuple((m.start(), _first_content_stem(lowered, m.end())) for m in _NEGATION_CUE.finditer(lowered))


def _first_content_stem(lowered: str, at: int) -> str | None:
    """The stem of the first content word after offset ``at`` of a lowered text within a negation's reach, or None."""
    for i, word in enumerate(_NEXT_WORDS.findall(lowered, at, at + 80)[:_SCOPE_REACH]):
        if i == 0 and word in NOT_NEGATING:
            return None
        if not word[0].isalpha():
            return None
        if word not in STOP_WORDS and word not in _SCOPE_SKIP and word not in NEGATIONS:
            return stem(word)
    return None


# Verbs that negate what follows them: a sentence holding one does not plainly state what it reaches.
_NEGATING_VERB: Final = re.compile(
    r"(?=[apfrscbud])\b(?:avoid\w*|prevent\w*|refrain\w*|refus\w*|fail\w*|stop\w*|ceas\w*|prohibit\w*|forb[ia]d\w*|ban|banned"
    r"|unable|den(?:y|ies|ied|ying))\b"
)


def _negates_otherwise(sentence: _Sentence, claim: _Sentence) -> bool:
    """The sentence negates in a verb the claim does not use: "punishing ... worse, so avoid it" for "do not punish"."""
    text = " ".join(t.low for t in sentence.tokens if t.kind == "word")
    return any(stem(m.group()) not in claim.words for m in _NEGATING_VERB.finditer(text))


def _coverage(claim: _Sentence, sentence: _Sentence) -> float:
    return len(claim.words & sentence.words) / len(claim.words) if claim.words else 0.0


def polarity_guard(claim: str, evidence: str, *, coverage: float = 0.6) -> GuardFinding | None:
    """No evidence sentence that states the claim says the opposite of it: a negation added or dropped.

    A claim that negates something is held to the evidence sentence that
    shares most of its words; a claim that negates nothing, to each evidence
    sentence holding a negation. Either sentence counts when it holds
    ``coverage`` of the claim's content words at least.

    Example:
        >>> polarity_guard("The tower is not 330 metres tall.", "The tower is 330 metres tall.").reason
        'the sources state it without the negation: "The tower is 330 metres tall."'
        >>> polarity_guard("It is not only tall but also old.", "It is tall and old.") is None
        True
        >>> polarity_guard("The disease is not uncommon.", "The disease is common.") is None
        True
    """
    # A claim that negates nothing, against evidence none of whose negations bears on a word of the claim:
    # nothing to compare, and the claim need not be read. (A stem is the start of its word: one the claim
    # has is somewhere in its lowered text.)
    lowered = _lower(claim)
    if (
        claim.isascii()
        and _NEGATION_CUE.search(lowered) is None
        and not any(first is not None and first in lowered for _, first in _negation_cues(evidence))
    ):
        return None
    said = _whole(claim)
    if not said.words:
        return None
    if said.negated:
        best = _best_sentence(said, evidence)
        sentences: Sequence[_Sentence] = (best[0],) if best is not None and best[1] >= coverage else ()
    else:
        # No sentence can state the claim when the whole evidence does not hold enough of its words.
        if not _may_cover(said, evidence, coverage):
            return None
        # Only a negation bearing on a word of the claim can negate it: look at its first content word first.
        bounds = [_bounds(evidence, at) for at, first in _negation_cues(evidence) if first in said.words]
        sentences = [
            _piece(evidence[start:end], start)
            for start, end in dict.fromkeys(bounds)
            if _may_cover(said, evidence[start:end], coverage)
        ]
    for sentence in sentences:
        if not sentence.negated and not said.negated:
            continue
        if _coverage(said, sentence) < coverage:
            continue
        quoted = _as_written(sentence.start, sentence.end, evidence)
        if (found := _flipped(said, sentence)) is not None and not _negates_otherwise(sentence, said):
            return GuardFinding(
                guard="polarity", label="Contradiction", claim_value="not " + " ".join(found),
                source_value=quoted, reason=f'the sources state it without the negation: "{quoted}"',
                start=sentence.start, end=sentence.end,
            )  # fmt: skip
        if (found := _flipped(sentence, said)) is not None:
            return GuardFinding(
                guard="polarity", label="Contradiction", claim_value=" ".join(found), source_value=quoted,
                reason=f'the sources negate it: "{quoted}"', start=sentence.start, end=sentence.end,
            )  # fmt: skip
    return _negation_missing(said, claim, evidence)


# Words that negate in their own way: the evidence may say "failed to" where the claim says "did not".
_NEGATIVE_MEANING: Final = re.compile(
    r"(?=[ncwfluardhbsioep'\u2019])(?:\b(?:not|no|never|none|nothing|nobody|neither|nor|cannot|without|nowhere|fail\w*|lack\w*|unable|absen\w*|"
    r"refus\w*|den(?:y|ies|ied)|rarely|hardly|barely|seldom|declin\w*|avoid\w*|reject\w*|prohibit\w*|forb[ia]d\w*|"
    r"ban|banned|ceas\w*|stop\w*|against|instead|rather|only|exclud\w*|except)|n['\u2019]t)\b"
)


def _reach(lowered: str, at: int) -> set[str]:
    """The stems of the content words a negation ending at ``at`` of a lowered text reaches, to its clause's end."""
    found = set()
    for word in _NEXT_WORDS.findall(lowered, at, at + 80)[: _SCOPE_REACH + 2]:
        if not word[0].isalpha():
            break
        if word not in STOP_WORDS:
            found.add(stem(word))
    return found


# A negation in a sentence of the evidence, in so many words or in a word that means one: "failed to", "lacks".
_STATED_NEGATION: Final = re.compile(
    r"(?=[ncwfluardhbsp'\u2019])(?:\b(?:not|no|never|none|nothing|nobody|neither|nor|cannot|without|nowhere|fail\w*|lack\w*|unable|absen\w*|"
    r"refus\w*|den(?:y|ies|ied)|rarely|hardly|barely|seldom|declin\w*|avoid\w*|reject\w*|prohibit\w*|forb[ia]d\w*|"
    r"ban|banned|ceas\w*|prevent\w*|unlike\w*)|n['\u2019]t)\b"
)
# Words that state a negated verb in one word: "remains" is "does not change" (patterns, whole words from their start).
_NEGATED_AS: Final = {
    "chang": (r"remain\w*", r"stay(?:s|ed|ing)?\b", r"unchang\w*", r"same\b", r"constant\w*"),
    "allow": (r"prohibit\w*", r"forb[ia]d\w*", r"ban(?:s|ned|ning)?\b"),
    "permit": (r"prohibit\w*", r"forb[ia]d\w*", r"ban(?:s|ned|ning)?\b"),
    "includ": (r"exclud\w*", r"except\w*"),
    "remember": (r"forg[eo]t\w*",),
    "succeed": (r"fail\w*",),
    "open": (r"closed\b", r"shut\b"),
}


def _one_word_negation(head: str, lowered: str) -> bool:
    """Whether a lowered text says "not" + ``head`` (a stem) in one word.

    A negative prefix on the word itself ("illegal" for "legal", "impossible"
    for "possible"), or a word of `_NEGATED_AS` ("remains" for "change").
    """
    forms = [rf"(?:un|in|im|il|ir|dis|non)-?{re.escape(head)}", *_NEGATED_AS.get(head, ())]
    return re.search(r"\b(?:" + "|".join(forms) + ")", lowered) is not None


def says_negated(head: str, text: str) -> bool:
    """Whether ``text`` says "not" + ``head`` (a stemmed word) in one word: "illegal" for "legal".

    The claim checker reads it too: a claim saying "illegal" states what "not legal" does.

    Example:
        >>> says_negated("legal", "The drug is illegal."), says_negated("legal", "The drug is legal.")
        (True, False)
    """
    return _one_word_negation(head, _lower(text))


# Words that open a clause whose negation the claim does not assert: "if not treated", "why they do not".
_NOT_ASSERTED: Final = frozenset({"if", "unless", "whether", "why", "lest"})


def _clause_around(tokens: Sequence[_Token], first: int, last: int, ends: frozenset[str]) -> Sequence[_Token]:
    """The tokens of the clause holding tokens ``first`` to ``last``: out to a token written as one of ``ends``.

    Marks are written as themselves (``_CLAUSE_END``); words lower case (`_ROLE_CLAUSE_ENDS`).
    """
    start = first
    while start > 0 and tokens[start - 1].low not in ends:
        start -= 1
    end = last
    while end + 1 < len(tokens) and tokens[end + 1].low not in ends:
        end += 1
    return tokens[start : end + 1]


def _clause(tokens: Sequence[_Token], at: int, text: str) -> tuple[frozenset[str], bool]:
    """The content words (stemmed, negations left out) of the clause around token ``at``, and whether it asserts.

    A negation after "if", "unless", "whether" or "why" in its clause is a
    condition or a question, and one inside quotation marks is someone's
    words: not something the claim states.
    """
    clause = _clause_around(tokens, at, at, _CLAUSE_END)
    words = frozenset(stem(t.low) for t in clause if _is_content(t) and not _is_negation(t))
    asserted = not any(t.low in _NOT_ASSERTED for t in clause if t.start < tokens[at].start) and not _quoted(
        text, tokens[at].start
    )
    return words, asserted


def _states_negation(sentence: str, scope: tuple[str, ...]) -> bool:
    """Whether a sentence of the evidence negates something: a negation, or a word meaning "not" + the scope's word.

    "impossible" states "not possible"; "remains" states "does not change".
    """
    lowered = _lower(sentence)
    if _STATED_NEGATION.search(lowered):
        return True
    return _one_word_negation(scope[0], lowered)


def _shared(words: Iterable[str], reading: tuple[frozenset[str], frozenset[str]]) -> int:
    """How many of the stems ``words`` a text's reading (its stems, their first five letters) holds.

    Matched as the scorer matches them: "lawful" is in "lawfully".
    """
    stems, prefixes = reading
    return sum(1 for word in set(words) if word in stems or (len(word) >= 5 and word[:5] in prefixes))


def _never_negated(scope: tuple[str, ...], evidence: str, stems: frozenset[str]) -> bool:
    """The evidence has the word a negation of the claim bears on, and nowhere negates it (nor says it in one word)."""
    head = scope[0]
    if head not in stems:
        return False
    prefix = head[:5] if len(head) >= 5 else None
    lowered = _lowered(evidence)
    for match in _NEGATIVE_MEANING.finditer(lowered):
        reach = _reach(lowered, match.end())
        if head in reach or (prefix is not None and any(word[:5] == prefix for word in reach)):
            return False
    return not _one_word_negation(head, lowered)


def _negation_missing(said: _Sentence, claim: str, evidence: str) -> GuardFinding | None:
    """The claim negates something, and the evidence sentence that states its clause negates nothing: Neutral.

    The clause around each negation of the claim is looked for in the
    evidence: the sentences sharing most of its content words (two at least,
    or its only one) must hold a negation of their own — "not", "n't",
    "never", "no"..., a word that negates ("failed", "lacks", "refused",
    "prevents"), or one word for the negated word ("impossible" for "not
    possible", "remains" for "does not change"). Which word the evidence's
    negation bears on is not read: a negation said in other words ("it was
    not built" for "construction never began") is allowed for. A negated
    negative word ("not uncommon") whose positive the evidence states is a
    double negation: nothing to find. Evidence that states none of the
    clause is left to the scorer.
    """
    stems = stemmed_words(evidence)[0]
    scopes = [
        (at, scope)
        for at, scope in zip(said.negations, said.negated, strict=True)
        if not _double_negation(scope, stems)
    ]
    if not scopes:
        return None
    for at, scope in scopes:
        clause, asserted = _clause(said.tokens, at, claim)
        if not asserted or not clause & stems:
            continue
        # The sentences that state the clause: those holding most of what the negation bears on (or, when
        # none holds any of it, most of the clause). A sentence holding none of the clause is never one.
        spans = _spans_holding(evidence, clause | set(scope))
        read = [stemmed_words(evidence[start:end]) for start, end in spans]
        if max((_shared(clause, words) for words in read), default=0) < min(2, len(clause)):
            continue
        shares = [_shared(scope, words) for words in read]
        if not any(shares):
            shares = [_shared(clause, words) for words in read]
        best = max(shares)
        stated = any(
            share == best and _states_negation(evidence[start:end], scope)
            for share, (start, end) in zip(shares, spans, strict=True)
        )
        if stated and not _never_negated(scope, evidence, stems):
            continue
        phrase = " ".join(t.text for t in said.tokens[at : at + 1 + _SCOPE_REACH] if t.kind != "mark")
        phrase = " ".join(phrase.split()[: _SCOPE_WORDS + 2])
        return GuardFinding(
            guard="polarity", label="Neutral", claim_value=phrase, source_value=None,
            reason=f'the sources do not say "{phrase}"',
        )  # fmt: skip
    return None


def _neighbours(tokens: Sequence[_Token], at: int) -> set[str]:
    """The two content words (stemmed) nearest a token on either side, within its clause and four tokens.

    Two, not one: an adjective between the word and its noun ("the lowest career scoring average" against
    "the highest scoring average") keeps the two in the same place.
    """
    found = set()
    for step in (-1, 1):
        i, taken = at + step, 0
        while 0 <= i < len(tokens) and abs(i - at) <= 4 and taken < 2:
            token = tokens[i]
            if token.kind == "mark" and token.text in _CLAUSE_END:
                break
            if _is_content(token) and token.low not in _OPPOSITE_WORDS:
                found.add(stem(token.low))
                taken += 1
            i += step
    return found


def _closest(said: _Sentence, evidence: str, sentence: _Sentence) -> bool:
    """Whether ``sentence`` shares with the claim as many words as the evidence sentence closest to it."""
    best = _best_sentence(said, evidence)
    return best is not None and best[1] > 0 and _coverage(said, sentence) >= best[1]


def _word_places(tokens: Sequence[_Token]) -> dict[str, int]:
    """Each word of the tokens (and each part of a hyphenated one), folded, with its token's index."""
    places: dict[str, int] = {}
    for i, token in enumerate(tokens):
        if token.kind == "word":
            places.setdefault(token.low, i)
            if "-" in token.low:
                for part in token.low.split("-"):
                    places.setdefault(part, i)
    return places


def _word_search(words: frozenset[str]) -> re.Pattern[str]:
    """A pattern for any of ``words`` as whole words, in lower case (it searches `_lowered` text).

    It opens on a class of the words' first letters, which the regex engine checks at each offset before trying
    the words: several times faster on long evidence.
    """
    first = "".join(sorted({word[0] for word in words}))
    return re.compile(rf"(?=[{first}])\b(?:" + "|".join(sorted(words)) + r")\b")


_LETTERS: Final = re.compile(r"[a-z]+")


@functools.lru_cache(maxsize=1024)
def _letter_words(text: str) -> frozenset[str]:
    """The runs of letters of a text, lowered: every word a lower-case pattern can find in it, and more."""
    return frozenset(_LETTERS.findall(_lowered(text)))


# Compiled once: each listed word alone, and its opposites (a claim's own words among them are skipped).
_WORD_PATTERNS: Final = {word: _word_search(frozenset({word})) for word in _OPPOSITES}
_OPPOSITE_PATTERNS: Final = {word: _word_search(opposites) for word, opposites in _OPPOSITES.items()}


def antonym_guard(claim: str, evidence: str, *, coverage: float = 0.5) -> GuardFinding | None:
    """No evidence sentence that states the claim puts the opposite of a claim's word (`ANTONYMS`) in its place.

    In its place: next to one of the same content words, in a sentence that
    holds ``coverage`` of the claim's content words and not the claim's own
    word. A claim that uses both words of a pair ("more blood, fewer beats")
    is left alone, and so is a word negated on either side ("not legal" says
    "illegal": the polarity guard reads negations).

    Example:
        >>> antonym_guard("Sales increased in 2020.", "Sales decreased in 2020.").reason
        'the sources say decreased, not increased'
        >>> antonym_guard("It was built before the war.", "It was built before the war ended.") is None
        True
        >>> antonym_guard("Selling it is not legal here.", "Selling it is illegal here.") is None
        True
    """
    # Read the claim only when the evidence has the opposite of one of its listed words somewhere.
    claim_words = _LETTERS.findall(_lower(claim))
    listed = _OPPOSITE_WORDS.intersection(claim_words)
    if not listed:
        return None
    present = _letter_words(evidence)
    opposed = not all(_OPPOSITES[word].isdisjoint(present) for word in listed)
    # A comparison ("than", "before") whose word the evidence uses too may be turned round.
    compared = not listed.isdisjoint(present) and (
        ("than" in present and "than" in claim_words) or not listed.isdisjoint(_ORDER_WORDS)
    )
    if not opposed and not compared:
        return None
    lowered = _lowered(evidence)
    said = _whole(claim)
    # A word of the list, alone or as the last part of a hyphenated word ("fourth-strongest").
    candidates = [(i, t.low.rsplit("-", 1)[-1]) for i, t in enumerate(said.tokens) if t.kind == "word"]
    candidates = [(i, word) for i, word in candidates if word in _OPPOSITES]
    if not candidates or not said.words:
        return None
    if not opposed:
        return _turned_round(said, evidence, candidates, coverage)
    mine = set(_word_places(said.tokens))
    for at, word in candidates:
        opposites = _OPPOSITES[word] - mine
        if not opposites or _negated_word(said.tokens, at):
            continue
        near = _neighbours(said.tokens, at)
        # The claim's word nowhere in the evidence: its opposite next to one of the same words, or in a
        # sentence that holds enough of the claim, is enough.
        absent = _WORD_PATTERNS[word].search(lowered) is None
        # Each sentence is read once for each opposite word: another place of the word in it gives the same answer
        # (its first place is read), and a long text with no sentence end would be read again at every one.
        read: set[tuple[int, int, str]] = set()
        for match in _OPPOSITE_PATTERNS[word].finditer(lowered):
            if match.group() in mine:
                continue
            span = _bounds(evidence, match.start())
            if (*span, match.group()) in read:
                continue
            read.add((*span, match.group()))
            sentence = _piece(evidence[span[0] : span[1]], span[0])
            theirs = _word_places(sentence.tokens)
            where = theirs.get(match.group())
            if word in theirs or where is None or _negated_word(sentence.tokens, where):
                continue
            beside = bool(near & _neighbours(sentence.tokens, where))
            covered = _coverage(said, sentence)
            # Next to the same word, in a sentence that states the claim; or, the claim's word being
            # nowhere in the evidence, next to the same word or in the sentence closest to the claim.
            if absent:
                if not (beside or covered >= coverage or _closest(said, evidence, sentence)):
                    continue
            elif not (beside and covered >= coverage):
                continue
            if _swapped(said.tokens, at, sentence.tokens, where):
                continue  # the converse: "Mars is larger than Mercury" for "Mercury is smaller than Mars"
            value, said_word = sentence.tokens[where].text, said.tokens[at].text
            return GuardFinding(
                guard="antonym", label="Contradiction", claim_value=said_word, source_value=value,
                reason=f"the sources say {value}, not {said_word}", start=sentence.start, end=sentence.end,
            )  # fmt: skip
    return _turned_round(said, evidence, candidates, coverage)


# Words that relate what stands before them to what stands after: "A before B" is "B after A".
_ORDER_WORDS: Final = frozenset({"before", "after", "above", "below"})


def _sides(tokens: Sequence[_Token], at: int) -> tuple[frozenset[str], frozenset[str]] | None:
    """What a comparison at token ``at`` compares: the words only on its left, and those only on its right.

    Its right starts after the first "than" past the word ("larger than Mercury"), or, for a word of order
    ("before", "after"), after the word itself; None when the word compares nothing. Words are content words
    (stemmed) and numbers, the listed words of a pair left out; the sentence's own words on both sides cancel.
    """
    split = next((i for i in range(at + 1, len(tokens)) if tokens[i].low == "than"), None)
    if split is None:
        if tokens[at].low not in _ORDER_WORDS:
            return None
        split = at

    def words(part: Sequence[_Token]) -> set[str]:
        return {
            t.low if t.kind == "num" else stem(t.low)
            for t in part
            if (t.kind == "num" or _is_content(t)) and t.low not in _OPPOSITE_WORDS
        }

    left, right = words([t for i, t in enumerate(tokens[:split]) if i != at]), words(tokens[split + 1 :])
    return frozenset(left - right), frozenset(right - left)


def _swapped(claim: Sequence[_Token], at: int, source: Sequence[_Token], where: int) -> bool:
    """Whether the claim's comparison at ``at`` has the sides of the source's at ``where`` the other way round."""
    mine, theirs = _sides(claim, at), _sides(source, where)
    if mine is None or theirs is None:
        return False
    (left, right), (their_left, their_right) = mine, theirs
    return bool(left & their_right) and bool(right & their_left) and not right & their_right


def _turned_round(
    said: _Sentence, evidence: str, candidates: Sequence[tuple[int, str]], coverage: float
) -> GuardFinding | None:
    """A comparison the evidence makes with the same word, its sides the other way round.

    "Mars is smaller than Mercury" against "Mercury is smaller than Mars".
    """
    lowered = _lowered(evidence)
    for at, word in candidates:
        if _sides(said.tokens, at) is None or _negated_word(said.tokens, at):
            continue
        seen: set[tuple[int, int]] = set()
        for match in _WORD_PATTERNS[word].finditer(lowered):
            # Each sentence once, and only one holding enough of the claim (read as the scorer reads it, cached)
            # is tokenised: long evidence may use the word in many sentences about other things.
            span = _bounds(evidence, match.start())
            if span in seen:
                continue
            seen.add(span)
            if not _may_cover(said, evidence[span[0] : span[1]], coverage):
                continue
            sentence = _piece(evidence[span[0] : span[1]], span[0])
            where = _word_places(sentence.tokens).get(word)
            if where is None or _coverage(said, sentence) < coverage or _negated_word(sentence.tokens, where):
                continue
            if _swapped(said.tokens, at, sentence.tokens, where):
                quoted = _as_written(sentence.start, sentence.end, evidence)
                return GuardFinding(
                    guard="antonym", label="Contradiction", claim_value=said.tokens[at].text, source_value=quoted,
                    reason=f'the sources compare them the other way round: "{quoted}"',
                    start=sentence.start, end=sentence.end,
                )  # fmt: skip
    return None


def _negated_word(tokens: tuple[_Token, ...], at: int) -> bool:
    """Whether a negation bears on the word at ``at`` ("not legal"), as the polarity guard reads negations.

    Its scope is what `_negated` finds: "not only open" negates nothing.
    """
    if at and _is_negation(tokens[at - 1]):
        return True  # a word the negation stands right before, though no content word: "not all"
    word = stem(tokens[at].low)
    return any(where < at and word in scope for where, scope in _negated(tokens))


# ---- roles ----

# Words that leave who does what to whom unsaid, or say it both ways, when they stand between two parties: those on
# either side may stand in any order ("Smith and Jones", "drew with Lyon", "as tall as"). A mark between them (a
# comma of a list, a colon, a quotation mark) does too (`_between`).
_BOTH_WAYS: Final = frozenset({"and", "or", "nor", "with", "versus", "vs", "v", "against", "between", "same", "as"})
# Words that relate two parties the same way both ways round, wherever they stand in the clause ("Spain borders
# France", "compared X to Y", "held X to a draw"). Stems.
_BOTH_WAYS_WORDS: Final = frozenset(
    stem(word)
    for word in (
        "border borders bordered married marry marries wed weds divorced divorce met meet meets played plays drew "
        "draw draws tied ties faced face faces fought fight fights battled battle merged merge merges partnered "
        "partner collaborated collaborate shared share resembles resembled resemble matched match matches equals "
        "equalled equal similar like neighbours neighbors rivals rival joined join talked talk spoke negotiated "
        "agreed competed compete clashed clash debated debate dated date linked connected correlated associated "
        "kissed kiss hugged intersects intersect differs differ different overlaps overlap touches touch coincided "
        "coincide collided collide swapped exchanged corresponded argued equivalent identical comparable parallel "
        "related cousin sibling twin colleague teammate friend ally contemporary proportional synonym bind binds "
        "bound hybridizes hybridises annihilates adjoins adjoin abuts abut crosses cross crossed separated separate "
        "split diverged diverge engaged remarried duel duelled dueled wrestle wrestled boxed sparred tackle tackles "
        "attracts attract converts compared compare befriended attach attached contacts reunified reunify unified "
        "unify parity"
    ).split()
)
# Words that, between two parties, place them both ways ("lives across the hall from") or say who said what in
# either order ("Smith said the deal was dead", '"The deal is dead" said Smith'). Stems.
_BOTH_WAYS_BETWEEN: Final = frozenset(
    stem(word)
    for word in (
        "alongside beside near adjacent next opposite close across away "
        "say says said tell tells told report reports reported claim claims claimed state states stated add adds "
        "added note notes noted write writes wrote according"
    ).split()
)
# Words that join two clauses without ordering them: clauses exchanged around one of these alone say the same
# ("Exports grew whereas imports shrank" is "Imports shrank whereas exports grew"). Stems.
_CLAUSE_LINKS: Final = frozenset(stem(word) for word in "whereas whilst although though but yet addition also".split())
# One of these with a "from" after it between two parties says how far apart they are ("lies 465 km from", "an
# hour from", "far from", "down the street from"): both ways. Without one it may say something else ("far outnumber",
# "an hour ahead of").
_APART: Final = frozenset(
    "km kilometres kilometers kilometre kilometer miles mile m metres meters metre meter ft feet yards hours hour "
    "hrs minutes minute min mins days day far walk drive ride flight street".split()
)
# Characters between two parties that the tokens do not show: a headline's or a flattened table's separators.
_SEPARATORS: Final = re.compile(r"[/|\\•·]")
# A sentence with one of these reports a belief or a claim, maybe to correct it ("It is a myth that ..."), or asks:
# it states nothing this guard may hold the claim to. Stems.
_NOT_STATED: Final = frozenset(
    stem(word)
    for word in "claim claimed claims believe believed believes myth rumour rumor wrongly falsely mistakenly "
    "misconception supposedly allegedly false untrue".split()
)
# Where a clause ends, beside the marks: the clause holding the exchange is read for its words and years.
_CLAUSE_BREAKS: Final = frozenset(
    "but then after before while whilst whereas although though since until because when which who".split()
)
_ROLE_CLAUSE_ENDS: Final = _CLAUSE_END | _CLAUSE_BREAKS | {'"', "\u201c", "\u201d"}
# A copula between two parties says they are one ("The capital of France is Paris") or stand in a state towards
# each other ("is next to", "is a cousin of"), which often holds both ways: left alone, unless a passive's "by"
# names who acted ("is owned by").
_BEING: Final = _BE | frozenset({"become", "becomes", "became", "remain", "remains", "remained", "seem", "seems"})
# Words that say no more than which one: left out when the words between the parties are compared.
_DETERMINERS: Final = frozenset(
    {"the", "a", "an", "its", "their", "his", "her", "our", "my", "your", "this", "that", "these", "those"}
)
# When, not who: these and numbers may stand anywhere in a sentence ("On 1 September 1939, Germany invaded Poland"),
# so they are left out of the words whose order is compared.
_WHEN: Final = _MONTH_UNITS | frozenset(
    stem(word)
    for word in (
        "yesterday today tomorrow year years month months week weeks day days morning evening night season "
        "quarter decade century monday tuesday wednesday thursday friday saturday sunday spring summer autumn winter"
    ).split()
)
_ROLE_COVERAGE: Final = 0.6
# The sentences stating a claim read at most (a long source may state it again and again).
_ROLE_SENTENCES_READ: Final = 32


def role_guard(claim: str, evidence: str, *, coverage: float = _ROLE_COVERAGE) -> GuardFinding | None:
    """No evidence sentence states the claim with two of its parties the other way round, unless one states it as is.

    Each evidence sentence holding ``coverage`` of the claim's content words
    is read against the claim: the content words both write once (times and
    numbers aside: they may stand anywhere), in its order, must not be the
    claim's with a first part and a last part exchanged around the same
    words ("Oracle acquired Cerner" against "Cerner acquired Oracle"; "the
    first patient infected a nurse" against "a nurse infected the first
    patient"), written alike (determiners, a title beside a name, an aside
    in parentheses aside), in a clause that says what the claim's clause says. A
    sentence that states the claim in its own order clears it. Left alone:
    the passive ("Cerner was acquired by Oracle"), other words between the
    parties ("older than" against "younger than"), parties joined by a mark
    or a word that says it both ways ("and", "with", "as", a comma, a colon,
    "said", "across", "465 km from"), a relation both ways anywhere in the
    clause ("married", "borders", "compared", "held to a draw"), two clauses
    exchanged around what joins them ("whereas", "in addition to"), a copula
    between them ("The capital of France is Paris"), no word between them
    but small ones ("from the coast to the hills", which may be a distance
    or a range), a part that is only a time or a number ("in May") moved
    about the sentence, a question, a belief reported ("It is a myth that"),
    a claim that denies it (the polarity guard's), and another occasion in
    the same sentence (a year each clause has and the other lacks: "Nadal
    beat Federer in 2008, a year after losing the 2007 final"). At most 32
    sentences holding the claim's words are read.

    Example:
        >>> role_guard("Germany beat Brazil 7-1.", "Brazil beat Germany 7-1 in Belo Horizonte.").reason
        'the sources have them the other way round: "Brazil beat Germany 7-1 in Belo Horizonte."'
        >>> role_guard("Oracle acquired Cerner.", "Cerner was acquired by Oracle in 2022.") is None
        True
        >>> role_guard("Spain borders France.", "France borders Spain.") is None
        True
    """
    said = _whole(claim)
    # Too few words to exchange, or too few of them anywhere in the evidence (read whole, cached) for a sentence
    # to state the claim.
    if len(said.words) < 3 or not _may_cover(said, evidence, coverage):
        return None
    if said.negations or any(t.kind == "word" and stem(t.low) in _NOT_STATED for t in said.tokens):
        return None  # a claim that denies it, or reports it ("It is false that ..."): the polarity guard's
    mine = _content_order(said.tokens)
    found: tuple[_Sentence, tuple[int, int]] | None = None
    read = 0
    for start, end in _spans_holding(evidence, said.words):
        # The sentences stating the claim, read as the scorer reads them (cached per sentence), a bounded number.
        if not _may_cover(said, evidence[start:end], coverage):
            continue
        sentence = _piece(evidence[start:end], start)
        if _coverage(said, sentence) < coverage:
            continue
        read += 1
        exchanged = _exchanged_parties(said, mine, sentence, evidence[start:end], coverage)
        if exchanged is None:
            return None  # it states the claim in its own order
        if exchanged is not False and found is None:
            found = (sentence, exchanged)
        if read >= _ROLE_SENTENCES_READ:
            break
    if found is None:
        return None
    sentence, (first, last) = found
    quoted = _as_written(sentence.start, sentence.end, evidence)
    parties = " ".join(CITATION_MARKER.sub("", claim[first:last]).split())
    return GuardFinding(
        guard="role", label="Contradiction", claim_value=parties, source_value=quoted,
        reason=f'the sources have them the other way round: "{quoted}"', start=sentence.start, end=sentence.end,
    )  # fmt: skip


def _exchanged_parties(
    said: _Sentence, mine: list[tuple[str, int]], sentence: _Sentence, text: str, coverage: float
) -> tuple[int, int] | Literal[False] | None:
    """Where in the claim the two parties ``sentence`` (whose text is ``text``) has the other way round stand.

    As offsets into the claim (its first part's start, its last part's end).
    None when the sentence writes the words both write once in the claim's
    order; False when it writes them in another order that is no exchange of
    parties (or one this guard leaves alone, see `role_guard`).
    """
    theirs = _content_order(sentence.tokens)
    # The words both write once, but a time or a number: those may stand anywhere ("On 1 September 1939, Germany
    # invaded Poland" is "Germany invaded Poland on 1 September 1939").
    once = {key for key in _written_once(mine) & _written_once(theirs) if not _is_when(key)}
    claim_order = [(key, at) for key, at in mine if key in once]
    source_order = [(key, at) for key, at in theirs if key in once]
    keys = [key for key, _ in claim_order]
    if keys == [key for key, _ in source_order]:
        return None
    swap = _exchanged(keys, [key for key, _ in source_order])
    if swap is None:
        return False
    first, pivot, last = swap
    if not pivot:
        return False
    if all(key in _CLAUSE_LINKS for key in pivot):
        return False  # two clauses the other way round around what joins them
    tokens = sentence.tokens
    if any(t.low == "?" or (t.kind == "word" and stem(t.low) in _NOT_STATED) for t in tokens):
        return False  # a question, or a belief reported: "It is a myth that Whole Foods bought Amazon."
    claim_at, source_at = dict(claim_order), dict(source_order)
    # What relates the parties: every word from the end of the one to the start of the other, as written.
    between = _between(said.tokens, claim_at[first[-1]], claim_at[last[0]])
    if between is None:
        return False
    after, before = source_at[last[-1]], source_at[first[0]]
    if between != _between(tokens, after, before) or _SEPARATORS.search(text, tokens[after].end, tokens[before].start):
        return False
    if "by" not in between and not _BEING.isdisjoint(between):
        return False
    # The clause holding the exchange must say what the claim's clause holding it says, and of no other event: a
    # year each has and the other lacks is another match ("Nadal beat Federer in 2008, a year after losing the 2007
    # final"); words of the claim's clause elsewhere in the sentence, another occasion ("Everton beat Liverpool in
    # the league but lost the FA Cup semi-final to them").
    claimed = _clause_around(said.tokens, claim_at[first[0]], claim_at[last[-1]], _ROLE_CLAUSE_ENDS)
    clause = _clause_around(tokens, source_at[last[0]], source_at[first[-1]], _ROLE_CLAUSE_ENDS)
    claimed_words = {stem(t.low) for t in claimed if _is_content(t)}
    if any(t.kind == "word" and _relates_both_ways(t.low) for t in claimed):
        return False  # a relation both ways before the parties or after them: "compared X to Y", "held X to a draw"
    if len(claimed_words & {stem(t.low) for t in clause if _is_content(t)}) < coverage * len(claimed_words):
        return False
    years = {t.low for t in clause if _is_year(t)}
    stated = {t.low for t in claimed if _is_year(t)}
    if stated - years and years - stated:
        return False
    return said.tokens[claim_at[first[0]]].start, said.tokens[claim_at[last[-1]]].end


def _content_order(tokens: Sequence[_Token]) -> list[tuple[str, int]]:
    """The content words (stemmed) and numbers of ``tokens`` in order, each with its token index."""
    return [
        (token.low if token.kind == "num" else stem(token.low), at)
        for at, token in enumerate(tokens)
        if token.kind == "num" or _is_content(token)
    ]


def _written_once(order: Sequence[tuple[str, int]]) -> set[str]:
    return {key for key, count in collections.Counter(key for key, _ in order).items() if count == 1}


def _exchanged(
    mine: Sequence[str], theirs: Sequence[str]
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None:
    """``(first, pivot, last)`` when ``theirs`` is ``mine`` with ``first`` and ``last`` exchanged around ``pivot``.

    The same words before and after them in both; ``first`` and ``last``
    hold a word each, ``pivot`` may hold none. Each word is in each list
    once.

    Example:
        >>> _exchanged(["a", "beat", "b", "7-1"], ["b", "beat", "a", "7-1"])
        (('a',), ('beat',), ('b',))
        >>> _exchanged(["a", "beat", "b"], ["a", "beat", "b"]) is None
        True
    """
    if len(mine) != len(theirs) or len(mine) < 2:
        return None
    head = 0
    while head < len(mine) and mine[head] == theirs[head]:
        head += 1
    tail = len(mine)
    while tail > head and mine[tail - 1] == theirs[tail - 1]:
        tail -= 1
    rest, other = tuple(mine[head:tail]), tuple(theirs[head:tail])
    if not rest or rest[0] not in other or other[0] not in rest:
        return None
    # Each word is written once: ``other`` ends with ``first``, which starts with rest[0], and starts with
    # ``last``, which starts with other[0]. One place to look, not every split.
    i = len(other) - other.index(rest[0])
    j = rest.index(other[0])
    if not 1 <= i <= j < len(rest):
        return None
    first, pivot, last = rest[:i], rest[i:j], rest[j:]
    return (first, pivot, last) if other == last + pivot + first else None


def _is_when(key: str) -> bool:
    return key in _WHEN or key[:1].isdigit()


def _is_year(token: _Token) -> bool:
    return token.kind == "num" and len(token.low) == 4 and token.low.isdigit() and "1000" <= token.low <= "2100"


def _between(tokens: Sequence[_Token], first: int, last: int) -> tuple[str, ...] | None:
    """The words and numbers between tokens ``first`` and ``last`` as written (lower case), determiners left out.

    Capitalised words beside a party are part of its name ("Macbeth murders
    King Duncan"), and what parentheses hold is an aside ("GPT-3 (175B)
    outperforms"): both are left out. None when a mark (a comma, a colon) or
    a word between them says the parties may stand either way round
    (`_BOTH_WAYS`, `_BOTH_WAYS_WORDS`, `_BOTH_WAYS_BETWEEN`) or how far apart
    they are (`_APART` and "from"), or a parenthesis is left open.
    """
    inside = tokens[first + 1 : last]
    read: list[_Token] = []
    aside = 0
    for token in inside:
        if token.low in ("(", ")"):
            aside += 1 if token.low == "(" else -1
            if aside < 0:
                return None
            continue
        if aside:
            continue
        if (token.kind == "mark" and token.low != "%") or token.low in _BOTH_WAYS:
            return None
        if token.kind == "word" and (_relates_both_ways(token.low) or stem(token.low) in _BOTH_WAYS_BETWEEN):
            return None
        read.append(token)
    if aside:
        return None
    apart = next((k for k, token in enumerate(read) if token.low in _APART), None)
    if apart is not None and any(token.low == "from" for token in read[apart + 1 :]):
        return None
    start, end = 0, len(read)
    while start < end and _name_word(read[start]):
        start += 1
    while end > start and _name_word(read[end - 1]):
        end -= 1
    return tuple(token.low for token in read[start:end] if token.low not in _DETERMINERS)


def _name_word(token: _Token) -> bool:
    return _capitalised(token) and not token.initial


def _relates_both_ways(word: str) -> bool:
    """Whether ``word`` (lower case), or the word it inflects, is one of `_BOTH_WAYS_WORDS`.

    The stemmer leaves some inflections apart from their word ("rivalled", "allied"): they are undone here.

    Example:
        >>> _relates_both_ways("rivalled"), _relates_both_ways("allied"), _relates_both_ways("acquired")
        (True, True, False)
    """
    if stem(word) in _BOTH_WAYS_WORDS:
        return True
    for ending in ("ied", "ies", "ing", "ed", "es", "s", "d"):
        if word.endswith(ending) and len(word) > len(ending) + 2:
            base = word[: -len(ending)]
            bases = [base + "y"] if ending in ("ied", "ies") else [base, base + "e"]
            if len(base) > 2 and base[-1] == base[-2]:
                bases.append(base[:-1])  # a doubled consonant: "rivalled", "wedded"
            if any(stem(found) in _BOTH_WAYS_WORDS for found in bases):
                return True
    return False


# ---- hedges and conditions ----

# Words by which a text says something only may be so: "may reduce", "is linked to", "researchers believe".
# Each only in the sense that hedges (`_hedge_sense`): not "May 2024", "the suggested price", "could not find",
# "twice as likely", "symptoms associated with the disease include".
_HEDGE_WORDS: Final = (
    r"may|might|could|possibly|perhaps|probably|likely|reportedly|allegedly"
    r"|suggest(?:s|ed)?|believe(?:s|d)?|appear(?:s|ed)? to|seem(?:s|ed)? to|expected to"
    r"|(?:linked|associated|correlated) with|linked to"
    # An intention or a tendency, not the act: "plans to open" is no opening, "tend to have" no cause.
    r"|(?:plan|intend|aim|tend)(?:s|ed)? to|planned to|scheduled to"
)
# Opened on a class of the words' first letters, which the regex engine tests at each offset before the words.
_HEDGES: Final = re.compile(rf"(?=[abceilmprst])\b(?:{_HEDGE_WORDS})\b")
# Words by which a claim hedges itself (then the guard holds nothing against it): the hedges, other words that
# hedge ("is thought to", "a link between", "according to", "tends to", "intends to") and the modal verbs that
# state no fact either ("can", "should").
_CLAIM_HEDGES: Final = re.compile(
    rf"\b(?:{_HEDGE_WORDS}|can|should|would|help(?:s|ed)? to|thought to|links?|association|according"
    r"|possible|potential(?:ly)?|expected|proposed|forecast|points? to|indicates?|attributed"
    r"|estimated)\b"
)
# Before these, a hedge word hedges nothing: "as likely", "twice as likely", "could not", "a suggested price".
_NOT_A_HEDGE_BEFORE: Final = frozenset({"as", "more", "less", "most", "least", "times", "the", "a", "an"})
_LINKS: Final = frozenset({"linked", "associated", "correlated"})
# The hedges that say what someone meant to do ("plans to open"), and the words that open a clause said aside after
# a comma (", which was scheduled to", ", although it had planned to"): what it meant to do there hedges nothing the
# main clause states ("People who drink tea tend to ..." is no aside).
_INTENDING: Final = frozenset(
    "plan plans planned intend intends intended aim aims aimed tend tends tended scheduled".split()
)
_ASIDE: Final = re.compile(r",\s*(?:which|who|whom|whose|although|though|whereas|while)\s*$")
# After "tend to", these name whom or what is cared for ("tends to his sheep"), not what tends to happen.
_CARED_FOR: Final = frozenset("the his her their its our my your him them us me those these this that patients".split())
_COPULAS: Final = frozenset({"is", "are", "was", "were", "be", "been", "being", "strongly", "closely", "also"})
# Where a clause ends inside a sentence, for the clause a hedge stands in: marks, line ends and table cells,
# and the words that open another clause ("and said it may...", "repairs that could begin...").
_SUBCLAUSE: Final = re.compile(
    r"[,;:()|\n\u2013\u2014]|\b(?:and|but|or|while|whereas|although|though|that|which|who|whom|whose|so|because)\b"
)
# A condition: "if", "unless", "only when", "only if", "provided that".
_CONDITION: Final = re.compile(r"(?=[iuopa])\b(?:if|unless|only when|only if|provided that|as long as)\b")
_CLAIM_CONDITION: Final = re.compile(r"\b(?:if|unless|when|whenever|only|provided|once|after|before)\b")
# Before these, "if" is "whether": "unclear if", "asked users if".
_IF_AS_WHETHER: Final = frozenset(
    {"ask", "asks", "asked", "asking", "unclear", "clear", "see", "check", "know", "knows", "wonder", "doubt", "users"}
)
_HEDGE_COVERAGE: Final = 0.6


def hedge_guard(claim: str, evidence: str, *, coverage: float = _HEDGE_COVERAGE) -> GuardFinding | None:
    """No plain claim where the sources say it only may be so, or only under a condition: Neutral.

    The claim hedges nothing ("may", "could", "is linked to", "is thought
    to", "if"...) and every evidence sentence holding ``coverage`` of its
    content words does: with a hedge in a clause that itself holds
    ``coverage`` of them ("the fossil may be", "researchers believe", "is
    associated with"; a hedge of another clause, "and said it may buy back
    stock", hedges nothing the claim says), or with a condition the claim
    leaves out that governs the clause stating it ("if the product is
    unopened").

    Example:
        >>> hedge_guard("The policy reduces waiting times.", "The new policy may reduce waiting times.").reason
        'the sources say it only may be so: "The new policy may reduce waiting times."'
        >>> hedge_guard("The policy could reduce waiting times.", "The policy may reduce waiting times.") is None
        True
    """
    lowered = _lower(claim)
    if _CLAIM_HEDGES.search(lowered):
        return None
    hedged, conditioned = _hedge_cues(evidence)
    if not hedged and not conditioned:
        return None
    said = _whole(claim)
    if len(said.words) < 2:
        return None
    conditions = conditioned and not _CLAIM_CONDITION.search(lowered)
    found: tuple[int, int, str] | None = None
    for start, end in _spans_holding(evidence, said.words):
        # The sentences stating the claim, read as the scorer reads them (cached per sentence).
        if not _may_cover(said, evidence[start:end], coverage):
            continue
        why = _why_not_plain(said, evidence[start:end], conditions, coverage)
        if why is None:
            return None  # a sentence states it plainly
        found = found or (start, end, why)
    if found is None:
        return None
    start, end, why = found
    quoted = _as_written(start, end, evidence)
    return GuardFinding(
        guard="hedge", label="Neutral", claim_value=claim.strip(), source_value=quoted,
        reason=f'the sources say it only {why}: "{quoted}"', start=start, end=end,
    )  # fmt: skip


@functools.lru_cache(maxsize=1024)
def _hedge_cues(evidence: str) -> tuple[bool, bool]:
    """Whether a text holds a hedge, and a condition, anywhere (cached: the same evidence faces many claims)."""
    lowered = _lowered(evidence)
    return _HEDGES.search(lowered) is not None, _CONDITION.search(lowered) is not None


def _subclauses(lowered: str) -> list[tuple[int, int]]:
    """The clauses of a lowered sentence, by `_SUBCLAUSE`'s ends: (start, end) offsets, in order. One scan."""
    cuts = [0]
    for mark in _SUBCLAUSE.finditer(lowered):
        cuts += (mark.start(), mark.end())
    cuts.append(len(lowered))
    return [(cuts[k], cuts[k + 1]) for k in range(0, len(cuts), 2) if cuts[k + 1] > cuts[k]]


def _hedge_sense(lowered: str, text: str, match: re.Match[str]) -> bool:
    """Whether the hedge word of ``match`` hedges.

    Not "May 2024", "could not", "as likely", "the suggested price", nor "symptoms associated with" (a word of
    a link hedges after "is", "are"...).
    """
    at = match.start()
    word = match.group()
    before = lowered[max(0, at - 12) : at].split()
    previous = before[-1] if before else ""
    following = lowered[match.end() : match.end() + 8].split()
    after = following[0] if following else ""
    if word == "may" and (text[at].isupper() or after[:1].isdigit()):
        return False  # the month
    if word == "could" and after in ("not", "never"):
        return False  # "could not find": a fact
    if word.startswith("tend") and (after in _CARED_FOR or after in _NOT_AN_ACT):
        return False  # "tended to the wounded": cared for them
    if previous == "most" and len(before) > 1 and before[-2] not in ("the", "a", "an"):
        return True  # "was most likely caused": probably (but "the most likely cause" is an adjective)
    if previous in _NOT_A_HEDGE_BEFORE:
        return False
    first = word.split()[0]
    return not (first in _LINKS and previous not in _COPULAS)


# At most this many hedges, and as many conditions, are read in one sentence: a sentence holding more (a long
# text with no sentence end) is read no further, so that the work stays linear in its length.
_MOST_READ: Final = 32
# A clause of this many words or fewer after a comma or "and" is an item of a list the clause before it opens:
# "may reduce pain, fever and swelling".
_LIST_ITEM_WORDS: Final = 4


def _why_not_plain(said: _Sentence, text: str, conditions: bool, share: float) -> str | None:
    """Why an evidence sentence stating the claim does not state it plainly ("may be so"), or None.

    A hedge counts in a clause that holds ``share`` of the claim, with the list it opens ("may reduce pain,
    fever and swelling"); inside quotation marks only when the quotation states the claim. A condition counts
    when the clause it governs does: the one after it when it opens a clause ("If it overheats, it stops"; ",
    and if you have questions, we help"), unless nothing follows (", if the product is unopened"); else the one
    before it ("Refunds are available if the product is unopened").
    """
    lowered = _lower(text)
    clauses = _subclauses(lowered)
    starts = [start for start, _ in clauses]
    holds: dict[tuple[int, int], bool] = {}

    def holding(span: tuple[int, int]) -> bool:
        if span not in holds:
            holds[span] = _may_cover(said, lowered[span[0] : span[1]], share)
        return holds[span]

    # The quotations of the sentence, read once: (start, end) in order, for a bisection per hedge.
    quotations = [m.span() for m in _QUOTED.finditer(text)]
    quotation_starts = [start for start, _ in quotations]
    questions = [m.start() for m in _QUESTION.finditer(lowered)]
    for match in itertools.islice(_HEDGES.finditer(lowered), _MOST_READ):
        if not _hedge_sense(lowered, text, match):
            continue
        index = max(0, bisect.bisect_right(starts, match.start()) - 1)
        start = clauses[index][0]
        question = bisect.bisect_left(questions, match.start()) - 1
        if question >= 0 and questions[question] >= start:
            continue  # a question: "asked if she could stay"
        quoted = bisect.bisect_left(quotation_starts, match.start()) - 1
        if quoted >= 0 and quotations[quoted][0] < match.start() < quotations[quoted][1]:
            if holding(quotations[quoted]):
                return "may be so"  # the quotation states it: '"The drug may cut deaths by half," she said.'
            continue  # someone's words aside: "better than we could have hoped"
        # An intention said aside hedges nothing when the rest of the sentence states the claim ("The flight,
        # which was scheduled to leave at noon, departed late"); else it is read in its own clause alone (the
        # clause after it is the main one, no item of a list it opens).
        if match.group().split()[0] in _INTENDING and _ASIDE.search(lowered[max(0, start - 16) : start]):
            end = clauses[index][1]
            if not _may_cover(said, lowered[:start] + lowered[end:], share) and holding((start, end)):
                return "may be so"
            continue
        if holding((start, _list_end(lowered, clauses, index))):
            return "may be so"
    if not conditions:
        return None
    for match in itertools.islice(_CONDITION.finditer(lowered), _MOST_READ):
        before = lowered[max(0, match.start() - 12) : match.start()].split()
        if match.group() == "if" and before and before[-1] in _IF_AS_WHETHER:
            continue  # "if" as "whether"
        if match.group() == "as long as" and before and (before[-1] in ("times", "twice") or before[-1][0].isdigit()):
            continue  # "three times as long as": a length
        index = max(0, bisect.bisect_right(starts, match.start()) - 1)
        clause_start = clauses[index][0]
        opens = (bool(before) and before[-1] in ("and", "but", "or", "then", "only")) or (
            match.start() - clause_start <= 2 and not lowered[clause_start : match.start()].strip(" ,;(")
        )
        # The clause it governs: the one after its own when it opens one and one follows, else the one before.
        if opens and index + 1 < len(clauses):
            governed = clauses[index + 1]
        elif opens:
            governed = clauses[index - 1] if index else (clause_start, match.start())
        else:
            governed = (clause_start, match.start())
        if holding(governed):
            return "under a condition"
    return None


_QUESTION: Final = re.compile(r"\b(?:if|whether|why)\b")


def _list_end(lowered: str, clauses: list[tuple[int, int]], index: int) -> int:
    """Where the list clause ``index`` opens ends: over the short clauses after it joined by a comma or "and"."""
    end = clauses[index][1]
    for start, stop in clauses[index + 1 :]:
        joint = lowered[end:start].strip()
        if joint not in (",", "and", ", and", "or", ", or") or len(lowered[start:stop].split()) > _LIST_ITEM_WORDS:
            # The last item may run on ("swelling in patients"): it is taken whole when it is the last.
            if joint in ("and", ", and", "or", ", or") and stop == len(lowered.rstrip(" .!?")):
                return stop
            break
        end = stop
    return end


_GUARDS: Final[dict[str, Callable[[str, str], GuardFinding | None]]] = {
    "number": number_guard,
    "name": name_guard,
    "polarity": polarity_guard,
    "antonym": antonym_guard,
    "hedge": hedge_guard,
    "role": role_guard,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class MeaningGuards:
    """Which guards run, in order: a claim is not supported when one of them fires.

    Every offline path takes one (``guards=``): `ScorerClaimChecker`,
    `verify_citations` (and so ``manage_references(verifier=...)``) and
    `ReferencePredictor`. ``MeaningGuards.off()`` turns them all off; each
    switch turns one off.

    Example:
        >>> MeaningGuards().check("The Louvre is in London.", "The Louvre is in Paris.").guard
        'name'
        >>> MeaningGuards(name=False).check("The Louvre is in London.", "The Louvre is in Paris.") is None
        True
    """

    number: bool = True
    name: bool = True
    polarity: bool = True
    antonym: bool = True
    hedge: bool = True
    role: bool = True

    def __post_init__(self) -> None:
        # A truthy word ("no") would leave a guard on: only True and False are taken.
        for name in _GUARDS:
            checked_flag(getattr(self, name), f"MeaningGuards: {name}")

    @classmethod
    def off(cls) -> MeaningGuards:
        """Every guard off: the scorer's word alone.

        Example:
            >>> MeaningGuards.off().enabled
            ()
        """
        return cls(number=False, name=False, polarity=False, antonym=False, hedge=False, role=False)

    @property
    def enabled(self) -> tuple[str, ...]:
        """The names of the guards that run, in the order they run.

        Example:
            >>> MeaningGuards(polarity=False).enabled
            ('number', 'name', 'antonym', 'hedge', 'role')
        """
        return tuple(name for name in _GUARDS if getattr(self, name))

    @staticmethod
    def clear_caches() -> None:
        """Forget every text read so far (the caches are shared by all instances), for cold benchmarks.

        Example:
            >>> MeaningGuards.clear_caches()
        """
        for cached in (
            _tokens,
            _quantities_of,
            _lexicon,
            _digit_values,
            _digit_strings,
            _sentences_of,
            _spans_of,
            _whole,
            _piece,
            _lowered,
            _negation_cues,
            _letter_words,
            _hedge_cues,
            _sentence_marks,
        ):
            cached.cache_clear()

    def check(self, claim: str, evidence: str) -> GuardFinding | None:
        """The first guard that fires on ``claim`` against ``evidence``, or None.

        A claim or evidence with no words gives None (nothing to hold the claim to).

        Example:
            >>> MeaningGuards().check("It is 330 metres tall.", "It is 330 metres tall.") is None
            True
        """
        for name, given in (("claim", claim), ("evidence", evidence)):
            if not isinstance(given, str):
                msg = f"MeaningGuards.check: {name} must be a text (str), got {type(given).__name__}"
                raise TypeError(msg)
        # isspace() stops at the first letter; strip() would copy a long evidence text.
        if not claim or claim.isspace() or not evidence or evidence.isspace():
            return None
        # Spelled out rather than looped over `enabled`: this runs once per citation.
        found = None
        if self.number:
            found = number_guard(claim, evidence)
        if found is None and self.name:
            found = name_guard(claim, evidence)
        if found is None and self.polarity:
            found = polarity_guard(claim, evidence)
        if found is None and self.antonym:
            found = antonym_guard(claim, evidence)
        if found is None and self.hedge:
            found = hedge_guard(claim, evidence)
        if found is None and self.role:
            found = role_guard(claim, evidence)
        return found


DEFAULT_GUARDS: Final = MeaningGuards()
"""Every guard on: what every offline path uses unless told otherwise."""


def checked_guards(guards: object, owner: str) -> MeaningGuards | None:
    """``guards`` when it is a `MeaningGuards` or None (the score alone), else a TypeError naming ``owner``.

    Example:
        >>> checked_guards(None, "verify_citations") is None
        True
        >>> checked_guards(True, "verify_citations")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        TypeError: verify_citations: guards must be a MeaningGuards (... or None for the score alone), got bool
    """
    if guards is None or isinstance(guards, MeaningGuards):
        return guards
    msg = (
        f"{owner}: guards must be a MeaningGuards (MeaningGuards.off() or None for the score alone), "
        f"got {type(guards).__name__}"
    )
    raise TypeError(msg)
