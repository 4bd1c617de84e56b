"""`ChunkRewriter`: one answer's chunks in, rewritten chunks out, through one session.

The one chunk mapper behind `ReferencesRunnable` (``manage_references``) and
the agents wing's ``ReferencesChatModel``. Every chunk in gives exactly one
chunk out, then `ChunkRewriter.finish` adds one last chunk with the held
tail, the list of sources, the references as data and LangChain's standard
``Citation`` annotations.

Two shapes for message chunks (``output_version``):

* ``"v0"`` (`ChunkRewriter.on_chunk`): as the model sent them. ``str``
  content stays ``str`` -- a chunk whose text needs no change passes on as
  the very same object, which keeps the hot path as fast as it was -- and
  the annotations are in ``response_metadata["citations"]``.
* ``"v1"`` (`ChunkRewriter.on_chunk_v1`): ``str`` content becomes one
  standard text block per chunk, ``{"type": "text", "text": ..., "index":
  0}``, so that the chunks add up to one text block which the last chunk's
  block gives its ``annotations``; tool-call chunk indices move up by one,
  so that no tool call shares the text's index (LangGraph's v3 event bridge
  keys blocks by index, and would merge them). Every chunk carries the
  answer's id.

List content (the model's own text blocks) is rewritten block by block in
both shapes, and the annotations go on the blocks they fall in. Citations a
model makes natively (``annotations`` / ``citations`` on its text blocks,
see `native_citations`) are numbered with the marker citations and rendered
at the end of the block they annotate: when a chunk moves on to another
block, or when the answer ends.

A whole answer (``invoke``) has its blocks given their positions as
indices first (`whole_answer`), taken off again once it is rewritten
(`without_added_indices`). Where annotations cannot go: a streamed text
block without an ``index`` is its own element of the message's content, so
annotations can be attached only to the last such block (the one the final
chunk writes); the others' are in ``response_metadata["citations"]`` only,
as are all of a ``str`` answer's.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, Literal, TypeVar

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk
from pydantic import BaseModel

from langchain_refs.streaming._provider_content import (
    GROUNDING_KEY,
    HAS_CHUNK_POSITION,
    REASONING_KEY,
    grounding_citations,
    has_native_citations,
    native_citations,
    native_media,
    native_source_key,
    provider_end_index,
    provider_native,
    standard_content,
    with_refusal,
    without_grounding_annotations,
    without_native,
)
from langchain_refs.streaming._references import data_and_standard_citations
from langchain_refs.streaming._session import ReferenceSession, Verifier

__all__ = [
    "ChunkRewriter",
    "OutputVersion",
    "generation_chunk",
    "join_text_runs",
    "merge_chunks",
    "whole_answer",
    "without_added_indices",
]

OutputVersion = Literal["v0", "v1"]
"""The shape of a rewritten message's text: the model's own (``"v0"``), or standard content blocks (``"v1"``)."""

ItemT = TypeVar("ItemT")

# The index of the text block when the inner model streams str content.
_TEXT_INDEX: Final = 0


def _as_chunk(message: Any) -> AIMessageChunk:
    if isinstance(message, AIMessageChunk):
        return message
    if isinstance(message, AIMessage):
        return AIMessageChunk(**message.model_dump(exclude={"type"}))
    msg = f"manage_references() wraps runnables that produce str or AI messages; got {type(message).__name__}"
    raise TypeError(msg)


_set: Final = object.__setattr__
_new_chunk: Final = AIMessageChunk.__new__
_new_generation: Final = ChatGenerationChunk.__new__
_FIELDS: Final = frozenset(AIMessageChunk.model_fields)
# The fields `ChunkRewriter.on_chunk_v1` sets on a str chunk it rewrites.
_REWRITTEN_V1: Final = frozenset({"id", "content", "chunk_position"} if HAS_CHUNK_POSITION else {"id", "content"})
# What validation sets on a `ChatGenerationChunk` made with ``message=`` alone (its validator sets the text).
_GENERATION_FIELDS_SET: Final = frozenset({"message", "text"})
_CONTENT: Final = frozenset({"content"})


def _slot_setter(name: str) -> Callable[[Any, Any], None]:
    """The setter of one of a pydantic model's own slots (``__dict__``, ``__pydantic_extra__``...).

    The slot's descriptor's ``__set__``, as ``object.__setattr__`` finds and calls it (for half its cost:
    four per chunk copied); ``object.__setattr__`` itself where pydantic's ``BaseModel`` has no such slot.
    """
    setter = getattr(vars(BaseModel).get(name), "__set__", None)
    if setter is None:
        return lambda value, slot_value: _set(value, name, slot_value)
    return setter  # type: ignore[no-any-return]


_set_dict: Final = _slot_setter("__dict__")
_set_fields_set: Final = _slot_setter("__pydantic_fields_set__")
_set_extra: Final = _slot_setter("__pydantic_extra__")
_set_private: Final = _slot_setter("__pydantic_private__")


def _constructed(value: Any, fields: dict[str, Any], fields_set: set[str], extra: dict[str, Any] | None) -> None:
    """Fill ``value`` (made by ``__new__``) as pydantic's own copy fills it: fields, fields set, extra, no private."""
    _set_dict(value, fields)
    _set_fields_set(value, fields_set)
    _set_extra(value, extra)
    _set_private(value, None)


def _reasons(chunk: AIMessageChunk) -> str | None:
    """The reasoning a chunk carries in ``additional_kwargs`` (Ollama, DeepSeek, xAI, Groq), else None."""
    reasoning = chunk.additional_kwargs.get(REASONING_KEY)
    return reasoning if isinstance(reasoning, str) else None


