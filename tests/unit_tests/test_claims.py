"""Claim extraction, checking, aggregation, filters and the `check` command line."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.runnables import RunnableLambda

from langchain_refs import (
    AnswerReferences,
    Claim,
    LexicalScorer,
    LLMClaimChecker,
    LLMClaimExtractor,
    LLMReferenceFilter,
    RuleBasedClaimExtractor,
    ScorerClaimChecker,
    SimilarityReferenceFilter,
    aggregate,
    manage_references,
    needs_reference,
    split_sentences,
    verify_citations,
)
from langchain_refs.apps import main
from langchain_refs.grounding import MeaningGuards
from tests.unit_tests.fakes import str_chunks

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "check_input.json"


def test_rule_based_extractor_offsets() -> None:
    """Sub-sentence claims carry offsets that slice the response; non-claims are skipped."""
    response = "Hi! The tower opened in 1889, and it is 330 metres tall; it is painted brown."
    claims = RuleBasedClaimExtractor().extract(response)
    assert [c.text for c in claims] == ["The tower opened in 1889", "it is 330 metres tall", "it is painted brown."]
    for claim in claims:
        assert claim.start is not None
        assert response[claim.start : claim.end] == claim.text


QUOTED_SENTENCES = [
    (
        'Annie Zaleski of "The A.V. Club" praised the cover. It sold well in 2015.',
        ['Annie Zaleski of "The A.V. Club" praised the cover.', "It sold well in 2015."],
    ),  # the splitter ends a sentence at "A.V.", inside quotation marks
    (
        "The critic of \u201cThe A.V. Club\u201d praised the cover. It sold well in 2015.",
        ["The critic of \u201cThe A.V. Club\u201d praised the cover.", "It sold well in 2015."],
    ),
    (
        "The player is 5'9\" tall and fast. He joined the club in 2015.",
        ["The player is 5'9\" tall and fast.", "He joined the club in 2015."],
    ),  # an inch mark opens no quotation
    (
        'She called it "a triumph." The album sold well in 2015.',
        ['She called it "a triumph."', "The album sold well in 2015."],
    ),  # a quotation closed before the sentence ends
    (
        'The critic called it "a triumph. Paris has 2 million people.\n\nRome was founded in 753 BC.',
        ['The critic called it "a triumph. Paris has 2 million people.', "Rome was founded in 753 BC."],
    ),  # a quotation left open goes on to the line's end, never past a line break
    (
        'He said "yes. Rome is very old. Paris is very big. Lyon has much silk. Nice is very warm. Lille is cold too.',
        [
            'He said "yes. Rome is very old. Paris is very big. Lyon has much silk.',
            "Nice is very warm.",
            "Lille is cold too.",
        ],
    ),  # ... and over three more sentences at most
]


@pytest.mark.parametrize(("response", "expected"), QUOTED_SENTENCES)
def test_rule_based_extractor_keeps_quotations_whole(response: str, expected: list[str]) -> None:
    """A sentence never ends inside quotation marks; an inch mark or a closed quotation changes nothing."""
    claims = RuleBasedClaimExtractor().extract(response)
    assert [c.text for c in claims] == expected
    assert all(response[c.start : c.end] == c.text for c in claims)


def test_llm_extractor_triplets_subsentences_and_bad_replies(caplog: pytest.LogCaptureFixture) -> None:
    """The LLM extractor reads triplets or sub-sentences, in batches; malformed replies give no claims."""
    model = FakeListChatModel(
        responses=[
            'Here you go:\n```json\n{"claims": [["Paris", "is capital of", "France"]]}\n```',
            "I cannot do that.",
            '{"claims": [["only two", "items"]]}',
        ]
    )
    with caplog.at_level(logging.WARNING, logger="langchain_refs"):
        claims = LLMClaimExtractor(model, max_concurrency=1).extract_batch(
            ["Paris is the capital of France.", "x", "y"]
        )
    assert claims[0] == [Claim(text="Paris is capital of France", triplet=("Paris", "is capital of", "France"))]
    assert claims[1] == []
    assert claims[2] == []
    assert caplog.text.count("unreadable claim extractor reply") == 2
    sub = LLMClaimExtractor(FakeListChatModel(responses=['{"claims": ["Paris is big."]}']), claim_format="subsentence")
    located = sub.extract("Yes. Paris is big.")[0]
    assert (located.start, located.end) == (5, 18)
    with pytest.raises(ValueError, match="claim_format"):
        LLMClaimExtractor(model, claim_format="prose")  # type: ignore[arg-type]


def test_scorer_checker_labels_and_evidence() -> None:
    """Entailment on support, Contradiction only on disagreeing numbers or negation, else Neutral."""
    references = ["The Eiffel Tower opened in 1889. It is 330 metres tall.", "The tower is not painted red."]
    checker = ScorerClaimChecker()
    results = checker.check_batch(
        [
            Claim(text="The Eiffel Tower opened in 1889."),
            Claim(text="The Eiffel Tower opened in 1901."),
            Claim(text="The tower is painted red."),
            Claim(text="The tower has a restaurant."),
        ],
        references,
    )
    assert [r.label for r in results] == ["Entailment", "Contradiction", "Contradiction", "Neutral"]
    span = results[0].evidence[0]
    assert references[span.reference][span.start : span.end] == "The Eiffel Tower opened in 1889."


def test_llm_checker_reads_labels_and_survives_bad_replies(caplog: pytest.LogCaptureFixture) -> None:
    """The LLM checker reads JSON or a bare label; garbage counts as Neutral and is logged."""
    model = FakeListChatModel(
        responses=['{"label": "Entailment"}', "It is a Contradiction.", "no idea", '{"label": 3}']
    )
    with caplog.at_level(logging.WARNING, logger="langchain_refs"):
        labels = [c.label for c in LLMClaimChecker(model, max_concurrency=1).check_batch([Claim(text="c")] * 4, ["r"])]
    assert labels == ["Entailment", "Contradiction", "Neutral", "Neutral"]
    assert caplog.text.count("unreadable claim checker reply") == 2


@pytest.mark.parametrize(
    ("labels", "strict", "major", "soft"),
    [
        ([], "Abstain", "Abstain", {"Abstain": 1.0}),
        (["Entailment"] * 3, "Entailment", "Entailment", {"Entailment": 1.0, "Neutral": 0.0, "Contradiction": 0.0}),
        (["Entailment", "Neutral", "Entailment"], "Neutral", "Entailment", None),
        (["Entailment", "Contradiction", "Neutral"], "Contradiction", "Contradiction", None),
        (["Neutral", "Neutral", "Contradiction", "Contradiction"], "Contradiction", "Contradiction", None),
    ],
)
def test_aggregation(labels: list[str], strict: str, major: str, soft: dict[str, float] | None) -> None:
    """strict, major and soft as RefChecker defines them; Abstain for no claims."""
    assert aggregate(labels, "strict") == strict
    assert aggregate(labels, "major") == major
    if soft is not None:
        assert aggregate(labels, "soft") == soft
    with pytest.raises(ValueError, match="strict, soft or major"):
        aggregate(labels, "mean")  # type: ignore[arg-type]


DOCS = [
    Document("Paris is the capital of France.", metadata={"source": "paris.html", "title": "Paris"}),
    Document("Bananas are rich in potassium.", metadata={"source": "banana.html"}),
    Document("France borders Spain and Italy.", metadata={"source": "france.html"}),
]


def test_similarity_filter_list_and_string() -> None:
    """Only the supporting documents are kept, in order; as a string on request."""
    response = "Paris is the capital of France. France borders Spain."
    kept = SimilarityReferenceFilter().invoke({"response": response, "documents": DOCS})
    assert [d.metadata["source"] for d in kept] == ["paris.html", "france.html"]
    text = SimilarityReferenceFilter(as_string=True).invoke({"response": response, "documents": DOCS})
    assert text == "[1] Paris (paris.html)\n[2] france.html"
    assert SimilarityReferenceFilter(threshold=1.0).invoke({"response": "Rome is old.", "documents": DOCS}) == []
    with pytest.raises(ValueError, match=r"threshold must be a number from 0 to 1 \(scores' scale\), got 1.01"):
        SimilarityReferenceFilter(threshold=1.01)  # no score reaches it: refused when given


def test_similarity_filter_with_embeddings() -> None:
    """Embeddings can replace the lexical scorer."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    flt = SimilarityReferenceFilter(embeddings=DeterministicFakeEmbedding(size=16), threshold=0.99)
    assert flt.invoke({"response": "Bananas are rich in potassium.", "documents": DOCS}) == [DOCS[1]]


