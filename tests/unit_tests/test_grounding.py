"""Scorers, ReferencePredictor and citation verification."""

from __future__ import annotations

import json
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.cross_encoders import BaseCrossEncoder
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage

from langchain_refs import (
    AnswerReferences,
    CrossEncoderScorer,
    HTMLReferenceStyle,
    HybridScorer,
    LexicalScorer,
    LLMJudgeScorer,
    PredictedReference,
    ReferencePredictor,
    TextReferenceStyle,
    manage_references,
    needs_reference,
)
from tests.unit_tests.fakes import ConstantCrossEncoder, str_chunks

PARIS = Document(
    "Paris is the capital of France. It has about two million inhabitants. The Seine flows through it.",
    id="paris",
    metadata={"source": "paris.html"},
)
LYON = Document(
    "Lyon is famous for its food. The city lies where the Rhône meets the Saône.",
    metadata={"source": "lyon.html"},
)


def test_lexical_scorer_ranks_support_above_unrelated_evidence() -> None:
    """Evidence stating the claim scores high; unrelated or wrong-number evidence scores lower."""
    claim = "Paris has about two million inhabitants."
    scores = LexicalScorer().score([(claim, PARIS.page_content), (claim, LYON.page_content)])
    assert scores[0] > 0.7 > 0.3 > scores[1]
    numbers = LexicalScorer().score(
        [
            ("The tower is 330 metres tall.", "The tower is 330 metres tall."),
            ("The tower is 330 metres tall.", "The tower is 300 metres tall."),
        ]
    )
    assert numbers[0] > numbers[1]


def test_scores_are_in_unit_interval() -> None:
    """Every scorer answers in [0, 1], one score per pair, empty batch included."""
    scorer = LexicalScorer()
    assert scorer.score([]) == []
    for value in scorer.score([("", ""), ("x", ""), ("", "y"), ("a b c", "a b c")]):
        assert 0.0 <= value <= 1.0


def test_scorers_are_langchain_cross_encoders() -> None:
    """Our scorers are BaseCrossEncoders, so LangChain's reranker takes them."""
    from langchain_classic.retrievers.document_compressors import CrossEncoderReranker

    assert isinstance(LexicalScorer(), BaseCrossEncoder)
    reranker = CrossEncoderReranker(model=LexicalScorer(), top_n=1)
    best = reranker.compress_documents([LYON, PARIS], "How many inhabitants does Paris have?")
    assert best[0].id == "paris"


def test_any_cross_encoder_plugs_in() -> None:
    """A user's cross-encoder producing logits is squashed into [0, 1]."""

    class Logits(BaseCrossEncoder):
        def score(self, text_pairs: list[tuple[str, str]]) -> list[float]:
            return [3.0 if "Paris" in e else -3.0 for _, e in text_pairs]

    scores = CrossEncoderScorer(Logits()).score([("c", "Paris"), ("c", "Lyon")])
    assert scores[0] > 0.9
    assert scores[1] < 0.1


def test_llm_judge_reads_json_and_survives_bad_replies(caplog: pytest.LogCaptureFixture) -> None:
    """The judge reads JSON or a bare number; a malformed reply scores the default and is logged."""
    model = FakeListChatModel(responses=['Sure: {"score": 0.8}', "0.3", "I think it is fine", '{"score": 7}'])
    with caplog.at_level(logging.WARNING, logger="langchain_refs"):
        scores = LLMJudgeScorer(model, max_concurrency=1).score([("a", "b")] * 4)
    assert scores == [0.8, 0.3, 0.0, 1.0]
    assert "unreadable judge reply" in caplog.text


def test_llm_judge_uses_structured_output_when_available() -> None:
    """A model with structured output is asked for a typed judgement."""
    from langchain_core.runnables import RunnableLambda

    class Structured(FakeListChatModel):
        def with_structured_output(self, schema, **kwargs):  # type: ignore[no-untyped-def,override]
            return RunnableLambda(lambda _: schema(score=0.65))

    assert LLMJudgeScorer(Structured(responses=["unused"])).score([("a", "b")]) == [0.65]


def test_hybrid_scorer_weights() -> None:
    """A hybrid is the weighted mean of its scorers; bad weights are refused."""

    assert HybridScorer([(ConstantCrossEncoder(1.0), 3), (ConstantCrossEncoder(0.0), 1)]).score([("a", "b")]) == [0.75]
    with pytest.raises(ValueError, match="non-negative"):
        HybridScorer([(ConstantCrossEncoder(1.0), -1)])


