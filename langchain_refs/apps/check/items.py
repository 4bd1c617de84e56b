"""What ``langchain-refs check`` does to one item, shared by every engine and the checking page.

The local engine (``--engine local``), the Ray engine (``--engine ray``) and
the checking page's ``POST /api/check`` all turn an item into its result
with `check_item`, with an extractor and a checker built once by
`build_checkers`, so the three cannot drift apart. Reading items from JSON
text (`read_items`) lives here too, for the same reason.

An item is a dict in RefChecker's shape: ``response`` (and optionally
``question``) to extract from, ``reference`` (a string or a list of strings)
to check against, ``claims`` for mode ``check``. The result is the item with
``claims`` added (modes ``extract`` and ``extract-check``), and ``ys`` (one
label per claim), ``Y`` (the aggregated label) and ``checks`` (each claim's
label, score and evidence spans) added (modes ``check`` and
``extract-check``). Numbers JSON cannot hold are written as ``None``.

Example:
    >>> checkers = build_checkers()
    >>> item = {"response": "Paris is in France.", "reference": "Paris is in France."}
    >>> result = check_item(item, mode="extract-check", checkers=checkers)
    >>> result["claims"], result["ys"], result["Y"]
    (['Paris is in France.'], ['Entailment'], 'Entailment')
"""

from __future__ import annotations

import datetime
import decimal
import hashlib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, Protocol

from langchain_refs.apps._errors import CommandError, UnreadableJSON, json_int, utf8_problem
from langchain_refs.apps._models import load_model
from langchain_refs.grounding import (
    Claim,
    ClaimCheck,
    LLMClaimChecker,
    LLMClaimExtractor,
    RuleBasedClaimExtractor,
    ScorerClaimChecker,
    aggregate,
    recorded_model_failures,
)

__all__ = [
    "DEFAULT_CLAIM_FORMAT",
    "DEFAULT_THRESHOLD",
    "MODEL_FAILED",
    "MODES",
    "Checkers",
    "ClaimChecking",
    "ClaimExtraction",
    "Mode",
    "OptionNotUsed",
    "build_checkers",
    "check_item",
    "checked_item",
    "dumps",
    "empty_input_problem",
    "is_json_list",
    "json_data",
    "model_failure",
    "option_not_used",
    "read_items",
    "read_json_text",
    "run_key",
]

Mode = Literal["extract", "check", "extract-check"]
MODES: tuple[Mode, ...] = ("extract", "check", "extract-check")


class ClaimExtraction(Protocol):
    """What `check_item` needs of an extractor (`RuleBasedClaimExtractor`, `LLMClaimExtractor`)."""

    def extract(self, response: str, question: str | None = None) -> list[Claim]:
        """The claims of one response."""
        ...


