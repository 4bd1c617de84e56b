"""The ``langchain-refs`` command line: ``demo``, ``serve`` and ``check``.

Example:
    >>> build_parser().parse_args(["demo", "--style", "markdown", "How are sources numbered?"]).style
    'markdown'
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from langchain_refs.apps._check_cli import add_check_command
from langchain_refs.apps._models import load_model
from langchain_refs.streaming import (
    EmptyReferenceStyle,
    HTMLReferenceStyle,
    MarkdownReferenceStyle,
    ReferenceStyle,
    TextReferenceStyle,
)

STYLES: dict[str, type[ReferenceStyle]] = {
    "text": TextReferenceStyle,
    "markdown": MarkdownReferenceStyle,
    "html": HTMLReferenceStyle,
    "empty": EmptyReferenceStyle,
}


def run_demo(args: argparse.Namespace) -> int:
    """Stream a cited answer to the terminal."""
    from langchain_refs.apps.demo import ExtractiveChatModel, build_demo_chain

    question = args.question or input("Question: ").strip()
    if not question:
        print("no question asked", file=sys.stderr)
        return 2
    model = load_model(args.model) if args.model else ExtractiveChatModel(delay=args.delay)
    chain = build_demo_chain(style=STYLES[args.style](), model=model, k=args.k)
    for token in chain.stream({"question": question}):
        print(token, end="", flush=True)
    print()
    return 0


def run_serve(args: argparse.Namespace) -> int:
    """Start the chat UI on localhost."""
    try:
        import uvicorn

        from langchain_refs.apps.chat_ui import create_app
    except ImportError:
        print('the chat UI needs the "serve" extra: pip install "langchain-refs[serve]"', file=sys.stderr)
        return 2
    model = load_model(args.model) if args.model else None
    print(f"langchain-refs chat UI on http://{args.host}:{args.port}", flush=True)
    uvicorn.run(create_app(model=model), host=args.host, port=args.port, log_level="warning")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``langchain-refs`` command.

    Example:
        >>> build_parser().parse_args(["serve"]).port
        8000
    """
    parser = argparse.ArgumentParser(prog="langchain-refs", description="Streaming citations for LangChain answers.")
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="answer a question from the built-in corpus, offline")
    demo.add_argument("question", nargs="?", help="the question (asked at a prompt when left out)")
    demo.add_argument("--style", choices=sorted(STYLES), default="text", help="how citations are written")
    demo.add_argument("--model", help="a real chat model as provider:name (needs the models extra and a key)")
    demo.add_argument("--k", type=int, default=4, help="documents retrieved per question")
    demo.add_argument("--delay", type=float, default=0.02, help="seconds between tokens of the offline model")
    demo.set_defaults(run=run_demo)

    serve = commands.add_parser("serve", help="start the chat UI on localhost")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--model", help="a real chat model as provider:name")
    serve.set_defaults(run=run_serve)

    add_check_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Example:
        >>> main(["demo", "--delay", "0", "--style", "text", "How do I run the tests?"])  # doctest: +ELLIPSIS
        The test suite runs offline with python -m pytest after installing the test extra[1]...
        0
    """
    args = build_parser().parse_args(argv)
    try:
        result: int = args.run(args)
    except BrokenPipeError:  # the reader left (e.g. `| head`): not an error
        sys.stderr.close()
        return 0
    return result
