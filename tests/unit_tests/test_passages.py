"""The passage behind each citation: in the data once the answer is complete and, when asked, in the styles."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.cross_encoders import BaseCrossEncoder
from langchain_core.documents import Document
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda

from langchain_refs import (
    AnswerReferences,
    HTMLReferenceStyle,
    LexicalScorer,
    MarkdownReferenceStyle,
    Passage,
    ReferenceSession,
    TemplateReferenceStyle,
    TextReferenceStyle,
    manage_references,
)
from tests.unit_tests.fakes import ChunkExactChatModel

PARIS = "Rome is old. Paris is the capital of France. It rains in Brest."
LYON = "Lyon has silk. Lyon is big."
DOCUMENTS = [
    Document(PARIS, metadata={"source": "https://p.org", "title": "Paris"}),
    Document(LYON, metadata={"source": "https://l.org", "title": "Lyon"}),
    Document("Lyon sits on two rivers.", metadata={"source": "https://l.org", "title": "Lyon"}),
]
ANSWER = "Paris is the capital of France[1](id=1). Lyon is famous for silk[2](id=2)."
PROMPT = ChatPromptTemplate.from_messages([("human", "question")])


class Counting:
    """A scorer giving fixed scores in turn, counting its calls and the pairs it saw."""

    def __init__(self, values: Sequence[float] = (0.5,)) -> None:
        self.values = list(values)
        self.calls = 0
        self.pairs: list[tuple[str, str]] = []

    def score(self, text_pairs: list[tuple[str, str]]) -> list[float]:
        self.calls += 1
        self.pairs += text_pairs
        return [self.values[i % len(self.values)] for i in range(len(text_pairs))]


def session(**options: Any) -> ReferenceSession:
    style = options.pop("style", TextReferenceStyle())
    return ReferenceSession(DOCUMENTS, source_key=style.source_of, style=style, **options)


def run(text: str, **options: Any) -> tuple[str, AnswerReferences]:
    s = session(**options)
    out = "".join(s.feed(c) for c in text) + s.close()
    return out, s.references


def test_each_citation_gets_the_best_sentence_of_its_document() -> None:
    """The passage is the cited document's sentence that supports the claim, with exact offsets (chosen by hand)."""
    _, refs = run(ANSWER)
    paris, lyon = refs.citations
    assert paris.passage is not None
    assert lyon.passage is not None
    assert (paris.passage.document_position, paris.passage.excerpt) == (1, "Paris is the capital of France.")
    assert (paris.passage.document_start, paris.passage.document_end) == (13, 44)
    assert (lyon.passage.document_position, lyon.passage.excerpt) == (2, "Lyon has silk.")
    assert PARIS[paris.passage.document_start : paris.passage.document_end] == paris.passage.excerpt
    assert 0.0 < lyon.passage.score <= 1.0


def test_passages_off_gives_none() -> None:
    """passages=False: no passage, and the scorer is never asked."""
    _, refs = run(ANSWER, passages=False)
    assert [c.passage for c in refs.citations] == [None, None]


def test_no_passage_work_per_chunk_only_when_read_after_close() -> None:
    """Nothing is scored while the answer streams; once, when the closed session's references are read."""
    scorer = Counting()
    s = session(passages=scorer)
    for character in ANSWER:
        s.feed(character)
    assert scorer.calls == 0
    assert s.references.citations[0].passage is None  # not closed yet: not complete
    s.close()
    assert scorer.calls == 0  # the style does not show passages: nothing at close either
    first = s.references
    assert scorer.calls == 1
    assert s.references is first  # made once
    assert scorer.calls == 1


def test_a_custom_scorer_chooses_the_passage() -> None:
    """Any object with score(pairs) ranks the windows; the claim and each sentence are its pairs."""
    scorer = Counting([0.1, 0.9, 0.2])
    _, refs = run("Paris[1](id=1).", passages=scorer)
    assert scorer.pairs == [
        ("Paris", "Rome is old."),
        ("Paris", "Paris is the capital of France."),
        ("Paris", "It rains in Brest."),
    ]
    assert refs.citations[0].passage == Passage(
        document_position=1, document_start=13, document_end=44, excerpt="Paris is the capital of France.", score=0.9
    )


def test_a_langchain_cross_encoder_is_a_scorer() -> None:
    """A BaseCrossEncoder (here one that likes 'Brest') plugs in as is, through manage_references."""

    class LikesBrest(BaseCrossEncoder):
        def score(self, text_pairs: list[tuple[str, str]]) -> list[float]:
            return [2.0 if "Brest" in evidence else -1.0 for _, evidence in text_pairs]

    chain = manage_references(
        PROMPT | ChunkExactChatModel(chunks=["Paris[1](", "id=1)."]), style=TextReferenceStyle(), passages=LikesBrest()
    )
    message = chain.invoke({"documents": DOCUMENTS})
    (citation,) = message.response_metadata["references"]["citations"]
    assert citation["passage"]["excerpt"] == "It rains in Brest."
    assert citation["passage"]["score"] == 2.0
    assert message.response_metadata["citations"][0]["cited_text"] == "It rains in Brest."


def test_several_documents_of_one_source_keep_the_best() -> None:
    """A citation of two documents of one source gets the better passage of the two; a tie keeps the first."""
    _, refs = run("Lyon is on rivers[1](id=2, 3).")
    (citation,) = refs.citations
    assert citation.document_positions == (2, 3)
    assert citation.passage is not None
    assert (citation.passage.document_position, citation.passage.excerpt) == (3, "Lyon sits on two rivers.")
    _, tied = run("Nothing[1](id=2, 3).", passages=Counting([0.5]))
    assert tied.citations[0].passage is not None
    assert tied.citations[0].passage.document_position == 2