class ClaimChecking(Protocol):
    """What `check_item` needs of a checker (`ScorerClaimChecker`, `LLMClaimChecker`)."""

    def check_batch(self, claims: list[Claim], references: list[str], question: str | None = None) -> list[ClaimCheck]:
        """The verdict on each claim of one response."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkers:
    """The extractor and the checker of one run, built once and used for every item.

    Example:
        >>> type(build_checkers().checker).__name__
        'ScorerClaimChecker'
    """

    extractor: ClaimExtraction
    checker: ClaimChecking


OptionNotUsed = Literal[
    "claim format without a model", "claim format to check", "threshold to extract", "threshold with a model"
]
"""Why an option given to a run would not be used by it (`option_not_used`)."""


def option_not_used(
    mode: str, *, with_model: bool, claim_format_given: bool, threshold_given: bool
) -> OptionNotUsed | None:
    """The first option given that a run in ``mode`` would not use, by why; None when each is used.

    A claim format is for a model's extractor, a threshold for the offline
    checker. The command and the checking API refuse such an option, each in
    its own words, rather than ignore it.

    Example:
        >>> option_not_used("extract", with_model=False, claim_format_given=False, threshold_given=True)
        'threshold to extract'
        >>> option_not_used("check", with_model=False, claim_format_given=False, threshold_given=True) is None
        True
    """
    if claim_format_given and not with_model:
        return "claim format without a model"
    if claim_format_given and mode == "check":
        return "claim format to check"
    if threshold_given and mode == "extract":
        return "threshold to extract"
    if threshold_given and with_model:
        return "threshold with a model"
    return None


DEFAULT_CLAIM_FORMAT: Final = "triplet"
"""How a model extracts claims unless told otherwise (``--claim-format``)."""
DEFAULT_THRESHOLD: Final = 0.4
"""The support the offline checker needs for Entailment unless told otherwise (``--threshold``)."""


def build_checkers(
    *, model: str | Any = None, claim_format: str = DEFAULT_CLAIM_FORMAT, threshold: float = DEFAULT_THRESHOLD
) -> Checkers:
    """The extractor and checker ``langchain-refs check`` uses for these options.

    Args:
        model: a chat model, or ``provider:name`` as ``--model`` takes it
            (loaded with `load_model`); None for the offline pair: the
            rule-based extractor and the lexical `ScorerClaimChecker`.
        claim_format: ``triplet`` or ``subsentence``, for the model's extractor.
        threshold: the support from 0 to 1 the offline checker needs for Entailment.

    Raises:
        CommandError: a model spec that cannot be loaded (one line saying what to install).

    Example:
        >>> checkers = build_checkers(threshold=0.9)
        >>> type(checkers.extractor).__name__, checkers.checker.threshold
        ('RuleBasedClaimExtractor', 0.9)
    """
    if model is None:
        return Checkers(extractor=RuleBasedClaimExtractor(), checker=ScorerClaimChecker(threshold=threshold))
    chat_model = load_model(model) if isinstance(model, str) else model
    return Checkers(
        extractor=LLMClaimExtractor(chat_model, claim_format=claim_format),  # type: ignore[arg-type]
        checker=LLMClaimChecker(chat_model),
    )


def _references(item: dict[str, Any]) -> list[str]:
    reference = item.get("reference")
    if reference is None:
        msg = "no 'reference' to check against"
        raise ValueError(msg)
    references = [reference] if isinstance(reference, str) else reference
    if not isinstance(references, list) or not all(isinstance(r, str) for r in references):
        msg = "'reference' must be a string or a list of strings"
        raise ValueError(msg)
    return references


def json_data(value: Any, count: list[int] | None = None) -> Any:
    """``value`` as data standard JSON holds: a float it cannot hold (NaN, infinities) None, counted in ``count[0]``.

    Dates and times become their ISO text, durations seconds, decimals and
    bytes text (as Parquet gives them), and keys strings. The check's own
    results and the Ray engine's Parquet rows are made JSON here, both ways alike.

    Example:
        >>> import datetime
        >>> changed = [0]
        >>> json_data({"Y": float("nan"), "day": datetime.date(2024, 5, 1), 3: (1.5, b"ok")}, changed), changed
        ({'Y': None, 'day': '2024-05-01', '3': [1.5, 'ok']}, [1])
    """
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        if count is not None:
            count[0] += 1
        return None
    if isinstance(value, dict):
        return {str(k): json_data(v, count) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_data(v, count) for v in value]
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


def run_key(parts: list[Any], data: bytes = b"") -> str:
    """What a run's saved results depend on, as a short key: ``parts`` (options, file names...) and ``data``.

    A rerun whose key differs starts over (the local engine's progress, the Ray engine's shards).

    Example:
        >>> run_key([1, {"mode": "check"}]) == run_key([1, {"mode": "check"}]), len(run_key([1], b"input"))
        (True, 32)
    """
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode() + data).hexdigest()[:32]


def check_item(
    item: dict[str, Any],
    *,
    mode: Mode = "extract-check",
    aggregator: str = "strict",
    checkers: Checkers,
) -> dict[str, Any]:
    """One item's result, exactly as ``langchain-refs check MODE --aggregator AGGREGATOR`` writes it.

    Args:
        item: the input object (its other keys are kept in the result).
        mode: ``extract``, ``check`` or ``extract-check``.
        aggregator: ``strict``, ``soft`` or ``major`` (how ``ys`` become ``Y``).
        checkers: from `build_checkers`, built once for many items.

    Raises:
        ValueError: the item cannot be checked (a missing or mistyped field);
            the message is one line saying what is wrong.

    Example:
        >>> item = {"id": 7, "claims": ["Water boils at 100 degrees."], "reference": "Water boils at 100 degrees."}
        >>> result = check_item(item, mode="check", checkers=build_checkers())
        >>> result["id"], result["ys"], result["checks"][0]["evidence"][0]["end"]
        (7, ['Entailment'], 27)
        >>> check_item({"response": 3}, mode="extract", checkers=build_checkers())
        Traceback (most recent call last):
        ...
        ValueError: no 'response' string to extract claims from
    """
    out = dict(item)
    question = item.get("question")
    if question is not None and not isinstance(question, str):
        msg = "'question' must be a string"
        raise ValueError(msg)
    if mode in ("extract", "extract-check"):
        response = item.get("response")
        if not isinstance(response, str):
            msg = "no 'response' string to extract claims from"
            raise ValueError(msg)
        claims = checkers.extractor.extract(response, question)
        out["claims"] = [c.to_json() for c in claims]
    elif mode == "check":
        if "claims" not in item:
            msg = "no 'claims' list to check (run extract first)"
            raise ValueError(msg)
        if not isinstance(item["claims"], list):
            msg = f"'claims' must be a list of claims (as extract writes them), got {type(item['claims']).__name__}"
            raise ValueError(msg)
        claims = [_claim(index, value) for index, value in enumerate(item["claims"])]
        blank = next((k for k, claim in enumerate(claims) if not claim.text.strip()), None)
        if blank is not None:
            msg = f"claims[{blank}] is blank: there is nothing to check"
            raise ValueError(msg)
    else:
        msg = f"mode must be extract, check or extract-check, got {mode!r}"
        raise ValueError(msg)
    if mode in ("check", "extract-check"):
        references = _references(item)
        checks = checkers.checker.check_batch(claims, references, question)
        out["ys"] = [c.label for c in checks]
        out["Y"] = json_data(aggregate(out["ys"], aggregator))  # type: ignore[arg-type]
        out["checks"] = json_data([c.to_dict(guard=True) for c in checks])
    return out


def _claim(index: int, value: Any) -> Claim:
    """The claim ``claims[index]`` of an item, or a ValueError that names it and shows it as JSON.

    Example:
        >>> _claim(2, {"a": 1})
        Traceback (most recent call last):
        ...
        ValueError: claims[2] must be a string or a [head, relation, tail] triplet of strings, got {"a": 1}
    """
    try:
        return Claim.from_json(value)
    except ValueError:  # its message shows the value as Python writes it; the input is JSON
        shown = json.dumps(value, ensure_ascii=False)[:80]
        msg = f"claims[{index}] must be a string or a [head, relation, tail] triplet of strings, got {shown}"
        raise ValueError(msg) from None


def dumps(value: Any, **options: Any) -> str:
    """Standard JSON text, as the check command writes it (UTF-8 kept, never ``NaN``).

    Example:
        >>> dumps({"a": "é"})
        '{"a": "é"}'
    """
    return json.dumps(value, ensure_ascii=False, allow_nan=False, **options)


def checked_item(
    item: dict[str, Any], *, mode: Mode = "extract-check", aggregator: str = "strict", checkers: Checkers
) -> tuple[dict[str, Any], str | None]:
    """``(result, None)``, or ``({}, reason)`` when the item cannot be checked: never raises for a bad item.

    The reason is one line. A result that could not be written as standard
    JSON (or as UTF-8) fails here, on its item, not later when the output is
    written. A chat model's reply that failed or could not be read (that
    part then gave its default: no claims, or Neutral) is named in the
    result's ``warnings``, one line each (`recorded_model_failures`), so that
    a model that is down never passes for an Abstain; a result without
    ``warnings`` had none.

    Example:
        >>> checked_item({"response": "Hi."}, mode="check", checkers=build_checkers())
        ({}, "no 'claims' list to check (run extract first)")
        >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
        >>> down = build_checkers(model=FakeListChatModel(responses=["I cannot say."]))
        >>> result, _ = checked_item({"claims": ["Paris is in France."], "reference": "Paris."}, mode="check",
        ...                          checkers=down)
        >>> result["Y"], result["warnings"][0][:32]
        ('Neutral', 'unreadable claim checker reply (')
    """
    try:
        with recorded_model_failures() as failures:
            result = check_item(item, mode=mode, aggregator=aggregator, checkers=checkers)
        problem = utf8_problem(dumps(result))
    except RecursionError:
        return {}, "nested too deeply to process"
    except ValueError as problem:
        lines = str(problem).strip().splitlines()
        return {}, lines[0] if lines else type(problem).__name__
    if problem is not None:
        return {}, problem
    if failures:
        result["warnings"] = failures
    return result, None


def model_failure(result: dict[str, Any]) -> str | None:
    """Why a `checked_item` result cannot stand for a batch, in one line: its chat model failed; None if it did not.

    Such a result holds defaults where the model said nothing, so the
    ``check`` command's engines do not keep it as done: the local one writes
    an error record and does not save it (a resumed run asks again), the Ray
    engine fails its shard (the next run redoes it).

    Example:
        >>> model_failure({"Y": "Neutral"}) is None
        True
        >>> print(model_failure({"Y": "Neutral", "warnings": ["unreadable reply (no label)"]}))
        the chat model failed or its reply could not be read (1 reply; the first: unreadable reply (no label))
    """
    warnings = result.get("warnings")
    if not warnings:
        return None
    count = f"{len(warnings)} repl{'y' if len(warnings) == 1 else 'ies'}"
    return f"{MODEL_FAILED} ({count}; the first: {warnings[0]})"


MODEL_FAILED: Final = "the chat model failed or its reply could not be read"
"""How `model_failure`'s reason starts."""