def test_llm_filter_structured_json_and_malformed(caplog: pytest.LogCaptureFixture) -> None:
    """The LLM filter reads structured output or JSON; bad replies are reported, never raised."""

    class Structured(FakeListChatModel):
        def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            return RunnableLambda(lambda _: schema(relevant=[3, 1]))

    structured = LLMReferenceFilter(Structured(responses=["unused"]))
    assert structured.invoke({"response": "r", "documents": DOCS}) == [DOCS[0], DOCS[2]]
    plain = LLMReferenceFilter(FakeListChatModel(responses=['Sure! {"relevant": [2, 9]}']))
    with caplog.at_level(logging.WARNING, logger="langchain_refs"):
        assert plain.invoke({"response": "r", "documents": DOCS}) == [DOCS[1]]
        broken = LLMReferenceFilter(FakeListChatModel(responses=["I think chunk two"]))
        assert broken.invoke({"response": "r", "documents": DOCS}) == []
    assert "do not exist: [9]" in caplog.text
    assert "unreadable reference filter reply" in caplog.text


def test_filter_in_front_of_manage_references() -> None:
    """A filter can choose the documents manage_references numbers."""
    from langchain_core.runnables import RunnablePassthrough

    from langchain_refs import TextReferenceStyle

    chain = RunnablePassthrough.assign(
        documents=lambda x: SimilarityReferenceFilter().invoke({"response": x["draft"], "documents": x["documents"]})
    ) | manage_references(
        str_chunks(["Paris is the capital[1](id=1). France borders Spain[2](id=2)."]), style=TextReferenceStyle()
    )
    out = chain.invoke({"draft": "Paris is the capital of France. France borders Spain.", "documents": DOCS})
    assert out.endswith("- [1] Paris (paris.html)\n- [2] france.html\n")


