"""Reference styles: how citations and the list of sources are written.

A style is configuration, shared by every answer and never changed while
rendering. What belongs to one answer (its id, which numbers a verifier found
supported) reaches it with each call: the session calls `render_citation` and
`render_references` with an `AnswerContext`; these run the langchain-references
0.2.x methods `format_reference` / `format_all_references` with that answer
current, which the built-in templates read.

Link safety: a URL becomes a link only when, read the way a Markdown renderer
and then a browser read it, it has no scheme (a relative URL) or the scheme
http, https or mailto; see `safe_url` (``_urls.py``).
"""

from __future__ import annotations

import contextvars
import functools
import importlib.resources
import re
import urllib.parse
import weakref
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, Final

import jinja2
from langchain_core.documents import Document
from langchain_core.documents.base import BaseMedia
from typing_extensions import override

from langchain_refs.streaming._protocols import check_style, checked_flag
from langchain_refs.streaming._references import AnswerContext, Passage
from langchain_refs.streaming._registry import key_function
from langchain_refs.streaming._urls import URL_SCHEME, safe_url

__all__ = [
    "EmptyReferenceStyle",
    "HTMLReferenceStyle",
    "MarkdownReferenceStyle",
    "ReferenceStyle",
    "StyleChoice",
    "TemplateReferenceStyle",
    "TextReferenceStyle",
    "choose_style",
    "safe_url",
    "source_key_function",
    "styles_directory",
]

SourceKey = str | Callable[[BaseMedia], Any]
"""What names a document's source: a metadata key, or a function of the document."""

# Every line break `str.splitlines` knows, \r\n as one.
_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
# Controls a terminal acts on (escape sequences, backspace, bell), tab aside.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f]")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]()#|!~])")


def _one_line(value: Any) -> str:
    """Text kept on one line: each line break becomes a space, controls a visible U+FFFD."""
    return _CONTROL.sub("\ufffd", _LINE_BREAK.sub(" ", str(value)))


def _md_text(value: Any) -> str:
    """Escape text for a Markdown link label or list item: one line, no markup."""
    text = _MD_SPECIAL.sub(r"\\\1", _one_line(value))
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _md_url(value: Any) -> str:
    """Percent-encode what would end a Markdown link destination early (and every line break)."""
    return urllib.parse.quote(str(value), safe="/:?#[]@!$&'*+,;=%~-._").replace("(", "%28").replace(")", "%29")


def _md_link(url: Any, text: Any = None) -> str:
    """A Markdown link to a URL `safe_url` allowed, labelled ``text`` (else the URL).

    An untitled absolute URL is written ``<url>`` as langchain-references does;
    any other is ``[text](url)``, since ``<b.pdf>`` would be no link in
    CommonMark, and ``<script>`` or ``<b>`` raw HTML.
    """
    if text is None and URL_SCHEME.match(str(url)):
        return f"<{_md_url(url)}>"
    return f"[{_md_text(url if text is None else text)}]({_md_url(url)})"


def source_key_function(key: SourceKey, *, option: str = "source_id_key") -> Callable[[BaseMedia], Any]:
    """The function giving a document's source key, from a metadata key or a callable.

    ``option`` is the name the key was given as, for the error a wrong type gets.

    Example:
        >>> from langchain_core.documents import Document
        >>> source_key_function("url")(Document("x", metadata={"url": "a.org"}))
        'a.org'
        >>> source_key_function(5, option="source_key")
        Traceback (most recent call last):
        ...
        TypeError: source_key must be a metadata key (str) or a callable, got int
    """
    if callable(key) and isinstance(getattr(key, "__self__", None), ReferenceStyle):
        # A plain function set on a style class arrives bound to the style.
        return key.__func__  # type: ignore[attr-defined, no-any-return]
    return key_function(key, option=option)


def styles_directory() -> Path:
    """The folder holding the built-in Jinja2 templates: ``langchain_refs/streaming/templates``, package data.

    Example:
        >>> (styles_directory() / "html.jinja").is_file()
        True
    """
    return Path(str(importlib.resources.files("langchain_refs.streaming") / "templates"))