def read_json_text(text: str, *, count: list[int]) -> Any:
    """Parse JSON text; numbers JSON cannot hold become None, counted in ``count[0]``.

    Raises `json.JSONDecodeError` on malformed JSON and a `ValueError` that
    says why on JSON that is nested too deeply or holds an integer too long to read.

    Example:
        >>> changed = [0]
        >>> read_json_text("[1, Infinity, -1e400]", count=changed), changed
        ([1, None, None], [2])
    """

    def constant(_: str) -> None:
        count[0] += 1

    def number(digits: str) -> float | None:
        value = float(digits)
        if math.isfinite(value):
            return value
        count[0] += 1
        return None

    try:
        return json.loads(text, parse_constant=constant, parse_float=number, parse_int=json_int)
    except RecursionError:
        msg = "nested too deeply to read"
        raise UnreadableJSON(msg) from None


def empty_input_problem(text: str) -> str | None:
    """Why an input file's text holds no item to check, in the command's words; None when it may hold some.

    Both engines refuse such an input with this line (exit 2), rather than
    checking nothing and calling it done.

    Example:
        >>> empty_input_problem(" \\n")
        'the file is empty; give a JSON list or JSON Lines of items'
        >>> empty_input_problem("[ ]"), empty_input_problem('{"response": "a"}')
        ('the JSON list is empty; there is nothing to check', None)
    """
    if not text.strip():
        return "the file is empty; give a JSON list or JSON Lines of items"
    if is_json_list(text) and text.strip().removeprefix("[").strip() == "]":
        return "the JSON list is empty; there is nothing to check"
    return None