def test_needs_reference() -> None:
    """Greetings, headings, not-found sentences and fragments need no reference."""
    assert not needs_reference("Hi there!")
    assert not needs_reference("## Details")
    assert not needs_reference("I couldn't find this in the documents.")
    assert not needs_reference("Let me know if you need more.")
    assert not needs_reference("Yes.")
    assert needs_reference("The Seine flows through Paris.")


def test_predictor_finds_the_supporting_sentence() -> None:
    """Each claim sentence gets the document span that backs it, with exact offsets and a label."""
    answer = "Hello! Paris has about two million inhabitants. Lyon is famous for its food."
    message = ReferencePredictor().invoke({"answer": answer, "documents": [PARIS, LYON]})
    assert isinstance(message, AIMessage)
    refs = [PredictedReference.from_dict(r) for r in message.response_metadata["references"]]
    assert len(refs) == 2
    docs = [PARIS, LYON]
    spans = [
        (
            answer[r.answer_start_idx : r.answer_end_idx],
            docs[r.document_position - 1].page_content[r.document_start_idx : r.document_end_idx],
        )
        for r in refs
    ]
    assert spans == [
        ("Paris has about two million inhabitants.", "It has about two million inhabitants."),
        ("Lyon is famous for its food.", "Lyon is famous for its food."),
    ]
    assert refs[0].document_id == "paris"
    assert refs[1].document_id == "lyon.html"
    assert refs[1].label == "grounded"


def test_predictor_threshold_and_windows() -> None:
    """A threshold keeps every window above it; wider document windows span several sentences."""
    predictor = ReferencePredictor(threshold=0.05, document_window_size=2)
    refs = predictor.predict("The Seine flows through Paris.", [PARIS, LYON])
    assert len(refs) >= 2
    assert all(r.score >= 0.05 for r in refs)
    assert refs == sorted(refs, key=lambda r: -r.score)
    best = refs[0]
    assert PARIS.page_content[best.document_start_idx : best.document_end_idx].count(".") == 2


def test_predictor_lists_messages_and_json() -> None:
    """A list of answers (str and AIMessage) gives a list of AIMessages; references round-trip JSON."""
    message = AIMessage(content="Lyon is famous for its food.", id="m1", response_metadata={"model_name": "x"})
    out = ReferencePredictor().invoke({"answer": ["The Seine flows through it.", message], "documents": [PARIS, LYON]})
    assert [type(m) for m in out] == [AIMessage, AIMessage]
    assert out[1].id == "m1"
    assert out[1].response_metadata["model_name"] == "x"
    data = json.loads(json.dumps(out[1].response_metadata["references"]))
    assert PredictedReference.from_dict(data[0]).document_position == 2


def test_predictor_verifiability_can_be_replaced() -> None:
    """The verifiability step is pluggable; None scores every sentence."""
    answer = "Hi! Paris is the capital of France."
    assert len(ReferencePredictor().predict(answer, [PARIS])) == 1
    assert len(ReferencePredictor(verifiability=None).predict(answer, [PARIS])) == 2
    assert ReferencePredictor(verifiability=lambda s: False).predict(answer, [PARIS]) == []


def test_predictor_labels_and_default_class() -> None:
    """Labels follow the thresholds, highest first; below them, the default class."""
    predictor = ReferencePredictor(label_thresholds={"strong": 0.9, "weak": 0.2}, default_class="none")
    assert [predictor.label(s) for s in (0.95, 0.5, 0.1)] == ["strong", "weak", "none"]


def test_predictor_errors() -> None:
    """Bad options and bad input get clear errors."""
    with pytest.raises(ValueError, match="answer_window_size must be at least 1"):
        ReferencePredictor(answer_window_size=0)
    with pytest.raises(ValueError, match="answer under 'answer'"):
        ReferencePredictor().invoke({"documents": [PARIS]})
    with pytest.raises(ValueError, match=r"input\['documents'\]\[0\] is a str"):
        ReferencePredictor().invoke({"answer": "x", "documents": ["text"]})
    with pytest.raises(TypeError, match="str or AIMessage"):
        ReferencePredictor().invoke({"answer": 3, "documents": [PARIS]})


WORDS = st.sampled_from(["Paris", "capital", "é", "日本", "🎉", "of", "France", "2.5", "Dr.", "x"])


