"""The ``langchain-refs`` command line: ``demo`` (``--agent`` for the agent), ``serve`` and ``check``.

Whatever goes wrong, the user reads one line on stderr, never a traceback:
exit status 2 when a command cannot run as asked (a `CommandError`, or an
unexpected error, shown with its type), 130 on Ctrl-C. ``check`` also exits
with 1 when it skipped some items. Set ``LANGCHAIN_REFS_DEBUG=1`` to get the
traceback of an unexpected error.

Example:
    >>> build_parser().parse_args(["demo", "--style", "markdown", "How are sources numbered?"]).style
    'markdown'
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import ipaddress
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from importlib import metadata
from typing import Any, Final, NoReturn

from typing_extensions import override

from langchain_refs.apps._content import content_text
from langchain_refs.apps._errors import CommandError, at_least_one, first_line, utf8_problem, utf8_text
from langchain_refs.apps._models import load_model
from langchain_refs.apps.check._command import add_check_command
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

    if args.agent:
        agents_extra_or_exit()
    model = load_model(args.model) if args.model else ExtractiveChatModel(delay=args.delay)
    try:
        if args.question is not None:
            question = args.question
        else:
            # A prompt for a person at a terminal; a question piped in is read as it is, with no prompt
            # before the answer.
            prompt = "Question: " if sys.stdin is not None and sys.stdin.isatty() else ""
            try:
                question = _typed_question(prompt)
            except EOFError:  # stdin empty or closed (`< /dev/null`, `<&-`, Ctrl-D): nothing was asked
                if prompt:
                    print(flush=True)  # end the prompt's line: the message that follows has a line of its own
                question = ""
        if not question.strip():
            msg = "no question asked: give one as an argument or type it at the prompt"
            raise CommandError(msg)
    except KeyboardInterrupt:
        print(flush=True)  # end the prompt's line before the message
        raise
    try:
        if args.agent:
            last = run_agent_demo(args, question.strip())
        else:
            # Message chunks, not a StrOutputParser: when Ctrl-C closes the stream,
            # a parser stage would first read the rest of the answer for its trace,
            # and the command would hang until the model ends.
            chain = build_demo_chain(style=STYLES[args.style](), model=model, k=args.k, as_text=False)
            last = ""
            for chunk in chain.stream({"question": question.strip()}):
                text = chunk if isinstance(chunk, str) else content_text(chunk.content)
                print(text, end="", flush=True)
                last = text or last
    except (KeyboardInterrupt, Exception):
        # The model failed or the reader pressed Ctrl-C mid-answer: the one-line message that follows
        # (on stderr, shown beside stdout) starts on a line of its own, not glued to the half answer.
        print(flush=True)
        raise
    if not last.endswith("\n"):
        print()  # the answer ends its last line (a list of sources ends its own)
    return 0


# The most of a piped question read (`yes | langchain-refs demo` must end): the demo's questions are short.
_PIPED_QUESTION: Final = 65_536


def _typed_question(prompt: str) -> str:
    """The line typed (or all the text piped in, its lines joined), or a `CommandError` naming a byte not UTF-8."""
    try:
        # Piped in (`demo < question.txt`): the whole question, though it runs over several lines.
        if sys.stdin is None:  # closed (`<&-`): nothing can be asked
            raise EOFError
        line = input(prompt) if prompt else " ".join(sys.stdin.read(_PIPED_QUESTION).split())
    except UnicodeDecodeError as error:  # stdin read strictly (PYTHONIOENCODING=utf-8:strict)
        byte = error.object[error.start]
        msg = f"the question on standard input is not UTF-8 text (byte 0x{byte:02x} at offset {error.start})"
        raise CommandError(msg) from None
    if utf8_problem(line) is not None:
        # Under the C or POSIX locale Python reads stdin with surrogateescape: the bytes that are not UTF-8 come
        # back as lone surrogates, which the answer could not be written with.
        try:
            utf8_text(line.encode("utf-8", "surrogateescape"))
        except (ValueError, UnicodeEncodeError) as error:
            msg = f"the question on standard input is not UTF-8 text ({error})"
            raise CommandError(msg) from None
    return line


def agents_extra_or_exit() -> None:
    """Raise a `CommandError` saying how to install the agents extra when it is missing."""
    try:
        import langchain.agents  # noqa: F401
        import langgraph  # noqa: F401
    except ImportError:
        msg = 'demo --agent needs the "agents" extra: in a clone of langchain-refs run pip install -e ".[agents]"'
        raise CommandError(msg) from None


def run_agent_demo(args: argparse.Namespace, question: str) -> str:
    """Stream the offline agent's answer: its tool call as one line, then the rewritten text (its last piece given)."""
    from langchain_core.messages import AIMessageChunk, ToolMessage

    from langchain_refs.apps.demo.agent import AgentDemoChatModel, build_demo_agent

    model = load_model(args.model) if args.model else AgentDemoChatModel(delay=args.delay)
    agent = build_demo_agent(style=STYLES[args.style](), model=model, k=args.k)
    inputs = {"messages": [{"role": "user", "content": question}]}
    # stream_mode="messages" is what chat apps read; the middleware rewrites it as it streams.
    stream = agent.stream(inputs, stream_mode="messages")

    def interrupted(signum: int, frame: Any) -> None:
        # The KeyboardInterrupt is raised inside LangGraph's stream, which waits for the model's
        # worker thread before letting it out: the offline model is stopped first, here, so that
        # Ctrl-C ends the command at once (a real model's call cannot be stopped: it is waited for).
        if isinstance(model, AgentDemoChatModel):
            model.stop()
        raise KeyboardInterrupt

    last = ""
    with _sigint_handled_by(interrupted):
        try:
            for chunk, _ in stream:
                if isinstance(chunk, ToolMessage):
                    found = len(chunk.artifact) if isinstance(chunk.artifact, list) else 0
                    print(f"[{chunk.name}: {found} documents]", flush=True)
                    last = "\n"
                elif isinstance(chunk, AIMessageChunk):
                    # .text, not .content: the rewritten chunks carry standard text blocks.
                    print(chunk.text, end="", flush=True)
                    last = chunk.text or last
        except KeyboardInterrupt:
            # Raised in this loop (not by the handler, whose wait is then over): closing the stream waits too.
            if isinstance(model, AgentDemoChatModel):
                model.stop()
            stream.close()
            raise
    return last


