"""The offline demo: corpus, retriever, extractive model, command line, chat UI."""

from __future__ import annotations

import io
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document

from langchain_refs import AnswerReferences, HTMLReferenceStyle, TextReferenceStyle
from langchain_refs.apps import build_parser, main
from langchain_refs.apps._cli import parse_command_line
from langchain_refs.apps.demo import (
    NOT_FOUND,
    CorpusRetriever,
    ExtractiveChatModel,
    build_demo_chain,
    load_corpus,
)

# The sample questions: the README's and the docs' among them, and one for each thing the library
# does (styles, agents, checking, Ray, chat UIs and their protocols); each with the page that answers it.
_DOCS = "https://langchain-refs.dev/docs/"
QUESTIONS = {
    "Which URLs become links?": _DOCS + "security",
    "How do I run the tests?": _DOCS + "tests",
    "What does the empty style do?": _DOCS + "styles#empty",
    "How much text is held back?": _DOCS + "streaming",
    "Can I migrate from langchain-references?": _DOCS + "migration",
    "How are sources numbered?": _DOCS + "numbering",
    "How do I install it?": _DOCS + "install",
    "Which output styles exist?": _DOCS + "styles",
    "How do I use it in an agent?": _DOCS + "agents",
    "How do tools hand their documents to the agent?": _DOCS + "agents#tools",
    "What does an agent stream?": _DOCS + "agents#streaming",
    "What does the agent demo do?": _DOCS + "demo#agent",
    "How do I check claims in a file?": _DOCS + "checking",
    "How are the claim labels aggregated?": _DOCS + "checking#verdicts",
    "What can the offline checker not do?": _DOCS + "checking#offline",
    "How do I check many files on Ray?": _DOCS + "ray",
    "What happens to a bad row on Ray?": _DOCS + "ray#shards",
    "How is citation support checked?": _DOCS + "grounding",
    "How do I add references to an answer without markers?": _DOCS + "grounding#predicted",
    "Which protocols does the chat UI speak?": _DOCS + "chat-uis",
    "What does the checking page show?": _DOCS + "chat-uis#check",
}


def test_corpus_ships_with_the_package() -> None:
    """30 to 60 documents, each with a title, a unique https URL and text."""
    corpus = load_corpus()
    assert 30 <= len(corpus) <= 60
    urls = [d.metadata["source"] for d in corpus]
    assert len(set(urls)) == len(urls)
    assert all(u.startswith("https://") for u in urls)
    assert all(d.metadata["title"] and len(d.page_content) > 40 for d in corpus)


def test_retriever_ranks_the_relevant_section_first() -> None:
    """BM25 finds the section that answers each question."""
    retriever = CorpusRetriever(documents=list(load_corpus()), k=4)
    for question, url in QUESTIONS.items():
        assert url in [d.metadata["source"] for d in retriever.invoke(question)], question


@pytest.mark.parametrize(("question", "url"), QUESTIONS.items())
def test_answers_cite_the_right_source(question: str, url: str) -> None:
    """Each question gets its own answer, whose first citation is the right section."""
    message = build_demo_chain(as_text=False).invoke({"question": question})
    refs = AnswerReferences.from_dict(message.response_metadata["references"])
    assert refs.references[0].source == url
    assert message.content.startswith(refs.citations[0].text)


def test_different_questions_different_answers() -> None:
    """The model is not canned: every question gets a different answer."""
    chain = build_demo_chain()
    answers = {chain.invoke({"question": q}) for q in QUESTIONS}
    assert len(answers) == len(QUESTIONS)


def test_unanswerable_question_says_so_without_citations() -> None:
    """A question the corpus cannot answer gets an honest not-found and no sources."""
    message = build_demo_chain(as_text=False).invoke({"question": "What is the capital of Peru?"})
    assert message.content == NOT_FOUND
    assert message.response_metadata["references"]["references"] == []