def copy_chunk(chunk: AIMessageChunk, update: dict[str, Any]) -> AIMessageChunk:
    """``chunk.model_copy(update=update)``, for fields of the message, without pydantic's general path.

    The same shallow copy pydantic's ``__copy__`` makes (the fields, the set of
    fields set, the extra fields), with ``update`` applied to the fields and
    added to the fields set, and no validation, as ``model_copy`` does; for
    two thirds of its cost (1.2 µs against 1.9), as every chunk whose text
    changes is copied. A subclass, a chunk with private attributes, or an
    update of anything but fields goes through ``model_copy`` itself.

    Example:
        >>> chunk = AIMessageChunk(content="a[1](id=1)", id="run-1", response_metadata={"model": "m"})
        >>> copied = copy_chunk(chunk, {"content": "a[1]"})
        >>> copied == chunk.model_copy(update={"content": "a[1]"}), copied.content, chunk.content
        (True, 'a[1]', 'a[1](id=1)')
    """
    if type(chunk) is not AIMessageChunk or chunk.__pydantic_private__ is not None or not update.keys() <= _FIELDS:
        return chunk.model_copy(update=update)
    fields = chunk.__dict__.copy()
    fields.update(update)
    return _chunk_copied(chunk, fields, chunk.__pydantic_fields_set__ | update.keys())


def _chunk_copied(chunk: AIMessageChunk, fields: dict[str, Any], fields_set: set[str]) -> AIMessageChunk:
    """A new `AIMessageChunk` with ``fields`` (those of ``chunk``, updated) and ``chunk``'s extra fields, copied."""
    copied = _new_chunk(AIMessageChunk)
    extra = chunk.__pydantic_extra__
    _constructed(copied, fields, fields_set, None if extra is None else extra.copy())
    return copied


def generation_chunk(message: AIMessageChunk, text: str | None = None) -> ChatGenerationChunk:
    """``ChatGenerationChunk(message=message)``, without validation when ``text`` (the message's text) is given.

    Validation only checks that ``message`` is a message chunk and sets the
    generation's text from it; a caller that made the message knows both, and
    saves two thirds of the cost (0.7 µs against 3.3) on a chunk a chat model
    yields per token. Without ``text`` (content whose text the caller did not
    write), or for anything but an `AIMessageChunk`, the validated constructor.

    Example:
        >>> message = AIMessageChunk(content=[{"type": "text", "text": "Paris[1]", "index": 0}])
        >>> generation_chunk(message, "Paris[1]") == ChatGenerationChunk(message=message)
        True
    """
    if text is None or type(message) is not AIMessageChunk:
        return ChatGenerationChunk(message=message)
    generation = _new_generation(ChatGenerationChunk)
    fields = {"text": text, "generation_info": None, "type": "ChatGenerationChunk", "message": message}
    _constructed(generation, fields, set(_GENERATION_FIELDS_SET), None)
    return generation


def _with_generation_info(generation: ChatGenerationChunk) -> Any:
    """The message of a generation its reader owns, as ``stream`` gives it: the generation info in its metadata."""
    message = generation.message
    if generation.generation_info:
        message.response_metadata = {**generation.generation_info, **message.response_metadata}
    return message


def merge_chunks(chunks: Iterable[Any]) -> Any:
    """Streamed chunks added up into the value ``invoke`` returns: an ``AIMessage``, or the ``str``.

    Message chunks are added as LangChain adds a model call's chunks, all at
    once (``first + [the others]``: one pass, where adding them one by one
    copies the message so far at every chunk), the runs of text-only chunks
    joined first (`join_text_runs`); the streaming-only fields
    (``tool_call_chunks``, ``chunk_position``) do not reach the message, and
    a refusal given outside the content of an answer marked standard joins
    its content (`with_refusal`).

    Example:
        >>> merge_chunks(["Par", "is"])
        'Paris'
        >>> merge_chunks([AIMessageChunk(content="Par", id="a"), AIMessageChunk(content="is")]).content
        'Paris'
    """
    texts: list[str] = []
    messages: list[Any] = []
    for chunk in chunks:
        if isinstance(chunk, str):
            texts.append(chunk)
        else:
            messages.append(chunk)
    if not messages:
        return "".join(texts)
    messages = join_text_runs(messages, messages, _itself) or messages
    message = messages[0]
    if all(type(m) is AIMessageChunk for m in messages):
        message = message + messages[1:]
    else:
        for chunk in messages[1:]:
            message = message + chunk
    return with_refusal(AIMessage(**message.model_dump(exclude={"type", "tool_call_chunks", "chunk_position"})))


def whole_answer(message: Any, *, standard: bool) -> tuple[Any, frozenset[int]]:
    """A whole answer made ready to be rewritten as one chunk, and the block indices it was given.

    Blocks of list content are merged by ``index``: a whole answer's blocks
    have none, so the list of sources and the annotations of the last chunk
    could not join the text blocks they belong to. Each block without one is
    given its position (or, when another block has that index, the first
    index no block has), as when the answer streams; `without_added_indices`
    takes them off the rewritten answer. A bare string becomes a text block,
    but in the model's own shape (v0) a list of strings alone stays one.
    With ``standard`` (``"v1"``), its provider-native blocks are put
    in the standard form first (`standard_content`, read as the whole
    message's), and the answer marked ``output_version="v1"``. Anything but
    an AI message is returned as it is.

    Example:
        >>> answer = AIMessage(content=[{"type": "thinking", "thinking": "Hm."}, "Hi"],
        ...     response_metadata={"model_provider": "anthropic"})
        >>> ready, added = whole_answer(answer, standard=True)
        >>> ready.content, sorted(added), ready.response_metadata["output_version"]
        ([{'type': 'reasoning', 'reasoning': 'Hm.', 'index': 0}, {'type': 'text', 'text': 'Hi', 'index': 1}], \
[0, 1], 'v1')
    """
    if not isinstance(message, AIMessage) or not isinstance(message.content, list):
        return message, frozenset()
    content = message.content
    update: dict[str, Any] = {}
    if standard:
        translated = standard_content(content, message)
        if translated is not None:
            content = translated
            update["response_metadata"] = {**message.response_metadata, "output_version": "v1"}
    indexed: list[Any] = []
    added: set[int] = set()
    taken = {block["index"] for block in content if isinstance(block, dict) and "index" in block}
    free = 0
    # Standard content has blocks only; the model's own shape (v0) keeps a list of strings alone as it is
    # (beside other blocks, they become text blocks: the list of sources and Gemini's grounding join them).
    blocks_only = standard or not all(isinstance(block, str) for block in content)
    for position, block in enumerate(content):
        if isinstance(block, str) and blocks_only:
            block = {"type": "text", "text": block}
        if isinstance(block, dict) and "index" not in block:
            # Its position, unless another block has that index: then the first index no block has.
            index = position
            if index in taken:
                while free in taken:
                    free += 1
                index = free
            taken.add(index)
            block = {**block, "index": index}
            added.add(index)
        indexed.append(block)
    if added or update:
        update["content"] = indexed
        message = message.model_copy(update=update)
    return message, frozenset(added)


