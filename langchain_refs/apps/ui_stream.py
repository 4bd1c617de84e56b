"""A cited LangChain stream as the Vercel AI SDK's UI message stream (what ``useChat`` reads).

The protocol, as the ``ai`` npm package defines it (``uiMessageChunkSchema``):
Server-Sent Events, each event one line ``data: <JSON chunk>``, the stream
ending with ``data: [DONE]``, served with the header
``x-vercel-ai-ui-message-stream: v1``. Each chunk has only the fields ``ai``
5.0.0 knows, so that ``ai`` 5, 6 and 7 all read the stream, also the versions
that refuse a chunk with a field they do not know (``ai`` 5 before 5.0.217,
``ai`` 6 before 6.0.231). `ui_message_chunks` turns what a
``manage_references(...)`` chain or an agent with ``ReferencesMiddleware``
streams into these chunks, in this order:

========================= =====================================================
chunk                     when
========================= =====================================================
``start``                 first, with the ``messageId``
``reasoning-start``,      the model's reasoning as it streams (standard
``reasoning-delta``,      ``reasoning`` blocks, a provider's own such as
``reasoning-end``         Anthropic's ``thinking``, or ``reasoning_content``)
``tool-input-start``,     an agent's tool call as its arguments stream (the
``tool-input-delta``      client shows the tool as running)
``tool-input-available``, the tool's result arrived (``output``: the title and
``tool-output-available`` source of each document it found)
``tool-output-error``     instead of ``tool-output-available`` when the tool
                          failed (``errorText``: the first line of its error);
                          also before ``error`` for each call left open
``text-start``,           the rewritten answer (never a raw marker); a tool
``text-delta``,           step between two stretches of text ends a text part
``text-end``
``source-url`` /          each cited source once, in number order (a source
``source-document``       with an http(s) URL is a ``source-url``)
``data-citation``         each citation: its number, the words it backs and the
                          passage of the source behind it
``data-references``       the answer's references as `AnswerReferences.to_dict`
``finish``                last
``error``                 instead of the rest when the stream fails (or a
                          chunk cannot be written as JSON): one line
========================= =====================================================

Each source's ``sourceId`` is ``"source-<number>"`` and its
``providerMetadata`` is ``{"langchain_refs": {"number": number}}``: the
number the text shows (with `citation_numbers_style`, ``[1]``).

With ``ai7_fields=True``, `ui_message_chunks` also sends what only ``ai`` 7
reads: ``text-end``'s ``citations`` (the words each citation backs in the
text part, its source and the passage's words) and ``finish``'s
``finishReason``. Offsets are in two units: the ``startIndex``/``endIndex``
of ``text-end``'s citations count UTF-16 units, as JavaScript indexes a
string (an emoji counts 2), so that ``text.slice(startIndex, endIndex)``
gives the cited words; those of ``data-references``
(`AnswerReferences.to_dict`) are Python's string indexes, Unicode code points.

The functions here know no web framework: `ui_message_sse` writes the
events as strings for any server; `ui_message_response` wraps them in a
Starlette (and so FastAPI) ``StreamingResponse``. `question_of` reads the
question from the body ``useChat``'s default transport sends.

Example:
    >>> import asyncio
    >>> from langchain_core.messages import AIMessageChunk
    >>> refs = {"references": [{"number": 1, "source": "https://a.org", "title": "A",
    ...                         "document_positions": [1]}]}
    >>> async def stream():
    ...     yield AIMessageChunk("Paris[1]")
    ...     yield AIMessageChunk(".", response_metadata={"references": refs})
    >>> async def collect():
    ...     return [chunk async for chunk in ui_message_chunks(stream(), message_id="m1")]
    >>> [c["type"] for c in asyncio.run(collect())]  # doctest: +NORMALIZE_WHITESPACE
    ['start', 'text-start', 'text-delta', 'text-delta', 'text-end', 'source-url', 'data-references', 'finish']
"""

from __future__ import annotations

import bisect
import json
import re
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, RemoveMessage, ToolMessage

from langchain_refs.apps._content import content_text, reasoning_text
from langchain_refs.apps._errors import first_line, utf8_problem
from langchain_refs.streaming import AnswerReferences, TemplateReferenceStyle, safe_url

