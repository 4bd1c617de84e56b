"""Reference styles: how citations and the list of sources are written."""

from __future__ import annotations

import copy
import functools
import importlib.resources
import re
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import jinja2
from langchain_core.documents.base import BaseMedia
from typing_extensions import Self, override

__all__ = [
    "EmptyReferenceStyle",
    "HTMLReferenceStyle",
    "MarkdownReferenceStyle",
    "ReferenceStyle",
    "TemplateReferenceStyle",
    "TextReferenceStyle",
    "styles_directory",
]

SourceKey = str | Callable[[BaseMedia], Any]

_SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")
_CONTROL = re.compile(r"[\x00-\x20\x7f]")


def safe_url(value: Any) -> str | None:
    """``value`` if it may become a link: http, https, mailto or relative.

    Example:
        >>> safe_url("https://a.org/x"), safe_url("b.pdf"), safe_url("javascript:alert(1)")
        ('https://a.org/x', 'b.pdf', None)
    """
    if value is None:
        return None
    url = str(value).strip()
    # Browsers ignore tabs/newlines inside a scheme: "java\tscript:" is javascript:.
    probe = _CONTROL.sub("", url)
    if not probe:
        return None
    scheme = _SCHEME.match(probe)
    if scheme is not None and scheme[1].lower() not in _SAFE_SCHEMES:
        return None
    if scheme is None and ":" in probe.split("/", 1)[0]:
        return None
    return url


def _md_text(value: Any) -> str:
    """Escape text for use inside a Markdown link label or list item."""
    text = str(value)
    text = re.sub(r"([\\`*_\[\]()#|!])", r"\\\1", text)
    return text.replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def _md_url(value: Any) -> str:
    """Percent-encode what would end a Markdown link destination early."""
    return urllib.parse.quote(str(value), safe="/:?#[]@!$&'*+,;=%~-._").replace("(", "%28").replace(")", "%29")


def styles_directory() -> Path:
    """The folder holding the built-in Jinja2 templates.

    The wheel carries them inside the package; a source checkout or an
    editable install finds them in the top-level ``styles/`` folder.

    Example:
        >>> (styles_directory() / "html.jinja").is_file()
        True
    """
    packaged = importlib.resources.files("langchain_refs") / "styles"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "styles"


@functools.cache
def _environment(autoescape: bool) -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(styles_directory()),
        autoescape=autoescape,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    environment.filters["md_text"] = _md_text
    environment.filters["md_url"] = _md_url
    environment.filters["safe_url"] = safe_url
    return environment


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceView:
    """What a template sees of one cited source.

    Example:
        >>> SourceView(number=1, source="b.pdf", url="b.pdf", title=None, label="b.pdf",
        ...            document=None, answer_id="a1").label
        'b.pdf'
    """

    number: int
    source: str | None
    url: str | None
    title: str | None
    label: str
    document: Any
    answer_id: str
    supported: bool | None = None