def test_model_streams_markers_cut_apart() -> None:
    """The extractive model streams tokens, so markers arrive in pieces."""
    prompt = "<document id=1>\nParis is in France. Rome is old.\n</document>\nQuestion: Where is Paris?"
    chunks = [c.content for c in ExtractiveChatModel().stream(prompt)]
    assert "".join(chunks) == "Paris is in France[1](id=1)."
    assert "[1](id=1)" not in chunks
    assert len(chunks) > 8


def test_model_is_a_chat_model_for_any_documents() -> None:
    """The model answers from whatever documents its prompt holds."""
    docs = [
        Document("Bananas are yellow. Apples can be red.", metadata={"source": "fruit.txt"}),
        Document("The sky is blue on clear days.", metadata={"source": "sky.txt"}),
    ]
    chain = build_demo_chain(documents=docs, style=TextReferenceStyle())
    assert chain.invoke({"question": "What colour is the sky?"}) == (
        "The sky is blue on clear days[1].\n\n- [1] sky.txt\n"
    )


def test_cli_streams_a_cited_answer(capsys: pytest.CaptureFixture[str]) -> None:
    """`langchain-refs demo QUESTION` prints the answer and the sources."""
    assert main(["demo", "--delay", "0", "Which URLs become links?"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Only http, https, mailto and relative URLs become links[1].")
    assert "- [1] Safe links (https://langchain-refs.dev/docs/security)" in out


@pytest.mark.parametrize("style", ["markdown", "html", "empty"])
def test_cli_styles(style: str, capsys: pytest.CaptureFixture[str]) -> None:
    """--style picks the style."""
    main(["demo", "--delay", "0", "--style", style, "Which URLs become links?"])
    out = capsys.readouterr().out
    marks = {"markdown": "<sup>[[1](https://", "html": '<sup class="citation">', "empty": "links."}
    assert marks[style] in out


def test_cli_asks_for_the_question(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Without an argument the question is read at a prompt."""
    monkeypatch.setattr("builtins.input", lambda _: "How do I run the tests?")
    monkeypatch.setattr("sys.stdin", Terminal())
    main(["demo", "--delay", "0"])
    assert "python -m pytest" in capsys.readouterr().out


def test_cli_model_spec_is_checked(capsys: pytest.CaptureFixture[str]) -> None:
    """--model must be provider:name: one line, exit 2."""
    assert main(["demo", "--model", "gpt", "hi"]) == 2
    assert one_line(capsys.readouterr().err) == (
        "langchain-refs: --model must look like provider:name (e.g. openai:gpt-4o-mini), got 'gpt'"
    )


def one_line(err: str) -> str:
    """The only line written on stderr (fails when there are more, or a traceback)."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_cli_closed_stdin_means_no_question(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With stdin closed (input() raises EOFError) the demo says no question was asked: one line, exit 2."""

    def closed(_: str) -> str:
        raise EOFError

    monkeypatch.setattr("builtins.input", closed)
    monkeypatch.setattr("sys.stdin", Terminal())
    assert main(["demo", "--delay", "0"]) == 2
    captured = capsys.readouterr()
    assert one_line(captured.err).startswith("langchain-refs: no question asked")
    assert captured.out == "\n"  # the prompt's line (at a terminal) ended before the message


class Terminal(io.StringIO):
    """A stdin that is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("stdin", "prompts"),
    [(Terminal(), ["Question: "]), (io.StringIO("\nHow do I run\nthe tests?\n"), [])],
    ids=["terminal", "piped over lines"],
)
def test_cli_prompts_only_at_a_terminal(
    stdin: io.StringIO, prompts: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """At a terminal the question is asked with a prompt; piped in, it is read whole (all its lines), no prompt."""
    asked: list[str] = []

    def read(shown: str) -> str:
        asked.append(shown)
        return "How do I run the tests?"

    monkeypatch.setattr("builtins.input", read)
    monkeypatch.setattr("sys.stdin", stdin)
    assert main(["demo", "--delay", "0"]) == 0
    assert asked == prompts
    assert "python -m pytest" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--bogus"], "langchain-refs: error: unrecognized arguments: --bogus (see langchain-refs --help)"),
        ([], "langchain-refs: error: choose a command: demo, serve or check (see langchain-refs --help)"),
        (
            ["demo", "--bogus", "Why?"],
            "langchain-refs demo: error: unrecognized arguments: --bogus (see langchain-refs demo --help)",
        ),
        (
            ["serve", "--bogus"],
            "langchain-refs serve: error: unrecognized arguments: --bogus (see langchain-refs serve --help)",
        ),
        (
            ["check", "extract", "--input", "a", "--output", "b", "--bogus"],
            "langchain-refs check: error: unrecognized arguments: --bogus (see langchain-refs check --help)",
        ),
    ],
)
def test_cli_usage_errors_are_one_line_naming_what_is_wrong(
    argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A usage error is one line on stderr (exit 2): what is wrong, in which command, and where its usage is."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert capsys.readouterr().err == line + "\n"


@pytest.mark.parametrize(
    ("argv", "start"),
    [
        (["demo", "--style", "foo", "Why?"], "langchain-refs demo: error: argument --style: invalid choice: 'foo'"),
        (
            ["serve", "--port", "abc"],
            "langchain-refs serve: error: argument --port: a port is a number from 0 to 65535",
        ),
        (
            ["serve", "--port", "70000"],
            "langchain-refs serve: error: argument --port: a port is a number from 0 to 65535",
        ),
        (
            ["demo", "--delay", "60.5", "Why?"],
            "langchain-refs demo: error: argument --delay: must be a number of seconds",
        ),
    ],
)
def test_cli_bad_values_are_one_line_too(argv: list[str], start: str, capsys: pytest.CaptureFixture[str]) -> None:
    """argparse's own checks (a choice, a type) read as one line too; their wording is argparse's own."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(start)
    assert err.endswith(f"(see langchain-refs {argv[0]} --help)\n")


def test_cli_version_and_the_largest_delay(capsys: pytest.CaptureFixture[str]) -> None:
    """``--version`` prints the installed version; ``--delay 60``, the bound its message names, is taken."""
    from importlib import metadata

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"langchain-refs {metadata.version('langchain-refs')}\n"
    assert build_parser().parse_args(["demo", "--delay", "60", "Why?"]).delay == 60


@pytest.mark.parametrize("command", ["demo", "serve"])
def test_cli_command_help_says_what_it_does_with_examples_that_parse(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``demo --help`` and ``serve --help`` describe the command, and each example they show is a valid command line."""
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    assert stop.value.code == 0
    shown = capsys.readouterr().out
    description = shown.split("\n\n")[1]
    assert description.split()[0] in {"Answer", "Start"}, description
    examples = [
        line.split("|")[-1].split()
        for line in shown.split("examples:\n", 1)[1].split("\n\n")[0].splitlines()
        if line.strip()
    ]
    assert examples
    for example in examples:
        assert example[:2] == ["langchain-refs", command]
        # Quoted questions are one argument: shlex reads the line as a shell would.
        argv = shlex.split(" ".join(example))[1:]
        assert parse_command_line(argv).command == command
    # Each question an example asks is one the offline demo is tested to answer from the right page.
    asked = [
        word for line in shown.splitlines() if "langchain-refs" in line for word in shlex.split(line) if "?" in word
    ]
    assert command == "serve" or asked
    assert set(asked) <= set(QUESTIONS)


@pytest.mark.parametrize("typed", ["", "   ", "\t \n"])
def test_cli_blank_question_typed(
    typed: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A blank line at the prompt is no question: one line, exit 2, no answer."""
    monkeypatch.setattr("builtins.input", lambda _: typed)
    monkeypatch.setattr("sys.stdin", Terminal())
    assert main(["demo", "--delay", "0"]) == 2
    captured = capsys.readouterr()
    assert one_line(captured.err).startswith("langchain-refs: no question asked")
    assert NOT_FOUND not in captured.out


@pytest.mark.parametrize(
    "encoding",
    ["utf-8:strict", "utf-8:surrogateescape"],  # as a UTF-8 locale reads stdin, and as the C or POSIX locale does
)
def test_cli_question_that_is_not_utf8(encoding: str) -> None:
    """A question piped in as Latin-1 bytes: one line naming stdin and the byte, exit 2, nothing answered."""
    command = [sys.executable, "-m", "langchain_refs", "demo", "--delay", "0"]
    environment = {**os.environ, "PYTHONIOENCODING": encoding}
    done = subprocess.run(command, input=b"\xe9t\xe9 ?\n", capture_output=True, env=environment, timeout=120)
    assert done.returncode == 2
    assert done.stdout == b""
    assert one_line(done.stderr.decode()) == (
        "langchain-refs: the question on standard input is not UTF-8 text (byte 0xe9 at offset 0)"
    )


def test_cli_blank_question_argument(capsys: pytest.CaptureFixture[str]) -> None:
    """A whitespace question given as an argument is no question either, not answered."""
    assert main(["demo", "--delay", "0", "   "]) == 2
    captured = capsys.readouterr()
    assert one_line(captured.err).startswith("langchain-refs: no question asked")
    assert captured.out == ""


def test_cli_ctrl_c_at_the_prompt(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C at the prompt: one line "interrupted", exit 130, no traceback."""

    def interrupted(_: str) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr("builtins.input", interrupted)
    monkeypatch.setattr("sys.stdin", Terminal())
    assert main(["demo", "--delay", "0"]) == 130
    assert one_line(capsys.readouterr().err) == "langchain-refs: interrupted"


def test_cli_ctrl_c_while_streaming(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C mid-answer: the answer's line is ended, one line "interrupted", exit 130."""
    from langchain_core.runnables import RunnableGenerator

    from langchain_refs.apps import demo

    def answer(_: Any) -> Any:
        yield "Half an ans"
        raise KeyboardInterrupt

    monkeypatch.setattr(demo, "build_demo_chain", lambda **_: RunnableGenerator(answer))
    assert main(["demo", "--delay", "0", "How are sources numbered?"]) == 130
    captured = capsys.readouterr()
    assert captured.out == "Half an ans\n"
    assert one_line(captured.err) == "langchain-refs: interrupted"


def test_cli_model_failing_mid_answer_ends_the_answers_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The model fails mid-answer: the half answer's line is ended, so the error line (stderr) starts its own."""
    from langchain_core.runnables import RunnableGenerator

    from langchain_refs.apps import demo

    def answer(_: Any) -> Any:
        yield "Half an ans"
        msg = "the connection to the model was reset"
        raise ConnectionError(msg)

    monkeypatch.setattr(demo, "build_demo_chain", lambda **_: RunnableGenerator(answer))
    assert main(["demo", "--delay", "0", "How are sources numbered?"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "Half an ans\n"
    assert one_line(captured.err).startswith("langchain-refs: ConnectionError: the connection to the model was reset")


def test_cli_ctrl_c_stops_the_model(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C while a token is printed stops the model: the rest of the answer is not streamed first."""
    from langchain_refs.apps import _cli

    streamed: list[str] = []
    real_stream = ExtractiveChatModel._stream

    def counted(self: ExtractiveChatModel, *args: Any, **kwargs: Any) -> Any:
        for chunk in real_stream(self, *args, **kwargs):
            streamed.append(chunk.text)
            yield chunk

    printed: list[str] = []

    def interrupted_print(*values: Any, **options: Any) -> None:
        if options.get("end") == "" and printed:
            raise KeyboardInterrupt  # Ctrl-C lands while the second token is printed
        printed.extend(map(str, values))
        print(*values, **options)

    monkeypatch.setattr(ExtractiveChatModel, "_stream", counted)
    monkeypatch.setattr(_cli, "print", interrupted_print, raising=False)
    assert main(["demo", "--delay", "0", "How are sources numbered?"]) == 130
    assert one_line(capsys.readouterr().err) == "langchain-refs: interrupted"
    assert len(streamed) < 10  # the full answer is over 100 tokens


def fake_langchain(monkeypatch: pytest.MonkeyPatch, error: BaseException | None) -> None:
    """Stand in for the models extra: an init_chat_model that raises ``error`` (or is missing when None)."""
    import sys
    import types

    if error is None:
        monkeypatch.setitem(sys.modules, "langchain", None)
        monkeypatch.setitem(sys.modules, "langchain.chat_models", None)
        return

    def init_chat_model(model: str, *, model_provider: str | None = None) -> Any:
        raise error

    chat_models = types.ModuleType("langchain.chat_models")
    chat_models.init_chat_model = init_chat_model  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "langchain", types.ModuleType("langchain"))
    monkeypatch.setitem(sys.modules, "langchain.chat_models", chat_models)


def installed(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make exactly these provider packages look installed to importlib.util.find_spec."""
    import importlib.machinery
    import importlib.util

    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        if name.startswith("langchain_") and not name.startswith("langchain_refs"):
            return importlib.machinery.ModuleSpec(name, None) if name in modules else None
        return real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_cli_models_extra_missing_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without LangChain the hint works from a clone: pip install -e ".[models]" plus the provider's package."""
    fake_langchain(monkeypatch, None)
    assert main(["demo", "--model", "openai:gpt-4o-mini", "hi"]) == 2
    line = one_line(capsys.readouterr().err)
    assert 'pip install -e ".[models]" langchain-openai' in line
    assert "langchain-refs[models]" not in line


@pytest.mark.parametrize(
    "error",
    [
        # init_chat_model falling back to langchain-community, as seen with --model ollama:llama3:
        AttributeError("module 'langchain_community.chat_models' has no attribute 'ChatOllama'"),
        ImportError("Initializing ChatOllama requires the langchain-ollama package.\nPlease install it"),
    ],
)
def test_cli_missing_provider_package_is_named(
    error: BaseException, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--model ollama:llama3 without langchain-ollama says to install langchain-ollama: one line, exit 2."""
    fake_langchain(monkeypatch, error)
    installed(monkeypatch)
    assert main(["demo", "--model", "ollama:llama3", "hi"]) == 2
    assert one_line(capsys.readouterr().err) == (
        "langchain-refs: --model ollama:llama3: the 'ollama' provider needs its package: pip install langchain-ollama"
    )


def test_cli_other_model_errors_show_their_first_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unknown provider or a missing key is the error's first line, not a traceback."""
    fake_langchain(monkeypatch, ValueError("Unable to infer model provider for model='nosuch:x'.\n\nSupported: a, b"))
    assert main(["demo", "--model", "nosuch:x", "hi"]) == 2
    assert one_line(capsys.readouterr().err) == (
        "langchain-refs: --model nosuch:x: could not load the model: "
        "Unable to infer model provider for model='nosuch:x'."
    )
    fake_langchain(monkeypatch, RuntimeError("The api_key client option must be set"))
    installed(monkeypatch, "langchain_openai")
    assert main(["demo", "--model", "openai:gpt-4o-mini", "hi"]) == 2
    assert one_line(capsys.readouterr().err).endswith("could not load the model: The api_key client option must be set")


def test_cli_unknown_provider_is_named_as_such(capsys: pytest.CaptureFixture[str]) -> None:
    """LangChain's own init_chat_model, a provider it does not know: said so, not "specify 'model_provider'"."""
    pytest.importorskip("langchain.chat_models", reason="the models extra (langchain) is not installed")
    assert main(["demo", "--model", "nosuch:x", "hi"]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith("langchain-refs: --model nosuch:x: could not load the model: ")
    assert "nosuch" in line.removeprefix("langchain-refs: --model nosuch:x: could not load the model: ")
    assert "model_provider" not in line


def test_cli_model_validation_error_shows_its_reason(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model class refusing its settings (pydantic, e.g. no API key) is named by its first error, not a count."""
    import pydantic

    class ChatFakeGemini(pydantic.BaseModel):
        model: str

        @pydantic.model_validator(mode="after")
        def needs_a_key(self) -> ChatFakeGemini:
            msg = "API key required for Gemini Developer API. Provide api_key parameter or set GOOGLE_API_KEY."
            raise ValueError(msg)

    class ChatFakeNamed(pydantic.BaseModel):
        model: str

    for model_class, reason in [
        (
            lambda: ChatFakeGemini(model="gemini-2.5-flash"),
            "API key required for Gemini Developer API. Provide api_key parameter or set GOOGLE_API_KEY.",
        ),
        (ChatFakeNamed, "model: Field required"),
    ]:
        try:
            model_class()
        except pydantic.ValidationError as error:  # what init_chat_model lets out of the model class
            fake_langchain(monkeypatch, error)
        installed(monkeypatch, "langchain_google_genai")
        assert main(["demo", "--model", "google_genai:gemini-2.5-flash", "hi"]) == 2
        assert one_line(capsys.readouterr().err) == (
            f"langchain-refs: --model google_genai:gemini-2.5-flash: could not load the model: {reason}"
        )


@pytest.mark.parametrize("option", [["--k", "0"], ["--k", "-2"], ["--delay", "nan"], ["--delay", "-1"]])
def test_cli_numbers_are_checked(option: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """--k must be at least 1 and --delay a sane number of seconds (argparse's usage error, exit 2)."""
    with pytest.raises(SystemExit) as stop:
        main(["demo", *option, "hi"])
    assert stop.value.code == 2
    assert "must be" in capsys.readouterr().err


HOSTILE = [
    Document(
        "The answer is <script>alert(1)</script> in bold.",
        metadata={"source": "javascript:alert(2)", "title": '<img src=x onerror="alert(3)">'},
    ),
    Document("The answer is also here.", metadata={"source": "https://ok.org/a?b=<c>", "title": "Fine & dandy"}),
]


def test_html_style_in_the_terminal_is_escaped() -> None:
    """The HTML style keeps its escaping promise in the demo pipeline too."""
    answer = build_demo_chain(documents=HOSTILE, style=HTMLReferenceStyle()).invoke({"question": "What is the answer?"})
    assert "javascript:" not in answer
    assert "&lt;img" in answer


# -- the agent demo (demo --agent) ----------------------------------------------


def needs_agents() -> None:
    pytest.importorskip("langchain.agents", reason="the agent demo needs the agents extra: pip install -e '.[agents]'")


def test_cli_agent_streams_the_tool_call_then_a_cited_answer(capsys: pytest.CaptureFixture[str]) -> None:
    """`demo --agent QUESTION`: one line for the search, then the rewritten answer and its sources."""
    needs_agents()
    assert main(["demo", "--agent", "--delay", "0", "How do I run the tests?"]) == 0
    assert capsys.readouterr().out == (
        "[search_docs: 4 documents]\n"
        "The test suite runs offline with python -m pytest after installing the test extra[1].\n\n"
        "- [1] Running the tests (https://langchain-refs.dev/docs/tests)\n"
    )


def test_cli_agent_markdown_style(capsys: pytest.CaptureFixture[str]) -> None:
    """--style applies to the agent's answer too; no raw marker reaches the terminal."""
    needs_agents()
    assert main(["demo", "--agent", "--delay", "0", "--style", "markdown", "Which URLs become links?"]) == 0
    out = capsys.readouterr().out
    assert "<sup>[[1](https://langchain-refs.dev/docs/security)]</sup>" in out
    assert "(id=" not in out


@pytest.mark.parametrize(("question", "url"), QUESTIONS.items())
def test_agent_answers_cite_the_right_source(question: str, url: str) -> None:
    """The offline agent searches, then cites the section that answers each question first."""
    needs_agents()
    from langchain_refs.apps.demo.agent import build_demo_agent

    state = build_demo_agent().invoke({"messages": [{"role": "user", "content": question}]})
    answer = state["messages"][-1]
    assert state["messages"][1].tool_calls[0]["args"] == {"query": question}
    assert answer.response_metadata["references"]["references"][0]["source"] == url
    assert state["references"][0]["references"][0]["source"] == url


def test_agent_demo_model_reads_the_documents_the_middleware_shows() -> None:
    """The demo model answers from <document id=k> blocks with thread ids, citing those ids."""
    from langchain_core.messages import HumanMessage, ToolMessage

    from langchain_refs.apps.demo.agent import AgentDemoChatModel

    model = AgentDemoChatModel()
    shown = ToolMessage(
        "<document id=2>\nBananas are yellow. Apples can be red.\n</document>\n"
        "<document id=3>\nThe sky is blue on clear days.\n</document>",
        tool_call_id="search-1",
    )
    reply = model.invoke([HumanMessage("What colour is the sky?"), shown])
    assert reply.content == "The sky is blue on clear days[1](id=3)."
    assert model.invoke([HumanMessage("What colour is the sky?")]).tool_calls[0]["name"] == "search_docs"


def test_cli_agent_without_the_extra_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without langchain/langgraph, demo --agent says how to install the agents extra: one line, exit 2."""
    import sys

    monkeypatch.setitem(sys.modules, "langchain.agents", None)
    assert main(["demo", "--agent", "How do I run the tests?"]) == 2
    assert one_line(capsys.readouterr().err) == (
        'langchain-refs: demo --agent needs the "agents" extra: '
        'in a clone of langchain-refs run pip install -e ".[agents]"'
    )


def test_cli_agent_ctrl_c_stops_the_model(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C during the agent's answer stops the offline model: exit 130 without streaming the rest."""
    needs_agents()
    from langchain_refs.apps import _cli
    from langchain_refs.apps.demo.agent import AgentDemoChatModel

    streamed: list[str] = []
    real_stream = AgentDemoChatModel._stream

    def counted(self: AgentDemoChatModel, *args: Any, **kwargs: Any) -> Any:
        for chunk in real_stream(self, *args, **kwargs):
            streamed.append(chunk.text)
            yield chunk

    printed: list[str] = []

    def interrupted_print(*values: Any, **options: Any) -> None:
        if options.get("end") == "" and len(printed) > 2:
            raise KeyboardInterrupt  # Ctrl-C lands while the answer streams
        printed.extend(map(str, values))
        print(*values, **options)

    monkeypatch.setattr(AgentDemoChatModel, "_stream", counted)
    monkeypatch.setattr(_cli, "print", interrupted_print, raising=False)
    assert main(["demo", "--agent", "--delay", "0.01", "How are sources numbered?"]) == 130
    assert one_line(capsys.readouterr().err) == "langchain-refs: interrupted"
    assert len(streamed) < 20  # the full answer is over 100 tokens


def test_cli_with_stdin_closed_says_no_question_was_asked(tmp_path: Path) -> None:
    """`demo <&-` (Python's sys.stdin is None): the usual one line, exit 2, not an unexpected error."""
    command = [sys.executable, "-m", "langchain_refs", "demo", "--delay", "0"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=120, cwd=tmp_path, preexec_fn=lambda: os.close(0)
    )
    assert done.returncode == 2
    assert one_line(done.stderr).startswith("langchain-refs: no question asked")