def test_filter_errors() -> None:
    """Missing response or bad documents are clear errors."""
    with pytest.raises(ValueError, match="response under 'response'"):
        SimilarityReferenceFilter().invoke({"documents": DOCS})
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from langchain_refs import LexicalScorer

    with pytest.raises(ValueError, match="scorer or embeddings, not both"):
        SimilarityReferenceFilter(scorer=LexicalScorer(), embeddings=DeterministicFakeEmbedding(size=4))


WRONG_INPUT = [
    pytest.param(
        lambda: Claim(text=None), TypeError, r"^Claim: text must be a text \(str\), got NoneType$", id="claim"
    ),
    pytest.param(
        lambda: ScorerClaimChecker().check(Claim(text="a b c"), ["x"], question=5),
        TypeError,
        r"^check: question must be a text \(str\) or None, got int$",
        id="question",
    ),
    pytest.param(
        lambda: RuleBasedClaimExtractor().extract(None),
        TypeError,
        r"^extract: response must be a text \(str\), got NoneType$",
        id="response",
    ),
    pytest.param(
        lambda: LexicalScorer().score([(None, "a")]),
        TypeError,
        r"^score: text_pairs\[0\] must be a \(claim, evidence\) pair of texts, got \(NoneType, str\)$",
        id="pair",
    ),
    pytest.param(
        lambda: ScorerClaimChecker(contradiction_overlap="x"),
        TypeError,
        r"contradiction_overlap must be a number from 0 to 1, got 'x'$",
        id="overlap",
    ),
    pytest.param(
        lambda: ScorerClaimChecker(window="a"), TypeError, r"window must be a whole number of sentences", id="window"
    ),
    pytest.param(
        lambda: ScorerClaimChecker(window=0),
        ValueError,
        r"ScorerClaimChecker: window must be 1 or more sentences, got 0$",
        id="window-0",
    ),
    pytest.param(
        lambda: SimilarityReferenceFilter().invoke({"response": None, "documents": DOCS}),
        TypeError,
        r"'response' must be the answer, a str or an AI message, got NoneType$",
        id="filter-response",
    ),
    pytest.param(
        lambda: ScorerClaimChecker(scorer="lexical"),
        TypeError,
        r"^ScorerClaimChecker: scorer must have score\(pairs\) .*, got str$",
        id="checker-scorer",
    ),
    pytest.param(
        lambda: verify_citations(AnswerReferences(references=(), citations=()), [], None),  # type: ignore[arg-type]
        TypeError,
        r"^verify_citations\(\): scorer must have score\(pairs\) .*, got NoneType$",
        id="verify-scorer",
    ),
    pytest.param(
        lambda: verify_citations("Paris[1]", [], LexicalScorer()),  # type: ignore[arg-type]
        TypeError,
        r"^verify_citations\(\): references must be an AnswerReferences .*, got str$",
        id="verify-references",
    ),
    pytest.param(
        lambda: LexicalScorer().score(None),  # type: ignore[arg-type]
        TypeError,
        r"^score: text_pairs must be a list of \(claim, evidence\) pairs of texts, got NoneType$",
        id="pairs",
    ),
    pytest.param(
        lambda: MeaningGuards(number="no"),  # type: ignore[arg-type]
        TypeError,
        r"^MeaningGuards: number must be True or False, got str 'no'$",
        id="guards-option",
    ),
    pytest.param(
        lambda: MeaningGuards().check("It is 5 m.", None),  # type: ignore[arg-type]
        TypeError,
        r"^MeaningGuards.check: evidence must be a text \(str\), got NoneType$",
        id="guards-evidence",
    ),
]