class ReferenceStyle:
    """How citations are written in the text and listed at the end.

    Subclass it and override `format_reference` and `format_all_references`,
    as with langchain-references 0.2.x. ``source_id_key`` names the metadata
    key that identifies a document's source, or is a callable taking the
    document (set on the class or on an instance).

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
    answer_id: str = ""
    support: dict[int, bool] | None = None

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
        if getattr(key, "__self__", None) is self:
            # A plain function set on the class arrives bound to the style.
            return key.__func__(media)  # type: ignore[attr-defined]
        if callable(key):
            return key(media)
        msg = f"source_id_key must be a metadata key (str) or a callable, got {type(key).__name__}"
        raise TypeError(msg)

    def for_answer(self, answer_id: str) -> Self:
        """A copy of this style for one answer, whose ids carry ``answer_id``.

        Example:
            >>> HTMLReferenceStyle().for_answer("q7").answer_id
            'q7'
        """
        bound = copy.copy(self)
        bound.answer_id = answer_id
        return bound

    def note_support(self, support: dict[int, bool]) -> None:
        """Learn which numbers a verifier found supported, before the list is written.

        Example:
            >>> style = TextReferenceStyle().for_answer("a")
            >>> style.note_support({1: False})
            >>> style.support
            {1: False}
        """
        self.support = support

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
    ``number``, ``source``, ``url`` (None unless safe to link), ``title``,
    ``label`` (title, source or "untitled document"), ``document``,
    ``answer_id`` and ``supported`` (None unless a verifier ran).
    Give exactly one of ``template`` (the text), ``path`` (a file) or
    ``name`` (a built-in from ``styles/``: text, markdown, html, empty).

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
    autoescape: bool = False

    def __init__(
        self,
        template: str | None = None,
        *,
        path: str | Path | None = None,
        name: str | None = None,
        autoescape: bool | None = None,
        source_id_key: SourceKey | None = None,
    ) -> None:
        if autoescape is not None:
            self.autoescape = autoescape
        if source_id_key is not None:
            self.source_id_key = source_id_key
        given = [x for x in (template, path, name) if x is not None]
        if len(given) > 1:
            msg = "give only one of template, path or name to TemplateReferenceStyle"
            raise ValueError(msg)
        environment = _environment(self.autoescape)
        if template is not None:
            self._template = environment.from_string(template)
        elif path is not None:
            self._template = environment.from_string(Path(path).read_text(encoding="utf-8"))
        else:
            chosen = name or self.template_name
            if chosen is None:
                msg = "TemplateReferenceStyle needs a template, a path or a built-in name"
                raise ValueError(msg)
            filename = chosen if chosen.endswith(".jinja") else f"{chosen}.jinja"
            try:
                self._template = environment.get_template(filename)
            except jinja2.TemplateNotFound:
                known = sorted(p.stem for p in styles_directory().glob("*.jinja"))
                msg = f"no built-in style named {chosen!r}; known styles: {', '.join(known)}"
                raise ValueError(msg) from None
        module = self._template.module
        for macro in ("citation", "references"):
            if not callable(getattr(module, macro, None)):
                msg = f"the style template defines no {macro}() macro"
                raise ValueError(msg)
        # Per-answer render cache (see for_answer); None on a style not bound
        # to an answer, whose documents may be gone and their ids reused.
        self._rendered: dict[tuple[int, int], str] | None = None
        self._citation_macro = module.citation  # type: ignore[attr-defined]
        self._references_macro = module.references  # type: ignore[attr-defined]

    def _view(self, number: int, media: BaseMedia) -> SourceView:
        source = self.source_of(media)
        source_text = None if source is None or source == "" else str(source)
        title = media.metadata.get("title") or None
        title_text = None if title is None else str(title)
        return SourceView(
            number=number,
            source=source_text,
            url=safe_url(source_text),
            title=title_text,
            label=title_text or source_text or "untitled document",
            document=media,
            answer_id=self.answer_id,
            supported=None if self.support is None else self.support.get(number),
        )

    @override
    def for_answer(self, answer_id: str) -> Self:
        bound = super().for_answer(answer_id)
        bound._rendered = {}
        return bound

    @override
    def format_reference(self, ref: int, media: BaseMedia) -> str | None:
        # A citation of the same document under the same number renders the
        # same way within one answer: render it once.
        if self._rendered is None:
            return str(self._citation_macro(self._view(ref, media)))
        key = (ref, id(media))
        rendered = self._rendered.get(key)
        if rendered is None:
            rendered = self._rendered[key] = str(self._citation_macro(self._view(ref, media)))
        return rendered

    @override
    def format_all_references(self, refs: list[tuple[int, BaseMedia]]) -> str:
        if not refs:
            return ""
        return str(self._references_macro([self._view(ref, media) for ref, media in refs]))


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

    Example:
        >>> from langchain_core.documents import Document
        >>> TextReferenceStyle().format_all_references([(1, Document("x", metadata={"source": "b.pdf"}))])
        '\\n\\n- [1] b.pdf\\n'
    """

    template_name = "text"


class MarkdownReferenceStyle(TemplateReferenceStyle):
    """Linked superscripts in the text and a Markdown list of sources.

    Example:
        >>> from langchain_core.documents import Document
        >>> MarkdownReferenceStyle().format_reference(1, Document("x", metadata={"source": "b.pdf"}))
        '<sup>[[1](b.pdf)]</sup>'
    """

    template_name = "markdown"


class HTMLReferenceStyle(TemplateReferenceStyle):
    """Footnote links in the text and an ordered list of linked sources.

    Everything is HTML-escaped; only safe URLs become links.

    Example:
        >>> from langchain_core.documents import Document
        >>> HTMLReferenceStyle().for_answer("a1").format_reference(1, Document("x"))
        '<sup class="citation"><a href="#ref-a1-1">1</a></sup>'
    """

    template_name = "html"
    autoescape = True
