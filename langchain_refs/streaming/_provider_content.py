"""Providers' content shapes, read in one place: the citations a model makes natively.

Some providers cite without markers: the text block itself carries its
sources. langchain-core's standard shape is ``annotations`` of type
``"citation"`` (``url``, ``title``, ``cited_text``, ...); Anthropic's own
content carries a ``citations`` list (``char_location``,
``page_location``, ``content_block_location``, ``search_result_location``,
``web_search_result_location``); OpenAI's Responses content carries
``annotations`` of type ``url_citation`` or ``file_citation``. `native_citations`
reads all of them into standard ``Citation`` dicts; `native_source_key` says
which source each one names, so that they join the numbering of marker
citations: by URL, else by title, else by the provider's document index;
`native_media` is what a style renders for such a source, and
`provider_end_index` where in the provider's raw text a citation's span ends.
A provider's other blocks (Anthropic's ``thinking``, a ``tool_use``, OpenAI's
reasoning summaries) and tool calls streamed beside ``str`` content are put
in LangChain's standard form by `standard_content`, with the provider's own
translator, as a model with ``output_version="v1"`` puts them.
Google's Gemini grounds an answer as a whole instead
(``response_metadata["grounding_metadata"]``): `grounding_citations` reads it
with langchain-core's own translator.
`ChunkRewriter` (``_chunks.py``) reads content through these alone.

Example:
    >>> block = {"type": "text", "text": "Grass is green.", "citations": [
    ...     {"type": "char_location", "cited_text": "The grass is green.", "document_index": 0,
    ...      "document_title": "Lawns", "start_char_index": 0, "end_char_index": 19}]}
    >>> found = native_citations(block)
    >>> found[0]["title"], found[0]["cited_text"], native_source_key(found[0])
    ('Lawns', 'The grass is green.', 'Lawns')
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Final, TypeVar

from langchain_core.documents import Document
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.content import KNOWN_BLOCK_TYPES

from langchain_refs.streaming._registry import OwnSource

try:  # langchain-core's reading of Gemini's grounding (its block translators)
    from langchain_core.messages.block_translators.google_genai import (
        translate_grounding_metadata_to_citations as _translate_grounding,
    )
except ImportError:  # pragma: no cover - a langchain-core without it
    _translate_grounding = None  # type: ignore[assignment]

__all__ = [
    "GROUNDING_KEY",
    "HAS_CHUNK_POSITION",
    "NATIVE_KEYS",
    "REASONING_INDEX",
    "REASONING_KEY",
    "grounding_citations",
    "has_native_citations",
    "native_citations",
    "native_media",
    "native_source_key",
    "provider_end_index",
    "provider_native",
    "standard_content",
    "with_refusal",
    "without_native",
]

MessageT = TypeVar("MessageT", bound=BaseMessage)

NATIVE_KEYS: Final = ("annotations", "citations")
"""The keys of a text block that may hold native citations."""

HAS_CHUNK_POSITION: Final = "chunk_position" in AIMessageChunk.model_fields
"""Whether message chunks have a ``chunk_position`` (langchain-core < 1.0 has none)."""

REASONING_KEY: Final = "reasoning_content"
"""The ``additional_kwargs`` key where some clients put a model's reasoning (Ollama, DeepSeek, xAI, Groq)."""

REASONING_INDEX: Final = "lc_refs_reasoning"
"""The ``index`` of the reasoning block made of `REASONING_KEY`: a stream's pieces add up to one block."""

GROUNDING_KEY: Final = "grounding_metadata"
"""The ``response_metadata`` key of Google's grounding of a whole answer."""

# Anthropic location types whose document is one the app sent (no URL).
_ANTHROPIC_DOCUMENT_TYPES: Final = frozenset(
    {"char_location", "page_location", "content_block_location", "search_result_location"}
)
# (A search result's ``source`` stays in ``extras``, as LangChain's own translation keeps it: it names the source.)
_ANTHROPIC_KNOWN: Final = frozenset({"type", "cited_text", "document_title", "title", "url"})