# How the files of templates written in HTML end (besides the built-in html.jinja, imported by others too):
# they escape what they print unless told otherwise.
_HTML_SUFFIXES: Final = (".html", ".htm", ".xml", ".html.jinja", ".htm.jinja", ".xml.jinja")


def _is_html_template(name: str | None) -> bool:
    """Whether the template file ``name`` is HTML, so that it escapes what it prints by default.

    The name's case does not matter (as for Jinja's ``select_autoescape``).

    Example:
        >>> _is_html_template("html.jinja"), _is_html_template("cards.HTML"), _is_html_template("text.jinja")
        (True, True, False)
    """
    return name is not None and (name == "html.jinja" or name.lower().endswith(_HTML_SUFFIXES))


@functools.cache
def _environment(autoescape: bool | None, folders: tuple[str, ...] = ()) -> jinja2.Environment:
    """The templates of ``folders`` (a user's), then the built-in ones, which they may import.

    ``autoescape`` None: each template by its name (`_is_html_template`).
    """
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(folder) for folder in folders]
    loaders.append(jinja2.FileSystemLoader(styles_directory()))
    environment = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=_is_html_template if autoescape is None else autoescape,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    environment.filters["md_link"] = _md_link
    environment.filters["md_text"] = _md_text
    environment.filters["md_url"] = _md_url
    environment.filters["one_line"] = _one_line
    environment.filters["safe_url"] = safe_url
    return environment


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceView:
    """What a template sees of one cited (or consulted) source.

    ``passage`` is the best-scoring passage of the source's citations and
    ``passages`` all of them, in citation order: only in the list of sources
    (a citation is rendered while the answer streams, before any passage is
    known), and only when the style has ``show_passages`` on. A consulted
    source (given, not cited) has ``number`` None.

    Example:
        >>> SourceView(number=1, source="b.pdf", url="b.pdf", title=None, label="b.pdf",
        ...            document=None, answer_id="a1").label
        'b.pdf'
    """

    number: int | None
    source: str | None
    url: str | None
    title: str | None
    label: str
    document: Any
    answer_id: str
    supported: bool | None = None
    passage: Passage | None = None
    passages: tuple[Passage, ...] = ()


# The templates `TemplateReferenceStyle._check_renders` has rendered without a name a source has not.
_TEMPLATES_RENDERED: Final[weakref.WeakSet[jinja2.Template]] = weakref.WeakSet()

# How Jinja names a missing attribute of a source, its passage or its document (not of their metadata dict).
_NAMES_OF_A_SOURCE: Final = re.compile(r"'[\w.]*?\b(SourceView|Passage|Document) object' has no attribute")

# The answer being rendered, set only while the session's render_* call runs:
# the 0.2.x methods take no answer argument, so they find it here (per thread
# and per asyncio task, so concurrent answers never see each other's).
_ANSWER: contextvars.ContextVar[AnswerContext] = contextvars.ContextVar("langchain_refs_answer")
_NO_ANSWER = AnswerContext()