def without_added_indices(message: Any, added: frozenset[int]) -> Any:
    """``message`` (a rewritten whole answer) without the block indices `whole_answer` gave it.

    Example:
        >>> answer = AIMessage(content=[{"type": "text", "text": "Hi", "index": 0}])
        >>> without_added_indices(answer, frozenset({0})).content
        [{'type': 'text', 'text': 'Hi'}]
    """
    if not added or not isinstance(message, AIMessage) or not isinstance(message.content, list):
        return message
    content = [
        {k: v for k, v in block.items() if k != "index"}
        if isinstance(block, dict) and block.get("index") in added
        else block
        for block in message.content
    ]
    return message.model_copy(update={"content": content})


def _itself(message: AIMessageChunk) -> AIMessageChunk:
    return message


def join_text_runs(
    items: list[ItemT], messages: Sequence[Any], joined: Callable[[AIMessageChunk], ItemT]
) -> list[ItemT] | None:
    """``items`` with each run of text-only message chunks made one, so that LangChain adds them up in linear time.

    LangChain adds text blocks up by copying the text so far at every chunk
    (a cost per chunk that grows with the answer). ``messages[k]`` is the
    message chunk ``items[k]`` carries (None: it may not join a run); a run
    is two or more in a row whose content is one ``{"type": "text", "text":
    ..., "index": 0}`` block (or none) and whose other fields equal the run's
    first's, fields that adding a chunk to itself leaves as they are (no
    usage, tool-call chunks or ``chunk_position``). A run becomes
    ``joined(message)``: its first message with the texts joined once. Adding
    up the result gives what adding up ``items`` gives (checked against
    LangChain's own sum in ``tests/unit_tests/test_agents_merge.py``). None:
    no run to join.

    Example:
        >>> chunks = [AIMessageChunk(content=[{"type": "text", "text": t, "index": 0}], id="a") for t in "Paris"]
        >>> [c.content for c in join_text_runs(chunks, chunks, lambda message: message)]
        [[{'type': 'text', 'text': 'Paris', 'index': 0}]]
    """
    out: list[ItemT] = []
    texts: list[str] = []
    start: AIMessageChunk | None = None
    has_block = False
    fields: dict[str, Any] = {}
    joined_any = False
    run_first = 0
    # The fields of the last chunk that could not start a run: its like (a provider that puts the
    # same metadata on every chunk) is passed on without asking again.
    refused: dict[str, Any] | None = None
    for k, message in enumerate(messages):
        text = _text_only(message)
        if text is not None:
            if start is not None and _same_rest(message, fields):
                texts.append(text)
                has_block = has_block or bool(message.content)
                continue
            if start is not None:
                joined_any = _end_run(out, items, run_first, k, start, texts, has_block, joined) or joined_any
                start = None
            if refused is None or not _same_rest(message, refused):
                if _keeps_itself(message):
                    start, texts, run_first = message, [text], k
                    has_block = bool(message.content)
                    fields = _rest(message)
                    continue
                refused = _rest(message)
        elif start is not None:
            joined_any = _end_run(out, items, run_first, k, start, texts, has_block, joined) or joined_any
            start = None
        out.append(items[k])
    if start is not None:
        joined_any = _end_run(out, items, run_first, len(messages), start, texts, has_block, joined) or joined_any
    return out if joined_any else None


def _end_run(
    out: list[ItemT],
    items: list[ItemT],
    first: int,
    end: int,
    start: AIMessageChunk,
    texts: list[str],
    has_block: bool,
    joined: Callable[[AIMessageChunk], ItemT],
) -> bool:
    """Put the run ``items[first:end]`` on ``out``: made one when it has two chunks or more (then True)."""
    if end - first == 1:
        out.append(items[first])
        return False
    content = [{"type": "text", "text": "".join(texts), "index": 0}] if has_block else []
    out.append(joined(start.model_copy(update={"content": content})))
    return True


def _text_only(message: Any) -> str | None:
    """The text of a chunk whose content is one index-0 standard text block ("" for no block), else None."""
    if type(message) is not AIMessageChunk or type(message.content) is not list:
        return None
    content = message.content
    if not content:
        return ""
    if len(content) != 1:
        return None
    block = content[0]
    if (
        type(block) is not dict
        or block.keys() != _TEXT_BLOCK_KEYS
        or block["type"] != "text"
        or type(block["index"]) is not int
        or block["index"] != 0
        or type(block["text"]) is not str
    ):
        return None
    text: str = block["text"]
    return text


_TEXT_BLOCK_KEYS: Final = frozenset({"type", "text", "index"})


def _rest(message: AIMessageChunk) -> dict[str, Any]:
    """A chunk's fields, to compare others' with (`_same_rest`); its content is not one of them."""
    return message.__dict__.copy()