if TYPE_CHECKING:
    from starlette.responses import StreamingResponse

__all__ = [
    "UI_MESSAGE_STREAM_HEADERS",
    "AnswerReasoning",
    "AnswerText",
    "QuestionTooLongError",
    "ReferencesFound",
    "StreamStep",
    "ToolCallDelta",
    "ToolResult",
    "citation_numbers_style",
    "drop_turns",
    "earlier_questions",
    "held_turns",
    "question_of",
    "sse_data",
    "stream_steps",
    "turns_the_client_holds",
    "ui_message_chunks",
    "ui_message_response",
    "ui_message_sse",
]

UI_MESSAGE_STREAM_HEADERS: Final = {
    "Cache-Control": "no-cache",
    "Connection": "keep-alive",
    "X-Vercel-AI-UI-Message-Stream": "v1",
    "X-Accel-Buffering": "no",
}
"""The headers of a UI message stream, as the ``ai`` package sends them (besides the content type)."""

_MAX_QUESTION: Final = 4_000


def citation_numbers_style() -> TemplateReferenceStyle:
    """A style for the UI message stream: ``[n]`` in the text and no list (the sources travel as parts).

    Example:
        >>> from langchain_core.documents import Document
        >>> style = citation_numbers_style()
        >>> doc = Document("x", metadata={"source": "a.pdf"})
        >>> style.format_reference(2, doc), style.format_all_references([(2, doc)])
        ('[2]', '')
    """
    return TemplateReferenceStyle(
        "{% macro citation(c) %}[{{ c.number }}]{% endmacro %}{% macro references(refs) %}{% endmacro %}"
    )


# -- A cited LangChain stream as steps ---------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerText:
    """Words of the answer as the citation middleware rewrote them.

    Example:
        >>> AnswerText(text="Paris[1]").text
        'Paris[1]'
    """

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerReasoning:
    """Words of the model's reasoning, as it streams them before (or between) its answer's words.

    Example:
        >>> AnswerReasoning(text="Let me think.").text
        'Let me think.'
    """

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallDelta:
    """A piece of a tool call's arguments as the model streams them (``name`` on its first piece).

    Example:
        >>> ToolCallDelta(call_id="c1", name="search_docs", arguments='{"query"').name
        'search_docs'
    """

    call_id: str
    name: str | None
    arguments: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """A tool's result: the call it answers, its arguments and what it returned.

    ``arguments`` are the call's arguments (a dict when they were JSON),
    ``documents`` the documents the tool found (``None`` when its artifact is
    not a list of documents), ``output`` the text of its message, ``failed``
    whether the tool failed (LangChain's ``ToolMessage(status="error")``: its
    text is then the error).

    Example:
        >>> ToolResult(call_id="c1", name="search_docs", arguments={"query": "Paris"}, documents=(),
        ...            output="").arguments["query"]
        'Paris'
    """

    call_id: str
    name: str
    arguments: Any
    documents: tuple[Any, ...] | None
    output: str
    failed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ReferencesFound:
    """The references of the answer, as the last chunk of a cited message carries them.

    Example:
        >>> ReferencesFound(references=AnswerReferences()).references.references
        ()
    """

    references: AnswerReferences


StreamStep = AnswerReasoning | AnswerText | ToolCallDelta | ToolResult | ReferencesFound
"""What `stream_steps` yields."""


@dataclass(kw_only=True)
class _Calls:
    """The tool calls seen so far: their names, and their arguments as they streamed."""

    names: dict[str, str] = field(default_factory=dict)
    arguments: dict[str, str] = field(default_factory=dict)
    by_index: dict[int, str] = field(default_factory=dict)  # a chunk's later pieces give only their index