@pytest.mark.parametrize(("call", "error", "message"), WRONG_INPUT)
def test_wrong_input_is_named_when_given(call: Any, error: type[Exception], message: str) -> None:
    """A value of the wrong type is one error naming the argument, when given: never a failure deep inside."""
    with pytest.raises(error, match=message):
        call()


# -- command line -------------------------------------------------------------------


def run_cli(*args: str) -> int:
    return main(["check", *args, "--no-progress"])


def test_cli_extract_check_on_the_example(tmp_path: Path) -> None:
    """extract-check writes claims, ys and Y in RefChecker's shape."""
    out = tmp_path / "out.json"
    assert run_cli("extract-check", "--input", str(EXAMPLE), "--output", str(out), "--aggregator", "soft") == 0
    results = json.loads(out.read_text())
    assert [r["Y"] for r in results][1:] == [
        {"Entailment": 0.0, "Neutral": 0.0, "Contradiction": 1.0},
        {"Entailment": 0.5, "Neutral": 0.5, "Contradiction": 0.0},
        {"Abstain": 1.0},
    ]
    assert results[0]["ys"] == ["Entailment"] * 3
    assert results[0]["question"].startswith("When did")
    assert not (tmp_path / "out.json.partial.jsonl").exists()


def test_cli_extract_then_check(tmp_path: Path) -> None:
    """extract then check gives what extract-check gives."""
    claims, checked, both = tmp_path / "claims.json", tmp_path / "checked.json", tmp_path / "both.json"
    run_cli("extract", "--input", str(EXAMPLE), "--output", str(claims))
    assert "Y" not in json.loads(claims.read_text())[0]
    run_cli("check", "--input", str(claims), "--output", str(checked), "--aggregator", "major")
    run_cli("extract-check", "--input", str(EXAMPLE), "--output", str(both), "--aggregator", "major")
    assert json.loads(checked.read_text()) == json.loads(both.read_text())


def test_cli_malformed_lines_are_named_and_skipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bad line is reported with its number; the rest is processed."""
    source = tmp_path / "in.jsonl"
    source.write_text(
        '{"response": "Water boils at 100 degrees.", "reference": "Water boils at 100 degrees."}\n'
        "{not json\n"
        '{"response": "No reference here at all."}\n'
        '["a list"]\n'
        '{"response": "Ice melts at 0 degrees.", "reference": ["Ice melts at 0 degrees."]}\n',
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    assert run_cli("extract-check", "--input", str(source), "--output", str(out)) == 1
    err = capsys.readouterr().err
    assert "line 2: not valid JSON" in err
    assert "line 3: no 'reference' to check against" in err
    assert "line 4: a line must be a JSON object" in err
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r.get("Y") for r in results] == ["Entailment", None, None, None, "Entailment"]
    assert results[1] == {"error": results[1]["error"], "line": 2}


def test_cli_resumes_after_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Items checked before a crash are kept and not checked again."""
    from langchain_refs.apps.check import _command

    out = tmp_path / "out.json"
    calls: list[str] = []
    real = _command._process

    def crash_on_third(item: dict[str, Any], *args: Any) -> dict[str, Any]:
        calls.append(item["response"])
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(item, *args)

    monkeypatch.setattr(_command, "_process", crash_on_third)
    # Ctrl-C ends the command with status 130 and a line saying how to resume (see test_command).
    assert run_cli("extract-check", "--input", str(EXAMPLE), "--output", str(out)) == 130
    assert len((tmp_path / "out.json.partial.jsonl").read_text().splitlines()) == 2
    calls.clear()
    monkeypatch.setattr(_command, "_process", real)
    seen: list[str] = []
    monkeypatch.setattr(_command, "_process", lambda item, *a: (seen.append(item["response"]), real(item, *a))[1])
    assert run_cli("extract-check", "--input", str(EXAMPLE), "--output", str(out)) == 0
    assert len(seen) == 2
    assert len(json.loads(out.read_text())) == 4


