"""Styles: golden outputs, escaping, well-formed HTML, langchain-references subclasses.

The golden files are compared here and only here; they are rewritten by a
separate command, never by a test: ``python -m tests.regenerate_goldens``.
"""

from __future__ import annotations

import html.parser
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.documents.base import BaseMedia

from langchain_refs import (
    EmptyReferenceStyle,
    HTMLReferenceStyle,
    MarkdownReferenceStyle,
    ReferenceSession,
    ReferenceStyle,
    TemplateReferenceStyle,
    TextReferenceStyle,
    manage_references,
    safe_url,
)
from tests.unit_tests.fakes import CLASSIC_ANSWER, classic_documents, str_chunks

GOLDEN = Path(__file__).parent / "golden"
RUN_ID = uuid.UUID("00000000-0000-4000-8000-0000c1a55c00")  # answer id "0c1a55c0"... last 8 hex

STYLES: dict[str, Callable[[], ReferenceStyle]] = {
    "text": TextReferenceStyle,
    "markdown": MarkdownReferenceStyle,
    "html": HTMLReferenceStyle,
    "empty": EmptyReferenceStyle,
}


def render(style: ReferenceStyle, answer: str, documents: list[Document]) -> str:
    chain = manage_references(str_chunks(list(answer)), style=style)
    result: str = chain.invoke({"documents": documents}, {"run_id": RUN_ID})
    return result


HOSTILE = [
    Document(
        # The texts are hostile too: with show_passages the styles quote them.
        '<script>alert("p")</script> & "quotes" [x](javascript:alert(5))',
        metadata={"source": "javascript:alert(1)", "title": '<script>alert("t")</script>'},
    ),
    Document("y", metadata={"source": 'https://ok.org/a?b=1&c="2"', "title": "A & B <i>"}),
    Document("z", metadata={"source": " JaVa\tScRiPt:alert(2)", "title": "tab trick"}),
    Document("w", metadata={"source": "data:text/html,<b>x</b>", "title": "data]( link"}),
    Document("v", metadata={"source": "docs/page (2).html", "title": "[x](javascript:alert(3))"}),
]
HOSTILE_ANSWER = "One[1](id=1) two[2](id=2) three[3](id=3) four[4](id=4) five[5](id=5)."


HOSTILE_MORE = [
    *HOSTILE,
    Document(
        "u\n- **9** fake\r- [9] fake", metadata={"source": "javascript&#58;alert(4)", "title": "line\n- **9** fake"}
    ),
    Document("t", metadata={"source": "script"}),
    Document("s", metadata={"source": "https://ok.org/t", "title": "para\u2029- [9] fake"}),
]
HOSTILE_MORE_ANSWER = HOSTILE_ANSWER + " Six[6](id=6) seven[7](id=7) eight[8](id=8)."

# name -> (answer, documents): each is rendered in every built-in style and
# compared with golden/<name>.<style>.txt.
GOLDEN_CASES: dict[str, tuple[str, Callable[[], list[Document]]]] = {
    "classic": (CLASSIC_ANSWER, classic_documents),
    "hostile": (HOSTILE_MORE_ANSWER, lambda: list(HOSTILE_MORE)),
}


# The same cases with every option that adds to the list shown: each source's
# passage and the sources consulted but not cited (golden/<name>-shown.<style>.txt).
SHOWN = {"show_passages": True, "show_consulted": True}


def golden_style(case: str, name: str) -> ReferenceStyle:
    return STYLES[name](**SHOWN) if case.endswith("-shown") else STYLES[name]()  # type: ignore[call-arg]


def golden_cases() -> dict[str, tuple[str, Callable[[], list[Document]]]]:
    return {**GOLDEN_CASES, **{f"{case}-shown": value for case, value in GOLDEN_CASES.items()}}


def golden_outputs() -> dict[Path, str]:
    """Each golden file's path and what the current code renders for it."""
    return {
        GOLDEN / f"{case}.{name}.txt": render(golden_style(case, name), answer, documents())
        for case, (answer, documents) in golden_cases().items()
        for name in STYLES
    }