async def stream_steps(stream: AsyncIterable[Any], *, answer_node: str | None = None) -> AsyncIterator[StreamStep]:
    """The steps of a cited LangChain stream: reasoning, answer text, tool calls and results, references.

    ``stream`` is what ``astream`` of a ``manage_references(...)`` chain
    yields (message chunks or ``str``), or what an agent with
    ``ReferencesMiddleware`` streams with ``stream_mode="messages"``
    (``(message, metadata)`` pairs). The references are those of the last
    message chunk that carries some (``response_metadata["references"]``);
    a chain whose output is ``str`` carries none (its text still streams).

    Only AI messages are the answer. Of a graph's, those of the node
    ``answer_node`` (its ``metadata["langgraph_node"]``) when it is given;
    by default those of any node but a tool node (``"tools"``: a model a
    tool calls, such as a query rewriter) and a middleware's hook (a node
    named ``"<middleware>.<hook>"``: ``SummarizationMiddleware``'s summary),
    so that ``create_agent``'s ``"model"``, ``create_react_agent``'s
    ``"agent"`` and a graph of your own ("chatbot") all stream their answer.
    Tool results are taken from any node.

    Example:
        >>> import asyncio
        >>> async def stream():
        ...     yield "Paris[1]."
        >>> async def collect():
        ...     return [step async for step in stream_steps(stream())]
        >>> asyncio.run(collect())
        [AnswerText(text='Paris[1].')]
    """
    calls = _Calls()
    async for item in stream:
        chunk = item[0] if isinstance(item, tuple) and item else item
        if not isinstance(chunk, ToolMessage) and not _of_node(item, answer_node):
            continue
        for step in _steps(chunk, calls):
            yield step


def _of_node(item: Any, node: str | None) -> bool:
    """Whether a streamed item comes from the answer's graph node (`stream_steps`); one with no node (a chain's) does.

    Example:
        >>> _of_node(("Paris", {"langgraph_node": "chatbot"}), None), _of_node(("x", {"langgraph_node": "tools"}), None)
        (True, False)
    """
    metadata = item[1] if isinstance(item, tuple) and len(item) > 1 else None
    if not isinstance(metadata, Mapping) or "langgraph_node" not in metadata:
        return True
    name = metadata["langgraph_node"]
    if node is not None:
        return bool(name == node)
    return not (name == "tools" or (isinstance(name, str) and "." in name))


def _steps(chunk: Any, calls: _Calls) -> Iterator[StreamStep]:
    if isinstance(chunk, str):
        if chunk:
            yield AnswerText(text=chunk)
        return
    if isinstance(chunk, ToolMessage):
        yield _tool_result(chunk, calls)
        return
    if not isinstance(chunk, AIMessage):  # a person's or a system's words are never the answer
        return
    # A message's reasoning comes before its words, its words before its tool calls; rewritten agent
    # chunks carry standard text and reasoning blocks.
    reasoning = reasoning_text(chunk)
    if reasoning:
        yield AnswerReasoning(text=reasoning)
    text = content_text(chunk.content)
    if text:
        yield AnswerText(text=text)
    if isinstance(chunk, AIMessageChunk):
        yield from _call_deltas(chunk, calls)
    data = chunk.response_metadata.get("references")
    if isinstance(data, dict):
        yield ReferencesFound(references=AnswerReferences.from_dict(data))


def _call_deltas(chunk: AIMessageChunk, calls: _Calls) -> Iterator[ToolCallDelta]:
    for piece in chunk.tool_call_chunks:
        index = piece.get("index")
        call_id = piece.get("id") or (calls.by_index.get(index) if isinstance(index, int) else None)
        if not call_id:
            continue
        if isinstance(index, int):
            calls.by_index[index] = call_id
        name = piece.get("name")
        first = call_id not in calls.names
        if name:
            calls.names.setdefault(call_id, name)
        arguments = piece.get("args") or ""
        calls.arguments[call_id] = calls.arguments.get(call_id, "") + arguments
        if first or arguments:
            yield ToolCallDelta(call_id=call_id, name=calls.names.get(call_id) if first else None, arguments=arguments)


def _tool_result(message: ToolMessage, calls: _Calls) -> ToolResult:
    call_id = message.tool_call_id
    arguments = _arguments(calls.arguments.get(call_id, ""))
    artifact = message.artifact
    found = isinstance(artifact, list) and all(hasattr(d, "metadata") for d in artifact)
    documents = tuple(artifact) if found else None
    return ToolResult(
        call_id=call_id,
        name=message.name or calls.names.get(call_id, "tool"),
        arguments=arguments,
        documents=documents,
        output=content_text(message.content),
        failed=message.status == "error",
    )


def _arguments(written: str) -> Any:
    """A tool call's arguments as the model wrote them: a dict when they are JSON, else the text."""
    try:
        return json.loads(written) if written else {}
    except ValueError:
        return written