def _same_rest(message: AIMessageChunk, fields: dict[str, Any]) -> bool:
    """Whether ``message``'s fields but its content are ``fields`` (`_rest` of another chunk).

    ``fields`` takes ``message``'s content first, so that one comparison of
    the two dicts (in C, each value first compared by identity) compares the rest.
    """
    own = message.__dict__
    if "content" not in own:
        return False
    fields["content"] = own["content"]
    same: bool = own == fields
    return same


def _keeps_itself(message: AIMessageChunk) -> bool:
    """Whether adding ``message``'s fields (but its content) to themselves leaves them as they are."""
    if message.__pydantic_extra__ or message.usage_metadata is not None or message.tool_call_chunks:
        return False
    if message.tool_calls or message.invalid_tool_calls or (HAS_CHUNK_POSITION and message.chunk_position is not None):
        return False
    bare = message.model_copy(update={"content": []})
    return _rest(bare + bare) == _rest(bare)


class _Segments:
    """Where each piece of the rewritten text went: block and offsets.

    The session numbers its output as one text; a message may hold it in
    several text blocks. A segment is (offset in the whole text, block key,
    offset in the block, length); a block's key is its ``index``, or an
    object of its own for a block without one. The last segment is kept
    open in fields of its own: text for the same block (every chunk of the
    usual answer) only lengthens it.
    """

    __slots__ = ("_closed", "_length", "_lengths", "_open_block", "_open_local", "_open_offset", "_open_size")

    def __init__(self) -> None:
        self._closed: list[tuple[int, Any, int, int]] = []
        # Where each block's text written so far ends (the open segment's block: where it began).
        self._lengths: dict[Any, int] = {}
        self._length = 0
        # The open segment: no block yet (a key no block has), offset, offset in its block, length.
        self._open_block: Any = _NO_SEGMENT
        self._open_offset = 0
        self._open_local = 0
        self._open_size = 0

    def add(self, block: Any, text: str) -> None:
        if not text:
            return
        size = len(text)
        if block == self._open_block:
            self._open_size += size
            self._length += size
            return
        if self._open_block is not _NO_SEGMENT:
            self._closed.append((self._open_offset, self._open_block, self._open_local, self._open_size))
            self._lengths[self._open_block] = self._open_local + self._open_size
        self._open_block = block
        self._open_offset = self._length
        self._open_local = self._lengths.get(block, 0)
        self._open_size = size
        self._length += size

    def segments(self) -> list[tuple[int, Any, int, int]]:
        """Every segment so far, in order (a new list: text added later does not change it)."""
        return [*self._closed, *self._open()]

    def _open(self) -> tuple[tuple[int, Any, int, int], ...]:
        """The open segment, alone (none before any text)."""
        if self._open_block is _NO_SEGMENT:
            return ()
        return ((self._open_offset, self._open_block, self._open_local, self._open_size),)

    def locate(self, start: int, end: int) -> tuple[Any, int, int] | None:
        """The block where ``[start, end)`` of the whole text ends, and the offsets in it.

        The words a citation backs end right before the citation, so they are
        placed in the block that holds their end; a start in an earlier
        segment is moved up to where that segment begins. None: no text there.
        """
        for offset, block, local, length in itertools.chain(self._closed, self._open()):
            if offset < end <= offset + length or offset == start == end:
                start = max(start, offset)
                return block, local + start - offset, local + end - offset
        return None


# The block key of no segment at all: equal to no block's key.
_NO_SEGMENT: Final = object()


class _OwnBlock:
    """The key of a text block that has no ``index``: itself alone."""

    __slots__ = ()


def _shifted(chunk: Any, by: int) -> Any:
    index = chunk.get("index")
    return {**chunk, "index": index + by} if isinstance(index, int) else chunk


