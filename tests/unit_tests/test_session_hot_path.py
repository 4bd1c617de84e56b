"""The session's shortcuts give what the plain reading gives: what the speed work of issue 25 must keep."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_refs.streaming import ID_SYNTAX
from langchain_refs.streaming import _parser as parser_module
from langchain_refs.streaming import _session as session_module

_CLAIM_PIECES = list("a2 .!?\u3002\uff01\uff1f\"')]\u201d\u2019\n\r\t\x0b\x1c\x85\xa0\u2028\u3000,-")


@settings(max_examples=3000, deadline=None)
@given(
    head=st.one_of(
        st.text(alphabet=st.sampled_from(_CLAIM_PIECES), max_size=40),
        st.lists(st.sampled_from(["2.5", "e.g.", "docs.example.org", "a. ", '?" ', "\n", "b"]), max_size=12).map(
            "".join
        ),
    )
)
def test_claim_start_is_the_backward_search(head: str) -> None:
    """The claim starts where the sentence-end pattern, searched in the reversed text, says: terminators tried first."""
    found = session_module._SENTENCE_END_BACKWARDS.search(head[::-1])
    assert session_module._claim_start(head) == (0 if found is None else len(head) - found.start())


_ID_PIECES = list("[]()-+0123456789NUMBERid=, \txa")


@settings(max_examples=3000, deadline=None)
@given(
    text=st.one_of(
        st.text(alphabet=st.sampled_from(_ID_PIECES), max_size=20),
        st.sampled_from(["[2](id=1, 3)", "[NUMBER](id=4)", "[ -3 ] ( id = 1-2 )", "[+1](id=)x"]).flatmap(
            lambda marker: st.integers(0, len(marker)).map(lambda n: marker[:n])
        ),
    ),
    start=st.integers(0, 3),
    bound=st.integers(1, 24),
)
def test_one_call_asks_for_a_marker_or_a_prefix(text: str, start: int, bound: int) -> None:
    """The combined id pattern gives the whole marker if there is one, else whether a prefix of one ends the text."""
    buf = "ab[" + text
    whole = re.compile(ID_SYNTAX.pattern.pattern).match(buf, start, start + bound)
    either = parser_module._ID_MARKER_OR_PREFIX.match(buf, start, start + bound)
    if whole is not None:
        assert either is not None
        assert either.lastgroup != "more"
        assert (either[0], either["ids"]) == (whole[0], whole["ids"])
    else:
        prefix = parser_module._ID_PREFIX.match(buf[: start + bound], start)
        assert (either is not None) == (prefix is not None)
        assert either is None or either.lastgroup == "more"