def _error_text(output: str) -> str:
    """A failed tool's error as ``errorText``: the first line of its message's text."""
    lines = output.strip().splitlines()
    return lines[0] if lines else "the tool failed"


# -- Steps as UI message chunks ----------------------------------------------------------


@dataclass(kw_only=True)
class _Message:
    """The state of one UI message being written: the open text part and the references."""

    message_id: str
    ai7_fields: bool = False
    texts: int = 0
    open_text: str | None = None
    reasonings: int = 0
    open_reasoning: str | None = None
    written: list[str] = field(default_factory=list)  # the open text part's deltas
    open_calls: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> name, arguments so far
    references: AnswerReferences | None = None

    def step(self, step: StreamStep) -> Iterator[dict[str, Any]]:
        if isinstance(step, AnswerReasoning):
            # An open text part stays open (parts are written by id): the answer's text stays one part, and
            # its text-end gets the citations.
            if self.open_reasoning is None:
                self.reasonings += 1
                self.open_reasoning = f"{self.message_id}-reasoning-{self.reasonings}"
                yield {"type": "reasoning-start", "id": self.open_reasoning}
            yield {"type": "reasoning-delta", "id": self.open_reasoning, "delta": step.text}
            return
        if not isinstance(step, ReferencesFound):
            yield from self.end_reasoning()
        if isinstance(step, AnswerText):
            if self.open_text is None:
                self.texts += 1
                self.open_text = f"{self.message_id}-text-{self.texts}"
                yield {"type": "text-start", "id": self.open_text}
            self.written.append(step.text)
            yield {"type": "text-delta", "id": self.open_text, "delta": step.text}
        elif isinstance(step, ToolCallDelta):
            yield from self.end_text()
            if step.call_id not in self.open_calls:
                self.open_calls[step.call_id] = (step.name or "tool", "")
                yield {"type": "tool-input-start", "toolCallId": step.call_id, "toolName": step.name or "tool"}
            name, written = self.open_calls[step.call_id]
            self.open_calls[step.call_id] = (name, written + step.arguments)
            if step.arguments:
                yield {"type": "tool-input-delta", "toolCallId": step.call_id, "inputTextDelta": step.arguments}
        elif isinstance(step, ToolResult):
            yield from self.end_text()
            self.open_calls.pop(step.call_id, None)
            call = {"toolCallId": step.call_id, "toolName": step.name}
            yield {"type": "tool-input-available", **call, "input": step.arguments}
            if step.failed:  # the client shows the tool as failed, with its error
                yield {"type": "tool-output-error", "toolCallId": step.call_id, "errorText": _error_text(step.output)}
            else:
                yield {"type": "tool-output-available", "toolCallId": step.call_id, "output": _tool_output(step)}
        else:
            self.references = step.references

    def end_reasoning(self) -> Iterator[dict[str, Any]]:
        if self.open_reasoning is not None:
            yield {"type": "reasoning-end", "id": self.open_reasoning}
            self.open_reasoning = None

    def end_text(self, references: AnswerReferences | None = None) -> Iterator[dict[str, Any]]:
        if self.open_text is not None:
            end = {"type": "text-end", "id": self.open_text}
            wanted = references is not None and self.ai7_fields  # offsets only ai 7 reads
            citations = _part_citations("".join(self.written), references) if wanted and references else []
            yield {**end, "citations": citations} if citations else end
            self.open_text = None
            self.written = []

    def finish(self) -> Iterator[dict[str, Any]]:
        references = self.references
        yield from self.end_reasoning()
        yield from self.end_text(references)
        if references is not None:
            yield from (_source_part(r.number, r.source, r.title) for r in references.references)
            titles = {r.number: r.title or r.source or "" for r in references.references}
            for index, citation in enumerate(references.citations):
                passage = citation.passage
                data = {
                    "index": index,
                    "number": citation.number,
                    "title": titles.get(citation.number, ""),
                    "text": citation.text,
                    "supported": citation.supported,
                    "passage": None
                    if passage is None
                    else {"excerpt": passage.excerpt, "document_position": passage.document_position},
                }
                yield {"type": "data-citation", "id": f"{self.message_id}-citation-{index}", "data": data}
            yield {"type": "data-references", "id": f"{self.message_id}-references", "data": references.to_dict()}
        yield {"type": "finish", "finishReason": "stop"} if self.ai7_fields else {"type": "finish"}

    def fail(self, error: Exception) -> Iterator[dict[str, Any]]:
        """The chunks that end the message on ``error``: open parts ended, open tool calls failed, one error line.

        A tool call the model made whose result never came (the tool raised) gets its input and a
        ``tool-output-error``, as the AI SDK's own ``streamText`` ends it: the client stops showing it as running.
        """
        line = f"{type(error).__name__}: {first_line(error)}"
        yield from self.end_reasoning()
        yield from self.end_text()
        for call_id, (name, written) in self.open_calls.items():
            yield {
                "type": "tool-input-available",
                "toolCallId": call_id,
                "toolName": name,
                "input": _arguments(written),
            }
            yield {"type": "tool-output-error", "toolCallId": call_id, "errorText": line}
        self.open_calls.clear()
        yield {"type": "error", "errorText": line}