class ChunkRewriter:
    """Maps the inner runnable's chunks to rewritten chunks for one answer.

    Args:
        session: the answer's `ReferenceSession`.
        documents: the documents the model was shown (for ``cited_text``
            when passages are off).
        track_output: keep the output text for tracers (`traced_output`).
        verify: checks the citations once the answer is complete.
        model_text_key: when given, the last chunk's ``response_metadata``
            holds, under this key, what the model wrote (markers and all).
        model_text_blocks_key: when given too, and the model wrote its text
            in two text blocks or more (around a server tool's call), the
            last chunk's ``response_metadata`` holds under this key how many
            characters of that text each block holds, in order.

    Example:
        >>> from langchain_core.documents import Document
        >>> from langchain_refs.streaming import TextReferenceStyle, ReferenceSession
        >>> docs = [Document("Paris is in France.", metadata={"source": "p.html"})]
        >>> style = TextReferenceStyle()
        >>> rewriter = ChunkRewriter(ReferenceSession(docs, source_key=style.source_of, style=style), documents=docs)
        >>> first = rewriter.on_chunk_v1(AIMessageChunk(content="Paris[1](id=1)."))
        >>> merged = first + rewriter.finish()
        >>> block = merged.content[0]
        >>> block["text"][block["annotations"][0]["start_index"]:block["annotations"][0]["end_index"]]
        'Paris'
    """

    __slots__ = (
        "_block_lengths",
        "_data",
        "_documents",
        "_first_id",
        "_grounding_read",
        "_message_id",
        "_model_text_blocks_key",
        "_model_text_key",
        "_native_seen",
        "_other_blocks",
        "_output",
        "_pending",
        "_pending_block",
        "_raw",
        "_segments",
        "_session",
        "_standard",
        "_str_output",
        "_str_tail",
        "_str_text_seen",
        "_tail_block",
        "_text_index",
        "_tool_calls",
        "_track_output",
        "_v1",
        "_verify",
        "_wants_id",
    )

    def __init__(
        self,
        session: ReferenceSession,
        *,
        documents: Sequence[Any] = (),
        track_output: bool = False,
        verify: Verifier | None = None,
        model_text_key: str | None = None,
        model_text_blocks_key: str | None = None,
    ) -> None:
        self._session = session
        self._documents = documents
        self._verify = verify
        self._str_output: bool | None = None
        self._message_id: str | None = None
        self._first_id: str | None = None
        self._wants_id = True
        self._track_output = track_output
        self._output: list[str] = []
        self._data: dict[str, Any] | None = None
        self._model_text_key = model_text_key
        self._model_text_blocks_key = model_text_blocks_key
        self._raw: list[str] = []
        self._segments = _Segments()
        # The block the held tail and the list go to: the last text block
        # seen (None: the answer's content is str).
        self._tail_block: dict[str, Any] | None = None
        self._v1 = False
        self._tool_calls = False
        # The index of the text block that str text goes to: 0, unless a block of list content the
        # model sent before its first str text has it (Gemini streams its thinking as a block at
        # 0, then its text as str): the text would be merged into that block.
        self._text_index = _TEXT_INDEX
        self._str_text_seen = False
        # The text block of str text, once some came (`_str_text`).
        self._str_tail: dict[str, Any] | None = None
        # Whether the list content `_blocks` rewrote last had a block other than text, and whether
        # any block so far was in a provider's own form.
        self._other_blocks = False
        self._native_seen = False
        # A block was put in the standard form (``"v1"``): the answer is then marked standard as a whole.
        self._standard = False
        # Native citations waiting for the end of their block, and that block's key.
        self._pending: list[dict[str, Any]] = []
        self._pending_block: Any = None
        # How much of each text block the model has written, by block key, in order: a native
        # citation's offsets count from its block's start; `model_text_blocks_key` lists them.
        self._block_lengths: dict[Any, int] = {}
        # Google's grounding of the answer, read from the first chunk that has it.
        self._grounding_read = False

    # -- chunks in, chunks out -----------------------------------------------

    def on_chunk(self, chunk: Any) -> Any:
        """The chunk to pass on for ``chunk`` (the model's shape, ``"v0"``), or None when there is none."""
        # The session is fed inline on the two hot paths below: one call less per chunk.
        if type(chunk) is not AIMessageChunk:
            if isinstance(chunk, str):
                self._str_output = True
                out = self._session.feed(chunk)
                if self._track_output:
                    self._output.append(out)
                return out or None
            chunk = _as_chunk(chunk)
        self._str_output = False
        if GROUNDING_KEY in chunk.response_metadata and not self._grounding_read:
            return self._grounded(chunk, self.on_chunk)
        if self._wants_id and chunk.id is not None:
            self._message_id = chunk.id
            # Prefer the provider's id over the ones LangChain makes up.
            self._wants_id = chunk.id.startswith("lc_")
        content = chunk.content
        update: dict[str, Any] | None = None
        if type(content) is str:
            out = self._session.feed(content)
            if self._track_output:
                self._output.append(out)
            if out is not content:
                if chunk.__pydantic_private__ is None and not (HAS_CHUNK_POSITION and chunk.chunk_position == "last"):
                    # The usual rewritten chunk: `copy_chunk` of its content alone, without its checks and update.
                    fields = chunk.__dict__.copy()
                    fields["content"] = out
                    return _chunk_copied(chunk, fields, chunk.__pydantic_fields_set__ | _CONTENT)
                update = {"content": out}
        else:
            update = {"content": self._blocks(content)}
        if HAS_CHUNK_POSITION and chunk.chunk_position == "last":
            # The last chunk is the one `finish` adds.
            update = {**(update or {}), "chunk_position": None}
        return chunk if update is None else copy_chunk(chunk, update)

    def on_chunk_v1(self, chunk: Any) -> Any:
        """The chunk to pass on for ``chunk``, text as standard blocks (``"v1"``); str chunks stay str."""
        return self._rewritten_v1(chunk)[0]

    def generation_v1(self, chunk: Any) -> ChatGenerationChunk:
        """`on_chunk_v1` of a message chunk, as the ``ChatGenerationChunk`` a chat model's ``_stream`` yields.

        Example:
            >>> from langchain_refs.streaming import TextReferenceStyle, ReferenceSession
            >>> style = TextReferenceStyle()
            >>> rewriter = ChunkRewriter(ReferenceSession([], source_key=style.source_of, style=style))
            >>> rewriter.generation_v1(AIMessageChunk(content="Hi[1](id=7)")).text
            'Hi'
        """
        message, text = self._rewritten_v1(chunk)
        return generation_chunk(message, text)

    def generation_owned(self, generation: ChatGenerationChunk) -> ChatGenerationChunk:
        """`generation_v1` of a generation the caller owns: its usual chunk rewritten in place, the same chunk out.

        For a chat model's ``_stream`` read by its one reader, as LangChain's
        own ``stream`` reads it: each generation yielded is the reader's, which
        sets the message's id and metadata in place (a model that yields the
        same chunk objects again already loses an answer to that: its next
        answer gets the same id, and LangGraph's state keeps one). The usual
        chunk, text alone as ``str`` (no generation info, no tool-call chunk,
        no private attributes), gets its rewritten content, the answer's id and
        no chunk position set on the message, and its text on the generation:
        the same values `generation_v1` gives, without its two copies (most of
        what it costs per chunk). Any other generation, and the answer's first
        (which sets the answer's id), go through `generation_v1`, the
        generation info merged into the message's metadata as ``stream`` merges it.

        Example:
            >>> from langchain_refs.streaming import TextReferenceStyle, ReferenceSession
            >>> style = TextReferenceStyle()
            >>> rewriter = ChunkRewriter(ReferenceSession([], source_key=style.source_of, style=style))
            >>> first = rewriter.generation_owned(ChatGenerationChunk(message=AIMessageChunk(content="Hi", id="a")))
            >>> owned = ChatGenerationChunk(message=AIMessageChunk(content=" you[1](id=7)"))
            >>> later = rewriter.generation_owned(owned)
            >>> later is owned, later.text, later.message.content, later.message.id
            (True, ' you', [{'type': 'text', 'text': ' you', 'index': 0}], 'a')
        """
        message = generation.message
        # Read from the message's own fields: the same values as its attributes, without an attribute look-up each.
        fields = message.__dict__
        content = fields.get("content")
        if (
            type(content) is not str
            or not self._v1
            or type(message) is not AIMessageChunk
            or generation.generation_info
            or fields["tool_call_chunks"]
            or message.__pydantic_private__ is not None
            or GROUNDING_KEY in fields["response_metadata"]
            or REASONING_KEY in fields["additional_kwargs"]
        ):
            return self.generation_v1(_with_generation_info(generation))
        self._take_first_id(fields["id"])
        text = self._str_text(content)
        # The fields `_rewritten_v1` sets on its copy, set on the message itself.
        self._set_rewritten(fields, text)
        message.__pydantic_fields_set__.update(_REWRITTEN_V1)
        generation.__dict__["text"] = text
        return generation

    def _take_first_id(self, chunk_id: str | None) -> None:
        """The answer's id is the first id a chunk has: every chunk carries it (clients group chunks by id)."""
        if self._first_id is None:
            self._first_id = self._message_id = chunk_id

    def _str_text(self, content: str) -> str:
        """The rewritten text of a message chunk's ``str`` content, noted as the text of its block (`_text_index`)."""
        text = self._feed(content) if content else ""
        if content and self._str_tail is None:
            # From the first str text on, its block's index is fixed (an empty str fixes nothing).
            self._str_text_seen = True
            self._str_tail = {"type": "text", "index": self._text_index}
        self._segments.add(self._text_index, text)
        tail = self._str_tail
        if self._tail_block is not tail:
            # The last text block seen takes the held tail and the list: str text, once it came.
            if tail is not None:
                self._tail_block = tail
            elif self._tail_block is None:
                self._tail_block = {"type": "text", "index": self._text_index}
        return text

    def _set_rewritten(self, fields: dict[str, Any], text: str) -> None:
        """Set in ``fields`` (a message chunk's) what ``"v1"`` rewrites of a text chunk: its content, id, position."""
        fields["id"] = self._first_id
        fields["content"] = [{"type": "text", "text": text, "index": self._text_index}] if text else []
        if HAS_CHUNK_POSITION:
            fields["chunk_position"] = None

    def _rewritten_v1(self, chunk: Any) -> tuple[Any, str | None]:
        """`on_chunk_v1`'s chunk, and its text when this rewriter wrote all of it (None: read it from the chunk)."""
        if type(chunk) is not AIMessageChunk:
            if isinstance(chunk, str):
                return self.on_chunk(chunk), None
            chunk = _as_chunk(chunk)
        if GROUNDING_KEY in chunk.response_metadata and not self._grounding_read:
            return self._grounded(chunk, self.on_chunk_v1), None
        self._str_output = False
        self._v1 = True
        self._take_first_id(chunk.id)
        content = chunk.content
        text: str | None = None
        if isinstance(content, str):
            text = self._str_text(content)
            if (
                not chunk.tool_call_chunks
                and chunk.__pydantic_private__ is None
                and (REASONING_KEY not in chunk.additional_kwargs)
            ):
                # The usual chunk, text alone: its fields copied and the three rewritten set
                # in place (what `copy_chunk` does, without its checks and its update dict).
                fields = chunk.__dict__.copy()
                self._set_rewritten(fields, text)
                return _chunk_copied(chunk, fields, chunk.__pydantic_fields_set__ | _REWRITTEN_V1), text
        update: dict[str, Any] = {"id": self._first_id}
        if HAS_CHUNK_POSITION:
            update["chunk_position"] = None
        self._other_blocks = False
        if text is not None:
            update["content"] = [{"type": "text", "text": text, "index": self._text_index}] if text else []
            if chunk.tool_call_chunks:
                # The text owns its index (0 unless a block took it): a tool call at the same
                # index would be merged into the text block by the v3 event bridge and lost.
                by = self._text_index + 1
                # Shifted by it: the text's index is fixed from here on.
                self._str_text_seen = True
                update["tool_call_chunks"] = [_shifted(c, by) for c in chunk.tool_call_chunks]
        else:
            update["content"] = self._blocks(content)
        if chunk.tool_call_chunks:
            self._tool_calls = True
        # A provider's own blocks (thinking, tool_use...) and tool calls beside str content, in the standard
        # form: the answer is marked standard at its end, and its chunks must then add up to standard content.
        reasoning = _reasons(chunk)
        if not (self._other_blocks or chunk.tool_call_chunks or reasoning is not None):
            # Text blocks alone (the usual list chunk): nothing to put in the standard form.
            return copy_chunk(chunk, update), text
        standard = standard_content(
            update["content"],
            chunk,
            tool_call_chunks=update.get("tool_call_chunks", chunk.tool_call_chunks),
            reasoning=reasoning,
        )
        if standard is not None:
            # Marked standard itself too: read alone, as a model with output_version="v1" marks each chunk.
            update["content"] = standard
            update["response_metadata"] = {**chunk.response_metadata, "output_version": "v1"}
            self._standard = True
        return copy_chunk(chunk, update), text

    def _grounded(self, chunk: AIMessageChunk, rewrite: Callable[[Any], Any]) -> Any:
        """``chunk`` rewritten with Google's grounding of the answer (read once) as native citations.

        A whole answer in one chunk: each citation is placed at the end of the
        span it grounds, and a ``str`` answer becomes a text block that
        carries them. Streamed, the grounding comes with the last chunk, after
        the text it grounds has passed on: its citations go at the end of the
        text.
        """
        self._grounding_read = True
        grounding = chunk.response_metadata[GROUNDING_KEY]
        content = without_grounding_annotations(chunk.content)
        if content is not chunk.content:
            chunk = chunk.model_copy(update={"content": content})
        session = self._session
        if session.output_length or session.held:  # streamed: the text has passed on
            self._pending.extend(grounding_citations(grounding))
            tail = self._tail_block
            self._pending_block = tail.get("index", self._text_index) if tail else self._text_index
            return rewrite(chunk)
        if isinstance(content, str):
            found = grounding_citations(grounding, content)
            content = [{"type": "text", "text": content, "annotations": found, "index": self._text_index}]
        else:
            first = next((b for b in content if isinstance(b, dict) and b.get("type") == "text"), None)
            found = grounding_citations(grounding, first.get("text", "") if first is not None else None)
            if first is None:
                taken = [b["index"] for b in content if isinstance(b, dict) and isinstance(b.get("index"), int)]
                index = max(taken, default=self._text_index - 1) + 1
                content = [*content, {"type": "text", "text": "", "annotations": found, "index": index}]
            else:
                content = [
                    {**b, "annotations": [*b.get("annotations", []), *found]} if b is first else b for b in content
                ]
        return rewrite(chunk.model_copy(update={"content": content}))

    def _feed(self, text: str) -> str:
        if self._model_text_key is not None:
            self._raw.append(text)
        out = self._session.feed(text)
        if type(out) is not str:
            # A TextAccessor from `.text` must not reach the merged chunks (merging a str with a
            # TextAccessor subclass fails).
            out = str(out)
        if self._track_output:
            self._output.append(out)
        return out

    def _blocks(self, blocks: list[Any]) -> list[Any]:
        """List content rewritten block by block; native citations placed at the end of their block."""
        rewritten: list[Any] = []
        for block in blocks:
            if isinstance(block, str):
                if self._pending:
                    self._flush(rewritten)
                out = self._feed(block)
                self._segments.add(_OwnBlock(), out)
                self._tail_block = {}
                rewritten.append(out)
            elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text", ""), str):
                # A streamed Anthropic citation comes in a text block of its own with no text at all.
                index = block.get("index")
                key = _OwnBlock() if index is None else index
                if self._pending and key != self._pending_block:
                    self._flush(rewritten)
                text = block.get("text", "")
                self._tail_block = {"type": "text"} if index is None else {"type": "text", "index": index}
                if has_native_citations(block):
                    found = native_citations(block)
                    block = without_native(block)
                    out = self._placed(key, text, found)
                    if index is None and self._pending:
                        # Its own block ends here.
                        out += self._natives()
                else:
                    out = self._feed(text)
                self._block_lengths[key] = self._block_lengths.get(key, 0) + len(text)
                self._segments.add(key, out)
                rewritten.append({**block, "text": out})
            else:
                self._other_blocks = True
                if not self._native_seen and isinstance(block, dict) and provider_native(block):
                    # The model's own shape (v0) keeps it: the answer cannot then be marked standard.
                    self._native_seen = True
                index = block.get("index") if isinstance(block, dict) else None
                if isinstance(index, int) and index >= self._text_index and not self._str_text_seen:
                    # Str text to come must not join this block (see `_text_index`).
                    self._text_index = index + 1
                if self._pending and (not isinstance(block, dict) or block.get("index") != self._pending_block):
                    self._flush(rewritten)
                rewritten.append(block)
        return rewritten

    def _placed(self, key: Any, text: str, found: list[dict[str, Any]]) -> str:
        """``text`` of block ``key`` rewritten, with the native citations whose span ends in it placed there.

        A provider's offsets (``provider_end_index``) count from the start of
        its block: a citation whose span ends inside this piece of the block
        is rendered right after the span; one whose span ended in text already
        passed on (OpenAI streams an annotation after the text it annotates),
        here, as close after its span as the stream allows, unless the text
        passed on ends inside what may be a marker (rendering cuts what is
        held: the marker would come out raw); the others (no offsets, a span
        of nothing at the block's start, a marker held) wait for the end of
        the block.
        """
        start = self._block_lengths.get(key, 0) if not isinstance(key, _OwnBlock) else 0
        here: list[tuple[int, dict[str, Any]]] = []
        for citation in found:
            end = provider_end_index(citation)
            if end is not None and 0 < end - start <= len(text):
                here.append((end - start, citation))
            elif end is not None and 0 < end <= start and not self._session.held:
                here.append((0, citation))
            else:
                self._pending.append(citation)
                self._pending_block = key
        if not here:
            return self._feed(text)
        here.sort(key=lambda placed: placed[0])
        pieces: list[str] = []
        cursor = 0
        for end, citation in here:
            if end > cursor:
                pieces.append(self._feed(text[cursor:end]))
                cursor = end
            pieces.append(self._rendered_natives([citation]))
        pieces.append(self._feed(text[cursor:]))
        return "".join(pieces)

    def _natives(self) -> str:
        """Render the pending native citations where the output stands now."""
        pending, self._pending = self._pending, []
        return self._rendered_natives(pending)

    def _rendered_natives(self, citations: list[dict[str, Any]]) -> str:
        session = self._session
        pieces = [session.end_block()]
        for citation in citations:
            pieces.append(session.cite_native(native_source_key(citation), native_media(citation), citation))
        out = "".join(pieces)
        if self._track_output:
            self._output.append(out)
        return out

    def _flush(self, rewritten: list[Any]) -> None:
        """The pending block has ended: its native citations go into it, in this chunk."""
        key = self._pending_block
        out = self._natives()
        if out:
            self._segments.add(key, out)
            for position in range(len(rewritten) - 1, -1, -1):
                block = rewritten[position]
                if isinstance(block, dict) and block.get("type") == "text" and block.get("index", _OwnBlock) == key:
                    # The block is in this chunk (a whole answer's): its numbers join its text here, as a later
                    # chunk's would join it by index.
                    rewritten[position] = {**block, "text": block["text"] + out}
                    return
            rewritten.append({"type": "text", "text": out, "index": key})

    # -- the end ---------------------------------------------------------------

    def finish(self) -> Any:
        """The last chunk: held tail, list of sources, references as data, annotations."""
        pending = ""
        pending_block = self._pending_block
        if self._pending:
            pending = self._natives()
        tail = str(self._session.close(self._verify))
        if self._track_output:
            self._output.append(tail)
        if self._str_output is None:
            return None
        if self._str_output:
            return tail or None
        # Made once: the references event reuses it. Both in one pass over the citations, read once.
        self._data, citations = data_and_standard_citations(self._session.references, self._documents)
        metadata: dict[str, Any] = {"references": self._data, "citations": citations}
        if self._model_text_key is not None:
            raw = metadata[self._model_text_key] = "".join(self._raw)
            if self._model_text_blocks_key is not None:
                # Each block's, an empty one's too (an Anthropic citation in a text block of its own).
                lengths = list(self._block_lengths.values())
                if sum(1 for length in lengths if length) > 1 and sum(lengths) == len(raw):
                    metadata[self._model_text_blocks_key] = lengths
        tail_block = self._tail_block
        content: str | list[Any]
        if tail_block is None:
            # str content (the v0 shape): the annotations are in the metadata only.
            content = pending + tail
        else:
            content = self._last_blocks(citations, tail_block, pending, pending_block, tail)
            if self._standard or (
                citations and (self._v1 or (self._grounding_read and not self._native_seen)) and not self._tool_calls
            ):
                # Standard v1 content: provider translators (Anthropic's
                # rebuilds text blocks from its own `citations`, Google's puts
                # its grounding over the first block) would drop our
                # annotations from `content_blocks` otherwise; and blocks put
                # in the standard form must be read as such. Not with tool
                # calls no block holds: v1 content_blocks would omit them.
                metadata["output_version"] = "v1"
        last = AIMessageChunk(content=content, id=self._message_id, response_metadata=metadata)
        if HAS_CHUNK_POSITION:
            last.chunk_position = "last"
        return last

    def _last_blocks(
        self,
        citations: list[dict[str, Any]],
        tail_block: dict[str, Any],
        pending: str,
        pending_block: Any,
        tail: str,
    ) -> list[Any]:
        """The last chunk's content: the pending natives, the tail, every block's annotations."""
        tail_key: Any = tail_block.get("index") if "index" in tail_block else _OwnBlock()
        if pending:
            self._segments.add(pending_block, pending)
        self._segments.add(tail_key, tail)
        per_block: dict[Any, list[dict[str, Any]]] = {}
        segments = self._segments.segments()
        if len(segments) == 1:
            # The whole text in one block (the usual case): `locate` for every citation, without a call each
            # (one per citation, on the last chunk).
            offset, block, local, length = segments[0]
            placed: list[dict[str, Any]] = []
            for citation in citations:
                start = citation["start_index"]
                end = citation["end_index"]
                if offset < end <= offset + length or offset == start == end:
                    annotation = citation.copy()
                    annotation["start_index"] = local + max(start, offset) - offset
                    annotation["end_index"] = local + end - offset
                    placed.append(annotation)
            if placed:
                per_block[block] = placed
        else:
            for citation in citations:
                where = self._segments.locate(citation["start_index"], citation["end_index"])
                if where is not None:
                    block, start, end = where
                    per_block.setdefault(block, []).append({**citation, "start_index": start, "end_index": end})
        content: list[Any] = []
        if pending and pending_block != tail_key:
            ended: dict[str, Any] = {"type": "text", "text": pending, "index": pending_block}
            if pending_block in per_block:
                ended["annotations"] = per_block.pop(pending_block)
            content.append(ended)
            pending = ""
        # The v0 shape always ends with the tail block (as it always did); v1
        # only when there is something to put in it.
        wanted = not self._v1 or bool(pending or tail) or tail_key in per_block
        if not tail_block:
            # The model's text came as bare strings: so does the tail.
            if wanted:
                content.append(pending + tail)
        elif wanted:
            last: dict[str, Any] = {**tail_block, "text": pending + tail}
            if tail_key in per_block:
                last["annotations"] = per_block.pop(tail_key)
            content.append(last)
        for key, found in per_block.items():
            if not isinstance(key, _OwnBlock):
                # Merged by index into the block the words are in.
                content.append({"type": "text", "text": "", "index": key, "annotations": found})
        return content

    async def afinish(self) -> Any:
        """`finish` for the async path: off the event loop when the end of the answer calls a scorer.

        A verifier, or a passage scorer of the caller's (`ReferenceSession.scores_at_close`),
        may call a model: the answer's end (and its references as data, for the
        references event) is then worked out in a thread, and other tasks go on.
        """
        if self._verify is None and not self._session.scores_at_close:
            return self.finish()
        return await asyncio.to_thread(self._finish_scored)

    def _finish_scored(self) -> Any:
        """`finish`, then the references as data when a handler will read them (a scorer of the caller's runs there)."""
        last = self.finish()
        if self._track_output:
            self.references_data()
        return last

    def references_data(self) -> dict[str, Any]:
        """The answer's references as data (`AnswerReferences.to_dict`), made once after `finish`."""
        if self._data is None:
            self._data = self._session.references.to_dict()
        return self._data

    def traced_output(self) -> Any:
        """What the run reports as its output to tracers (None when untracked)."""
        if not self._track_output:
            return None
        text = "".join(self._output)
        return text if self._str_output else AIMessageChunk(content=text, id=self._message_id)
