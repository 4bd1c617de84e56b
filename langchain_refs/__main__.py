"""``python -m langchain_refs``: the ``langchain-refs`` command line."""

from langchain_refs.apps import main

if __name__ == "__main__":
    raise SystemExit(main())