def _part_citations(text: str, references: AnswerReferences) -> list[dict[str, Any]]:
    """The citations of ``text-end`` (``ai7_fields``): the words each backs in the part, and its source.

    The references' offsets are into the cited message's text: they are
    given only when that text is this whole part (each citation's words are
    where its offsets say), never guessed. Python counts code points, the
    client (JavaScript) UTF-16 units: ``startIndex`` and ``endIndex`` are
    written in UTF-16 units, so that ``text.slice(startIndex, endIndex)`` is
    the citation's words also after an emoji or a flag.
    """
    if not references.citations or any(text[c.text_start : c.text_end] != c.text for c in references.citations):
        return []
    sources = {r.number: _source_part(r.number, r.source, r.title) for r in references.references}
    utf16 = _utf16_index(text)
    citations = []
    for citation in references.citations:
        part = sources.get(citation.number)
        if part is None:
            continue
        source = {"type": "source", "id": part["sourceId"], "providerMetadata": part["providerMetadata"]}
        if part["type"] == "source-url":
            source |= {"sourceType": "url", "url": part["url"], **({"title": part["title"]} if "title" in part else {})}
        else:
            source |= {"sourceType": "document", "mediaType": part["mediaType"], "title": part["title"]}
            source |= {"filename": part["filename"]} if "filename" in part else {}
        cited = {"source": source, "startIndex": utf16(citation.text_start), "endIndex": utf16(citation.text_end)}
        citations.append(cited | ({"citedText": citation.passage.excerpt} if citation.passage else {}))
    return citations


def _utf16_index(text: str) -> Callable[[int], int]:
    """How a code point index of ``text`` reads in UTF-16 (JavaScript's): one more per character past U+FFFF before.

    The characters past U+FFFF are found once, so that a long answer's many citations cost one pass over it.

    Example:
        >>> utf16 = _utf16_index("\U0001f600 Paris, \U0001f1eb\U0001f1f7 France")
        >>> utf16(2), utf16(16), utf16(17)
        (3, 19, 20)
    """
    if text.isascii():
        return _same_index
    astral = [match.start() for match in _ASTRAL.finditer(text)]
    return lambda index: index + bisect.bisect_left(astral, index)


def _same_index(index: int) -> int:
    return index


# A character past U+FFFF: two UTF-16 units (a surrogate pair) in JavaScript's strings.
_ASTRAL: Final = re.compile("[\U00010000-\U0010ffff]")


def _tool_output(step: ToolResult) -> Any:
    """A tool's ``output``: its text, or the title and source of each document it found, as the source parts give them.

    Metadata values are written as text (a ``pathlib.Path`` source, a date
    title); ``source`` is the document's web address when it has a safe
    http(s) one, as a ``source-url`` part's ``url``, else ``None`` with the
    source as text in ``filename``, as a ``source-document`` part's.
    """
    if step.documents is None:
        return step.output
    documents = []
    for document in step.documents:
        metadata = document.metadata if isinstance(document.metadata, Mapping) else {}
        title, source = (
            _text_or_none(metadata.get("title")),
            _text_or_none(metadata.get("source") or metadata.get("url")),
        )
        url = _web_url(source)
        documents.append({"title": title, "source": url, **({"filename": source} if url is None and source else {})})
    return {"documents": documents}


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _web_url(source: str | None) -> str | None:
    """``source`` when it is an http(s) URL `safe_url` allows (what a ``source-url`` part may carry), else None."""
    url = safe_url(source)
    return url if url is not None and url.lower().startswith(("http://", "https://")) else None


