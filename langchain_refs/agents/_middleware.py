"""`ReferencesMiddleware`: citations for ``langchain.agents.create_agent``.

Every model call of the agent goes through ``wrap_model_call``, which
changes only what this call sends and how its answer streams (the state keeps
what the tools and the model returned):

1. The thread's documents are collected from the tools' results
   (`ThreadDocuments`: ``ToolMessage.artifact``), each with an id stable for
   the whole thread: the ids live in the agent state
   (``reference_documents``, checkpointed, private to the graph), so they
   hold after the tool messages are summarized away, and a citation of an
   earlier id still finds its source and its text.
2. The model is shown each tool result as the middleware stack left it
   (another middleware may have redacted it) with ``<document id=k>`` tags
   around each document's part (`show_tool_result`), the citation
   instruction (`FORMAT_REFERENCES`) in the system prompt unless the prompt
   already asks for ``(id=...)`` markers, and its own earlier answers
   (``history``).
3. The model is wrapped in a `ReferencesChatModel`, so the answer streams
   rewritten to every reader: ``invoke``, ``stream(stream_mode="messages")``,
   ``astream``, ``astream_events`` and ``stream_events(version="v3")``.

``after_model`` adds each answer's references to the agent state
(``references``) and is the leak guard: an answer that did not come through
the wrapper (a middleware listed after this one replaced the model) but
holds markers is rewritten in the state, with a `CitationLeakWarning`, since
its raw tokens have already streamed.

An answer another middleware edits after it was rewritten (PII redaction of
the output) keeps the edit: ``after_model`` (the edit came first) or
``after_agent`` (it came after) moves the citations' offsets onto the edited
text and drops the model's own copy of its text, and the next call shows the
model its answer as edited (`realigned`).

Put it last in ``middleware=[...]``: a middleware inside it that swaps the
model (fallback, router) would drop the wrapper.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import warnings
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping, Sequence
from typing import Annotated, Any, Final, Literal

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse, OmitFromInput, PrivateStateAttr
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.types import Command
from typing_extensions import NotRequired, override

from langchain_refs.agents._chat_model import (
    MODEL_TEXT_BLOCKS_KEY,
    MODEL_TEXT_KEY,
    ReferencesChatModel,
    cited_text_renamed,
    has_citation_rule,
    rewrite_message,
    stamped,
    standard_blocks,
    with_instructions,
)
from langchain_refs.agents._documents import (
    DEFAULT_MAX_DOCUMENT_TEXTS,
    DocumentsFromTool,
    ThreadDocuments,
    answer_sources,
    clear_located,
    read_tool_documents,
    show_answer_sources,
    show_tool_result,
    tags_escaped,
)
from langchain_refs.agents._edited import realigned, was_edited
from langchain_refs.streaming import (
    DEFAULT_MAX_HOLDBACK,
    FORMAT_REFERENCES,
    CitationParser,
    EmptyReferenceStyle,
    Marker,
    MarkerSyntax,
    ReferenceSession,
    ReferenceStyle,
    SyntaxName,
    built_in_syntax,
    checked_max_holdback,
    checked_whole_number,
    choose_style,
    citation_instructions,
    marker_syntaxes,
    passage_scorer,
    scored_at_close,
)
from langchain_refs.text import PairScorer

# The agent state key of the thread's documents (`ThreadDocuments.entries`).
DOCUMENTS_KEY = "reference_documents"
# The agent state key of the id of the last model call's answer, as it left the model.
ANSWER_KEY = "reference_answer_id"

__all__ = ["CITED_TEXT_RENAMED", "CitationLeakWarning", "ReferencesMiddleware", "ReferencesState"]

History = Literal["raw", "plain", "rendered"]
"""What the model reads of its own earlier answers (`ReferencesMiddleware`'s ``history``)."""

CITED_TEXT_RENAMED: Final = cited_text_renamed("ReferencesMiddleware")
"""The warning the old option name ``cited_text`` gives."""


class CitationLeakWarning(UserWarning):
    """An answer reached the agent without being rewritten while it streamed.

    Its raw markers went to stream readers; the state copy is rewritten.

    Example:
        A test suite can make a leak fail it, as for any warning:

        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("error", CitationLeakWarning)
        ...     issubclass(CitationLeakWarning, UserWarning)
        True
    """


@dataclasses.dataclass(frozen=True, slots=True)
class _CitedThen:
    """What an earlier answer's citation of one id named: the number the user saw, the source and passage cited."""

    number: int
    source: Any = None
    excerpt: str | None = None

    def names(self, document: Document, source_of: Callable[[Document], Any]) -> bool | None:
        """Whether ``document`` is the one cited (by its source, else by its passage; None: nothing tells)."""
        if self.source is not None:
            # The references' data hold a source as text (`Reference.source`), whatever the key gave.
            now = source_of(document)
            return now is not None and str(now) == self.source
        if self.excerpt:
            return self.excerpt in document.page_content
        return None


# How many earlier answers' readings a middleware keeps (`ReferencesMiddleware._history_key`): a few long threads'.
_HISTORIES_KEPT: Final = 4096

# The stand-in of a call with no document yet: no id stands then, and its source is never read (`_session`).
_NO_DOCUMENT: Final = Document(page_content="")


def _padded(documents: Sequence[Document], then: Mapping[int, _CitedThen] | None) -> Sequence[Document]:
    """``documents`` and after them stand-ins up to the highest id ``then`` names, for reading an earlier answer.

    A stand-in is the last document again: a source key of the user's reads it as it reads the others (a
    blank one may lack the metadata it reads). What an id stands for is ``then``'s, never the stand-in's.
    """
    missing = max(then or (), default=0) - len(documents)
    if missing <= 0:
        return documents
    return [*documents, *([documents[-1] if documents else _NO_DOCUMENT] * missing)]


def _no_source(document: Document) -> None:
    return None


def _cited_then(references: Any) -> dict[int, _CitedThen] | None:
    """Each id an answer cited, from the references it was given with (None: none recorded).

    Example:
        >>> _cited_then({"references": [{"number": 1, "source": "p.html", "document_positions": [3]}],
        ...              "citations": [{"passage": {"document_position": 3, "excerpt": "Paris."}}]})
        {3: _CitedThen(number=1, source='p.html', excerpt='Paris.')}
    """
    if not isinstance(references, Mapping) or not isinstance(references.get("references"), list):
        return None
    excerpts: dict[int, str] = {}
    for citation in references.get("citations") or ():
        passage = citation.get("passage") if isinstance(citation, Mapping) else None
        if isinstance(passage, Mapping) and isinstance(passage.get("excerpt"), str):
            position = passage.get("document_position")
            if isinstance(position, int):
                excerpts.setdefault(position, passage["excerpt"])
    then: dict[int, _CitedThen] = {}
    for reference in references["references"]:
        if not isinstance(reference, Mapping) or not isinstance(reference.get("number"), int):
            continue
        for k in reference.get("document_positions") or ():
            if isinstance(k, int) and k > 0:
                then[k] = _CitedThen(reference["number"], reference.get("source"), excerpts.get(k))
    return then


# What LangChain writes of a tool's documents it was not told to hand over: the repr of each
# (``Document(id=..., metadata={...}, page_content=...)``, in a list, a pair, a dict, after a heading), or a
# document's str form, a line that begins ``page_content='`` (maybe numbered or bulleted, never indented). Not
# what a search through source code prints (`_CODE_LINE`), nor any mention of ``page_content=`` (a keyword
# argument on a line of its own).
_DOCUMENT_REPR: Final = re.compile(r"""Document\((?:id=(?:'[^']*'|"[^"]*"|None), )?metadata=\{""")
_DOCUMENT_STR: Final = re.compile(r"^(?:[^\w\s][^\w\n]*)?(?:\d+[.)]\s*)?page_content='", re.MULTILINE)
# A line of code or of a code search: indented, a doctest's prompt, a grep's "path:line:".
_CODE_LINE: Final = re.compile(r"\s|>>>|\.\.\.|[^\s:]+:\d+[:-]")


def _documents_as_text(content: str) -> bool:
    """Whether a tool's text holds its documents as LangChain writes them (`_DOCUMENT_REPR`, `_DOCUMENT_STR`).

    Linear: the check runs on every tool result without documents (each match's line start is looked for back
    to the match before it only).

    Example:
        >>> _documents_as_text("Results: [Document(metadata={}, page_content='x')]")
        True
        >>> _documents_as_text("src/a.py:4:    >>> [Document(metadata={}, page_content='x')]")
        False
    """
    if _DOCUMENT_STR.search(content):
        return True
    line_start, searched = 0, 0
    for match in _DOCUMENT_REPR.finditer(content):
        newline = content.rfind("\n", searched, match.start())
        if newline >= 0:
            line_start = newline + 1
        searched = match.start()
        if not _CODE_LINE.match(content, line_start):
            return True
    return False


def _instructions_for(instructions: str | None, syntaxes: tuple[MarkerSyntax, ...]) -> str | None:
    """The citation rule to add for ``syntaxes``: the default one asks for the first built-in syntax of them.

    A rule that asks for ``[n](id=k)`` markers the syntaxes do not read would
    leave every citation raw: an error, as is the default with only syntaxes
    of the user's own (no rule to ask for them).
    """
    names = ", ".join(repr(s.name) for s in syntaxes)
    if instructions == FORMAT_REFERENCES:
        rule = citation_instructions(syntaxes)
        if rule is None:
            msg = (
                f"ReferencesMiddleware has no citation rule for the syntaxes {names}: pass instructions=... "
                f"asking the model to write them (or instructions=None, with the rule in your own prompt)"
            )
            raise ValueError(msg)
        return rule
    if instructions is not None and "](id=" in instructions and not any(built_in_syntax(s) == "id" for s in syntaxes):
        msg = (
            f"instructions ask for [n](id=k) markers, which syntaxes {names} do not read: add 'id' to syntaxes "
            f"or ask for the syntax they read (citation_instructions gives the rule for a built-in one)"
        )
        raise ValueError(msg)
    return instructions


_WORD_END: Final = re.compile(r"\w\Z")


def _written_marker(syntaxes: Sequence[MarkerSyntax], number: int, ids: Sequence[int], *, after: str) -> str:
    """A citation of ``ids`` written in the first built-in syntax of ``syntaxes`` (the user saw it as ``number``).

    ``[n](id=k)`` keeps the number the user saw; ``[k]`` (a space before it
    when it would follow a word, which the syntax does not read) and
    ``【k†source】`` have room for the ids alone. With only syntaxes of the
    user's own, nothing: the earlier answer is read without its citations.
    ``after`` is the text the marker follows.
    """
    for syntax in syntaxes:
        name = built_in_syntax(syntax)
        if name == "id":
            return f"[{number}](id={', '.join(map(str, ids))})"
        if name == "bracket":
            space = " " if _WORD_END.search(after) else ""
            return f"{space}[{', '.join(map(str, ids))}]"
        if name == "dagger":
            return "".join(f"【{k}†source】" for k in ids)
    return ""


def _warn_documents_in_text(message: ToolMessage) -> None:
    """A warning when a tool result without documents shows them in its text (a tool not declared to hand them over).

    A ``@tool`` without ``response_format="content_and_artifact"`` that
    returns `documents_tool_output` (or a list of documents) gets them
    written into its text as Python reprs: the model reads them, but they
    have no id, so none of its citations can stand.
    """
    content = message.content
    if isinstance(content, str) and _documents_as_text(content):
        warnings.warn(
            f"tool {message.name or ''!r} put its documents in the text the model reads, not in its artifact: they "
            'get no ids and cannot be cited; declare it with @tool(response_format="content_and_artifact") and '
            "return documents_tool_output(docs)",
            UserWarning,
            stacklevel=2,
        )


def _warn_artifact_without_documents(message: ToolMessage) -> None:
    """A warning when a tool hands over an artifact of results none of which is a document.

    A web search's hits as strings or as dicts of their own (``{"url": ...,
    "content": ...}``) are no documents: they get no ids, and every citation
    of them is dropped.
    """
    artifact = message.artifact
    if isinstance(artifact, Mapping):
        artifact = artifact.get("documents", artifact.get("results"))
    if not isinstance(artifact, (list, tuple)) or not artifact:
        return
    kinds = {type(item).__name__ for item in artifact}
    if all(isinstance(item, (str, Mapping)) for item in artifact):
        warnings.warn(
            f"tool {message.name or ''!r} handed over {len(artifact)} result{'s' * (len(artifact) != 1)} as "
            f"{' and '.join(sorted(kinds))}, "
            "none a Document: they get no ids and cannot be cited; return documents_tool_output(docs) with "
            "Documents, or read them with ReferencesMiddleware(documents_from=...)",
            UserWarning,
            stacklevel=2,
        )


def merged_references(recorded: list[dict[str, Any]] | None, update: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The state's ``references`` with ``update`` merged in: the recorded entries of other messages, then ``update``.

    Every update the middleware makes is the whole list (in the order of the
    answers), so merging it gives that list. A deep agent's subagent hands
    its own list up to its parent's state, and two subagents may do so in
    one step: their entries are added after the parent's, which stay.

    Example:
        >>> merged_references([{"message_id": "a"}], [{"message_id": "b"}])
        [{'message_id': 'a'}, {'message_id': 'b'}]
        >>> merged_references([{"message_id": "a", "n": 1}], [{"message_id": "b"}, {"message_id": "a", "n": 2}])
        [{'message_id': 'b'}, {'message_id': 'a', 'n': 2}]
    """
    recorded = _checked_entries(recorded)
    updated = {entry.get("message_id") for entry in _checked_entries(update)}
    return [entry for entry in recorded if entry.get("message_id") not in updated] + list(update)


def _checked_entries(entries: Any) -> list[dict[str, Any]]:
    """The state's ``references`` (None: none yet), once each entry is known to be one answer's (a mapping).

    Another ``references`` of the user's state schema (a list of ids of a UI's) shares the key: a TypeError says so.

    Example:
        >>> _checked_entries(["kb-42"])
        Traceback (most recent call last):
        ...
        TypeError: the agent state's 'references' holds str entries: ReferencesMiddleware keeps each answer's references there; rename that key of your state_schema
    """  # noqa: E501
    for entry in entries or ():
        if not isinstance(entry, Mapping):
            msg = (
                f"the agent state's 'references' holds {type(entry).__name__} entries: ReferencesMiddleware keeps "
                "each answer's references there; rename that key of your state_schema"
            )
            raise TypeError(msg)
    return list(entries or ())


class ReferencesState(AgentState[Any]):
    """The agent state with the references of every cited answer of the thread.

    Each entry of ``references`` is one answer's `AnswerReferences.to_dict()`
    plus its ``message_id``. It is part of the agent's output, not of its input.
    An update of ``references`` is merged into it by message id
    (`merged_references`): a subagent's entries join its parent's.
    ``reference_documents`` keeps the thread's document ids (one entry per id,
    `ThreadDocuments.entries`), and ``reference_answer_id`` the id of the last
    model call's answer; both are checkpointed, and private to the graph:
    neither an input nor in ``invoke``'s output (``stream_mode="values"`` and
    ``"updates"`` show every key of the state, these too).

    Example:
        >>> {"messages", "references", "reference_documents"} <= set(ReferencesState.__annotations__)
        True
    """

    references: NotRequired[Annotated[list[dict[str, Any]], OmitFromInput, merged_references]]
    reference_documents: NotRequired[Annotated[list[dict[str, Any]], PrivateStateAttr]]
    reference_answer_id: NotRequired[Annotated[str | None, PrivateStateAttr]]


class ReferencesMiddleware(AgentMiddleware[ReferencesState, Any]):
    """An agent middleware that makes the model cite the tools' documents, and rewrites its citations.

    Args:
        style: how citations and the list of sources are written
            (default: `MarkdownReferenceStyle`).
        source_key: the metadata key or callable giving a document's source;
            documents of one source share a number (default: the style's).
        syntaxes: the marker syntaxes to recognise (``"id"``, ``"bracket"``,
            ``"dagger"`` or `MarkerSyntax`).
        max_holdback: the most characters held back for a partial marker: a
            marker longer than that stays as the model wrote it.
        instructions: the citation rule added to the system prompt once the
            thread has documents (by default the rule for the first built-in
            syntax of ``syntaxes``, `citation_instructions`; None: add
            nothing). It is left out when the prompt already holds it, or
            mentions ``(id=`` and the id syntax is read. A rule asking for
            ``[n](id=k)`` when the id syntax is not read is a ``ValueError``.
        history: how the model sees its own earlier answers: ``"raw"`` with
            its markers, each numbered as the user saw it (``[1](id=5)``: the
            user's source 1 is the model's document 5; the ids are stable for
            the thread, so they stay true; without the id syntax, in the first
            built-in syntax read, ``[5]`` or ``【5†source】``), ``"plain"`` with the citations
            taken out, or ``"rendered"`` as the user saw them (footnote
            numbers and list of sources: a model may then imitate bare
            numbers).
        documents_from: reads the documents of tool results that do not carry
            them as their artifact (return None to fall back to the artifact);
            never asked of an error result (``status="error"``), which has none.
        passages: find, for each citation, the passage of the cited
            document that best supports it (the ``cited_text`` of its
            annotation), as ``manage_references(passages=...)`` does: True
            with the lexical engine, a scorer with ``score(pairs)`` to use
            it, False for none. Its old name ``cited_text`` still works, with
            a ``DeprecationWarning``.
        max_document_texts: how many documents of a thread keep their text in
            the agent state (the newest; older ones keep their id, source
            and metadata: a citation of them is still numbered and listed).

    Example:
        A tool hands its documents over; the model (a fake here) cites the id it was shown:

        >>> from langchain.agents import create_agent
        >>> from langchain_core.documents import Document
        >>> from langchain_core.language_models import GenericFakeChatModel
        >>> from langchain_core.messages import AIMessage
        >>> from langchain_core.tools import tool
        >>> from langchain_refs.agents import documents_tool_output
        >>> from langchain_refs.streaming import TextReferenceStyle
        >>> @tool(response_format="content_and_artifact")
        ... def search(query: str):
        ...     '''Search the documents.'''
        ...     return documents_tool_output([Document("Paris is in France.", metadata={"source": "p.html"})])
        >>> class Model(GenericFakeChatModel):
        ...     def bind_tools(self, tools, **kwargs): return self
        >>> call = AIMessage("", tool_calls=[{"name": "search", "args": {"query": "Paris"}, "id": "1"}])
        >>> model = Model(messages=iter([call, AIMessage("Paris is in France[1](id=1).")]))
        >>> agent = create_agent(model, [search], middleware=[ReferencesMiddleware(style=TextReferenceStyle())])
        >>> agent.invoke({"messages": [("user", "Where is Paris?")]})["messages"][-1].text
        'Paris is in France[1].\\n\\n- [1] p.html\\n'
    """

    state_schema = ReferencesState

    def __init__(
        self,
        *,
        style: ReferenceStyle | None = None,
        source_key: str | Callable[[Any], Any] | None = None,
        syntaxes: SyntaxName | MarkerSyntax | Sequence[SyntaxName | MarkerSyntax] = ("id",),
        max_holdback: int = DEFAULT_MAX_HOLDBACK,
        instructions: str | None = FORMAT_REFERENCES,
        history: History = "raw",
        documents_from: DocumentsFromTool | None = None,
        passages: bool | PairScorer = True,
        max_document_texts: int = DEFAULT_MAX_DOCUMENT_TEXTS,
        cited_text: bool | PairScorer | None = None,
    ) -> None:
        super().__init__()
        if cited_text is not None:
            if passages is not True:  # given too (True is its default: that one cannot be told apart)
                msg = "ReferencesMiddleware takes passages=... (cited_text is its old name), not both"
                raise TypeError(msg)
            warnings.warn(CITED_TEXT_RENAMED, DeprecationWarning, stacklevel=2)
            passages = cited_text
        if history not in ("raw", "plain", "rendered"):
            msg = f"history must be 'raw', 'plain' or 'rendered', got {history!r}"
            raise ValueError(msg)
        self._style_choice = choose_style(style, source_key)
        self.style = self._style_choice.style
        self.source_key = source_key
        self.syntaxes = marker_syntaxes(syntaxes)
        self.max_holdback = checked_max_holdback(max_holdback)
        if instructions is not None and not isinstance(instructions, str):
            msg = f"instructions must be the system prompt's text (str) or None, got {type(instructions).__name__}"
            raise TypeError(msg)
        self.instructions = _instructions_for(instructions, self.syntaxes)
        self.history = history
        # Earlier answers as the model reads them, by what that reading depends on (`_history_key`): a long
        # thread's answers are read again at every model call.
        self._histories: dict[Hashable, str] = {}
        self._told_structured = False
        if documents_from is not None and not callable(documents_from):
            msg = (
                f"documents_from must be a function of a tool result (ToolMessage) giving its documents, "
                f"got {type(documents_from).__name__}"
            )
            raise TypeError(msg)
        self.documents_from = documents_from
        passage_scorer(passages)  # a wrong value fails here, not at the end of the first answer
        self.passages = passages
        self.max_document_texts = checked_whole_number(
            max_document_texts, "max_document_texts", "documents", at_least=0
        )

    # -- the model call ------------------------------------------------------

    def _wrapper(
        self,
        inner: Any,
        documents: Sequence[Document],
        consulted_ids: Iterable[int] | None = None,
        unshown_ids: Iterable[int] = (),
    ) -> ReferencesChatModel:
        if isinstance(inner, ReferencesChatModel):  # the agent's model was wrapped already
            inner = inner.inner
        return ReferencesChatModel(
            inner=inner,
            documents=list(documents),
            consulted_ids=None if consulted_ids is None else tuple(sorted(consulted_ids)),
            unshown_ids=tuple(sorted(unshown_ids)),
            stamp_text=True,
            style=self.style,
            source_key=self.source_key,
            syntaxes=self.syntaxes,
            max_holdback=self.max_holdback,
            passages=self.passages,
            profile=getattr(inner, "profile", None),
            model_name=_model_name(inner),
            instructions=self.instructions,
        )

    @staticmethod
    def clear_caches() -> None:
        """Forget where documents were found in tool results (shared by all instances), for cold benchmarks.

        Example:
            >>> ReferencesMiddleware.clear_caches()
        """
        clear_located()

    def prepare(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """The request this middleware sends on: documents with ids, instructions, wrapped model.

        Example:
            >>> from langchain.agents.middleware import ModelRequest
            >>> from langchain_core.language_models import GenericFakeChatModel
            >>> request = ModelRequest(model=GenericFakeChatModel(messages=iter([])), messages=[])
            >>> type(ReferencesMiddleware().prepare(request).model).__name__
            'ReferencesChatModel'
        """
        return self._prepared(request)[0]

    def _prepared(self, request: ModelRequest[Any]) -> tuple[ModelRequest[Any], list[dict[str, Any]] | None]:
        """The request to send on, and the thread's documents for the state when they changed."""
        if request.response_format is not None:
            if not self._told_structured:
                # Not a leak (`CitationLeakWarning`): what it does with such a call, said once.
                self._told_structured = True
                warnings.warn(
                    "ReferencesMiddleware leaves structured-output calls (response_format) alone: "
                    "rewriting citations would corrupt the structured answer",
                    UserWarning,
                    stacklevel=4,
                )
            return request, None
        known = _kept_documents(request.state)
        # Each tool result's documents, read once for the ids and for what the model is shown.
        found = [
            read_tool_documents(m, self.documents_from) if isinstance(m, ToolMessage) else [] for m in request.messages
        ]
        # Another agent's answers handed over as tool results (a deep agent's subagents): the sources they cite.
        answers = _answers_of_others(request.state, request.messages)
        handed_over: set[int] = set()
        for position, (message, documents) in enumerate(zip(request.messages, found, strict=True)):
            if documents or not isinstance(message, ToolMessage) or message.status == "error":
                continue
            cited = answer_sources(message, answers) if answers else []
            if cited:
                found[position] = cited
                handed_over.add(position)
            else:
                _warn_documents_in_text(message)
                if self.documents_from is None:
                    _warn_artifact_without_documents(message)
        thread = ThreadDocuments.from_entries(known).with_documents(d for documents in found for d in documents)
        read: dict[int, Document] = {}
        # This turn's documents: those of the tool results since the user's last message.
        turn = _turn_start(request.messages)
        this_turn: set[int] = set()
        given: set[int] = set()  # the ids of the documents the tool results hand over
        messages: list[Any] = []
        for position, (message, documents) in enumerate(zip(request.messages, found, strict=True)):
            if documents:
                ids = [thread.id_of(d) for d in documents]
                given.update(ids)
                show = show_answer_sources if position in handed_over else show_tool_result
                shown = show(message.content, documents, ids)
                read.update({k: d for k, d in shown.documents.items() if k not in read})
                if position > turn:
                    this_turn.update(shown.documents)
                message = message.model_copy(update={"content": shown.content})
            elif isinstance(message, ToolMessage) and (escaped := tags_escaped(message.content)) != message.content:
                # A result with no document (a file search, a shell, an error) may still write document tags: a
                # forged ``<document id=2>`` would lend its words another document's id.
                message = message.model_copy(update={"content": escaped})
            messages.append(message)
        # What the model reads of each document this call is what a citation of it shows.
        thread = thread.replaced(read)
        # Ids kept in the state were never given to another document: an earlier answer's stand as they were.
        messages = [self._history(m, thread.documents, kept=bool(known)) for m in messages]
        system = request.system_message
        if (
            thread.documents
            and self.instructions
            and not has_citation_rule(request.system_prompt or "", self.instructions, self.syntaxes)
        ):
            system = with_instructions(system, self.instructions)
        entries = thread.entries(self.max_document_texts)
        changed = entries if entries != (known or []) else None
        # Consulted: the uncited documents retrieved for this turn; the thread's earlier ones stay citable.
        # A document no result's text shows (a tool that shows its top hit and hands over all): the model cannot
        # know its id, so a citation of it is a guess, and is dropped.
        model = self._wrapper(request.model, thread.documents, this_turn, given - read.keys())
        request = request.override(model=model, messages=messages, system_message=system)
        return request, changed

    def _history(self, message: BaseMessage, documents: Sequence[Document], *, kept: bool = False) -> BaseMessage:
        """An earlier answer of the model as it reads it this call (``history``).

        An answer edited after it was rewritten is read as edited: its raw
        text holds what the edit took out.
        """
        if isinstance(message, AIMessage) and was_edited(message):
            return realigned(message, None)
        if isinstance(message, AIMessage) and self.history != "rendered":
            raw = message.response_metadata.get(MODEL_TEXT_KEY)
            if isinstance(raw, str):
                then = _cited_then(message.response_metadata.get("references"))
                content = message.content
                pieces = _text_pieces(raw, message.response_metadata.get(MODEL_TEXT_BLOCKS_KEY), content)
                if pieces is not None and isinstance(content, list):
                    # Text blocks around a server tool's call: each read in its own block, in its place.
                    texts = self._read_history_pieces(pieces, documents, then, kept=kept)
                    return message.model_copy(update={"content": _with_texts(content, texts)})
                key = self._history_key(raw, then, documents, kept=kept)
                text = self._histories.get(key) if key is not None else None
                if text is None:
                    text = self._read_history(raw, documents, then, kept=kept)
                    if key is not None:
                        if len(self._histories) >= _HISTORIES_KEPT:
                            self._histories.clear()
                        self._histories[key] = text
                return message.model_copy(update={"content": _with_text(message.content, text)})
        return message

    def _read_history(
        self, raw: str, documents: Sequence[Document], then: Mapping[int, _CitedThen] | None, *, kept: bool
    ) -> str:
        """An earlier answer's text ``raw`` as the model reads it (``history`` "raw" or "plain")."""
        if self.history == "raw":
            return self._numbered(raw, documents, then, kept=kept)
        # Every id it cited stands for something while it is read: none is logged as unknown.
        session = self._session(_padded(documents, then))
        return session.feed(raw) + session.close()

    def _read_history_pieces(
        self, pieces: list[str], documents: Sequence[Document], then: Mapping[int, _CitedThen] | None, *, kept: bool
    ) -> list[str]:
        """`_read_history` of an answer written in several text blocks (``pieces``: each one's text), block by block."""
        if self.history == "raw":
            return [self._numbered(piece, documents, then, kept=kept) for piece in pieces]
        session = self._session(_padded(documents, then))
        texts = [session.feed(piece) for piece in pieces]
        texts[-1] += session.close()
        return texts

    def _history_key(
        self, raw: str, then: Mapping[int, _CitedThen] | None, documents: Sequence[Document], *, kept: bool
    ) -> Hashable | None:
        """What reading an earlier answer depends on, when that is not every document of the thread (else None).

        An answer given with its references (``then``) is read from its text,
        what it cited then, and whether each document now at an id it cited is
        the one it named: the other documents change nothing in it, so the
        reading stands while those stay as they are. Where one no longer is, or
        nothing tells (the ids were made again, no source or passage recorded),
        the answer is read against them all, every time.
        """
        if then is None:
            return None
        source_of = self._style_choice.source_of
        facts = []
        for k, cited in sorted(then.items()):
            if k > len(documents) or cited.names(documents[k - 1], source_of) is not True:
                return None
            facts.append((k, cited.number, cited.source, cited.excerpt))
        key = (self.history, raw, kept, tuple(facts))
        try:
            hash(key)
        except TypeError:  # a source recorded as something no dict can key (a list)
            return None
        return key

    def _session(self, documents: Sequence[Document]) -> ReferenceSession:
        # Stand-ins alone (no document yet): their source is nobody's, and a source key of the user's never sees them.
        alone = bool(documents) and all(document is _NO_DOCUMENT for document in documents)
        return ReferenceSession(
            documents,
            source_key=_no_source if alone else self._style_choice.source_of,
            style=EmptyReferenceStyle(),
            syntaxes=self.syntaxes,
            max_holdback=self.max_holdback,
            passages=False,
        )

    def _numbered(
        self,
        raw: str,
        documents: Sequence[Document],
        then: Mapping[int, _CitedThen] | None = None,
        *,
        kept: bool = False,
    ) -> str:
        """``raw`` with each citation as ``[n](id=k)``, ``n`` the number the user saw, ``k`` the ids.

        ``then``: what the answer's citations named when it was given (`_cited_then`), None when it
        was not recorded. An id that names another document now (the thread's ids were made again:
        no checkpointer, and a client that sent back its history without the tool results) is
        written as the id of that document now, or left out when the thread no longer holds it:
        the model never reads its earlier claim beside another document's id. Where nothing tells
        (no source, no passage recorded), the id stands only when the thread's ids were ``kept``
        in the agent state.
        """
        # Every id the answer cited stands for something while the text is read; what it stands for is `then`'s.
        session = self._session(_padded(documents, then))
        plain = session.feed(raw) + session.close()
        pieces: list[str] = []
        cursor = 0
        for citation in session.references.citations:
            ids: Sequence[int] = citation.document_positions
            number = citation.number
            if then is not None:
                number = next((then[k].number for k in ids if k in then), number)
                ids = self._ids_now(ids, then, documents, kept=kept)
            if not ids:
                continue
            pieces.append(plain[cursor : citation.start])
            pieces.append(
                _written_marker(self.syntaxes, number, ids, after=plain[max(citation.start - 1, 0) : citation.start])
            )
            cursor = citation.start
        pieces.append(plain[cursor:])
        return "".join(pieces)

    def _ids_now(
        self, ids: Iterable[int], then: Mapping[int, _CitedThen], documents: Sequence[Document], *, kept: bool
    ) -> list[int]:
        """The ids the documents an earlier answer cited as ``ids`` have in this call's ``documents``."""
        source_of = self._style_choice.source_of
        now: list[int] = []
        for k in ids:
            cited = then.get(k)
            if cited is None:  # not a citation the answer gave: it was dropped then
                continue
            same = cited.names(documents[k - 1], source_of) if k <= len(documents) else False
            if same is False:
                found = (j for j, document in enumerate(documents, start=1) if cited.names(document, source_of))
                k = next(found, 0)
            elif same is None and not kept:
                k = 0  # nothing tells which document it was, and the ids were made again
            if k and k not in now:
                now.append(k)
        return now

    @override
    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        prepared, documents = self._prepared(request)
        return _with_call(_stamped(handler(prepared)), documents)

    @override
    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        if any(isinstance(m, ToolMessage) for m in request.messages):
            # Finding a long thread's documents in its tool results and reading its earlier answers takes
            # milliseconds: off the event loop, which serves the other runs (a LangGraph server's) meanwhile.
            prepared, documents = await asyncio.to_thread(self._prepared, request)
        else:
            prepared, documents = self._prepared(request)
        return _with_call(_stamped(await handler(prepared)), documents)

    # -- after the model -----------------------------------------------------

    @override
    def after_model(self, state: ReferencesState, runtime: Any) -> dict[str, Any] | None:
        messages = state.get("messages") or []
        answer = _answer_of_the_call(messages, state.get("reference_answer_id"))
        if answer is None:
            return None
        update: dict[str, Any] = {}
        if was_edited(answer):  # a middleware listed after this one edited the answer (its after_model ran first)
            answer = self._realigned(answer, state)
            update["messages"] = [answer]
        # A structured answer (response_format) is never rewritten: its JSON would break.
        structured = state.get("structured_response") is not None
        if MODEL_TEXT_KEY not in answer.response_metadata and not structured and self._has_markers(answer.text):
            warnings.warn(
                "an answer with citation markers reached the agent without ReferencesMiddleware's rewriting "
                "(a structured-output call, which it leaves alone, or a middleware listed after it replacing the "
                "model): its raw markers were streamed; the copy in the agent state is rewritten",
                CitationLeakWarning,
                stacklevel=2,
            )
            kept = ThreadDocuments.from_entries(_kept_documents(state))
            thread = kept.with_messages(messages, self.documents_from)
            answer = rewrite_message(answer, self._wrapper(None, thread.documents))
            update["messages"] = [answer]
        standard = standard_blocks(answer)
        if standard is not answer:
            # A streamed answer's non-text blocks, in the standard form its v1 content promises.
            answer = standard
            update["messages"] = [answer]
        entry = _entry_of(answer)
        if entry is not None:
            recorded = _checked_entries(state.get("references"))
            if any(e.get("message_id") == answer.id for e in recorded):  # recorded already: replaced in its place
                update["references"] = [entry if e.get("message_id") == answer.id else e for e in recorded]
            else:
                update["references"] = [*recorded, entry]
        return update or None

    @override
    async def aafter_model(self, state: ReferencesState, runtime: Any) -> dict[str, Any] | None:
        if scored_at_close(self.passages):
            # Rewriting an answer here scores its passages with the user's scorer (a model): off the event loop.
            return await asyncio.to_thread(self.after_model, state, runtime)
        return self.after_model(state, runtime)

    @override
    def after_agent(self, state: ReferencesState, runtime: Any) -> dict[str, Any] | None:
        """Answers edited after this middleware's ``after_model`` ran, and rewritten answers it never handled.

        An edit there is by a middleware listed before this one. An answer
        is never handled when a middleware listed after this one ends the run
        from its own ``after_model`` (``ToolCallLimitMiddleware`` with
        ``exit_behavior="end"``), which skips this one's.
        """
        messages = state.get("messages") or []
        fixed = {m.id: self._realigned(m, state) for m in messages if isinstance(m, AIMessage) and was_edited(m)}
        entries = []
        for entry in _checked_entries(state.get("references")):
            edited = fixed.get(entry.get("message_id"))
            references = edited.response_metadata.get("references") if edited is not None else None
            entries.append({"message_id": entry["message_id"], **references} if isinstance(references, dict) else entry)
        recorded = {entry.get("message_id") for entry in entries}
        position = {message.id: k for k, message in enumerate(messages)}
        missed = 0
        for message in _turn(messages):
            if isinstance(message, AIMessage) and MODEL_TEXT_KEY in message.response_metadata:
                answer = fixed.get(message.id, message)
                standard = standard_blocks(answer)
                if standard is not answer:
                    fixed[message.id] = standard
                unrecorded = _entry_of(standard) if message.id not in recorded else None
                if unrecorded is not None:
                    # In the order of the messages, before the entry of any later answer.
                    later = (
                        k for k, e in enumerate(entries) if position.get(e.get("message_id"), -1) > position[message.id]
                    )
                    entries.insert(next(later, len(entries)), unrecorded)
                    missed += 1
        if not fixed and not missed:
            return None
        return {"messages": list(fixed.values()), "references": entries}

    @override
    async def aafter_agent(self, state: ReferencesState, runtime: Any) -> dict[str, Any] | None:
        if scored_at_close(self.passages):
            return await asyncio.to_thread(self.after_agent, state, runtime)
        return self.after_agent(state, runtime)

    def _realigned(self, answer: AIMessage, state: Mapping[str, Any]) -> AIMessage:
        """``answer`` (edited after it was rewritten) with our offsets on its text and no raw copy."""
        raw = answer.response_metadata.get(MODEL_TEXT_KEY)
        rendered = None
        if isinstance(raw, str):
            kept = ThreadDocuments.from_entries(_kept_documents(state))
            model = self._wrapper(None, kept.with_messages(state.get("messages") or [], self.documents_from).documents)
            rendered = rewrite_message(AIMessage(raw, id=answer.id), model)
        return realigned(answer, rendered)

    def _has_markers(self, text: str) -> bool:
        parser = CitationParser(self.syntaxes, max_holdback=self.max_holdback)
        return any(isinstance(event, Marker) for event in [*parser.feed(text), *parser.close()])


def _entry_of(answer: AIMessage) -> dict[str, Any] | None:
    """The state's record of a rewritten answer (its `AnswerReferences` and its message id), None for nothing cited.

    An answer whose every citation was dropped is recorded too: its invalid citations say why.
    """
    references = answer.response_metadata.get("references")
    if isinstance(references, dict) and (references.get("references") or references.get("invalid_citations")):
        return {"message_id": answer.id, **references}
    return None


def _turn_start(messages: Sequence[BaseMessage]) -> int:
    """The position of the user's last message (-1: none): this turn's messages follow it."""
    for position in range(len(messages) - 1, -1, -1):
        if isinstance(messages[position], HumanMessage):
            return position
    return -1


def _turn(messages: Sequence[BaseMessage]) -> Sequence[BaseMessage]:
    """The messages since the user's last one (the model's answers and the tool results of this turn)."""
    return messages[_turn_start(messages) + 1 :]


def _answers_of_others(state: Any, messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """The state's records of answers that are not this agent's (a subagent's, joined by deepagents) that cite."""
    records = state.get("references") if isinstance(state, Mapping) else None
    if not records:
        return []
    own = {m.id for m in messages if isinstance(m, AIMessage)}
    return [r for r in _checked_entries(records) if r.get("message_id") not in own and r.get("citations")]


def _kept_documents(state: Any) -> list[dict[str, Any]] | None:
    """The thread's documents as the agent state keeps them (None: none yet)."""
    kept = state.get(DOCUMENTS_KEY) if isinstance(state, Mapping) else None
    return kept if isinstance(kept, list) else None


def _stamped(response: Any) -> Any:
    """The rewritten answers of ``response`` stamped with `text_check`, where the model has not stamped them yet.

    The wrapper stamps its answer as it leaves the model (``stamp_text``), so that an edit by a middleware listed
    after this one (wrapped inside it) is told; `stamped` keeps that stamp.
    """
    if isinstance(response, AIMessage):
        return stamped(response)
    if isinstance(response, ModelResponse):
        return dataclasses.replace(response, result=[stamped(m) for m in response.result])
    if isinstance(response, ExtendedModelResponse):  # an inner middleware's response with its state update
        return dataclasses.replace(response, model_response=_stamped(response.model_response))
    return response


def _with_call(
    response: ModelResponse[Any] | AIMessage, documents: list[dict[str, Any]] | None
) -> ExtendedModelResponse[Any]:
    """The model's response, with what the state keeps of the call.

    That is the id of its answer (`ANSWER_KEY`: ``after_model`` tells it
    from what a middleware listed after this one appended), and the thread's
    documents when they changed.
    """
    if isinstance(response, AIMessage):
        response = ModelResponse(result=[response])
    answer = next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)
    update: dict[str, Any] = {ANSWER_KEY: answer.id if answer is not None else None}
    if documents is not None:
        update[DOCUMENTS_KEY] = documents
    return ExtendedModelResponse(model_response=response, command=Command(update=update))


def _answer_of_the_call(messages: Sequence[BaseMessage], answer_id: str | None) -> AIMessage | None:
    """The model call's answer: the AI message of the id it left the model with, else the last message if an AI one.

    The ``after_model`` of a middleware listed after this one runs first and
    may append messages after the answer: the tool messages of a call it
    blocked or refused (``ToolCallLimitMiddleware``, ``TodoListMiddleware``,
    ``HumanInTheLoopMiddleware``), an AI message of its own that ends the run.
    """
    if answer_id is not None:
        for message in reversed(_turn(messages)):
            if isinstance(message, AIMessage) and message.id == answer_id:
                return message
    last = messages[-1] if messages else None
    return last if isinstance(last, AIMessage) else None


def _model_name(model: Any) -> str | None:
    for name in ("model_name", "model", "model_id"):
        value = getattr(model, name, None)
        if isinstance(value, str):
            return value
    return None


def _text_pieces(raw: str, lengths: Any, content: str | list[Any]) -> list[str] | None:
    """The model's text ``raw`` cut into its text blocks' (``lengths``, `MODEL_TEXT_BLOCKS_KEY`), or None.

    None unless the lengths add up to the text and ``content`` holds as many
    text blocks, each to take its piece back.

    Example:
        >>> blocks = [{"type": "text", "text": "A[1]."}, {"type": "server_tool_call"}, {"type": "text", "text": "B."}]
        >>> _text_pieces("A[1](id=2).B.", [11, 2], blocks)
        ['A[1](id=2).', 'B.']
        >>> _text_pieces("A.B.", [2, 2], "A.B.") is None
        True
    """
    if not isinstance(lengths, list) or not all(type(n) is int and n >= 0 for n in lengths):
        return None
    if sum(lengths) != len(raw) or sum(1 for n in lengths if n) < 2 or not isinstance(content, list):
        return None
    if sum(1 for block in content if _is_text_block(block)) != len(lengths):
        return None
    pieces, start = [], 0
    for length in lengths:
        pieces.append(raw[start : start + length])
        start += length
    return pieces


def _is_text_block(block: Any) -> bool:
    return isinstance(block, str) or (isinstance(block, dict) and block.get("type") == "text")


def _with_texts(content: list[Any], texts: list[str]) -> list[Any]:
    """``content`` with each text block's text replaced by the next of ``texts`` (as many), annotations dropped.

    A block left with no text goes (some providers refuse an empty text block).

    Example:
        >>> _with_texts([{"type": "text", "text": "A[1]."}, {"type": "tool_use"}, "B", "[2]"], ["A[1](id=2).", "B", ""])
        [{'type': 'text', 'text': 'A[1](id=2).'}, {'type': 'tool_use'}, 'B']
    """
    given = iter(texts)
    out: list[Any] = []
    for block in content:
        if not _is_text_block(block):
            out.append(block)
            continue
        text = next(given)
        if text:
            out.append(
                text
                if isinstance(block, str)
                else {k: v for k, v in block.items() if k != "annotations"} | {"text": text}
            )
    return out


def _with_text(content: str | list[Any], text: str) -> str | list[Any]:
    """``content`` with its text replaced by ``text``, in its first text block; other text blocks dropped.

    Example:
        >>> _with_text([{"type": "text", "text": "A[1]."}, {"type": "tool_use", "id": "t"}], "A[1](id=2).")
        [{'type': 'text', 'text': 'A[1](id=2).'}, {'type': 'tool_use', 'id': 't'}]
        >>> _with_text([{"type": "tool_use", "id": "t"}], "")
        [{'type': 'tool_use', 'id': 't'}]
    """
    if isinstance(content, str):
        return text
    blocks: list[Any] = []
    # No text at all: no text block either (some providers refuse empty ones).
    placed = not text
    for block in content:
        if isinstance(block, str) or (isinstance(block, dict) and block.get("type") == "text"):
            if placed:
                continue
            placed = True
            blocks.append(
                text
                if isinstance(block, str)
                else {k: v for k, v in block.items() if k != "annotations"} | {"text": text}
            )
        else:
            blocks.append(block)
    if not placed:
        blocks.insert(0, {"type": "text", "text": text})
    return blocks