class ReferenceStyle:
    """How citations are written in the text and listed at the end.

    Subclass it and override `format_reference` and `format_all_references`,
    as with langchain-references 0.2.x. ``source_id_key`` names the metadata
    key that identifies a document's source, or is a callable taking the
    document (set on the class or on an instance). ``total_pages_key``,
    ``max_total_pages`` and ``_get_key_assigner`` are there for 0.2.x
    subclasses that read them; nothing here uses them.

    A style is configuration: the middleware never changes it, so one style
    may serve any number of answers at once. Inside `format_reference` and
    `format_all_references`, `answer` is the answer being rendered.
    ``escape_text`` asks the middleware to HTML-escape the model's own words
    (see `HTMLReferenceStyle`). ``show_passages`` asks for each citation's
    passage before the list is rendered (`AnswerContext.passages`);
    ``show_consulted`` has the sources given but not cited listed after it
    (`format_consulted`, which writes nothing unless overridden).

    Example:
        >>> from langchain_core.documents import Document
        >>> class Brackets(ReferenceStyle):
        ...     def format_reference(self, ref, media):
        ...         return f"[{ref}]"
        ...     def format_all_references(self, refs):
        ...         return "".join(f"\\n[{ref}] {self.source_of(m)}" for ref, m in refs)
        >>> Brackets().format_all_references([(1, Document("x", metadata={"source": "a.pdf"}))])
        '\\n[1] a.pdf'
    """

    source_id_key: SourceKey = "source"
    total_pages_key: SourceKey = "total_pages"
    max_total_pages: int = 4
    escape_text: bool = False
    show_passages: bool = False
    show_consulted: bool = False

    @staticmethod
    def _get_key_assigner(source_id_key: SourceKey) -> Callable[[BaseMedia], Any]:
        """The 0.2.x name of `source_key_function`, for subclasses that call it."""
        return source_key_function(source_id_key)

    @property
    def answer(self) -> AnswerContext:
        """The answer being rendered (an empty `AnswerContext` outside a rendering call).

        Example:
            >>> TextReferenceStyle().answer.answer_id
            ''
        """
        return _ANSWER.get(_NO_ANSWER)

    def source_of(self, media: BaseMedia) -> Any:
        """The source key of a document (None when it has none).

        Example:
            >>> from langchain_core.documents import Document
            >>> EmptyReferenceStyle().source_of(Document("x", metadata={"source": "a.pdf"}))
            'a.pdf'
        """
        key = self.source_id_key
        if isinstance(key, str):
            return media.metadata.get(key)
        return source_key_function(key)(media)

    def render_citation(self, ref: int, media: BaseMedia, answer: AnswerContext) -> str | None:
        """The citation written in the text of ``answer``; None hides it.

        Runs `format_reference` with ``answer`` current.

        Example:
            >>> from langchain_core.documents import Document
            >>> HTMLReferenceStyle().render_citation(1, Document("x"), AnswerContext(answer_id="a1"))
            '<sup class="citation"><a href="#ref-a1-1">1</a></sup>'
        """
        token = _ANSWER.set(answer)
        try:
            return self.format_reference(ref, media)
        finally:
            _ANSWER.reset(token)

    def render_references(self, refs: list[tuple[int, BaseMedia]], answer: AnswerContext) -> str:
        """The list of cited sources written after ``answer``.

        Runs `format_all_references` with ``answer`` current.

        Example:
            >>> from langchain_core.documents import Document
            >>> doc = Document("x", metadata={"source": "b.pdf"})
            >>> TextReferenceStyle().render_references([(1, doc)], AnswerContext(support={1: False}))
            '\\n\\n- [1] b.pdf [unsupported]\\n'
        """
        token = _ANSWER.set(answer)
        try:
            return self.format_all_references(refs)
        finally:
            _ANSWER.reset(token)

    def render_consulted(self, sources: list[BaseMedia], answer: AnswerContext, listed: bool) -> str:
        """The part listing the sources given but not cited, written after the list of ``answer``.

        Runs `format_consulted` with ``answer`` current. ``sources`` holds the
        first document of each such source; ``listed`` says whether a list of
        cited sources comes before.

        Example:
            >>> from langchain_core.documents import Document
            >>> doc = Document("x", metadata={"source": "c.pdf"})
            >>> TextReferenceStyle(show_consulted=True).render_consulted([doc], AnswerContext(), False)
            '\\n\\nAlso consulted:\\n- c.pdf\\n'
        """
        token = _ANSWER.set(answer)
        try:
            return self.format_consulted(sources, listed=listed)
        finally:
            _ANSWER.reset(token)

    def format_consulted(self, sources: list[BaseMedia], *, listed: bool = True) -> str:
        """The "Also consulted" part: nothing here; template styles write it with their ``consulted`` macro.

        Example:
            >>> from langchain_core.documents import Document
            >>> class Plain(ReferenceStyle):
            ...     pass
            >>> Plain().format_consulted([Document("x")])
            ''
        """
        return ""

    def format_reference(self, ref: int, media: BaseMedia) -> str | None:
        """The citation written in the text; None hides it.

        Example:
            >>> from langchain_core.documents import Document
            >>> TextReferenceStyle().format_reference(2, Document("x"))
            '[2]'
        """
        raise NotImplementedError

    def format_all_references(self, refs: list[tuple[int, BaseMedia]]) -> str:
        """The list of cited sources written after the answer.

        Example:
            >>> EmptyReferenceStyle().format_all_references([])
            ''
        """
        raise NotImplementedError