def _source_part(number: int, source: str | None, title: str | None) -> dict[str, Any]:
    metadata = {"langchain_refs": {"number": number}}
    url = _web_url(source)
    if url is not None:
        part = {"type": "source-url", "sourceId": f"source-{number}", "url": url}
        return {**part, **({"title": title} if title else {}), "providerMetadata": metadata}
    return {
        "type": "source-document",
        "sourceId": f"source-{number}",
        "mediaType": "text/plain",
        "title": title or source or "untitled document",
        **({"filename": source} if source else {}),
        "providerMetadata": metadata,
    }


async def ui_message_chunks(
    stream: AsyncIterable[Any],
    *,
    message_id: str | None = None,
    ai7_fields: bool = False,
    answer_node: str | None = None,
) -> AsyncIterator[dict[str, Any]]:
    """The UI message chunks (dicts) of a cited LangChain stream (see the module header).

    A failure of the stream ends the message with an ``error`` chunk holding
    one line (``"<Error type>: <first line>"``); the text streamed before it
    stays (its text part is ended first), and a tool call left without its
    result gets a ``tool-output-error`` first.

    Args:
        stream: what a ``manage_references(...)`` chain's ``astream`` yields, or an agent's
            ``astream(..., stream_mode="messages")`` (see `stream_steps`).
        message_id: the ``start`` chunk's ``messageId`` (default: a new random id).
        ai7_fields: also send the fields only ``ai`` 7 reads, ``text-end``'s ``citations`` and
            ``finish``'s ``finishReason`` (``ai`` 5 before 5.0.217 and ``ai`` 6 before 6.0.231
            refuse such a chunk, and ``useChat`` stops there). Default: the fields every ``ai``
            5, 6 and 7 reads.
        answer_node: the graph node whose AI messages are the answer (`stream_steps`).

    Example:
        >>> import asyncio
        >>> async def failing():
        ...     yield "Paris"
        ...     raise RuntimeError("the model went away\\ntraceback...")
        >>> async def collect():
        ...     return [c async for c in ui_message_chunks(failing(), message_id="m1")]
        >>> asyncio.run(collect())[-1]
        {'type': 'error', 'errorText': 'RuntimeError: the model went away'}
    """
    message = _Message(message_id=message_id or uuid.uuid4().hex, ai7_fields=ai7_fields)
    yield {"type": "start", "messageId": message.message_id}
    try:
        async for step in stream_steps(stream, answer_node=answer_node):
            for chunk in message.step(step):
                yield chunk
    except Exception as error:  # the model or a tool failed: the client gets one line
        for chunk in message.fail(error):
            yield chunk
        return
    for chunk in message.finish():
        yield chunk


def sse_data(data: Any) -> str:
    """``data`` as JSON for one SSE line: no line break, and no ``<``, ``>`` or ``&`` (``\\u`` escapes).

    Example:
        >>> sse_data({"text": "<b>\\n"})
        '{"text": "\\\\u003cb\\\\u003e\\\\n"}'
    """
    # json.dumps escapes every line break; < > & occur only inside JSON strings,
    # where \uXXXX means the same text, so no event carries a character of markup.
    payload = json.dumps(data, ensure_ascii=False)
    if not payload.isascii():
        try:
            payload.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate (a file name that is not UTF-8, an emoji a model split across two chunks): UTF-8
            # cannot write it, a JSON escape can, and JavaScript joins the two halves of a split emoji again.
            payload = json.dumps(data)
    return payload.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