def is_json_list(text: str) -> bool:
    """Whether an input file is one JSON list (else JSON Lines).

    Example:
        >>> is_json_list('  [{"response": "a"}]'), is_json_list('{"response": "a"}')
        (True, False)
    """
    return text.lstrip().startswith("[")


def read_items(
    path: Path | str, text: str, *, count: list[int] | None = None
) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """``(line or index, item, error)`` for each item of a JSON list or JSON Lines text read from ``path``.

    A JSON list that cannot be read raises `CommandError`; a JSON Lines line
    that cannot be read is yielded with its error. ``count[0]`` counts the
    numbers JSON cannot hold, read as None.

    Example:
        >>> [(n, e is None) for n, _, e in read_items(Path("in.jsonl"), '{"response": "a"}\\nnot json\\n')]
        [(1, True), (2, False)]
    """
    count = [0] if count is None else count
    if is_json_list(text):
        try:
            items = read_json_text(text, count=count)
        except json.JSONDecodeError as error:
            msg = f"{path}: not valid JSON ({error})"
            raise CommandError(msg) from None
        except UnreadableJSON as error:
            msg = f"{path}: cannot read this JSON: {error}"
            raise CommandError(msg) from None
        for index, item in enumerate(items, start=1):
            yield (index, item, None) if isinstance(item, dict) else (index, None, "an item must be a JSON object")
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = read_json_text(line, count=count)
        except json.JSONDecodeError as error:
            yield number, None, f"not valid JSON ({error.msg} at column {error.colno})"
            continue
        except UnreadableJSON as error:
            yield number, None, f"cannot read this JSON: {error}"
            continue
        yield (number, item, None) if isinstance(item, dict) else (number, None, "a line must be a JSON object")
