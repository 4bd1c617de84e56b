"""Cited vs consulted: the sources given but not cited, in the data and (when asked) after the list."""

from __future__ import annotations

from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

from langchain_refs import (
    AnswerReferences,
    ConsultedSource,
    EmptyReferenceStyle,
    HTMLReferenceStyle,
    MarkdownReferenceStyle,
    ReferencesCollector,
    ReferenceSession,
    ReferenceStyle,
    TextReferenceStyle,
    manage_references,
)
from tests.unit_tests.test_styles import HOSTILE_MORE, HOSTILE_MORE_ANSWER, parse_html

DOCUMENTS = [
    Document("A1.", metadata={"source": "https://a.org", "title": "A"}),
    Document("B1.", metadata={"source": "https://b.org", "title": "B"}),
    Document("A2.", metadata={"source": "https://a.org", "title": "A"}),
    Document("No source."),
    Document("C1.", metadata={"source": "c.pdf"}),
    Document("B2.", metadata={"source": "https://b.org", "title": "B"}),
]


def run(text: str, style: ReferenceStyle) -> tuple[str, AnswerReferences]:
    session = ReferenceSession(DOCUMENTS, source_key=style.source_of, style=style)
    out = session.feed(text) + session.close()
    return out, session.references


def test_consulted_sources_are_the_uncited_ones_unnumbered_in_document_order() -> None:
    """Sources none of whose documents is cited, first document first, with all their positions; no number."""
    _, refs = run("B[1](id=6).", TextReferenceStyle())
    assert [r.source for r in refs.references] == ["https://b.org"]
    assert refs.consulted == (
        ConsultedSource(source="https://a.org", title="A", document_positions=(1, 3)),
        ConsultedSource(source=None, title=None, document_positions=(4,)),
        ConsultedSource(source="c.pdf", title=None, document_positions=(5,)),
    )


def test_a_source_cited_through_one_document_is_not_consulted() -> None:
    """Citing one document of a source makes the whole source cited."""
    _, refs = run("A[1](id=3). B[2](id=2). C[3](id=5). N[4](id=4).", TextReferenceStyle())
    assert refs.consulted == ()


def test_consulted_round_trips_and_old_data_reads_empty() -> None:
    """to_dict/from_dict keep the consulted sources; data written before reads as none."""
    _, refs = run("B[1](id=6).", TextReferenceStyle())
    data = refs.to_dict()
    assert data["consulted"][0] == {"source": "https://a.org", "title": "A", "document_positions": [1, 3]}
    assert AnswerReferences.from_dict(data) == refs
    del data["consulted"]
    assert AnswerReferences.from_dict(data).consulted == ()


def test_not_shown_by_default() -> None:
    """The built-in styles list only cited sources unless show_consulted is on."""
    out, _ = run("B[1](id=6).", TextReferenceStyle())
    assert out == "B[1].\n\n- [1] B (https://b.org)\n"


def test_text_style_lists_them_after_the_list() -> None:
    """TextReferenceStyle(show_consulted=True): an 'Also consulted' part after the numbered list."""
    out, _ = run("B[1](id=6).", TextReferenceStyle(show_consulted=True))
    assert out == (
        "B[1].\n\n- [1] B (https://b.org)\n\nAlso consulted:\n- A (https://a.org)\n- untitled document\n- c.pdf\n"
    )


def test_consulted_without_any_citation() -> None:
    """Nothing cited: the part stands alone after the answer."""
    out, _ = run("No idea.", MarkdownReferenceStyle(show_consulted=True))
    assert out == (
        "No idea.\n\n**Also consulted**\n\n- [A](https://a.org)\n- [B](https://b.org)\n- untitled document\n"
        "- [c.pdf](c.pdf)\n"
    )


def test_html_consulted_part_is_escaped_and_well_formed() -> None:
    """HTML: a separate unnumbered list; hostile titles escaped, unsafe links not made, tags closed."""
    style = HTMLReferenceStyle(show_consulted=True, show_passages=True)
    session = ReferenceSession(HOSTILE_MORE, source_key=style.source_of, style=style, answer_id="a1")
    out = session.feed("Only two[1](id=2).") + session.close()
    parsed = parse_html(out)
    assert parsed.scripts == 0
    assert '<p class="consulted">Also consulted:</p><ul class="consulted">' in out
    assert '<li><span class="source">&lt;script&gt;alert(&#34;t&#34;)&lt;/script&gt;</span></li>' in out
    assert not any("javascript" in h.lower() for h in parsed.hrefs)
    full = ReferenceSession(HOSTILE_MORE, source_key=style.source_of, style=style, answer_id="a2")
    parse_html(full.feed(HOSTILE_MORE_ANSWER) + full.close())


def test_empty_style_and_old_style_subclasses_write_nothing() -> None:
    """The empty style, and a 0.2.x-style subclass without format_consulted, add no part even when asked."""

    class Old(ReferenceStyle):
        show_consulted = True

        def format_reference(self, ref: int, media: object) -> str:
            return f"<{ref}>"

        def format_all_references(self, refs: list[tuple[int, object]]) -> str:
            return "|" + ",".join(str(n) for n, _ in refs)

    assert run("B[1](id=6).", EmptyReferenceStyle(show_consulted=True))[0] == "B."
    assert run("B[1](id=6).", Old())[0] == "B<1>.|1"


def test_consulted_reach_the_references_event() -> None:
    """Through manage_references, the references event (and so ReferencesCollector) carries the consulted sources."""
    chain = manage_references(RunnableLambda(lambda _: "B[1](id=6)."), style=TextReferenceStyle())
    collector = ReferencesCollector()
    chain.invoke({"documents": DOCUMENTS}, {"callbacks": [collector]})
    collected = collector.answers[-1].consulted
    assert [c.source for c in collected] == ["https://a.org", None, "c.pdf"]


def test_consulted_are_only_of_the_documents_shown_for_this_answer() -> None:
    """consulted_positions: the uncited sources among those documents, their positions among them; the list too."""
    style = TextReferenceStyle(show_consulted=True)
    session = ReferenceSession(DOCUMENTS, source_key=style.source_of, style=style, consulted_positions={3, 5, 6})
    out = session.feed("B[1](id=2). Old A[2](id=1).") + session.close()
    # Written by hand: B and A are cited (ids 2 and 1 still resolve); of 3, 5 and 6 only c.pdf is left uncited.
    assert session.references.consulted == (ConsultedSource(source="c.pdf", title=None, document_positions=(5,)),)
    assert out.endswith("\n\nAlso consulted:\n- c.pdf\n")
    session = ReferenceSession(DOCUMENTS, source_key=style.source_of, style=style, consulted_positions={1, 4})
    session.feed("B[1](id=6).")
    session.close()
    # A's position 3 was not shown: A is consulted through position 1 alone.
    assert session.references.consulted == (
        ConsultedSource(source="https://a.org", title="A", document_positions=(1,)),
        ConsultedSource(source=None, title=None, document_positions=(4,)),
    )