class TemplateReferenceStyle(ReferenceStyle):
    """A style rendered by a Jinja2 template.

    The template defines two macros: ``citation(c)`` for one citation and
    ``references(refs)`` for the list; each ``c`` / item of ``refs`` has
    ``number``, ``source``, ``url`` (None unless `safe_url` allows a link),
    ``title``, ``label`` (title, source or "untitled document"),
    ``document``, ``answer_id``, ``supported`` (None unless a verifier
    ran), and in the list ``passage`` and ``passages`` (the passages of the
    source's citations, with ``show_passages`` on; see `SourceView`). An
    optional third macro, ``consulted(sources, listed)``, writes the sources
    given but not cited, with ``show_consulted`` on (``listed``: a list of
    cited sources comes before). Filters: ``md_text``, ``md_url`` and
    ``md_link`` (Markdown escaping), ``one_line`` (line breaks to spaces),
    ``safe_url``.
    Give exactly one of ``template`` (the text), ``path`` (a file) or
    ``name``: a template of ``directory`` (a folder of your own ``.jinja``
    files), else a built-in (text, markdown, html, empty; see
    `styles_directory`). A template may ``{% import "markdown.jinja" as md %}``
    a built-in, or another template of its folder.
    ``autoescape`` HTML-escapes every value the template prints; by
    default the built-in ``html`` template and files named ``*.html``,
    ``*.htm``, ``*.xml`` or ``*.html.jinja`` do, and others do not (pass
    ``autoescape=True`` for a template string or a ``.jinja`` file that
    writes HTML). ``escape_text`` HTML-escapes the model's own words too. The built-in
    styles show passages and consulted sources only when asked
    (``show_passages=True``, ``show_consulted=True``), so their default
    output is unchanged.

    Example:
        >>> from langchain_core.documents import Document
        >>> style = TemplateReferenceStyle(
        ...     "{% macro citation(c) %}({{ c.number }}){% endmacro %}"
        ...     "{% macro references(refs) %}{% for r in refs %} {{ r.label }}{% endfor %}{% endmacro %}")
        >>> doc = Document("x", metadata={"source": "a.pdf"})
        >>> style.format_reference(1, doc), style.format_all_references([(1, doc)])
        ('(1)', ' a.pdf')
    """

    template_name: ClassVar[str | None] = None
    # None: by the template's name (`_is_html_template`).
    autoescape: bool | None = None

    def __init__(
        self,
        template: str | None = None,
        *,
        path: str | Path | None = None,
        name: str | None = None,
        directory: str | Path | None = None,
        autoescape: bool | None = None,
        source_id_key: SourceKey | None = None,
        escape_text: bool | None = None,
        show_passages: bool | None = None,
        show_consulted: bool | None = None,
    ) -> None:
        # Each option checked as it is given: a truthy word ("false") would do the opposite of what it says.
        if autoescape is not None:
            self.autoescape = checked_flag(autoescape, "autoescape")
        if show_passages is not None:
            self.show_passages = checked_flag(show_passages, "show_passages")
        if show_consulted is not None:
            self.show_consulted = checked_flag(show_consulted, "show_consulted")
        if source_id_key is not None:
            source_key_function(source_id_key)  # a wrong type fails here, not at the first answer
            self.source_id_key = source_id_key
        if escape_text is not None:
            self.escape_text = checked_flag(escape_text, "escape_text")
        for option, value, kinds in (
            ("template", template, (str,)),
            ("name", name, (str,)),
            ("path", path, (str, Path)),
            ("directory", directory, (str, Path)),
        ):
            if value is not None and not isinstance(value, kinds):
                wanted = " or a ".join(kind.__name__ for kind in kinds)
                msg = f"TemplateReferenceStyle: {option} must be a {wanted}, got {type(value).__name__}"
                raise TypeError(msg)
        given = [x for x in (template, path, name) if x is not None]
        if len(given) > 1:
            msg = "give only one of template, path or name to TemplateReferenceStyle"
            raise ValueError(msg)
        if directory is not None and not Path(directory).is_dir():
            msg = f"the style directory {str(directory)!r} is not a folder"
            raise ValueError(msg)
        # A file's own folder comes first: it may import its neighbours.
        own = [Path(path).parent] if path is not None else []
        if directory is not None:
            own.append(Path(directory))
        environment = _environment(self.autoescape, tuple(dict.fromkeys(str(folder.resolve()) for folder in own)))
        if template is not None:
            self._template = environment.from_string(template)
        elif path is not None:
            if not Path(path).is_file():
                msg = f"the style template {str(path)!r} is not a file"
                raise ValueError(msg)
            self._template = environment.get_template(Path(path).name)
        else:
            chosen = name or self.template_name
            if chosen is None:
                msg = "TemplateReferenceStyle needs a template, a path or a built-in name"
                raise ValueError(msg)
            filename = chosen if chosen.endswith(".jinja") else f"{chosen}.jinja"
            try:
                self._template = environment.get_template(filename)
            except jinja2.TemplateNotFound:
                folders = [styles_directory(), *([Path(directory)] if directory is not None else [])]
                known = sorted({p.stem for folder in folders for p in folder.glob("*.jinja")})
                msg = f"no built-in style named {chosen!r}; known styles: {', '.join(known)}"
                raise ValueError(msg) from None
        module = self._template.module
        for macro in ("citation", "references"):
            if not callable(getattr(module, macro, None)):
                msg = f"the style template defines no {macro}() macro"
                raise ValueError(msg)
        self._citation_macro = module.citation  # type: ignore[attr-defined]
        self._references_macro = module.references  # type: ignore[attr-defined]
        consulted = getattr(module, "consulted", None)
        self._consulted_macro = consulted if callable(consulted) else None
        if self._template not in _TEMPLATES_RENDERED:
            # Once per template (a built-in one is the environment's, shared by every style made of it).
            self._check_renders()
            _TEMPLATES_RENDERED.add(self._template)
        # Whether `format_reference` is this class's own, whose renderings
        # `render_citation` may then reuse without setting the answer current.
        self._own_format = type(self).format_reference is TemplateReferenceStyle.format_reference

    def _check_renders(self) -> None:
        """Render each macro once with a sample source: a name a source has not fails here, not mid-answer."""
        document = Document("Paris is big.", metadata={"source": "https://example.org/a", "title": "A"})
        passage = Passage(document_position=1, document_start=0, document_end=13, excerpt="Paris is big.", score=1.0)
        cited = SourceView(
            number=1,
            source="https://example.org/a",
            url="https://example.org/a",
            title="A",
            label="A",
            document=document,
            answer_id="a1",
            supported=True,
            passage=passage,
            passages=(passage,),
        )
        consulted = SourceView(
            number=None, source=cited.source, url=cited.url, title="A", label="A", document=document, answer_id="a1"
        )
        renders: list[tuple[str, Any, tuple[Any, ...]]] = [
            ("citation", self._citation_macro, (cited,)),
            ("references", self._references_macro, ([cited],)),
            ("consulted", self._consulted_macro, ([consulted], True)),
        ]
        for name, macro, arguments in renders:
            if macro is None:
                continue
            try:
                macro(*arguments)
            except Exception as error:  # the sample's data may not suit a template written for real data
                # Only a name that no source has (a metadata key a document may lack is the data's, not a typo).
                missing = _NAMES_OF_A_SOURCE.search(str(error)) if isinstance(error, jinja2.UndefinedError) else None
                if missing is None:
                    continue
                # Jinja names the class with its module: the class alone says it.
                said = _NAMES_OF_A_SOURCE.sub(r"'\1 object' has no attribute", str(error))
                known = ", ".join(f.name for f in fields(SourceView))
                msg = f"the style template's {name}() macro reads what a {missing[1]} does not have: {said} "
                msg += f"(a source has {known})"
                raise ValueError(msg) from None

    def _view(self, number: int | None, media: BaseMedia, answer: AnswerContext) -> SourceView:
        source = (answer.source_of or self.source_of)(media)
        source_text = None if source is None or source == "" else str(source)
        title = media.metadata.get("title") or None
        title_text = None if title is None else str(title)
        passages = answer.passages.get(number, ()) if answer.passages is not None and number is not None else ()
        return SourceView(
            number=number,
            source=source_text,
            url=safe_url(source_text),
            title=title_text,
            label=title_text or source_text or "untitled document",
            document=media,
            answer_id=answer.answer_id,
            supported=None if answer.support is None or number is None else answer.support.get(number),
            passage=_best(passages),
            passages=passages,
        )

    @property
    def reuses_citations(self) -> bool:
        """Whether a citation renders, all through one answer, as it did the first time for its number and document.

        True for the template's own rendering, which this style keeps per
        answer (`AnswerContext.rendered`) and gives again: a session may then
        keep it too and not ask again. False for a subclass with its own
        `format_reference` or `render_citation`, which is asked every time.

        Example:
            >>> MarkdownReferenceStyle().reuses_citations
            True
        """
        return self._own_format and type(self).render_citation is TemplateReferenceStyle.render_citation

    @override
    def render_citation(self, ref: int, media: BaseMedia, answer: AnswerContext) -> str | None:
        if self._own_format:
            # The hot path: a number cited again with the same document.
            cached = answer.rendered.get((self, ref, id(media)))
            if cached is not None and cached[0] is media:
                return cached[1]  # type: ignore[no-any-return]
        return super().render_citation(ref, media, answer)

    @override
    def format_reference(self, ref: int, media: BaseMedia) -> str | None:
        answer = _ANSWER.get(_NO_ANSWER)
        if answer is _NO_ANSWER:
            return str(self._citation_macro(self._view(ref, media, answer)))
        # A number cited again with the same document renders the same way
        # within one answer: render it once. The document is kept beside its
        # rendering, so its id cannot be reused while the entry lives.
        key = (self, ref, id(media))
        cached = answer.rendered.get(key)
        if cached is not None and cached[0] is media:
            return cached[1]  # type: ignore[no-any-return]
        rendered = str(self._citation_macro(self._view(ref, media, answer)))
        answer.rendered[key] = (media, rendered)
        return rendered

    @override
    def format_all_references(self, refs: list[tuple[int, BaseMedia]]) -> str:
        if not refs:
            return ""
        answer = _ANSWER.get(_NO_ANSWER)
        return str(self._references_macro([self._view(ref, media, answer) for ref, media in refs]))

    @override
    def format_consulted(self, sources: list[BaseMedia], *, listed: bool = True) -> str:
        if not sources or self._consulted_macro is None:
            return ""
        answer = _ANSWER.get(_NO_ANSWER)
        return str(self._consulted_macro([self._view(None, media, answer) for media in sources], listed))


