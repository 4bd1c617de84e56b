"""Rewrite the style golden files from the current code: ``python -m tests.regenerate_goldens``.

Run it only when a change of rendered output is intended, then review the
diff (``git diff tests/unit_tests/golden``) before committing. The tests only
ever compare against these files; they never write them.
"""

from __future__ import annotations

from tests.unit_tests.test_styles import GOLDEN, golden_outputs


def main() -> None:
    """Write every golden file and remove those no case produces any more."""
    outputs = golden_outputs()
    for stale in sorted(set(GOLDEN.glob("*.txt")) - set(outputs)):
        stale.unlink()
        print(f"removed {stale.name}")
    for path, text in sorted(outputs.items()):
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old != text:
            path.write_text(text, encoding="utf-8")
            print(f"{'wrote' if old is None else 'updated'} {path.name}")


if __name__ == "__main__":
    main()
