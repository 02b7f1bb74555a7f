"""HTML: visible text only (no script, style or navigation); h1–h6 become heading paths."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, Comment, NavigableString, Tag

from core.errors import IngestError
from tools.knowledge_base.loaders.base import Loader, SourceInfo, decode_text
from tools.knowledge_base.records import Block, LoadedDocument
from tools.knowledge_base.text_units import detect_language

_DROPPED_TAGS = ("script", "style", "nav", "noscript", "template", "svg", "iframe", "head")
_HEADING_LEVELS = {f"h{n}": n for n in range(1, 7)}
# Tags that end a paragraph; anything else (a, b, span, ...) is inline text.
_BLOCK_TAGS = frozenset(
    [
        "p",
        "div",
        "section",
        "article",
        "main",
        "aside",
        "header",
        "footer",
        "li",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "blockquote",
        "figure",
        "figcaption",
        "table",
        "thead",
        "tbody",
        "tfoot",
        "tr",
        "form",
        "fieldset",
        "address",
        "details",
        "summary",
        "hr",
    ]
)
_CELL_TAGS = frozenset(("td", "th"))
_SPACES_RE = re.compile(r"\s+")


class _HtmlWalker:
    """Walks the DOM in document order, collecting paragraphs under the current heading path."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.path: list[tuple[int, str]] = []
        self.paragraphs: list[str] = []
        self.inline: list[str] = []
        self.first_h1: str | None = None

    def flush_inline(self) -> None:
        text = _SPACES_RE.sub(" ", "".join(self.inline)).strip()
        if text:
            self.paragraphs.append(text)
        self.inline = []

    def flush_section(self) -> None:
        self.flush_inline()
        if self.paragraphs:
            self.blocks.append(
                Block(text="\n\n".join(self.paragraphs), kind="text", heading_path=[t for _, t in self.path])
            )
        self.paragraphs = []

    def walk(self, node: Tag, depth: int = 0) -> None:
        if depth > 200:  # pathological nesting: keep its text flat rather than recurse further
            self.inline.append(node.get_text(" "))
            return
        for child in node.children:
            if isinstance(child, Comment):
                continue
            if isinstance(child, NavigableString):
                self.inline.append(str(child))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name.lower()
            if name in _HEADING_LEVELS:
                self.heading(_HEADING_LEVELS[name], _SPACES_RE.sub(" ", child.get_text(" ")).strip())
            elif name == "pre":
                self.flush_section()
                code = child.get_text().strip("\n")
                if code.strip():
                    self.blocks.append(Block(text=code, kind="code", heading_path=[t for _, t in self.path]))
            elif name == "br":
                self.flush_inline()
            elif name == "tr":
                self.flush_inline()
                cells = [_SPACES_RE.sub(" ", c.get_text(" ")).strip() for c in child.find_all(_CELL_TAGS)]
                if any(cells):
                    self.paragraphs.append(" | ".join(cells))
            elif name in _BLOCK_TAGS:
                self.flush_inline()
                self.walk(child, depth + 1)
                self.flush_inline()
            else:
                self.walk(child, depth + 1)

    def heading(self, level: int, title: str) -> None:
        if not title:
            return
        self.flush_section()
        while self.path and self.path[-1][0] >= level:
            self.path.pop()
        self.path.append((level, title))
        if level == 1 and self.first_h1 is None:
            self.first_h1 = title


class HtmlLoader(Loader):
    suffixes = (".html", ".htm")

    def load(self, raw: bytes, info: SourceInfo) -> list[LoadedDocument]:
        markup = decode_text(raw, info.source)
        soup = BeautifulSoup(markup, "html.parser")
        title_tag = soup.find("title")
        page_title = _SPACES_RE.sub(" ", title_tag.get_text(" ")).strip() if title_tag else ""
        for tag in soup.find_all(_DROPPED_TAGS):
            tag.decompose()
        walker = _HtmlWalker()
        walker.walk(soup.body or soup)
        walker.flush_section()
        if not walker.blocks:
            raise IngestError(info.source, "no visible text in the HTML page")
        text = "\n".join(b.text for b in walker.blocks)
        return [
            info.document(
                title=page_title or walker.first_h1 or info.path.stem,
                blocks=walker.blocks,
                language=detect_language(text),
            )
        ]