def _best(passages: tuple[Passage, ...]) -> Passage | None:
    """The best-scoring passage, the first on a tie (None for none)."""
    best = None
    for passage in passages:
        if best is None or passage.score > best.score:
            best = passage
    return best


class EmptyReferenceStyle(TemplateReferenceStyle):
    """Removes citations from the text and adds no list; data is kept.

    Example:
        >>> from langchain_core.documents import Document
        >>> EmptyReferenceStyle().format_reference(1, Document("x"))
        ''
    """

    template_name = "empty"


class TextReferenceStyle(TemplateReferenceStyle):
    """``[1]`` in the text and ``- [1] title (source)`` lines at the end.

    For terminals and logs: nothing is escaped (there is no markup), but every
    title and source is kept on one line (each line break becomes a space, so
    no title can start a line of its own) and control characters a terminal
    would act on (escape sequences) show as U+FFFD. The model's own words pass
    through unchanged.

    Example:
        >>> from langchain_core.documents import Document
        >>> TextReferenceStyle().format_all_references([(1, Document("x", metadata={"source": "b.pdf"}))])
        '\\n\\n- [1] b.pdf\\n'
    """

    template_name = "text"


class MarkdownReferenceStyle(TemplateReferenceStyle):
    """Linked superscripts in the text and a Markdown list of sources.

    What is escaped: every title or source shown as text is kept on one line
    (each line break becomes a space) with Markdown's special characters
    backslash-escaped and ``&``, ``<``, ``>`` written as character references;
    every link target is percent-encoded where it could end the link early. A
    source becomes a link only when `safe_url` allows it (http, https, mailto,
    relative); otherwise it is shown as escaped text. The citation is wrapped
    in raw ``<sup>`` HTML, as langchain-references writes it. The model's own
    words pass through unchanged: they are Markdown for your renderer, which
    must itself treat raw HTML in them as untrusted.

    Example:
        >>> from langchain_core.documents import Document
        >>> MarkdownReferenceStyle().format_reference(1, Document("x", metadata={"source": "b.pdf"}))
        '<sup>[[1](b.pdf)]</sup>'
    """

    template_name = "markdown"