@pytest.mark.parametrize("name", sorted(STYLES))
@pytest.mark.parametrize("case", sorted(golden_cases()))
def test_golden(case: str, name: str) -> None:
    """Each built-in style renders each golden case exactly as its golden file (default options unchanged)."""
    answer, documents = golden_cases()[case]
    output = render(golden_style(case, name), answer, documents())
    golden = GOLDEN / f"{case}.{name}.txt"
    assert output == golden.read_text(encoding="utf-8"), (
        f"{golden.name} differs; if the change is intended, run `python -m tests.regenerate_goldens` "
        "and review the diff"
    )


def test_no_stray_golden_files() -> None:
    """Every golden file belongs to a case, so none is left unchecked."""
    assert sorted(GOLDEN.glob("*.txt")) == sorted(golden_outputs())


def test_text_style_classic_numbers_and_order() -> None:
    """The Text style numbers by source and lists exactly the cited sources in order."""
    output = render(TextReferenceStyle(), CLASSIC_ANSWER, classic_documents())
    body, listing = output.split("\n\n", 1)
    assert body == "Yes[1], certainly[2], no[1], yes[3], yes[4]"
    assert re.findall(r"- \[\d\] (\S+)", listing) == ["b.pdf", "a.html#chap2", "a.html#chap1", "c.pdf"]
    assert "d.csv" not in output