def native_citations(block: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The native citations of one text block, as standard ``Citation`` dicts.

    Reads ``annotations`` (standard ``citation`` dicts; OpenAI ``url_citation``
    and ``file_citation``) and Anthropic ``citations``. Other annotations
    (``non_standard_annotation``, unknown types) are not citations and are
    skipped. The ``start_index``/``end_index`` a provider gives index its own
    raw text, so they are moved into ``extras`` (``provider_start_index``,
    ``provider_end_index``).

    Example:
        >>> native_citations({"type": "text", "text": "x", "annotations": [
        ...     {"type": "url_citation", "url": "https://a.org", "title": "A", "start_index": 0, "end_index": 1}]})
        [{'type': 'citation', 'url': 'https://a.org', 'title': 'A', 'extras': {'provider_start_index': 0, \
'provider_end_index': 1}}]
    """
    found: list[dict[str, Any]] = []
    for annotation in _listed(block.get("annotations")):
        kind = annotation.get("type")
        if kind == "citation":
            found.append(_file_position(_standard(annotation)))
        elif kind == "url_citation":
            found.append(_standard({**annotation, "type": "citation"}))
        elif kind == "file_citation":
            extras = {k: v for k, v in annotation.items() if k not in ("type", "filename")}
            found.append(
                _file_position(_standard({"type": "citation", "title": annotation.get("filename"), "extras": extras}))
            )
    for citation in _listed(block.get("citations")):
        kind = citation.get("type")
        if kind == "web_search_result_location" or kind in _ANTHROPIC_DOCUMENT_TYPES:
            title = citation.get("document_title") or citation.get("title")
            extras = {k: v for k, v in citation.items() if k not in _ANTHROPIC_KNOWN}
            extras["provider_type"] = kind
            found.append(
                _standard(
                    {
                        "type": "citation",
                        "url": citation.get("url"),
                        "title": title,
                        "cited_text": citation.get("cited_text"),
                        "extras": extras,
                    }
                )
            )
    return found


_CITATION_TYPES: Final = frozenset({"citation", "url_citation", "file_citation"})


def without_native(block: Mapping[str, Any]) -> dict[str, Any]:
    """``block`` without its native citations (read by `native_citations`); other annotations stay.

    Their offsets index the model's raw text, which the rewriting changes;
    the rewritten answer's own annotations replace them.

    Example:
        >>> without_native({"type": "text", "text": "x", "citations": [], "annotations": [
        ...     {"type": "citation", "url": "u"}, {"type": "non_standard_annotation", "value": {}}]})
        {'type': 'text', 'text': 'x', 'annotations': [{'type': 'non_standard_annotation', 'value': {}}]}
    """
    kept = {k: v for k, v in block.items() if k not in NATIVE_KEYS}
    others = [a for a in _listed(block.get("annotations")) if a.get("type") not in _CITATION_TYPES]
    if others:
        kept["annotations"] = others
    return kept


def has_native_citations(block: Mapping[str, Any]) -> bool:
    """Whether a text block carries a key that may hold native citations (``annotations``, ``citations``).

    Example:
        >>> has_native_citations({"type": "text", "text": "x"}), has_native_citations({"citations": []})
        (False, True)
    """
    return any(key in block for key in NATIVE_KEYS)


def provider_end_index(citation: Mapping[str, Any]) -> int | None:
    """Where the span a native citation annotates ends, in its block's raw text (None: not said).

    Example:
        >>> provider_end_index(native_citations({"annotations": [
        ...     {"type": "url_citation", "url": "u", "start_index": 0, "end_index": 5}]})[0])
        5
    """
    extras = citation.get("extras")
    end = extras.get("provider_end_index") if isinstance(extras, Mapping) else None
    return end if isinstance(end, int) else None


def native_media(citation: Mapping[str, Any]) -> Document:
    """What a style renders for a source cited natively: a document with its URL and title.

    Example:
        >>> native_media({"type": "citation", "url": "https://a.org", "title": "A"}).metadata
        {'source': 'https://a.org', 'url': 'https://a.org', 'title': 'A'}
    """
    metadata: dict[str, Any] = {}
    url = citation.get("url")
    if url:
        metadata["source"] = metadata["url"] = url
    elif source := _search_result_source(citation):
        metadata["source"] = source
    if citation.get("title"):
        metadata["title"] = citation["title"]
    return Document(page_content=citation.get("cited_text") or "", metadata=metadata)


def _search_result_source(citation: Mapping[str, Any]) -> str | None:
    """The ``source`` an app gave the search result an Anthropic citation quotes (kept in ``extras``), if any."""
    extras = citation.get("extras")
    source = extras.get("source") if isinstance(extras, Mapping) else None
    return source if isinstance(source, str) and source else None


def native_source_key(citation: Mapping[str, Any]) -> Hashable:
    """What numbers a native citation: its URL, else its search result's source, else its title, else its document.

    A citation naming none of these is a source of its own.

    Example:
        >>> native_source_key({"type": "citation", "url": "https://a.org", "title": "A"})
        'https://a.org'
        >>> native_source_key({"type": "citation", "title": "Sky", "extras": {"source": "https://ex.org/sky"}})
        'https://ex.org/sky'
        >>> native_source_key({"type": "citation", "extras": {"document_index": 2}})
        OwnSource(label='provider document 2')
    """
    url = citation.get("url")
    if isinstance(url, str) and url:
        return url
    source = _search_result_source(citation)
    if source:
        return source
    title = citation.get("title")
    if isinstance(title, str) and title:
        return title
    extras = citation.get("extras")
    index = extras.get("document_index") if isinstance(extras, Mapping) else None
    if isinstance(index, int):
        return OwnSource(f"provider document {index}")
    # Nothing names it: a source of its own, told apart by its identity.
    return OwnSource(f"provider citation {id(citation)}")


def without_grounding_annotations(content: Any) -> Any:
    """``content`` without the citations langchain-google-genai made of the grounding (``output_version="v1"``).

    They repeat `grounding_citations` of the same grounding, with Google's
    UTF-8 byte offsets read as character offsets: the grounding itself is
    read instead.

    Example:
        >>> block = {"type": "text", "text": "Hi", "annotations": [
        ...     {"type": "citation", "url": "u", "extras": {"google_ai_metadata": {}}}]}
        >>> without_grounding_annotations([block])
        [{'type': 'text', 'text': 'Hi'}]
    """
    if not isinstance(content, list):
        return content
    kept_content: list[Any] = []
    for block in content:
        if isinstance(block, Mapping) and _listed(block.get("annotations")):
            kept = [a for a in _listed(block["annotations"]) if not _from_grounding(a)]
            block = {k: v for k, v in block.items() if k != "annotations"}
            if kept:
                block["annotations"] = kept
        kept_content.append(block)
    return kept_content


def _from_grounding(annotation: Mapping[str, Any]) -> bool:
    extras = annotation.get("extras")
    return annotation.get("type") == "citation" and isinstance(extras, Mapping) and "google_ai_metadata" in extras


def grounding_citations(grounding: Any, text: str | None = None) -> list[dict[str, Any]]:
    """Google's grounding of an answer (``grounding_metadata``) as native citations.

    langchain-core's translator reads the supports and the web, maps or
    retrieved-context chunks they name. Gemini counts a segment's offsets in
    UTF-8 bytes of the answer's text: given that ``text`` (the answer from its
    start), the end of each span becomes a character offset; without it the
    offsets are dropped, and the citation waits for the end of its block.

    Example:
        >>> grounding = {"grounding_chunks": [{"web": {"uri": "https://a.org", "title": "A"}}],
        ...     "grounding_supports": [{"segment": {"start_index": 0, "end_index": 8, "text": "Café ok"},
        ...                             "grounding_chunk_indices": [0]}]}
        >>> found = grounding_citations(grounding, "Café ok. More.")
        >>> found[0]["url"], provider_end_index(found[0])
        ('https://a.org', 7)
        >>> provider_end_index(grounding_citations(grounding)[0]) is None
        True
    """
    if not isinstance(grounding, Mapping) or _translate_grounding is None:
        return []
    encoded = text.encode() if text is not None else None
    found: list[dict[str, Any]] = []
    for translated in _translate_grounding(dict(grounding)):
        citation: dict[str, Any] = dict(translated)
        citation.pop("id", None)  # made up afresh by langchain-core on every reading
        for field in ("start_index", "end_index"):
            offset = citation.pop(field, None)
            if encoded is not None and isinstance(offset, int) and 0 <= offset <= len(encoded):
                citation[field] = len(encoded[:offset].decode(errors="ignore"))
        found.append(_standard(citation))
    return found


# The standard blocks that hold a tool call (langchain-core's v1 content).
_CALL_TYPES: Final = frozenset(
    {"tool_call", "tool_call_chunk", "invalid_tool_call", "server_tool_call", "server_tool_call_chunk"}
)
_SERVER_CALL_TYPES: Final = frozenset({"server_tool_call", "server_tool_call_chunk"})


def provider_native(block: Mapping[str, Any]) -> bool:
    """Whether a content block is in a provider's own form: a type LangChain's standard has not, or OpenAI's reasoning.

    OpenAI's Responses API names its reasoning blocks ``"reasoning"`` too,
    with a ``summary`` where the standard block has its ``reasoning`` text.

    Example:
        >>> provider_native({"type": "thinking", "thinking": "Hm."})
        True
        >>> provider_native({"type": "reasoning", "id": "rs_1", "summary": []})
        True
        >>> provider_native({"type": "reasoning", "reasoning": "Hm."})
        False
    """
    kind = block.get("type")
    return kind not in KNOWN_BLOCK_TYPES or (kind == "reasoning" and "summary" in block and "reasoning" not in block)


def standard_content(
    blocks: list[Any],
    message: AIMessage,
    *,
    tool_call_chunks: Sequence[Any] | None = None,
    reasoning: str | None = None,
) -> list[Any] | None:
    """``blocks`` (``message``'s list content, maybe rewritten) in LangChain's standard form, or None when they are.

    Each provider-native block (`provider_native`) is translated in its
    place by the translator of the provider ``message`` names
    (``model_provider``), as ``content_blocks`` translates it, with the
    message's tool calls; a translator that adds the message's tool calls
    to any block's translation has them added once, at the end. The other
    blocks are kept as they are (rewritten text blocks, blocks already
    standard). A chunk's tool call chunks (``tool_call_chunks``, default
    the chunk's own) that no block holds become ``tool_call_chunk`` blocks,
    as langchain-core makes them of ``str`` content: summed with the
    answer's last chunk, a message marked ``output_version="v1"`` turns
    them into ``tool_call`` blocks. ``reasoning`` (what a client put under
    `REASONING_KEY`), when no block holds reasoning, becomes a reasoning
    block, as ``content_blocks`` reads it, at `REASONING_INDEX`.

    Example:
        >>> thinking = {"type": "thinking", "thinking": "Hm.", "signature": "s", "index": 0}
        >>> chunk = AIMessageChunk(content=[thinking], response_metadata={"model_provider": "anthropic"})
        >>> standard_content(chunk.content, chunk)
        [{'type': 'reasoning', 'reasoning': 'Hm.', 'index': 0, 'extras': {'signature': 's'}}]
        >>> call = {"type": "tool_call_chunk", "name": "f", "args": "{}", "id": "c1", "index": 1}
        >>> standard_content([], AIMessageChunk(content="", tool_call_chunks=[call]))
        [{'type': 'tool_call_chunk', 'id': 'c1', 'name': 'f', 'args': '{}', 'index': 1}]
        >>> standard_content([{"type": "text", "text": "Hi", "index": 0}], AIMessageChunk(content="Hi")) is None
        True
    """
    if tool_call_chunks is None:
        tool_call_chunks = message.tool_call_chunks if isinstance(message, AIMessageChunk) else ()
    native = any(isinstance(block, dict) and provider_native(block) for block in blocks)
    if not native and (not tool_call_chunks or _holds_calls(blocks)) and reasoning is None:
        return None
    out: list[Any] = []
    placed: set[Any] = set()
    added: list[Any] = []
    if native:
        # A probe per native block: the message itself, holding that block alone (and nothing a
        # translator would read as reasoning besides), so that each translation keeps its place.
        metadata = message.response_metadata
        probe_fields: dict[str, Any] = {
            "response_metadata": {k: v for k, v in metadata.items() if k != "output_version"}
            if "output_version" in metadata
            else metadata,
            "additional_kwargs": {},
        }
        if HAS_CHUNK_POSITION and isinstance(message, AIMessageChunk):
            probe_fields["chunk_position"] = None
    # A refusal the provider gave outside the content is the message's, not a block's: `with_refusal` adds it
    # once, at the end of the answer.
    translations: list[list[Any] | None] = [
        [
            found
            for found in message.model_copy(update={**probe_fields, "content": [block]}).content_blocks
            if found["type"] != "refusal"
        ]
        if isinstance(block, dict) and provider_native(block)
        else None
        for block in blocks
    ]
    probed = [t for t in translations if t is not None]
    # What every probe's translation holds is the message's, not a block's (its tool calls): it goes once,
    # at the end.
    shared = [b for b in probed[0] if all(b in t for t in probed[1:])] if len(probed) > 1 else []
    for block, translation in zip(blocks, translations, strict=True):
        if translation is None:
            out.append(block)
            continue
        translated = [b for b in translation if b not in shared]
        if translated and all(_is_call(b) for b in translated):
            # The block is a call itself (Anthropic's tool_use, OpenAI's function_call): in its place.
            for call in translated:
                if _call_key(call) not in placed:
                    placed.add(_call_key(call))
                    out.append(call)
        else:
            for found in translated:
                if not _is_call(found):
                    out.append(found)
                elif found.get("type") in _SERVER_CALL_TYPES:
                    # A server tool's call and its result (OpenAI's web_search_call): the block's own, in its place.
                    if _call_key(found) not in placed:
                        placed.add(_call_key(found))
                        out.append(found)
                else:
                    added.append(found)  # the message's tool calls, which the translator adds to the block's
    for call in added:
        if _call_key(call) not in placed:
            placed.add(_call_key(call))
            out.append(call)
    for common in shared:
        if not _is_call(common):
            out.append(common)
        elif _call_key(common) not in placed:
            placed.add(_call_key(common))
            out.append(common)
    if reasoning is not None and not any(isinstance(block, dict) and block.get("type") == "reasoning" for block in out):
        out.insert(0, {"type": "reasoning", "reasoning": reasoning, "index": REASONING_INDEX})
    if not _holds_calls(out):
        out.extend(_call_block(chunk) for chunk in tool_call_chunks)
    return out


def with_refusal(message: MessageT) -> MessageT:
    """``message``, marked standard (``output_version="v1"``), with the refusal its provider gave outside its content.

    Some providers say they refused outside the content: OpenAI's chat
    completions in ``additional_kwargs["refusal"]``, Google with the finish
    reason ``SAFETY``, Anthropic with the stop reason ``refusal``.
    ``content_blocks`` reads those through the provider's translator, and
    skips the translator for standard content. A rewritten answer is marked
    standard to keep its annotations, so the refusal block the translator
    reads from the message without its content is added at its end: a
    client, and LangChain's ``ModelRefusalMiddleware``, see the refusal.
    Anything else is returned as it is.

    Example:
        >>> answer = AIMessage(content=[{"type": "text", "text": "Partly[1]"}], additional_kwargs={"refusal": "No."},
        ...     response_metadata={"model_provider": "openai", "output_version": "v1"})
        >>> [block["type"] for block in with_refusal(answer).content_blocks]
        ['text', 'refusal']
    """
    metadata = message.response_metadata
    content = message.content
    if not isinstance(message, AIMessage) or metadata.get("output_version") != "v1" or not isinstance(content, list):
        return message
    if any(isinstance(block, dict) and block.get("type") == "refusal" for block in content):
        return message
    probe = message.model_copy(
        update={
            "content": [],
            "response_metadata": {k: v for k, v in metadata.items() if k != "output_version"},
            "tool_calls": [],
            "invalid_tool_calls": [],
        }
    )
    refusals = [block for block in probe.content_blocks if block["type"] == "refusal"]
    return message.model_copy(update={"content": [*content, *refusals]}) if refusals else message


def _is_call(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") in _CALL_TYPES


def _call_key(block: Mapping[str, Any]) -> Any:
    """What tells one call from another: its id, else its index (a later piece of a streamed call)."""
    call_id = block.get("id")
    return ("id", call_id) if call_id else ("index", block.get("index"), block.get("type"))


def _holds_calls(blocks: list[Any]) -> bool:
    return any(_is_call(block) for block in blocks)


def _call_block(chunk: Mapping[str, Any]) -> dict[str, Any]:
    """A ``tool_call_chunk`` content block of a chunk's tool call chunk, as langchain-core makes one."""
    block: dict[str, Any] = {
        "type": "tool_call_chunk",
        "id": chunk.get("id"),
        "name": chunk.get("name"),
        "args": chunk.get("args"),
    }
    if chunk.get("index") is not None:
        block["index"] = chunk["index"]
    return block


def _listed(value: Any) -> list[Mapping[str, Any]]:
    if not isinstance(value, (list, tuple)):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def _file_position(citation: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI file citation's position in the raw text, read as where its span ends.

    OpenAI's ``file_citation`` has no span, only that position: ``index`` in
    the API, ``file_index`` in langchain-openai's messages (``index`` orders
    their blocks); LangChain's standard form keeps it in ``extras`` beside
    the ``file_id``.
    """
    extras = citation.get("extras")
    if isinstance(extras, dict) and "file_id" in extras and "provider_end_index" not in extras:
        position = extras.get("file_index", extras.get("index"))
        if isinstance(position, int):
            extras["provider_end_index"] = position
    return citation


def _standard(annotation: Mapping[str, Any]) -> dict[str, Any]:
    """A ``Citation`` dict: empty fields dropped, provider offsets moved into ``extras``."""
    citation: dict[str, Any] = {"type": "citation"}
    for field in ("id", "url", "title", "cited_text"):
        value = annotation.get(field)
        if isinstance(value, str) and value:
            citation[field] = value
    extras = dict(annotation.get("extras") or {})
    for field, moved in (("start_index", "provider_start_index"), ("end_index", "provider_end_index")):
        if isinstance(annotation.get(field), int):
            extras[moved] = annotation[field]
    # What else the provider said (OpenAI's url_citation has no extras of its own).
    for field, value in annotation.items():
        if field not in ("type", "id", "url", "title", "cited_text", "extras", "start_index", "end_index"):
            extras.setdefault(field, value)
    if extras:
        citation["extras"] = extras
    return citation