class HTMLReferenceStyle(TemplateReferenceStyle):
    """Footnote links in the text and an ordered list of linked sources.

    What is escaped: everything this style writes. Titles, sources, numbers
    and ids are HTML-escaped (attributes too), and a source becomes a link
    only when `safe_url` allows it (http, https, mailto, relative); otherwise
    it is shown as escaped text. The markup is well-formed and its ids carry
    the answer id, unique per answer, so several answers can share a page
    (``ref-<answer id>-<n>``; ``ref-<n>`` for a `ReferenceSession` given none).

    What is not, by default: the model's own words. They pass through
    unchanged, as in langchain-references, so a model asked to write HTML can.
    If the answer goes into a page as HTML and the model (or a document it
    quotes) is not trusted, pass ``escape_text=True``: the middleware then
    HTML-escapes the model's words (``&``, ``<``, ``>``) before they reach
    the output, while markers are still recognised and rendered. Do not also
    escape them yourself, or they are escaped twice.

    Example:
        >>> from langchain_core.documents import Document
        >>> HTMLReferenceStyle().render_citation(1, Document("x"), AnswerContext(answer_id="a1"))
        '<sup class="citation"><a href="#ref-a1-1">1</a></sup>'
        >>> HTMLReferenceStyle(escape_text=True).escape_text
        True
    """

    template_name = "html"
    autoescape = True