async def ui_message_sse(chunks: AsyncIterable[Mapping[str, Any]]) -> AsyncIterator[str]:
    """Each chunk as one Server-Sent Event (``data: ...``), then ``data: [DONE]``.

    A chunk that cannot be written as JSON (a value of a type JSON has not)
    becomes an ``error`` chunk naming its type and the value's, and ends the
    stream: the client is told, never cut off.

    Example:
        >>> import asyncio
        >>> async def chunks():
        ...     yield {"type": "start"}
        >>> async def collect():
        ...     return "".join([event async for event in ui_message_sse(chunks())])
        >>> asyncio.run(collect())
        'data: {"type": "start"}\\n\\ndata: [DONE]\\n\\n'
    """
    async for chunk in chunks:
        try:
            data = sse_data(chunk)
        except (TypeError, ValueError) as error:  # a value JSON cannot hold: the client is told, the stream ends
            kind = chunk.get("type", "chunk")
            line = f"{type(error).__name__}: the {kind} chunk cannot be written as JSON: {first_line(error)}"
            yield f"data: {sse_data({'type': 'error', 'errorText': line})}\n\n"
            close = getattr(chunks, "aclose", None)
            if close is not None:
                await close()
            break
        yield f"data: {data}\n\n"
    yield "data: [DONE]\n\n"


def ui_message_response(chunks: AsyncIterable[Mapping[str, Any]]) -> StreamingResponse:
    """A Starlette (or FastAPI) response streaming ``chunks`` as a UI message stream.

    Needs Starlette (the ``serve`` extra, or FastAPI).

    Example:
        >>> async def chunks():
        ...     yield {"type": "start"}
        >>> ui_message_response(chunks()).headers["x-vercel-ai-ui-message-stream"]
        'v1'
    """
    from starlette.responses import StreamingResponse

    return StreamingResponse(
        ui_message_sse(chunks), media_type="text/event-stream", headers=dict(UI_MESSAGE_STREAM_HEADERS)
    )


def question_of(body: Any) -> tuple[str, str]:
    """The chat id and the question of a ``useChat`` request body, or a ValueError naming what is wrong.

    The body is what the AI SDK's default transport sends:
    ``{"id", "messages": [UIMessage...], "trigger"}``; the question is the
    text of the last user message's ``text`` parts. A question over 4,000
    characters is a `QuestionTooLongError` (a ValueError: a server answers 413).

    Example:
        >>> question_of({"id": "c1", "messages": [
        ...     {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Where is Paris?"}]}]})
        ('c1', 'Where is Paris?')
    """
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        msg = 'send the body useChat sends: {"id": ..., "messages": [...]}'
        raise ValueError(msg)
    chat_id = body.get("id")
    if not isinstance(chat_id, str) or not 0 < len(chat_id) <= 200:
        msg = 'the body\'s "id" must be the chat id, a string of 1 to 200 characters'
        raise ValueError(msg)
    users = _user_messages(body)
    parts = users[-1].get("parts", []) if users else []
    if not isinstance(parts, list):
        msg = f'the last user message\'s "parts" must be a list of parts, got {json.dumps(parts)[:80]}'
        raise ValueError(msg)
    question = _text_of(users[-1]) if users else ""
    if not question:
        msg = "the last user message has no text"
        raise ValueError(msg)
    if len(question) > _MAX_QUESTION:
        msg = f"the question is over {_MAX_QUESTION} characters"
        raise QuestionTooLongError(msg)
    problem = utf8_problem(chat_id + question)  # "\ud800": valid JSON, but no answer could write it back
    if problem is not None:
        msg = f"the question or the chat id {problem}"
        raise ValueError(msg)
    return chat_id, question


class QuestionTooLongError(ValueError):
    """The question of a request is longer than an answer is given for (`question_of`): a 413, not a 400.

    Example:
        >>> issubclass(QuestionTooLongError, ValueError)
        True
    """


def earlier_questions(body: Any) -> tuple[str, ...]:
    """The questions of the user messages before the last one in a ``useChat`` body: the turns the client holds.

    After ``regenerate()`` or an edited question, ``useChat`` sends the
    conversation without the answers it dropped: these are the questions
    still in it, oldest first (a message without text gives ``""``). Read
    the body with `question_of` first: this reads only what it accepts.

    Example:
        >>> def user(text):
        ...     return {"role": "user", "parts": [{"type": "text", "text": text}]}
        >>> earlier_questions({"id": "c1", "messages": [user("Paris?"), {"role": "assistant", "parts": []},
        ...                                            user("Rome?")]})
        ('Paris?',)
    """
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return ()
    return tuple(_text_of(message) for message in _user_messages(body)[:-1])


