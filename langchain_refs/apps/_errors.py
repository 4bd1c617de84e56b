"""The error a command reports to its user: one line, never a traceback."""

from __future__ import annotations

import argparse
import sys

__all__ = ["CommandError", "UnreadableJSON", "first_line", "json_int", "utf8_problem", "utf8_text"]


class CommandError(Exception):
    """A command cannot go on; ``main`` prints the message as one line on stderr and exits with 2.

    The message names what is wrong and, where there is one, what to do about it.

    Example:
        >>> str(CommandError("in.json: no such file"))
        'in.json: no such file'
    """


def first_line(error: BaseException) -> str:
    """The first line of an error's message (its type name when it has none), for one-line reports.

    Example:
        >>> first_line(ValueError("bad key\\nmore detail")), first_line(KeyError())
        ('bad key', 'KeyError')
    """
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


class UnreadableJSON(ValueError):
    """JSON that Python cannot read although it may be valid: too deep, or an integer too long."""


def json_int(digits: str) -> int:
    """An integer of JSON text (``json.loads(parse_int=json_int)``), or an `UnreadableJSON` saying it is too long.

    Python refuses to read an integer of more than ``sys.get_int_max_str_digits()`` digits (a guard against
    quadratic parsing); its message tells a program's developer what to change, this one tells the sender.

    Example:
        >>> json_int("-42")
        -42
        >>> json_int("9" * 5000)
        Traceback (most recent call last):
        ...
        langchain_refs.apps._errors.UnreadableJSON: an integer of 5000 digits (Python reads at most 4300)
    """
    try:
        return int(digits)
    except ValueError:
        limit = sys.get_int_max_str_digits()
        msg = f"an integer of {len(digits.lstrip('-'))} digits (Python reads at most {limit})"
        raise UnreadableJSON(msg) from None


def utf8_problem(text: str) -> str | None:
    """Why ``text`` cannot be written as UTF-8 (a lone surrogate, as JSON's ``"\\ud800"`` reads), else None.

    The reason is one line that names the character by its escape, so that the
    reason itself can be written.

    Example:
        >>> utf8_problem("caf\\u00e9"), utf8_problem('{"a": "x\\ud800"}')
        (None, 'holds \\\\ud800, a lone surrogate that UTF-8 cannot write')
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"holds \\u{ord(text[error.start]):04x}, a lone surrogate that UTF-8 cannot write"
    return None


def utf8_text(data: bytes) -> str:
    """``data`` read as UTF-8 (a leading byte-order mark dropped), or a ValueError naming the first byte that is not.

    The message is the byte and its offset, for the caller to say whose bytes they are.

    Example:
        >>> utf8_text(b"\\xef\\xbb\\xbfcaf\\xc3\\xa9")
        'café'
        >>> utf8_text(b"caf\\xe9")
        Traceback (most recent call last):
        ...
        ValueError: byte 0xe9 at offset 3
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        msg = f"byte 0x{data[error.start]:02x} at offset {error.start}"
        raise ValueError(msg) from None


# Shown as langchain_refs.apps.CommandError, where users import it from.
CommandError.__module__ = "langchain_refs.apps"


def at_least_one(text: str) -> int:
    """An argparse ``type`` for a whole number of at least 1; anything else is a one-line usage error.

    Example:
        >>> at_least_one("4")
        4
    """
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        msg = f"must be a whole number of at least 1, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value
