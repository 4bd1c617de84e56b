"""Hand-made mutants of the parser, registry, session, escaping and agent ids: are they caught?

Each mutant changes one thing in a copy of the package (the source in the
working tree is never touched), then runs the tests that should notice. A
mutant is *caught* when a test fails; one that *survived* names a rule the
tests do not pin. The untouched copy runs first: if its tests fail, nothing
below means anything and the script stops.

    python bench/mutants.py                 # every mutant, a table at the end
    python bench/mutants.py --only parser   # one group (parser, registry, session, escaping, agent ids)
    python bench/mutants.py --list          # the mutants, without running them

Exit status: 0 when every mutant is caught, 1 when any survived, 2 on a
mutant that no longer applies (its text is not in the file once: the code
moved on; update the mutant).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PARSER = "langchain_refs/streaming/_parser.py"
REGISTRY = "langchain_refs/streaming/_registry.py"
SESSION = "langchain_refs/streaming/_session.py"
STYLES = "langchain_refs/streaming/_styles.py"
DOCUMENTS = "langchain_refs/agents/_documents.py"

PARSER_TESTS = ("tests/unit_tests/test_parser.py",)
REGISTRY_TESTS = ("tests/unit_tests/test_session.py",)
# test_hot_path.py pins the claim's span as a forward search finds it; test_agents_stack.py the document
# texts a thread keeps: each catches a mutant the files beside it let through.
SESSION_TESTS = (
    "tests/unit_tests/test_session.py",
    "tests/unit_tests/test_native_citations.py",
    "tests/unit_tests/test_hot_path.py",
)
ESCAPING_TESTS = ("tests/unit_tests/test_styles.py", "tests/unit_tests/test_url_safety.py")
AGENT_TESTS = (
    "tests/unit_tests/test_agents.py",
    "tests/unit_tests/test_agents_cases.py",
    "tests/unit_tests/test_agents_stack.py",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Mutant:
    """One change to one file: ``old`` (found exactly once) becomes ``new``."""

    group: str
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


MUTANTS = (
    # -- the parser ---------------------------------------------------------------
    Mutant(
        group="parser",
        name="stray backtick: a line ending exactly L after it is code",
        path=PARSER,
        old="if at - start <= bound:",
        new="if at - start < bound:",
        tests=PARSER_TESTS,
    ),
    Mutant(
        group="parser",
        name="open span closes on any longer run",
        path=PARSER,
        old="                if end - at == length:\n                    self._take(_Event.CLOSING_RUN)",
        new="                if end - at >= length:\n                    self._take(_Event.CLOSING_RUN)",
        tests=PARSER_TESTS,
    ),
    Mutant(
        group="parser",
        name="code span closes on any longer run",
        path=PARSER,
        old="        if end - at == self._span_length:",
        new="        if end - at >= self._span_length:",
        tests=PARSER_TESTS,
    ),
    Mutant(
        group="parser",
        name="code span run across chunks closes on any longer run",
        path=PARSER,
        old="            if length == self._span_length:",
        new="            if length >= self._span_length:",
        tests=PARSER_TESTS,
    ),
    Mutant(
        group="parser",
        name="a fence needs four backticks",
        path=PARSER,
        old="if at_line_start and length >= 3:",
        new="if at_line_start and length > 3:",
        tests=PARSER_TESTS,
    ),
    Mutant(
        group="parser",
        name="a fence closes only on a longer run",
        path=PARSER,
        old="if end - pos >= self._fence_length:",
        new="if end - pos > self._fence_length:",
        tests=PARSER_TESTS,
    ),
    Mutant(
        group="parser",
        name="a fence opens after three spaces no more",
        path=PARSER,
        old="at_line_start = self._line_spaces is not None and self._line_spaces <= 3",
        new="at_line_start = self._line_spaces is not None and self._line_spaces < 3",
        tests=PARSER_TESTS,
    ),
    Mutant(
        group="parser",
        name="a fence closes after three spaces no more",
        path=PARSER,
        old="if self._line_spaces <= 3 and buf[pos] == self._fence_char:",
        new="if self._line_spaces < 3 and buf[pos] == self._fence_char:",
        tests=PARSER_TESTS,
    ),
    Mutant(
        group="parser",
        name="a marker exactly L long is text",
        path=PARSER,
        old="                if end - start > bound:\n                    continue",
        new="                if end - start >= bound:\n                    continue",
        tests=PARSER_TESTS,
    ),
    Mutant(
        group="parser",
        name="a tail exactly L long is not held",
        path=PARSER,
        old="near_end = not final and size - start <= bound",
        new="near_end = not final and size - start < bound",
        tests=PARSER_TESTS,
    ),
    Mutant(
        group="parser",
        name="a range of 32 ids is malformed",
        path=PARSER,
        old='elif 0 <= int(found["last"]) - int(found["first"]) < _MAX_RANGE_IDS:',
        new='elif 0 <= int(found["last"]) - int(found["first"]) < _MAX_RANGE_IDS - 1:',
        tests=PARSER_TESTS,
    ),
    Mutant(
        group="parser",
        name="a 9-digit id is malformed",
        path=PARSER,
        old='return len(number.lstrip("-0")) > _MAX_ID_DIGITS',
        new='return len(number.lstrip("-0")) >= _MAX_ID_DIGITS',
        tests=PARSER_TESTS,
    ),
    Mutant(
        group="parser",
        name="an id list of only malformed items is a marker",
        path=PARSER,
        old="if not ids and any(malformed):",
        new="if not ids and all(malformed):",
        tests=PARSER_TESTS,
    ),
    Mutant(
        group="parser",
        name="close() forgets an open span",
        path=PARSER,
        old="if self._pending or self._run_char or self._mode is _Mode.OPEN_SPAN:",
        new="if self._pending or self._run_char:",
        tests=PARSER_TESTS,
    ),
    # -- the source registry ------------------------------------------------------
    Mutant(
        group="registry",
        name="a position is listed each time it is cited",
        path=REGISTRY,
        old="            if position not in self._positions[number - 1]:\n",
        new="            if True:\n",
        tests=REGISTRY_TESTS,
    ),
    Mutant(
        group="registry",
        name="the list names the first document cited, not the last",
        path=REGISTRY,
        old="            self._last[number - 1] = position\n",
        new="            pass\n",
        tests=REGISTRY_TESTS,
    ),
    Mutant(
        group="registry",
        name='an empty source key ("") is a source',
        path=REGISTRY,
        old='if key is None or key == "":',
        new="if key is None:",
        tests=REGISTRY_TESTS,
    ),
    Mutant(
        group="registry",
        name="a source cited by key alone remembers document 1",
        path=REGISTRY,
        old="            self._last.append(0)",
        new="            self._last.append(1)",
        tests=REGISTRY_TESTS,
    ),
    Mutant(
        group="registry",
        name="documents without a key share one source",
        path=REGISTRY,
        old='keys.append(OwnSource(f"id {doc_id}" if doc_id else f"position {position}"))',
        new='keys.append(OwnSource(f"id {doc_id}" if doc_id else "no source"))',
        tests=REGISTRY_TESTS,
    ),
    # -- the session --------------------------------------------------------------
    Mutant(
        group="session",
        name="the last document is no document",
        path=SESSION,
        old="if not 1 <= doc_id <= count:",
        new="if not 1 <= doc_id < count:",
        tests=SESSION_TESTS,
    ),
    Mutant(
        group="session",
        name="a source cited beside itself is rendered twice",
        path=SESSION,
        old="            if number is not None and number in group:\n                registry.cite(doc_id)",
        new="            if False:\n                registry.cite(doc_id)",
        tests=SESSION_TESTS,
    ),
    Mutant(
        group="session",
        name="consecutive bad ids are one entry each",
        path=SESSION,
        old="if run_start is not None and doc_id == run_end + 1:",
        new="if run_start is not None and doc_id == run_end:",
        tests=SESSION_TESTS,
    ),
    Mutant(
        group="session",
        name="the claim keeps its leading punctuation",
        path=SESSION,
        old="claim = text[start:end].lstrip(_CLAIM_LEAD)",
        new="claim = text[start:end]",
        tests=SESSION_TESTS,
    ),
    Mutant(
        group="session",
        name="invalid citations grow without bound",
        path=SESSION,
        old="room = max(0, _INVALID_KEPT - len(self._invalid))",
        new="room = len(dropped)",
        tests=SESSION_TESTS,
    ),
    Mutant(
        group="session",
        name="the claim window drops text since the last marker",
        path=SESSION,
        old="if self._window_start > self._claim_floor:",
        new="if True:",
        tests=SESSION_TESTS,
    ),
    Mutant(
        group="session",
        name="a native citation beside itself is rendered twice",
        path=SESSION,
        old='        if number is not None and number in self._group:\n            return ""',
        new='        if False:\n            return ""',
        tests=SESSION_TESTS,
    ),
    # -- escaping -----------------------------------------------------------------
    Mutant(
        group="escaping",
        name="the model's & is not escaped (escape_text)",
        path=SESSION,
        old='if "&" in text or "<" in text or ">" in text:',
        new='if "<" in text or ">" in text:',
        tests=(*SESSION_TESTS, *ESCAPING_TESTS),
    ),
    Mutant(
        group="escaping",
        name="javascript: is a safe scheme",
        path=STYLES,
        old='_SAFE_SCHEMES = frozenset({"http", "https", "mailto"})',
        new='_SAFE_SCHEMES = frozenset({"http", "https", "mailto", "javascript"})',
        tests=ESCAPING_TESTS,
    ),
    Mutant(
        group="escaping",
        name="character references are decoded once",
        path=STYLES,
        old="_DECODE_ROUNDS = 3",
        new="_DECODE_ROUNDS = 1",
        tests=ESCAPING_TESTS,
    ),
    Mutant(
        group="escaping",
        name="zero-width characters may hide a scheme",
        path=STYLES,
        old=r"\u200b-\u200f",
        new=r"\u200e-\u200f",
        tests=ESCAPING_TESTS,
    ),
    Mutant(
        group="escaping",
        name="Markdown brackets in titles are not escaped",
        path=STYLES,
        old=r'_MD_SPECIAL = re.compile(r"([\\`*_\[\]()#|!~])")',
        new=r'_MD_SPECIAL = re.compile(r"([\\`*_()#|!~])")',
        tests=ESCAPING_TESTS,
    ),
    Mutant(
        group="escaping",
        name="the HTML style does not escape titles",
        path=STYLES,
        old='    template_name = "html"\n    autoescape = True',
        new='    template_name = "html"\n    autoescape = False',
        tests=ESCAPING_TESTS,
    ),
    # -- agent ids ----------------------------------------------------------------
    Mutant(
        group="agent ids",
        name="a document's id is ignored (text decides)",
        path=DOCUMENTS,
        old="    if document.id:\n",
        new="    if False:\n",
        tests=AGENT_TESTS,
    ),
    Mutant(
        group="agent ids",
        name="metadata does not tell documents apart",
        path=DOCUMENTS,
        old='f"{document.page_content}\\x00{metadata}"',
        new='f"{document.page_content}"',
        tests=AGENT_TESTS,
    ),
    Mutant(
        group="agent ids",
        name="a document retrieved again gets a new id",
        path=DOCUMENTS,
        old="            if key not in keys:\n                documents.append(document)",
        new="            if True:\n                documents.append(document)",
        tests=AGENT_TESTS,
    ),
    Mutant(
        group="agent ids",
        name="one more document keeps its text in the state",
        path=DOCUMENTS,
        old='"page_content": document.page_content if k > first_text else "",',
        new='"page_content": document.page_content if k >= first_text else "",',
        tests=AGENT_TESTS,
    ),
    Mutant(
        group="agent ids",
        name="ids read back from the state are off by one",
        path=DOCUMENTS,
        old='            keys[str(entry["key"])] = len(documents)',
        new='            keys[str(entry["key"])] = len(documents) + 1',
        tests=AGENT_TESTS,
    ),
)

# What a copy needs to run the tests: the package, the tests and what they read.
COPIED = ("langchain_refs", "tests", "pyproject.toml", "bench", "examples", "docs", "README.md", "styles")


def copy_tree(target: Path) -> None:
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
        elif source.is_file():
            shutil.copy2(source, target / name)


def run_tests(tree: Path, tests: tuple[str, ...]) -> tuple[int, str]:
    """Pytest's exit status on ``tests`` in ``tree`` (the copy is what is imported), and its last line."""
    environment = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header", *tests]
    done = subprocess.run(command, cwd=tree, env=environment, capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, lines[-1] if lines else done.stderr.strip()[-200:]


def check_imports_the_copy(tree: Path) -> None:
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    found = subprocess.run(
        [sys.executable, "-c", "import langchain_refs; print(langchain_refs.__file__)"],
        cwd=tree,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not found.startswith(str(tree)):
        sys.exit(
            f"the tests would import {found}, not the copy under {tree}: is langchain_refs installed non-editable?"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="one group: " + ", ".join(sorted({m.group for m in MUTANTS})))
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    options = parser.parse_args()
    mutants = [m for m in MUTANTS if options.only in (None, m.group)]
    if not mutants:
        parser.error(f"no group {options.only!r}")
    for mutant in mutants:
        count = (ROOT / mutant.path).read_text(encoding="utf-8").count(mutant.old)
        if count != 1:
            print(f"mutant {mutant.name!r}: its text is in {mutant.path} {count} times, not once", file=sys.stderr)
            return 2
    if options.list:
        for mutant in mutants:
            print(f"{mutant.group:10} {mutant.name}")
        return 0
    with tempfile.TemporaryDirectory(prefix="langchain-refs-mutants-") as scratch:
        tree = Path(scratch) / "tree"
        copy_tree(tree)
        check_imports_the_copy(tree)
        status, last = run_tests(tree, tuple(sorted({t for m in mutants for t in m.tests})))
        if status != 0:
            print(f"the unmutated tests fail ({last}): fix them first", file=sys.stderr)
            return 2
        rows: list[tuple[Mutant, str, str, float]] = []
        for mutant in mutants:
            path = tree / mutant.path
            original = path.read_text(encoding="utf-8")
            path.write_text(original.replace(mutant.old, mutant.new), encoding="utf-8")
            started = time.perf_counter()
            try:
                status, last = run_tests(tree, mutant.tests)
            finally:
                path.write_text(original, encoding="utf-8")
            # 1: a test failed. Anything else but 0 (a collection or import error) catches it too, loudly.
            verdict = "survived" if status == 0 else "caught" if status == 1 else f"caught (pytest exit {status})"
            rows.append((mutant, verdict, last, time.perf_counter() - started))
            print(f"{verdict:9} {mutant.group:10} {mutant.name}", flush=True)
    print()
    print("| group | mutant | file | result |")
    print("| --- | --- | --- | --- |")
    for mutant, verdict, _, _ in rows:
        print(f"| {mutant.group} | {mutant.name} | {Path(mutant.path).name} | {verdict} |")
    caught = sum(1 for _, verdict, _, _ in rows if verdict.startswith("caught"))
    print(f"\n{caught} of {len(rows)} mutants caught")
    survivors = [mutant for mutant, verdict, _, _ in rows if verdict == "survived"]
    for mutant in survivors:
        print(
            f"survived: {mutant.group}: {mutant.name} ({mutant.path}: {mutant.old.strip()!r} -> {mutant.new.strip()!r})"
        )
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
