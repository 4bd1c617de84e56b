"""A user's program, checked by ``mypy --strict`` in `test_typing.py` (never run): the types users get.

A line that must be a type error carries ``# type: ignore[code]``: under
``--strict`` an ignore that silences nothing is an error itself, so each
marks an error the package's types must keep catching. ``assert_type``
checks what a name is to a type checker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Read by mypy only: pytest imports this module (for doctests) where the agents extra may be missing.
    from langchain_core.documents import Document
    from langchain_core.language_models import GenericFakeChatModel
    from typing_extensions import assert_type

    import langchain_refs
    from langchain_refs import ReferencesChatModel, ReferenceSession, ReferencesMiddleware, TextReferenceStyle
    from langchain_refs.agents import History
    from langchain_refs.streaming import CitationRenderer, OutputVersion, SourceKey, SyntaxName


def agent_names_from_the_top_level() -> None:
    """The agent names the top level loads lazily have their own types, as from the agents wing."""
    middleware = ReferencesMiddleware(history="plain", syntaxes=["id", "bracket"])
    assert_type(middleware, langchain_refs.agents.ReferencesMiddleware)
    ReferencesMiddleware(history="markdown")  # type: ignore[arg-type]
    ReferencesMiddleware(syntaxes="idd")  # type: ignore[arg-type]
    langchain_refs.NoSuchName  # type: ignore[attr-defined]  # noqa: B018


def chat_model_options() -> None:
    """ReferencesChatModel's options are typed: a wrong or misspelt one is an error before it runs."""
    inner = GenericFakeChatModel(messages=iter([]))
    model = ReferencesChatModel(inner=inner, documents=[Document("x")], style=TextReferenceStyle())
    assert_type(model, ReferencesChatModel)
    # Every chat model's own options, as LangChain passes them.
    ReferencesChatModel(inner=inner, name="cited", tags=["a"], metadata={"k": 1}, disable_streaming="tool_calling")
    ReferencesChatModel(inner=inner, style="markdown")  # type: ignore[arg-type]
    ReferencesChatModel(inner=inner, bogus=1)  # type: ignore[call-arg]
    ReferencesChatModel(inner=inner, syntaxes=("idd",))  # type: ignore[arg-type]


def session_options(documents: list[Document]) -> str:
    """A session takes the syntax names the other entry points take, checked by name."""
    style = TextReferenceStyle()
    session = ReferenceSession(documents, source_key=style.source_of, style=style, syntaxes="dagger")
    ReferenceSession(documents, source_key=style.source_of, style=style, syntaxes="daggers")  # type: ignore[arg-type]
    return session.feed("Paris[1](id=1).") + session.close()


def aliases_for_wrappers(
    style: CitationRenderer, key: SourceKey, syntax: SyntaxName, version: OutputVersion, history: History
) -> dict[str, Any]:
    """The types of the public signatures can be named from public modules."""
    return {"style": style, "key": key, "syntax": syntax, "version": version, "history": history}