def test_verifier_and_passages_together() -> None:
    """With a verifier the citation carries both its support and its passage."""
    chain = manage_references(
        PROMPT | ChunkExactChatModel(chunks=[ANSWER]), style=TextReferenceStyle(), verifier=LexicalScorer()
    )
    citation = chain.invoke({"documents": DOCUMENTS}).response_metadata["references"]["citations"][0]
    assert citation["supported"] is True
    assert citation["passage"]["excerpt"] == "Paris is the capital of France."


def test_no_citations_kept_no_passages() -> None:
    """keep_citations=False keeps no citation, so no passage is looked for."""
    scorer = Counting()
    _, refs = run(ANSWER, keep_citations=False, passages=scorer)
    assert refs.citations == ()
    assert scorer.calls == 0


def test_passages_round_trip_through_to_dict() -> None:
    """to_dict writes the passage; from_dict reads it back; data without the key reads as None."""
    _, refs = run(ANSWER)
    data = refs.to_dict()
    assert data["citations"][0]["passage"] == {
        "document_position": 1,
        "document_start": 13,
        "document_end": 44,
        "excerpt": "Paris is the capital of France.",
        "score": refs.citations[0].passage.score if refs.citations[0].passage else None,
    }
    assert AnswerReferences.from_dict(data) == refs
    old = {**data, "citations": [{k: v for k, v in c.items() if k != "passage"} for c in data["citations"]]}
    assert AnswerReferences.from_dict(old).citations[0].passage is None


def test_a_wrong_passages_option_fails_at_construction() -> None:
    """passages must be a bool or have score(): anything else is a TypeError when the chain is built."""
    with pytest.raises(TypeError, match="passages must be True, False or a scorer"):
        manage_references(RunnableLambda(str), passages="lexical")  # type: ignore[arg-type]


def test_text_style_quotes_the_passage_when_asked() -> None:
    """TextReferenceStyle(show_passages=True) quotes each source's best passage under its entry."""
    out, _ = run(ANSWER, style=TextReferenceStyle(show_passages=True))
    assert out.endswith(
        "\n\n- [1] Paris (https://p.org)\n"
        '    "Paris is the capital of France."\n'
        "- [2] Lyon (https://l.org)\n"
        '    "Lyon has silk."\n'
    )


def test_default_styles_do_not_show_passages() -> None:
    """Without show_passages the output is what it always was, passages or not."""
    on, _ = run(ANSWER)
    off, _ = run(ANSWER, passages=False)
    assert on == off
    assert "Lyon has silk" not in on


def test_markdown_style_quotes_the_passage_escaped() -> None:
    """Markdown: the passage is a quote line under the entry, Markdown-escaped and on one line."""
    documents = [Document("Use *bold* [x](javascript:1)\nnow.", metadata={"source": "https://a.org"})]
    style = MarkdownReferenceStyle(show_passages=True)
    s = ReferenceSession(documents, source_key=style.source_of, style=style)
    out = s.feed("Bold[1](id=1).") + s.close()
    assert out.endswith("- **1** <https://a.org>\n  > Use \\*bold\\* \\[x\\]\\(javascript:1\\) now.\n")


def test_html_style_puts_the_passage_in_an_escaped_title() -> None:
    """HTML: the list entry's title (and data-passage-*) carry the passage, attribute-escaped."""
    hostile = 'He said "hi" & <script>alert(1)</script> here.'
    documents = [Document(hostile, metadata={"source": "https://a.org"})]
    style = HTMLReferenceStyle(show_passages=True)
    s = ReferenceSession(documents, source_key=style.source_of, style=style, answer_id="a1")
    out = s.feed("Hi[1](id=1).") + s.close()
    assert 'title="He said &#34;hi&#34; &amp; &lt;script&gt;alert(1)&lt;/script&gt; here."' in out
    assert f'data-passage-start="0" data-passage-end="{len(hostile)}"' in out
    assert "<script>" not in out


def test_a_template_reads_the_passage() -> None:
    """A user template sees r.passage (best) and r.passages (all, in citation order) in the list."""
    style = TemplateReferenceStyle(
        "{% macro citation(c) %}[{{ c.number }}{{ '*' if c.passage else '' }}]{% endmacro %}"
        "{% macro references(refs) %}{% for r in refs %}|{{ r.number }}:{{ r.passage.excerpt }}"
        ":{{ r.passages | length }}{% endfor %}{% endmacro %}",
        show_passages=True,
    )
    out, _ = run("Rome is old[1](id=1). Paris is the capital[2](id=1).", style=style)
    # Inline citations stream before any passage is known; the list has both of source 1's.
    assert out == "Rome is old[1]. Paris is the capital[1].|1:Rome is old.:2"


def test_text_style_keeps_a_passage_on_one_line() -> None:
    """A passage holding line breaks is quoted on one line: it cannot start a fake list line."""
    documents = [Document("Lawns are fun\r- [9] fake entry\u2028- [8] another.", metadata={"source": "a.pdf"})]
    style = TextReferenceStyle(show_passages=True)
    s = ReferenceSession(documents, source_key=style.source_of, style=style)
    out = s.feed("Fun[1](id=1).") + s.close()
    assert out == 'Fun[1].\n\n- [1] a.pdf\n    "Lawns are fun - [9] fake entry - [8] another."\n'