def turns_the_client_holds(body: Any) -> tuple[str, ...] | None:
    """The questions of the earlier turns ``useChat`` still shows, or None to keep every turn the server holds.

    ``regenerate()`` (``trigger: "regenerate-message"``, ``messageId`` the
    answer to redo) and an edited question (``messageId`` the question)
    send the conversation without the turns they drop: the server drops
    them too (`drop_turns`). Any other body keeps them all: a front end may
    send only its latest messages, and a turn that failed is the client's,
    not the server's.

    Example:
        >>> def user(text):
        ...     return {"role": "user", "parts": [{"type": "text", "text": text}]}
        >>> turns_the_client_holds({"id": "c1", "messages": [user("Paris?")], "trigger": "regenerate-message",
        ...                         "messageId": "a1"})
        ()
        >>> turns_the_client_holds({"id": "c1", "messages": [user("Paris?")], "trigger": "submit-message"}) is None
        True
    """
    if not isinstance(body, dict):
        return None
    if body.get("trigger") == "regenerate-message" or isinstance(body.get("messageId"), str):
        return earlier_questions(body)
    return None


def held_turns(questions: Sequence[str], earlier: Sequence[str]) -> int:
    """How many of a conversation's kept turns (by their ``questions``, oldest first) the client still holds.

    A server may keep the last turns only, and the client all of them: the
    kept turns still held are the longest run of the first kept ones whose
    questions are the client's last earlier ones (`turns_the_client_holds`).

    Example:
        >>> held_turns(["A?", "B?", "C?"], ["A?", "B?"]), held_turns(["B?", "C?"], ["A?", "B?", "C?"])
        (2, 2)
    """
    for count in range(min(len(questions), len(earlier)), 0, -1):
        if list(questions[:count]) == list(earlier[len(earlier) - count :]):
            return count
    return 0


async def drop_turns(
    graph: Any, config: Mapping[str, Any], earlier: Sequence[str], *, as_node: str | None = None
) -> None:
    """Remove from a LangGraph agent's thread each turn (a question and what followed it) the client dropped.

    ``earlier`` is `turns_the_client_holds` of the request: call this
    before running the agent on its question, so that after
    ``regenerate()`` or an edited question the thread holds what the
    reader sees, not the turns they replaced. The messages go through the
    graph's ``messages`` reducer (``RemoveMessage``), as the node
    ``as_node``: by default its ``model`` node where it has one
    (``create_agent``'s), else the node LangGraph picks (name one for a graph
    whose last step ran several nodes: LangGraph cannot pick then).
    A graph with no checkpointer in this process keeps no thread to drop
    from (a ``RemoteGraph``: drop them on its server, as ``langgraph-sdk``'s
    ``threads.update_state`` does).

    Example:
        >>> import asyncio
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from langgraph.graph import MessagesState, StateGraph
        >>> graph = (StateGraph(MessagesState).add_node("model", lambda s: {"messages": [("ai", "Big.")]})
        ...          .add_edge("__start__", "model").compile(checkpointer=InMemorySaver()))
        >>> config = {"configurable": {"thread_id": "c1"}}
        >>> _ = graph.invoke({"messages": [("user", "Paris?")]}, config)
        >>> asyncio.run(drop_turns(graph, config, []))  # regenerate the first answer: its turn goes
        >>> graph.get_state(config).values["messages"]
        []
    """
    if getattr(graph, "checkpointer", None) is None:
        return  # no thread is kept: each request is a conversation of its own
    state = await graph.aget_state(config)
    messages = state.values.get("messages", []) if state is not None else []
    questions = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    held = held_turns([messages[i].text for i in questions], earlier)
    if held < len(questions):
        dropped = [RemoveMessage(id=m.id) for m in messages[questions[held] :] if m.id]
        if as_node is None and "model" in getattr(graph, "nodes", {}):
            as_node = "model"
        await graph.aupdate_state(config, {"messages": dropped}, as_node=as_node)


def _user_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if isinstance(m, dict) and m.get("role") == "user"]


def _text_of(message: dict[str, Any]) -> str:
    """A UI message's text: its ``text`` parts joined, without the spaces around."""
    parts = message.get("parts", [])
    texts = (
        [p.get("text") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
        if isinstance(parts, list)
        else []
    )
    return "".join(t for t in texts if isinstance(t, str)).strip()