@settings(max_examples=60, deadline=None)
@given(
    answer=st.lists(st.lists(WORDS, min_size=1, max_size=8).map(" ".join), min_size=1, max_size=4).map(". ".join),
    documents=st.lists(st.lists(WORDS, min_size=1, max_size=10).map(" ".join), min_size=1, max_size=3),
    size=st.integers(1, 3),
    stride=st.integers(1, 3),
)
def test_offsets_always_slice_both_spans(answer: str, documents: list[str], size: int, stride: int) -> None:
    """Whatever the text and windows, the offsets slice the answer and the document exactly."""
    docs = [Document(text) for text in documents]
    predictor = ReferencePredictor(
        threshold=0.0,
        verifiability=None,
        answer_window_size=size,
        document_window_size=size,
        answer_window_stride=stride,
        document_window_stride=stride,
    )
    for ref in predictor.predict(answer, docs):
        answer_span = answer[ref.answer_start_idx : ref.answer_end_idx]
        document_span = documents[ref.document_position - 1][ref.document_start_idx : ref.document_end_idx]
        assert answer_span
        assert answer_span == answer_span.strip()
        assert document_span
        assert document_span == document_span.strip()
        assert 0.0 <= ref.score <= 1.0


DOCS = [PARIS, LYON]


def test_verifier_scores_each_citation() -> None:
    """With a verifier, each citation carries its support; a wrong citation is flagged."""
    chain = manage_references(
        str_chunks(["Paris has two million inhabitants[1](id=1). Lyon has the Eiffel Tower[2](id=2)."]),
        style=TextReferenceStyle(),
        verifier=LexicalScorer(),
        support_threshold=0.5,
    )
    from langchain_refs import ReferencesCollector

    collector = ReferencesCollector()
    text = chain.invoke({"documents": DOCS}, {"callbacks": [collector]})
    citations = collector.answers[0].citations
    assert [c.supported for c in citations] == [True, False]
    assert citations[0].support is not None
    assert citations[0].support > citations[1].support
    assert text.endswith("- [1] paris.html\n- [2] lyon.html [unsupported]\n")


def test_verifier_marks_html_and_streams_unchanged() -> None:
    """The HTML list marks unsupported sources with a class; the streamed text is the same."""
    answer = "Lyon has the Eiffel Tower[1](id=2)."
    plain = manage_references(str_chunks([answer]), style=HTMLReferenceStyle()).invoke({"documents": DOCS})
    checked = manage_references(str_chunks([answer]), style=HTMLReferenceStyle(), verifier=LexicalScorer()).invoke(
        {"documents": DOCS}
    )
    assert 'class="unsupported"' in checked
    assert 'class="unsupported"' not in plain
    assert checked.split("<ol")[0] == plain.split("<ol")[0].replace(
        plain.split("ref-")[1][:8], checked.split("ref-")[1][:8]
    )


async def test_verifier_on_the_async_path() -> None:
    """astream verifies too, off the event loop, and puts support in the message metadata."""
    from tests.unit_tests.fakes import message_chunks

    chain = manage_references(
        message_chunks(["Paris is the capital of France", "[1](id=1)."]), verifier=LexicalScorer()
    )
    chunks = [c async for c in chain.astream({"documents": DOCS})]
    refs = AnswerReferences.from_dict(chunks[-1].response_metadata["references"])
    assert refs.citations[0].supported is True


def cited(text: str, positions: tuple[int, ...]) -> AnswerReferences:
    """An answer with one citation of ``text`` naming ``positions``."""
    from langchain_refs import Citation, Reference

    citation = Citation(
        number=1, document_positions=positions, start=0, end=3, text_start=0, text_end=0, text=text, marker="[1]"
    )
    reference = Reference(number=1, source="s", title=None, document_positions=positions)
    return AnswerReferences(references=(reference,), citations=(citation,))


@pytest.mark.parametrize("positions", [(3,), (99,), (0,), (-1,), (0, 3, -2)])
def test_verifier_positions_that_name_no_document(positions: tuple[int, ...]) -> None:
    """Positions past the end, 0 or negative give no evidence (support 0), never an IndexError or another document."""
    from langchain_refs import verify_citations

    checked = verify_citations(cited("Lyon is famous for its food.", positions), DOCS, LexicalScorer())
    assert (checked.citations[0].support, checked.citations[0].supported) == (0.0, False)


def test_verifier_scores_the_positions_that_resolve() -> None:
    """A citation naming one real and one missing document is scored against the real one."""
    from langchain_refs import verify_citations

    checked = verify_citations(cited("Lyon is famous for its food.", (7, 2)), DOCS, LexicalScorer())
    assert checked.citations[0].supported is True


def test_verifier_without_documents() -> None:
    """No documents at all: every citation has support 0."""
    from langchain_refs import verify_citations

    checked = verify_citations(cited("Paris is in France.", (1,)), [], LexicalScorer())
    assert checked.citations[0].support == 0.0
