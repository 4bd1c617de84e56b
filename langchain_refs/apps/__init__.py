"""The apps wing: the command line, the offline demo, the chat UI, and checking claims (``apps/check/``).

Apps stand on the streaming and grounding wings and are imported by nothing
inside the package but ``langchain_refs.__main__``.

Example:
    >>> from langchain_refs.apps import build_parser
    >>> build_parser().parse_args(["serve"]).port
    8000
"""

from langchain_refs.apps._cli import STYLES, build_parser, main
from langchain_refs.apps._errors import CommandError
from langchain_refs.apps._models import load_model

__all__ = ["STYLES", "CommandError", "build_parser", "load_model", "main"]