@contextlib.contextmanager
def _sigint_handled_by(handler: Callable[[int, Any], None]) -> Iterator[None]:
    """SIGINT handled by ``handler`` inside the block (where Python's own handler is in place), restored after."""
    previous = signal.getsignal(signal.SIGINT)
    # Only over Python's own handler, in the main thread: an ignored SIGINT (a background job) stays ignored.
    installed = previous is signal.default_int_handler and threading.current_thread() is threading.main_thread()
    if installed:
        signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        if installed:
            signal.signal(signal.SIGINT, previous)


def run_serve(args: argparse.Namespace) -> int:
    """Start the chat UI on localhost."""
    try:
        import uvicorn

        from langchain_refs.apps.chat_ui import create_app
    except ImportError:
        msg = 'the chat UI needs the "serve" extra: in a clone of langchain-refs run pip install -e ".[serve]"'
        raise CommandError(msg) from None
    if args.agent:
        try:
            agents_extra_or_exit()
        except CommandError:
            msg = 'serve --agent needs the "agents" extra: in a clone of langchain-refs run pip install -e ".[agents]"'
            raise CommandError(msg) from None
    if args.agent and args.verify:
        msg = "--verify checks the answers of the chain: it cannot be combined with --agent"
        raise CommandError(msg)
    verifier = None
    if args.verify:
        from langchain_refs.grounding import LexicalScorer

        verifier = LexicalScorer()
    model = load_model(args.model) if args.model else None
    listener = listening_socket(args.host, args.port)
    names = allowed_hosts(args.host, listener.getsockname()[0])
    app = create_app(model=model, agent=args.agent, verifier=verifier, check_model=model, allowed_hosts=names)
    mode = " (agent mode)" if args.agent else ""
    # A request still open at Ctrl-C (an answer streaming, a client that stopped sending) gets this long
    # to end, then it is cancelled: uvicorn would otherwise wait for it as long as it lasts.
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=_SHUTDOWN_GRACE)
    server = _announcing_server(uvicorn, config, f"langchain-refs chat UI{mode} on {address_url(listener)}")
    quiet = _QuietCancelledRequests(server)
    error_log = logging.getLogger("uvicorn.error")
    error_log.addFilter(quiet)
    try:
        server.run(sockets=[listener])
    finally:
        error_log.removeFilter(quiet)
    if server.interrupted:
        raise KeyboardInterrupt  # uvicorn ends quietly on Ctrl-C; the command still says so, with 130
    return 0


_SHUTDOWN_GRACE = 1  # seconds an open request is given to end after Ctrl-C