@dataclass(frozen=True, slots=True, kw_only=True)
class StyleChoice:
    """A style with its defaults applied, and the function that gives a document's source key.

    Made by `choose_style`; every entry point (``manage_references``,
    ``ReferencesMiddleware``, ``ReferencesChatModel``) takes its style and
    numbering from here, so that they all resolve the options the same way.

    Example:
        >>> type(choose_style().style).__name__
        'MarkdownReferenceStyle'
    """

    style: ReferenceStyle
    source_of: Callable[[BaseMedia], Any]


def choose_style(style: ReferenceStyle | None = None, source_key: SourceKey | None = None) -> StyleChoice:
    """The style (default: `MarkdownReferenceStyle`) and the source key function of the options given.

    ``source_key`` (a metadata key or a callable) wins over the style's own
    ``source_id_key``; a wrong type fails here, when the option is given, as
    does a style that is not one (a class, a name).

    Example:
        >>> from langchain_core.documents import Document
        >>> document = Document("x", metadata={"source": "a.pdf", "url": "https://a.org"})
        >>> choose_style().source_of(document), choose_style(source_key="url").source_of(document)
        ('a.pdf', 'https://a.org')
        >>> choose_style("markdown")
        Traceback (most recent call last):
        ...
        TypeError: style must be a style such as MarkdownReferenceStyle(), got the str 'markdown'
    """
    if style is not None:
        check_style(style, _STYLE_METHODS)
    chosen = style if style is not None else MarkdownReferenceStyle()
    source_of = chosen.source_of if source_key is None else source_key_function(source_key, option="source_key")
    return StyleChoice(style=chosen, source_of=source_of)


# What a style is asked for: the source of a document, each reference and the list of them.
_STYLE_METHODS: Final = ("source_of", "format_reference", "format_all_references")