def test_cli_progress_bar(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--progress draws a bar on stderr."""
    main(["check", "extract", "--input", str(EXAMPLE), "--output", str(tmp_path / "o.json"), "--progress"])
    assert "] 4/4" in capsys.readouterr().err


def test_scorer_checker_splits_each_reference_once_per_batch() -> None:
    """check_batch splits each reference once for all its claims, not once per claim."""
    from langchain_refs import SentenceSplitter, Span

    split: list[str] = []

    class Counting(SentenceSplitter):
        def split(self, text: str) -> list[Span]:
            split.append(text)
            return super().split(text)

    references = ["The tower opened in 1889. It is 330 metres tall.", "The tower is not painted red."]
    claims = [Claim(text="The tower opened in 1889."), Claim(text="It is 330 metres tall."), Claim(text="Red.")]
    checks = ScorerClaimChecker(splitter=Counting()).check_batch(claims, references)
    assert sorted(split) == sorted(references)
    # "Red." is covered only inside the second reference's negation: no support, and a
    # one-word fragment is too little to call a contradiction.
    assert [c.label for c in checks] == ["Entailment", "Entailment", "Neutral"]


# The clause cutter used to re-read the rest of the sentence at every cut (and retry a
# whitespace run from each of its characters). That version is the oracle here.
_OLD_CLAUSE = re.compile(r";\s+|,\s+(?:and|but|while|whereas|although)\s+|\s+(?:but|whereas)\s+")


def old_claims(response: str, min_words: int) -> list[tuple[int, int]]:
    """The (start, end) offsets of the claims the earlier extractor gave."""
    offsets = []
    for sentence in split_sentences(response):
        if not needs_reference(sentence.text):
            continue
        start, text = 0, sentence.text
        for cut in _OLD_CLAUSE.finditer(text):
            left, right = text[start : cut.start()], text[cut.end() :]
            if len(re.findall(r"\w+", left)) >= min_words and len(re.findall(r"\w+", right)) >= min_words:
                offsets.append((sentence.start + start, sentence.start + cut.start()))
                start = cut.end()
        offsets.append((sentence.start + start, sentence.end))
    return offsets


CLAUSE_PIECES = st.lists(
    st.sampled_from(["; ", ";", ", and ", ", but ", " but ", " whereas ", ", while ", "  ", "\t", "\n", "but"]),
    max_size=12,
).flatmap(
    lambda joins: (
        st.lists(st.sampled_from(["Paris", "is", "big", "x", "é", "1889", "-", "'s"]), min_size=1, max_size=4)
        .map(" ".join)
        .flatmap(lambda words: st.just(words + "".join(f"{j}{words}" for j in joins) + "."))
    )
)


@settings(max_examples=250, deadline=None)
@given(response=CLAUSE_PIECES, min_words=st.integers(1, 4))
def test_clause_cuts_match_the_old_extractor(response: str, min_words: int) -> None:
    """The linear clause cutter cuts exactly where the earlier one did (bare fragments aside)."""
    claims = RuleBasedClaimExtractor(min_words=min_words).extract(response)
    # Where no sentence makes a claim, its short fragments are bare answers (none of these is a greeting).
    bare = [(s.start, s.end) for s in split_sentences(response) if 1 <= len(re.findall(r"\w+", s.text)) < 4]
    assert [(c.start, c.end) for c in claims] == (old_claims(response, min_words) or bare)
    assert all(response[c.start : c.end] == c.text for c in claims if c.start is not None)


# -- bare answers and the contradiction rule ------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("Neil Alden Armstrong", [("Neil Alden Armstrong", 0, 20)]),
        ("  1969.\n", [("1969.", 2, 7)]),
        ("Hello! Neil Armstrong.", [("Neil Armstrong.", 7, 22)]),
        ("Yes.", [("Yes.", 0, 4)]),
        ("Hello!", []),
        ("Thanks!", []),
        ("# Summary", []),
        ("No idea.", []),
        ("Hello! I could not find this in the documents.", []),
        ("", []),
        ("Neil Armstrong. He walked on the Moon in 1969.", [("He walked on the Moon in 1969.", 16, 46)]),
    ],
)
def test_bare_answer_is_a_claim(response: str, expected: list[tuple[str, int, int]]) -> None:
    """A response of short fragments only is checked as claims (greetings are not); a sentence claim wins."""
    claims = RuleBasedClaimExtractor().extract(response, "Who first walked on the Moon?")
    assert [(c.text, c.start, c.end) for c in claims] == expected


def test_bare_answers_in_a_batch_and_without_question() -> None:
    """extract_batch gives bare-answer claims too, with or without questions."""
    extractor = RuleBasedClaimExtractor()
    assert extractor.extract_batch(["Neil Armstrong", "Hello!"]) == [
        [Claim(text="Neil Armstrong", start=0, end=14)],
        [],
    ]
    assert extractor.extract_batch(["Paris"], ["Capital of France?"]) == [[Claim(text="Paris", start=0, end=5)]]


MOON = "Neil Armstrong was the first person to walk on the Moon, in 1969."


@pytest.mark.parametrize(
    ("answer", "label"),
    [("Neil Alden Armstrong", "Entailment"), ("Buzz Aldrin", "Neutral"), ("Apollo", "Neutral")],
)
def test_bare_answer_is_checked_with_its_question(answer: str, label: str) -> None:
    """A bare answer must itself be in the window that answers its question: right name, wrong names."""
    check = ScorerClaimChecker().check(Claim(text=answer), [MOON], "Who was the first person to walk on the Moon?")
    assert check.label == label


def test_bare_answer_number_conflict_is_a_contradiction() -> None:
    """Read with its question, a bare year that differs from the reference's is a Contradiction."""
    checker = ScorerClaimChecker()
    question = "When did the bridge open?"
    assert checker.check(Claim(text="1951"), ["The bridge opened in 1932."], question).label == "Contradiction"
    assert checker.check(Claim(text="1932"), ["The bridge opened in 1932."], question).label == "Entailment"


@pytest.mark.parametrize(
    ("claim", "reference"),
    [
        pytest.param(
            "It is the rapid injection of fluid that pumps brine deep into the earth.",
            "It is not the fracking itself that causes these earthquakes; "
            "it is the rapid injection of fluid that pumps brine deep into the earth.",
            id="negation-of-another-clause",
        ),
        pytest.param(
            "A healthy work-life balance is important for health.",
            "A healthy work-life balance is not only important for health but also for productivity.",
            id="not-only",
        ),
        pytest.param(
            "Visual disabilities affect many web users [2].",
            "Visual disabilities affect many web users: 25% of adults live with a disability.",
            id="citation-marker-is-no-number",
        ),
        pytest.param(
            "Insects cannot focus by changing the shape of their lens.",
            "Insects can\u2019t focus by changing the shape of their lens.",
            id="curly-apostrophe-negation",
        ),
        pytest.param(
            "In one episode her name was given as Susan Hilton.",
            "In one episode she said her name was Susan Hilton, but that it wasn't her real name.",
            id="negated-phrase-only-partly-shared",
        ),
        # A bound on the number, a double negation or a negation in another word, as the guards read them.
        pytest.param(
            "The company has over 1,000 employees in its three offices.",
            "The company has 1,200 employees in its three offices.",
            id="over-a-number",
        ),
        pytest.param(
            "The company has more than 1,000 employees in its three offices.",
            "The company has 1,200 employees in its three offices.",
            id="more-than-a-number",
        ),
        pytest.param("The bridge is about 1,200 metres long.", "The bridge is 1,203 metres long.", id="about"),
        pytest.param(
            "The condition is not uncommon among older adults.",
            "The condition is common among older adults.",
            id="double-negation",
        ),
        pytest.param(
            "The team did not qualify for the 2022 tournament.",
            "The team failed to qualify for the 2022 tournament.",
            id="failed-to",
        ),
        # The other way round: the claim's verb negates, the reference says "did not".
        pytest.param(
            "The drug failed to improve survival in the trial.",
            "The drug did not improve survival in the trial.",
            id="failed-to-in-the-claim",
        ),
        pytest.param(
            "The witness refused to answer the question.",
            "The witness did not answer the question.",
            id="refused-to-in-the-claim",
        ),
        # A negated word said in one word: "illegal" for "not legal" (the checker's own rule read it as uncovered).
        pytest.param("The drug is illegal in Canada.", "The drug is not legal in Canada.", id="one-word-negation"),
        pytest.param(
            "The results were statistically insignificant.",
            "The results were not statistically significant.",
            id="one-word-negation-in",
        ),
        # A converse comparison: the opposite word, the sides turned round.
        pytest.param(
            "The CEO resigned after the board approved the budget.",
            "The board approved the budget before the CEO resigned.",
            id="converse",
        ),
        pytest.param(
            "Selling the drug is not legal in Canada.", "Selling the drug is illegal in Canada.", id="not-legal"
        ),
        # "Nobody", "nothing" negate as "no one", "no items" do (the guards' list of negations, read here too).
        pytest.param(
            "Nobody was injured when the fire broke out at the warehouse on Monday.",
            "No one was injured when the fire broke out at the warehouse on Monday.",
            id="nobody",
        ),
        pytest.param(
            "Nothing was stolen from the house during the break-in last week.",
            "No items were stolen from the house during the break-in last week.",
            id="nothing",
        ),
    ],
)
def test_supported_claims_are_not_contradicted(claim: str, reference: str) -> None:
    """Cases from the dev data where the old rule said Contradiction on a supported claim: now Entailment."""
    assert ScorerClaimChecker().check(Claim(text=claim), [reference]).label == "Entailment"


def test_two_numbers_from_two_references_are_supported_together() -> None:
    """Each half of the claim stands in one reference: the window with one number does not contradict the other."""
    claim = Claim(text="The river is 300 km long and the canal is 120 km long.")
    check = ScorerClaimChecker().check(claim, ["The river is 300 km long.", "The canal is 120 km long."])
    assert (check.label, check.guard) == ("Entailment", None)


@pytest.mark.parametrize(
    ("claim", "reference"),
    [
        ("The bridge opened in 1951.", "The bridge opened in 1932."),
        ("Water boils at 90 degrees Celsius at sea level.", "At sea level, pure water boils at 100 degrees Celsius."),
        ("The tower is 300 metres tall.", "The tower is 330 metres tall. It opened in 1889."),
        ("The tower is painted red.", "The tower is not painted red."),
        ("The tower is not painted red.", "The tower is painted red."),
        (
            "British companies will be part of the European Single Market.",
            "British companies will not form part of the European Single Market.",
        ),
        ("The list names 1765 New Jersey universities.", "The list names 1753 New Jersey universities."),
        # The claim's number elsewhere in the evidence: the window that states the claim has another.
        (
            "The bridge opened in 1932 with 4 lanes.",
            "The bridge opened in 1932 with 6 lanes. It was widened to 4 lanes in 1990.",
        ),
        ("The bridge opened in 1932 with 4 lanes.", "The bridge opened in 1934 with 4 lanes. Work began in 1932."),
        (
            "The company hired 200 engineers in 2019.",
            "The company hired 300 engineers in 2019. In 2021 it had 200 engineers in Berlin.",
        ),
        # A power, not a citation marker.
        ("The area is 10<sup>6</sup> square kilometres.", "The area is 10<sup>5</sup> square kilometres."),
    ],
)
def test_real_disagreements_are_contradictions(claim: str, reference: str) -> None:
    """Another number in the same slot, or the same phrase negated, is still a Contradiction."""
    check = ScorerClaimChecker().check(Claim(text=claim), [reference])
    assert check.label == "Contradiction"
    (span,) = check.evidence
    assert span.reference == 0


@pytest.mark.parametrize(
    ("claim", "reference"),
    [
        ("The tower is 330 metres tall.", "The tower is 1,083 feet tall."),
        ("South Africa [5].", "Virgin Active has no clubs in South Africa."),
        ("The bridge opened in 1951.", "The ferry closed in 1932."),
        # The year is nowhere in the reference: not supported (issue 21), but no contradiction either.
        (
            "Both teams won the national student cup in 2019.",
            "Both teams won the national student cup this year, building on their record in 2018 "
            "when the men's team won.",
        ),
        # A negation bears on nothing past "because": the reason is no part of what it negates.
        (
            "Children under 16 should not take aspirin because of the risk of Reye syndrome.",
            "Aspirin is contraindicated in children under 16 because of the risk of Reye syndrome.",
        ),
        # "denied that" negates as "not" does.
        ("The plant had not leaked, officials said.", "Officials denied that the plant had leaked."),
        # "whereas", "unless" (content words, kept stemmed) end a negation's scope as "because" does.
        ("Dogs bark loudly at night.", "Cats do not purr whereas dogs bark loudly at night."),
        ("Visitors book guided tours at the museum.", "The museum does not charge unless visitors book guided tours."),
    ],
)
def test_no_contradiction_without_a_shared_slot(claim: str, reference: str) -> None:
    """Other units, a fragment, or another statement altogether: never a Contradiction."""
    assert ScorerClaimChecker().check(Claim(text=claim), [reference]).label != "Contradiction"


def test_llm_claims_are_located_loosely_and_in_order() -> None:
    """Claims copied with other spaces, case or final mark are found, a repeat twice; paraphrases are not."""
    response = "Paris is big.\nParis   is big. It has a river"
    replies = ['{"claims": ["paris is big", "Paris is big.", "It has a river.", "The city is large."]}']
    claims = LLMClaimExtractor(FakeListChatModel(responses=replies), claim_format="subsentence").extract(response)
    assert [(c.start, c.end) for c in claims] == [(0, 13), (14, 29), (30, 44), (None, None)]
    assert [c.text for c in claims] == ["paris is big", "Paris is big.", "It has a river.", "The city is large."]


def test_llm_triplets_keep_no_offsets() -> None:
    """A triplet is not a piece of the response, even when its words follow each other in it."""
    reply = '{"claims": [["Paris", "is", "big"]]}'
    (claim,) = LLMClaimExtractor(FakeListChatModel(responses=[reply])).extract("Paris is big.")
    assert (claim.start, claim.end) == (None, None)


def test_a_claim_supported_by_references_together_is_entailed() -> None:
    """Two references that each back half of a claim support it together; its spans stay the single windows."""
    references = ["Curie shared the Physics prize in 1903.", "The Chemistry prize followed in 1911."]
    claim = Claim(text="Curie won the Physics prize in 1903 and the Chemistry prize in 1911.")
    together = ScorerClaimChecker().check(claim, references)
    alone = ScorerClaimChecker(together=False).check(claim, references)
    assert (together.label, alone.label) == ("Entailment", "Neutral")
    assert sorted(span.reference for span in together.evidence) == [0, 1]
    assert all(span.score < together.score for span in together.evidence)


class Recording(FakeListChatModel):
    """A fake model that keeps the text of every prompt it is asked."""

    asked: list[str] = []  # noqa: RUF012 - replaced per instance in the tests

    def _call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        self.asked.append("\n".join(str(m.content) for m in messages))
        return super()._call(messages, *args, **kwargs)


def test_llm_checker_names_its_evidence() -> None:
    """References the model names become whole-reference spans (each once, in range); Entailment scores 1, else 0."""
    references = ["Paris is the capital of France.", "The moon is not made of cheese."]
    replies = [
        '{"label": "Entailment", "references": [1, 1, 3]}',
        '{"label": "Contradiction", "references": [2, true, "1"]}',
        '{"label": "Neutral"}',
    ]
    model = Recording(responses=replies, asked=[])
    claims = [Claim(text="Paris is France's capital."), Claim(text="The moon is cheese."), Claim(text="x")]
    checks = LLMClaimChecker(model, max_concurrency=1).check_batch(claims, references, "What?")
    assert [(c.label, c.score) for c in checks] == [("Entailment", 1.0), ("Contradiction", 0.0), ("Neutral", 0.0)]
    assert [[(e.reference, e.start, e.end, e.score) for e in c.evidence] for c in checks] == [
        [(0, 0, 31, 1.0)],
        [(1, 0, 31, 0.0)],
        [],
    ]
    assert "REFERENCE [1]: Paris is the capital of France.\n\nREFERENCE [2]: The moon" in model.asked[0]
    assert "QUESTION: What?" in model.asked[0]
    assert model.asked[1].endswith("CLAIM: The moon is cheese.")


def test_llm_extractor_prompt_asks_for_bare_answers_as_claims() -> None:
    """The extractor shows the question and asks that a bare answer be stated as the claim it makes."""
    model = Recording(responses=['{"claims": ["Neil Armstrong first walked on the Moon."]}'], asked=[])
    (claim,) = LLMClaimExtractor(model, claim_format="subsentence").extract(
        "Neil Armstrong", "Who first walked on the Moon?"
    )
    assert claim.text == "Neil Armstrong first walked on the Moon."
    assert (claim.start, claim.end) == (None, None)
    assert "QUESTION: Who first walked on the Moon?" in model.asked[0]
    assert "bare answer to the QUESTION" in model.asked[0]


def test_llm_filter_reads_only_whole_chunk_numbers(caplog: pytest.LogCaptureFixture) -> None:
    """true, 2.5 and words name no chunk (true is not chunk 1); 3.0 and "2" are whole numbers."""
    reply = '{"relevant": [true, 2.5, "two", 3.0, "2"]}'
    with caplog.at_level(logging.WARNING, logger="langchain_refs"):
        kept = LLMReferenceFilter(FakeListChatModel(responses=[reply])).invoke({"response": "r", "documents": DOCS})
    assert kept == [DOCS[1], DOCS[2]]
    assert "do not exist: ['True', '2.5', \"'two'\"]" in caplog.text


@pytest.mark.parametrize(
    "claim",
    [
        "Paris is the capital of France [3].",
        "Paris is the capital of France [1, 2].",
        "Paris is the capital of France[^1].",
        "Paris is the capital of France\u30101\u2020source\u3011.",
        "Paris is the capital of France<sup>1</sup>.",
        "Paris is the capital of France [Source 2].",
        "Paris is the capital of France [doc1].",
    ],
)
def test_citation_markers_cost_a_claim_nothing(claim: str) -> None:
    """A claim's citation marker is not read as a number the reference lacks: the claim scores as without it."""
    check = ScorerClaimChecker().check(Claim(text=claim), ["Paris is the capital of France."])
    plain = ScorerClaimChecker().check(
        Claim(text="Paris is the capital of France."), ["Paris is the capital of France."]
    )
    assert (check.label, check.score) == ("Entailment", plain.score) == ("Entailment", 1.0)


@pytest.mark.parametrize(
    "reference",
    [
        "There is no doubt that the museum has a large garden with many old trees.",
        "It is no wonder the museum has a large garden with many old trees.",
        "The museum has not just a large garden with many old trees but also a lake.",
    ],
)
def test_phrases_that_negate_nothing(reference: str) -> None:
    """ "no doubt", "no wonder" and "not just" assert what follows: the claim is supported, not contradicted."""
    claim = Claim(text="The museum has a large garden with many old trees.")
    assert ScorerClaimChecker().check(claim, [reference]).label == "Entailment"
