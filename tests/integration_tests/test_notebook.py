"""The quick-start notebook is stored executed, and its stored outputs are what it prints today.

The outputs are stored so that they show where people read the notebook (GitHub,
an editor). Storing them is an explicit command, never part of a test run:

    python -m tests.integration_tests.test_notebook --write

The test re-executes the notebook and compares the text of every output with the
stored text, so stored outputs cannot go stale silently: after a change that
alters what the notebook prints, the test fails until the command above is run.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"
STORE_COMMAND = "python -m tests.integration_tests.test_notebook --write"

# What differs from one run to the next and is not the notebook's to decide:
# the per-answer id in HTML footnote links, and object addresses in reprs.
VOLATILE = [
    (re.compile(r"\bref-[0-9a-f]{8}-"), "ref-<answer id>-"),
    (re.compile(r"\b0x[0-9a-f]{6,}\b"), "0x<address>"),
]


def execute(path: Path) -> Any:
    """The notebook at ``path`` run top to bottom in a fresh kernel (nothing is written)."""
    import nbclient
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        record_timing=False,  # timestamps in cell metadata would change the file on every store
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    return notebook


def text_outputs(notebook: Any) -> list[list[str]]:
    """Each code cell's outputs as text, with the volatile parts masked."""

    def text(output: Any) -> str:
        if output.output_type == "stream":
            value = f"{output.name}: {output.text}"
        elif output.output_type == "error":
            value = f"error: {output.ename}: {output.evalue}"
        else:
            value = f"{output.output_type}: {output.get('data', {}).get('text/plain', '')}"
        for pattern, mask in VOLATILE:
            value = pattern.sub(mask, value)
        return value

    def joined(outputs: list[Any]) -> list[str]:
        # The kernel splits one stream into outputs where it happens to flush (timing, load): join them.
        texts: list[str] = []
        last_stream = None
        for output in outputs:
            stream = output.name if output.output_type == "stream" else None
            if stream is not None and stream == last_stream:
                texts[-1] += text(output)[len(stream) + 2 :]
            else:
                texts.append(text(output))
            last_stream = stream
        return texts

    return [joined(cell.outputs) for cell in notebook.cells if cell.cell_type == "code"]


@pytest.mark.slow
def test_stored_outputs_are_what_the_notebook_prints() -> None:
    """Every code cell is stored with its outputs, and re-executing gives the same text."""
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    stored = nbformat.read(NOTEBOOK, as_version=4)
    stored_text = text_outputs(stored)
    assert all(stored_text), f"a code cell is stored without outputs; run {STORE_COMMAND}"
    assert stored_text == text_outputs(execute(NOTEBOOK)), f"stored outputs are stale; run {STORE_COMMAND}"


def test_stored_outputs_show_the_quick_start() -> None:
    """The stored outputs show the renumbered answer and the demo's honest not-found (written by hand)."""
    nbformat = pytest.importorskip("nbformat")
    outputs = "".join("".join(cell) for cell in text_outputs(nbformat.read(NOTEBOOK, as_version=4)))
    assert "Paris[1] is in Europe[2] and has two million people[1]." in outputs
    assert "I could not find the answer to this question in the documents." in outputs
    assert "error:" not in outputs


def test_the_custom_template_links_only_safe_urls_and_escapes_titles() -> None:
    """The notebook's footnote style: no link to ``None`` nor to ``javascript:``, a title cannot close its link."""
    import json

    from langchain_core.documents import Document

    cells = ["".join(c["source"]) for c in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]]
    [cell] = [c for c in cells if c.startswith("from langchain_refs import TemplateReferenceStyle")]
    namespace: dict[str, Any] = {}
    exec(cell[: cell.index("chain = ")], namespace)  # the style only: the chain needs the cells before
    documents = [
        Document("x", metadata={"title": "No source"}),
        Document("y", metadata={"source": "javascript:alert(1)", "title": "Script"}),
        Document("z", metadata={"source": "https://a.org/x", "title": "A](https://evil.example) ["}),
    ]
    notes = namespace["footnotes"].format_all_references(list(enumerate(documents, start=1)))
    assert "None" not in notes
    assert "](javascript:" not in notes
    assert "](https://evil.example)" not in notes
    assert "(https://a.org/x)" in notes


def store() -> None:
    """Execute the notebook and write it back with its outputs (stable metadata, no timings)."""
    import nbformat

    notebook = execute(NOTEBOOK)
    failed = [output for cells in text_outputs(notebook) for output in cells if output.startswith("error:")]
    if failed:
        raise SystemExit(f"not stored: a cell failed: {failed[0]}")
    # Only what renders the notebook; the Python version would change the file from machine to machine.
    notebook.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python", "pygments_lexer": "ipython3"},
    }
    nbformat.write(notebook, NOTEBOOK)
    print(f"stored {NOTEBOOK} with its outputs")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit(f"usage: {STORE_COMMAND}")
    store()