class _QuietCancelledRequests(logging.Filter):
    """After Ctrl-C, uvicorn's reports of the requests it cancelled are left out: they are the shutdown, not errors.

    uvicorn logs at error level that it cancels the open requests, and each
    cancelled request's traceback; the command says "interrupted" itself.
    """

    def __init__(self, server: Any) -> None:
        super().__init__()
        self.server = server

    @override
    def filter(self, record: logging.LogRecord) -> bool:
        if not self.server.interrupted:
            return True
        cancelled = record.exc_info is not None and isinstance(record.exc_info[1], asyncio.CancelledError)
        return not cancelled and "timeout graceful shutdown exceeded" not in record.getMessage()


def _announcing_server(uvicorn: Any, config: Any, announcement: str) -> Any:
    """The uvicorn server, printing ``announcement`` once it serves, and remembers a Ctrl-C in ``interrupted``."""

    class AnnouncingServer(uvicorn.Server):  # type: ignore[misc]
        interrupted = False

        def handle_exit(self, sig: int, frame: Any) -> None:
            if sig != signal.SIGINT:
                super().handle_exit(sig, frame)
                return
            # Ctrl-C: stop serving; the open requests get the grace time, then are cancelled. Not handed to
            # uvicorn, which would force an exit on a second Ctrl-C (cancelling the app's lifespan, whose
            # traceback it prints) and raise each Ctrl-C again once stopped (a KeyboardInterrupt inside
            # asyncio, with its traceback): `run_serve` says "interrupted" itself, once.
            self.interrupted = True
            self.should_exit = True

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets=sockets)
            if self.started and not self.should_exit:
                print(announcement, flush=True)

    return AnnouncingServer(config)


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening, or a `CommandError` saying in one line why not.

    Bound here rather than by uvicorn, which logs a traceback and exits with
    its own status when it cannot bind.

    Example:
        >>> listener = listening_socket("127.0.0.1", 0)
        >>> listener.getsockname()[1] > 0
        True
        >>> listener.close()
        >>> listening_socket("127.0.0.1", 99999)
        Traceback (most recent call last):
        ...
        langchain_refs.apps.CommandError: --port 99999: a port is a number from 0 to 65535
    """
    if not 0 <= port <= 65535:
        msg = f"--port {port}: a port is a number from 0 to 65535"
        raise CommandError(msg)
    try:
        family, kind, proto, _, where = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (OSError, UnicodeError) as error:
        msg = f"--host {host}: not a host name or address this machine can listen on ({first_line(error)})"
        raise CommandError(msg) from None
    listener = socket.socket(family, kind, proto)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
        listener.bind(where)
        listener.listen(2048)
    except OSError as error:
        listener.close()
        if error.errno == errno.EADDRINUSE:
            reason = "the port is in use (choose another with --port)"
        else:
            reason = f"{error.strerror or first_line(error)} (check --host and --port)"
        msg = f"cannot listen on {host}:{port}: {reason}"
        raise CommandError(msg) from None
    listener.set_inheritable(True)
    return listener


# The names of this machine's loopback, as a browser on it writes them in the Host header.
_LOOPBACK_NAMES: Final = ("localhost", "127.0.0.1", "[::1]")


def allowed_hosts(host: str, address: str) -> list[str] | None:
    """The ``Host`` names ``serve --host HOST`` answers, listening on ``address``; None (any) on every address.

    The loopback names, HOST as given and the address it listens on. Listening
    on every address (``0.0.0.0``, ``::``, however HOST spelt it) is opening
    the app to a network whose names this command does not know: any name is
    answered.

    Example:
        >>> allowed_hosts("127.0.0.1", "127.0.0.1"), allowed_hosts("::1", "::1")[-1], allowed_hosts("0", "0.0.0.0")
        (['localhost', '127.0.0.1', '[::1]'], '[::1]', None)
    """
    if ipaddress.ip_address(address.partition("%")[0]).is_unspecified:
        return None
    names = [host.lower(), address]
    return list(dict.fromkeys([*_LOOPBACK_NAMES, *(f"[{n}]" if ":" in n else n for n in names)]))


def address_url(listener: socket.socket) -> str:
    """The ``http://`` address of a listening socket (the real port when 0 was asked for).

    Example:
        >>> listener = listening_socket("::1" if socket.has_ipv6 else "127.0.0.1", 0)
        >>> address_url(listener).startswith(("http://[::1]:", "http://127.0.0.1:"))
        True
        >>> listener.close()
    """
    host, port = listener.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 60:  # also refuses nan and inf, which time.sleep cannot take
        msg = f"must be a number of seconds from 0 to 60, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _version() -> str:
    """The installed package's version ("unknown" in a checkout never installed).

    Read as ``langchain_refs.__version__`` reads it: the apps wing may not import the package root.
    """
    try:
        return metadata.version("langchain-refs")
    except metadata.PackageNotFoundError:
        return "unknown"


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        msg = f"a port is a number from 0 to 65535, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


class _OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line: what is wrong, and where the usage is."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``langchain-refs`` command.

    Example:
        >>> build_parser().parse_args(["serve"]).port
        8000
    """
    parser = _OneLineParser(prog="langchain-refs", description="Streaming citations for LangChain answers.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    # Not required here: `main` says what is missing or unknown itself (argparse would report a
    # missing command before an unknown option, and an unknown option with the top-level usage).
    commands = parser.add_subparsers(dest="command", metavar="{demo,serve,check}")

    demo = commands.add_parser(
        "demo",
        help="answer a question from the built-in corpus, offline",
        description=(
            "Answer a question from the built-in corpus (this project's own documentation), streaming the answer\n"
            "with its citations numbered by source and the list of sources after it. Offline unless --model\n"
            "names a real chat model.\n\n"
            "examples:\n"
            '  langchain-refs demo "How are sources numbered?"\n'
            '  echo "How much text is held back?" | langchain-refs demo --style markdown\n'
            '  langchain-refs demo --agent "How do I use it in an agent?"'
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument("question", nargs="?", help="the question (asked at a prompt when left out)")
    demo.add_argument("--style", choices=sorted(STYLES), default="text", help="how citations are written")
    demo.add_argument(
        "--model",
        help='a real chat model as provider:name; needs pip install -e ".[models]" in a clone, '
        "the provider package (e.g. langchain-openai) and its key",
    )
    demo.add_argument(
        "--agent",
        action="store_true",
        help='run create_agent with the corpus behind a retriever tool (needs pip install -e ".[agents]")',
    )
    demo.add_argument("--k", type=at_least_one, default=4, help="documents retrieved per question")
    demo.add_argument("--delay", type=_seconds, default=0.02, help="seconds between tokens of the offline model")
    demo.set_defaults(run=run_demo)

    serve = commands.add_parser(
        "serve",
        help="start the chat UI on localhost",
        description=(
            "Start the chat UI and the checking page on this machine (http://127.0.0.1:8000 by default): each\n"
            "answer streams with its citations linked to the passage they stand for.\n\n"
            "examples:\n"
            "  langchain-refs serve\n"
            "  langchain-refs serve --port 0 --verify"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine only)"
    )
    serve.add_argument(
        "--port", type=_port, default=8000, help="the port to listen on (default 8000; 0: any free port, announced)"
    )
    serve.add_argument("--model", help="a real chat model as provider:name")
    serve.add_argument(
        "--agent",
        action="store_true",
        help='answer with the offline agent demo: its search step shows before the answer (needs ".[agents]")',
    )
    serve.add_argument(
        "--verify",
        action="store_true",
        help="check each citation against the cited document (offline lexical scorer) and mark unsupported ones",
    )
    serve.set_defaults(run=run_serve)

    add_check_command(commands)
    for command in commands.choices.values():
        # Each command's own usage goes with its own errors (`main`).
        command.set_defaults(command_parser=command)
    return parser


def parse_command_line(argv: Sequence[str] | None) -> argparse.Namespace:
    """``argv`` read by `build_parser`'s parser; a usage error (exit 2) is one line naming what is wrong.

    An unknown option is named with the command it was given to (and where
    that command's usage is); no command at all is said so.

    Example:
        >>> parse_command_line(["demo", "Why?"]).question
        'Why?'
    """
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    command_parser: argparse.ArgumentParser = getattr(args, "command_parser", parser)
    if unknown:
        command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command is None:
        parser.error("choose a command: demo, serve or check")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Example:
        >>> main(["demo", "--delay", "0", "--style", "text", "How do I run the tests?"])  # doctest: +ELLIPSIS
        The test suite runs offline with python -m pytest after installing the test extra[1]...
        0
    """
    if sys.stderr is None:  # closed (`2>&-`): messages go nowhere, never into stdout (Python's default for None)
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - open for the process's life
    args = parse_command_line(argv)
    try:
        result: int = args.run(args)
    except BrokenPipeError:  # the reader left (e.g. `| head`): not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("langchain-refs: interrupted", file=sys.stderr)
        return 130
    except CommandError as error:
        print(f"langchain-refs: {error}", file=sys.stderr)
        return 2
    except Exception as error:
        if os.environ.get("LANGCHAIN_REFS_DEBUG"):
            raise
        # A model's network or key error, or a bug: one line, and how to see more.
        detail = f"{type(error).__name__}: {first_line(error)}"
        print(f"langchain-refs: {detail} (LANGCHAIN_REFS_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 2
    return result