class _WellFormed(html.parser.HTMLParser):
    VOID = frozenset({"br", "hr", "img", "meta", "link", "input"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts += 1
        if tag not in self.VOID:
            self.stack.append(tag)
        for key, value in attrs:
            if key == "id" and value:
                self.ids.append(value)
            if key == "href" and value is not None:
                self.hrefs.append(value)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack, f"</{tag}> closes nothing"
        assert self.stack.pop() == tag, f"</{tag}> closes the wrong tag"


def parse_html(text: str) -> _WellFormed:
    parser = _WellFormed()
    parser.feed(text)
    parser.close()
    assert parser.stack == [], f"unclosed tags: {parser.stack}"
    return parser


def test_html_is_escaped_and_well_formed() -> None:
    """Hostile titles and sources are escaped; the HTML parses with every tag closed."""
    output = render(HTMLReferenceStyle(), HOSTILE_ANSWER, HOSTILE)
    parsed = parse_html(output)
    assert parsed.scripts == 0
    assert "&lt;script&gt;" in output
    assert "A &amp; B &lt;i&gt;" in output
    for href in parsed.hrefs:
        assert href.startswith(("#ref-", "https://ok.org", "docs/")), href
    assert not any("javascript" in h.lower() or h.startswith("data:") for h in parsed.hrefs)
    assert len(parsed.ids) == len(set(parsed.ids))


def test_html_ids_unique_across_answers() -> None:
    """Two answers on one page never share an id."""
    first = manage_references(str_chunks([CLASSIC_ANSWER]), style=HTMLReferenceStyle())
    page = first.invoke({"documents": classic_documents()}) + first.invoke({"documents": classic_documents()})
    ids = parse_html(page).ids
    assert len(ids) == 8
    assert len(ids) == len(set(ids))


def test_html_footnotes_point_at_their_entries() -> None:
    """Every citation link targets an entry of the list of sources."""
    parsed = parse_html(render(HTMLReferenceStyle(), CLASSIC_ANSWER, classic_documents()))
    anchors = {h[1:] for h in parsed.hrefs if h.startswith("#")}
    assert anchors == set(parsed.ids)


def test_html_ids_of_a_session_without_an_answer_id() -> None:
    """A session given no answer id writes ``ref-<n>`` ids, not ``ref--<n>``; the links still meet their entries."""
    session = ReferenceSession(
        [Document("Paris is big.", metadata={"source": "https://a.org"})],
        style=HTMLReferenceStyle(),
        source_key="source",
    )
    parsed = parse_html(session.feed("Paris is big[1](id=1). ") + session.close())
    assert parsed.ids == ["ref-1"]
    assert [h for h in parsed.hrefs if h.startswith("#")] == ["#ref-1"]


def test_markdown_escapes_link_syntax() -> None:
    """Markdown output cannot be broken out of by titles or URLs, nor link javascript."""
    output = render(MarkdownReferenceStyle(), HOSTILE_ANSWER, HOSTILE)
    destinations = re.findall(r"(?<!\\)\]\(([^)]*)\)", output) + re.findall(r"<([^<>]*:[^<>]*)>", output)
    assert destinations == ["https://ok.org/a?b=1&c=%222%22", "docs/page%20%282%29.html"] * 2
    assert "](data:" not in output
    assert r"\[x\]\(javascript:alert\(3\)\)" in output
    assert "(docs/page%20%282%29.html)" in output
    assert "<script>" not in output
    assert "&lt;script&gt;" in output


def test_text_style_writes_no_markup_escapes() -> None:
    """The Text style prints titles without markup escapes (a terminal has no markup)."""
    output = render(TextReferenceStyle(), "One[1](id=2).", HOSTILE)
    assert output == 'One[1].\n\n- [1] A & B <i> (https://ok.org/a?b=1&c="2")\n'


LINE_BREAKS = ["\r", "\n", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def broken_documents(brk: str) -> list[Document]:
    """A titled and an untitled source, each trying to start a fake list line with ``brk``."""
    return [
        Document("x", metadata={"source": "https://ok.org/a", "title": f"Real{brk}- **9** [fake](https://evil.org)"}),
        Document("y", metadata={"source": f"b.pdf{brk}- [9] fake"}),
        Document("z", metadata={"source": "c.pdf", "title": f"T{brk}- [9] fake{brk}"}),
    ]


@pytest.mark.parametrize("brk", LINE_BREAKS, ids=[repr(b) for b in LINE_BREAKS])
def test_markdown_line_breaks_cannot_add_list_items(brk: str) -> None:
    """No line break in a title or source starts a line of its own in Markdown: three sources, three items."""
    from markdown_it import MarkdownIt

    output = render(MarkdownReferenceStyle(), "A[1](id=1) B[2](id=2) C[3](id=3)", broken_documents(brk))
    listing = output.split("\n\n", 1)[1]
    items = listing.split("\n")
    assert len(items) == 4
    assert items[-1] == ""
    assert not [item for item in items if any(b in item for b in LINE_BREAKS)]
    rendered = MarkdownIt("commonmark").render(output)
    assert rendered.count("<li>") == 3
    assert "evil.org" not in re.findall(r'href="([^"]*)"', rendered)


@pytest.mark.parametrize("brk", LINE_BREAKS, ids=[repr(b) for b in LINE_BREAKS])
def test_text_line_breaks_cannot_add_list_lines(brk: str) -> None:
    """No line break in a title or source starts a fake ``- [n]`` line in the Text style."""
    output = render(TextReferenceStyle(), "A[1](id=1) B[2](id=2) C[3](id=3)", broken_documents(brk))
    lines = output.splitlines()
    assert [line.split("]")[0] for line in lines if line.startswith("- [")] == ["- [1", "- [2", "- [3"]
    assert lines[-3:] == [
        "- [1] Real - **9** [fake](https://evil.org) (https://ok.org/a)",
        "- [2] b.pdf - [9] fake",
        "- [3] T - [9] fake  (c.pdf)",
    ]


def test_text_style_shows_terminal_controls_visibly() -> None:
    """Escape sequences and other controls in a title cannot act on the terminal; a tab stays."""
    docs = [Document("x", metadata={"source": "s\x07", "title": "red \x1b[31mX\x1b[0m\tend\x08"})]
    assert render(TextReferenceStyle(), "A[1](id=1)", docs) == (
        "A[1]\n\n- [1] red \ufffd[31mX\ufffd[0m\tend\ufffd (s\ufffd)\n"
    )


def test_markdown_untitled_relative_source_is_a_link() -> None:
    """An untitled relative source is a real link (``<b.pdf>`` would be none in CommonMark)."""
    from markdown_it import MarkdownIt

    output = render(
        MarkdownReferenceStyle(),
        "A[1](id=3) B[2](id=8)",
        [*classic_documents(), Document("e"), Document("f", metadata={"source": "https://e.org/x"})],
    )
    assert output.endswith("\n\n- **1** [b.pdf](b.pdf)\n- **2** <https://e.org/x>\n")
    assert MarkdownIt("commonmark").render(output).count('<a href="b.pdf">b.pdf</a>') == 1


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://a.org", "https://a.org"),
        ("http://a.org", "http://a.org"),
        ("mailto:x@a.org", "mailto:x@a.org"),
        ("docs/a.html#x", "docs/a.html#x"),
        ("/abs/path", "/abs/path"),
        ("#frag", "#frag"),
        ("javascript:alert(1)", None),
        ("JAVASCRIPT:alert(1)", None),
        ("java\nscript:alert(1)", None),
        (" javascript:x", None),
        ("vbscript:x", None),
        ("data:text/html;base64,xx", None),
        ("file:///etc/passwd", None),
        ("", None),
        (None, None),
    ],
)
def test_safe_url(url: str | None, expected: str | None) -> None:
    """Only http, https, mailto and relative URLs become links."""
    assert safe_url(url) == expected


# -- langchain-references 0.2.x compatibility ---------------------------------


def my_source_id(media: BaseMedia) -> str:
    return f"{media.metadata['source']}#row={media.metadata['row']}"


class MyReferenceStyle(ReferenceStyle):
    """The custom style of the langchain-references README, unchanged."""

    source_id_key = my_source_id  # type: ignore[assignment]

    def format_reference(self, ref: int, media: BaseMedia) -> str:
        return f"[{media.metadata['title']}]"

    def format_all_references(self, refs: list[tuple[int, BaseMedia]]) -> str:
        if not refs:
            return ""
        result = []
        for ref, media in refs:
            source = self.source_id_key.__func__(media)  # type: ignore[attr-defined]
            result.append(f"- [{ref}] {source}\n")
        if not result:
            return ""
        return "\n\n" + "".join(result)


CSV_ROWS = [
    Document("r0", metadata={"source": "d.csv", "row": 0, "title": "Row 0"}),
    Document("r1", metadata={"source": "d.csv", "row": 1, "title": "Row 1"}),
    Document("r0 again", metadata={"source": "d.csv", "row": 0, "title": "Row 0 bis"}),
]


def test_langchain_references_readme_style_subclass() -> None:
    """The README's MyReferenceStyle (class-level source_id_key function) works unchanged."""
    output = render(MyReferenceStyle(), "A[1](id=2) B[2](id=1) C[3](id=3)", CSV_ROWS)
    assert output == "A[Row 1] B[Row 0] C[Row 0 bis]\n\n- [1] d.csv#row=1\n- [2] d.csv#row=0\n"


def test_source_id_key_set_on_an_instance() -> None:
    """A plain function set on an instance is called with the document."""
    style = TextReferenceStyle()
    style.source_id_key = lambda media: media.metadata["title"]
    output = render(style, "A[1](id=1) B[2](id=3)", CSV_ROWS)
    assert output == "A[1] B[2]\n\n- [1] Row 0 (Row 0)\n- [2] Row 0 bis (Row 0 bis)\n"


def test_source_id_key_metadata_key_on_subclass() -> None:
    """A subclass may name another metadata key."""

    class ByTitle(TextReferenceStyle):
        source_id_key = "title"

    assert render(ByTitle(), "A[1](id=2)", CSV_ROWS) == "A[1]\n\n- [1] Row 1 (Row 1)\n"


class HideCsv(TextReferenceStyle):
    """Hides citations of CSV rows."""

    def format_reference(self, ref: int, media: BaseMedia) -> str | None:
        if str(media.metadata["source"]).endswith(".csv"):
            return None
        return super().format_reference(ref, media)


def test_hidden_citation_keeps_numbering() -> None:
    """A citation hidden by returning None uses no number and is not listed."""
    output = render(HideCsv(), "A[1](id=6) B[2](id=3) C[3](id=6) D[4](id=5) E[5](id=3)", classic_documents())
    assert output == "A B[1] C D[2] E[1]\n\n- [1] b.pdf\n- [2] c.pdf\n"


def test_subclass_of_markdown_style_overrides_list() -> None:
    """A subclass can keep the built-in citations and write its own list."""

    class Footnotes(MarkdownReferenceStyle):
        def format_all_references(self, refs: list[tuple[int, BaseMedia]]) -> str:
            return "".join(f"\n[^{ref}]: {media.metadata['source']}" for ref, media in refs)

    output = render(Footnotes(), "A[1](id=3)", classic_documents())
    assert output == "A<sup>[[1](b.pdf)]</sup>\n[^1]: b.pdf"


# -- template styles -------------------------------------------------------------


def test_user_template_from_a_string() -> None:
    """A template string with the two macros is a style."""
    style = TemplateReferenceStyle(
        "{% macro citation(c) %}^{{ c.number }}{% endmacro %}"
        "{% macro references(refs) %}{% for r in refs %}\n^{{ r.number }} {{ r.label }}{% endfor %}{% endmacro %}"
    )
    assert render(style, "A[1](id=3) B[2](id=1)", classic_documents()) == "A^1 B^2\n^1 b.pdf\n^2 a.html#chap1"


def test_user_template_from_a_file(tmp_path: Path) -> None:
    """A template file is a style; autoescape can be asked for."""
    path = tmp_path / "mine.jinja"
    path.write_text(
        "{% macro citation(c) %}<{{ c.title }}>{% endmacro %}{% macro references(refs) %}{% endmacro %}",
        encoding="utf-8",
    )
    docs = [Document("x", metadata={"source": "s", "title": "<b>"})]
    assert render(TemplateReferenceStyle(path=path, autoescape=True), "A[1](id=1)", docs) == "A<&lt;b&gt;>"
    assert render(TemplateReferenceStyle(path=path), "A[1](id=1)", docs) == "A<<b>>"


def test_builtin_template_by_name() -> None:
    """A built-in template can be chosen by name."""
    assert render(TemplateReferenceStyle(name="text"), "A[1](id=3)", classic_documents()) == "A[1]\n\n- [1] b.pdf\n"


def test_template_errors_are_clear(tmp_path: Path) -> None:
    """Unknown names, missing macros and ambiguous arguments get clear errors."""
    with pytest.raises(ValueError, match="no built-in style named 'fancy'; known styles: empty, html"):
        TemplateReferenceStyle(name="fancy")
    with pytest.raises(ValueError, match=r"no references\(\) macro"):
        TemplateReferenceStyle("{% macro citation(c) %}{% endmacro %}")
    with pytest.raises(ValueError, match="only one of"):
        TemplateReferenceStyle("x", name="text")


@pytest.mark.parametrize(
    ("citation", "references", "message"),
    [
        ("[{{ c.nubmer }}]", "", r"citation\(\) macro reads what a SourceView does not have: .* attribute 'nubmer'"),
        ("", "{% for r in refs %}{{ r.passage.excrpt }}{% endfor %}", r"references\(\) .* a Passage .* 'excrpt'"),
        ("{{ c.document.metdata }}", "", r"citation\(\) .* a Document does not have: .* attribute 'metdata'"),
    ],
)
def test_a_name_a_source_has_not_fails_when_the_style_is_made(citation: str, references: str, message: str) -> None:
    """A typo in a macro fails when the style is made, one line naming it, not mid-answer after text has gone out."""
    template = (
        f"{{% macro citation(c) %}}{citation}{{% endmacro %}}{{% macro references(refs) %}}{references}{{% endmacro %}}"
    )
    with pytest.raises(ValueError, match=message) as raised:
        TemplateReferenceStyle(template)
    assert "\n" not in str(raised.value)
    assert str(raised.value).endswith(
        "(a source has number, source, url, title, label, document, answer_id, supported, passage, passages)"
    )


def test_a_template_written_for_metadata_the_sample_lacks_is_made() -> None:
    """The sample render refuses only names a source has not: a filter failing on the sample's metadata is let be."""
    style = TemplateReferenceStyle(
        '{% macro citation(c) %}[p.{{ "%d"|format(c.document.metadata.get("page")) }}]{% endmacro %}'
        '{% macro references(refs) %}{% for r in refs %} {{ r.document.metadata.get("authors")|join(", ") }}'
        "{% endfor %}{% endmacro %}"
    )
    docs = [Document("x", metadata={"source": "s.pdf", "page": 12, "authors": ["Ann", "Bo"]})]
    assert render(style, "A[1](id=1)", docs) == "A[p.12] Ann, Bo"


def test_template_sees_documents() -> None:
    """A template can read any metadata of the cited document."""
    style = TemplateReferenceStyle(
        "{% macro citation(c) %}[p.{{ c.document.metadata.page }}]{% endmacro %}"
        "{% macro references(refs) %}{% endmacro %}"
    )
    docs = [Document("x", metadata={"source": "s.pdf", "page": 12})]
    assert render(style, "A[1](id=1)", docs) == "A[p.12]"


def test_template_renders_each_style_file() -> None:
    """Every template of the package loaded by name renders as its built-in style and its golden file."""
    from langchain_refs import styles_directory

    names = sorted(p.stem for p in styles_directory().glob("*.jinja"))
    assert names == sorted(STYLES)
    for name in names:
        by_name = render(TemplateReferenceStyle(name=name), CLASSIC_ANSWER, classic_documents())
        assert by_name == render(STYLES[name](), CLASSIC_ANSWER, classic_documents())
        assert by_name == (GOLDEN / f"classic.{name}.txt").read_text(encoding="utf-8")


def html_template_ways(folder: Path) -> dict[str, TemplateReferenceStyle]:
    """Every way a user reaches the built-in HTML template through TemplateReferenceStyle, autoescape not given."""
    from langchain_refs import styles_directory

    importing = '{% import "html.jinja" as h %}{% macro citation(c) %}{{ h.citation(c) }}{% endmacro %}'
    importing += "{% macro references(refs) %}{{ h.references(refs) }}{% endmacro %}"
    (folder / "mine.jinja").write_text(importing, encoding="utf-8")
    (folder / "cards.html.jinja").write_text((styles_directory() / "html.jinja").read_text("utf-8"), "utf-8")
    (folder / "Cards.HTML").write_text((styles_directory() / "html.jinja").read_text("utf-8"), "utf-8")
    (folder / "cards.Html.jinja").write_text((styles_directory() / "html.jinja").read_text("utf-8"), "utf-8")
    return {
        "name": TemplateReferenceStyle(name="html"),
        "built-in path": TemplateReferenceStyle(path=styles_directory() / "html.jinja"),
        "a template of a folder importing it": TemplateReferenceStyle(name="mine", directory=folder),
        "a file importing it": TemplateReferenceStyle(path=folder / "mine.jinja"),
        "a file of the user's named .html.jinja": TemplateReferenceStyle(path=folder / "cards.html.jinja"),
        # The suffix's case does not matter, as for Jinja's own select_autoescape.
        "a file named .HTML": TemplateReferenceStyle(path=folder / "Cards.HTML"),
        "a file named .Html.jinja": TemplateReferenceStyle(path=folder / "cards.Html.jinja"),
    }


def test_the_html_template_escapes_however_it_is_chosen(tmp_path: Path) -> None:
    """name="html", its path, a template importing it, a *.html.jinja file: each escapes as HTMLReferenceStyle does."""
    golden = (GOLDEN / "hostile.html.txt").read_text(encoding="utf-8")
    for way, style in html_template_ways(tmp_path).items():
        output = render(style, HOSTILE_MORE_ANSWER, list(HOSTILE_MORE))
        assert output == golden, way
        assert parse_html(output).scripts == 0, way
    # Asked for, the raw template is still there (a user who escapes the values before).
    raw = render(TemplateReferenceStyle(name="html", autoescape=False), HOSTILE_ANSWER, HOSTILE)
    assert '<script>alert("t")</script>' in raw


def test_a_template_file_imports_its_neighbours(tmp_path: Path) -> None:
    """TemplateReferenceStyle(path=...) finds the templates beside its file, as directory= would."""
    (tmp_path / "helpers.jinja").write_text("{% macro sup(n) %}^{{ n }}{% endmacro %}", encoding="utf-8")
    (tmp_path / "mine.jinja").write_text(
        '{% import "helpers.jinja" as h %}{% macro citation(c) %}{{ h.sup(c.number) }}{% endmacro %}'
        "{% macro references(refs) %}{% endmacro %}",
        encoding="utf-8",
    )
    assert render(TemplateReferenceStyle(path=tmp_path / "mine.jinja"), "A[1](id=1)", classic_documents()) == "A^1"
    with pytest.raises(ValueError, match=r"the style template '.*nowhere\.jinja' is not a file"):
        TemplateReferenceStyle(path=tmp_path / "nowhere.jinja")


def test_subclass_calling_super_renders_for_its_answer() -> None:
    """An HTML subclass overriding format_reference and calling super() links to its own answer's list."""

    class Bracketed(HTMLReferenceStyle):
        def format_reference(self, ref: int, media: BaseMedia) -> str | None:
            return f"[{super().format_reference(ref, media)}|{self.answer.answer_id}]"

    parsed = parse_html(render(Bracketed(), CLASSIC_ANSWER, classic_documents()))
    assert {h[1:] for h in parsed.hrefs if h.startswith("#")} == set(parsed.ids)
    assert parsed.ids == ["ref-c1a55c00-1", "ref-c1a55c00-2", "ref-c1a55c00-3", "ref-c1a55c00-4"]


def test_source_key_option_shows_in_the_list_without_changing_the_style() -> None:
    """manage_references(source_key=...) numbers and lists by that key; the shared style is not changed."""
    style = TextReferenceStyle()
    docs = [Document("x", metadata={"source": "a.pdf", "url": "https://a.org"})]
    chain = manage_references(str_chunks(["A[1](id=1)"]), style=style, source_key="url")
    assert chain.invoke({"documents": docs}) == "A[1]\n\n- [1] https://a.org\n"
    assert style.source_id_key == "source"
    assert render(style, "A[1](id=1)", docs) == "A[1]\n\n- [1] a.pdf\n"


def test_templates_are_package_data() -> None:
    """The built-in templates live inside the package (langchain_refs/streaming/templates), not beside it."""
    import langchain_refs
    from langchain_refs import styles_directory

    package = Path(langchain_refs.__file__).resolve().parent
    assert styles_directory().resolve() == package / "streaming" / "templates"
    assert not (package.parent / "styles").exists()


def test_template_by_name_from_a_folder_of_your_own(tmp_path: Path) -> None:
    """name= finds a template in directory= first; it may import a built-in; a built-in name still works there."""
    (tmp_path / "brackets.jinja").write_text(
        '{% import "text.jinja" as text %}'
        "{% macro citation(c) %}<{{ c.number }}>{% endmacro %}"
        "{% macro references(refs) %}{{ text.references(refs) }}{% endmacro %}",
        encoding="utf-8",
    )
    docs = [Document("x", metadata={"source": "a.pdf"})]
    style = TemplateReferenceStyle(name="brackets", directory=tmp_path)
    assert render(style, "A[1](id=1)", docs) == "A<1>\n\n- [1] a.pdf\n"
    assert render(TemplateReferenceStyle(name="text", directory=tmp_path), "A[1](id=1)", docs) == render(
        TextReferenceStyle(), "A[1](id=1)", docs
    )
    with pytest.raises(ValueError, match="known styles: brackets, empty, html, markdown, text"):
        TemplateReferenceStyle(name="nope", directory=tmp_path)
    with pytest.raises(ValueError, match="is not a folder"):
        TemplateReferenceStyle(name="brackets", directory=tmp_path / "missing")


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: HTMLReferenceStyle(escape_text="false"), r"^escape_text must be True or False, got str 'false'$"),
        (lambda: TextReferenceStyle(show_passages="False"), r"^show_passages must be True or False, got str 'False'$"),
        (lambda: MarkdownReferenceStyle(show_consulted=1), r"^show_consulted must be True or False, got int 1$"),
        (lambda: TemplateReferenceStyle("{{ r }}", autoescape="x"), r"^autoescape must be True or False, got str 'x'$"),
        (lambda: TemplateReferenceStyle(5), r"^TemplateReferenceStyle: template must be a str, got int$"),
        (lambda: TemplateReferenceStyle(path=5), r"^TemplateReferenceStyle: path must be a str or a Path, got int$"),
        (lambda: TextReferenceStyle(source_id_key=5), r"^source_id_key must be a metadata key \(str\) or a callable"),
    ],
    ids=["escape_text", "show_passages", "show_consulted", "autoescape", "template", "path", "source_id_key"],
)
def test_a_wrong_style_option_is_refused_when_given_naming_it(make: Any, error: str) -> None:
    """A truthy word ("false") would do the opposite of what it says; a wrong type would fail at the first answer."""
    with pytest.raises(TypeError, match=error):
        make()
