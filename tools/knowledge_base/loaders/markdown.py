"""Markdown: ATX and Setext headings become heading paths; fenced code blocks stay whole."""

from __future__ import annotations

import re

from core.errors import IngestError
from tools.knowledge_base.loaders.base import Loader, SourceInfo, decode_text
from tools.knowledge_base.records import Block, LoadedDocument
from tools.knowledge_base.text_units import detect_language

_ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_FRONT_MATTER_LINE_RE = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*?)[ \t]*$")


def parse_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Scalar ``key: value`` pairs of a leading ``---`` block, and the text after it."""
    match = _FRONT_MATTER_RE.match(text)
    if not match:
        return {}, text
    fields: dict[str, str] = {}
    for line in match.group(1).splitlines():
        pair = _FRONT_MATTER_LINE_RE.match(line)
        if pair and pair.group(2):
            fields[pair.group(1).lower()] = pair.group(2).strip("'\"")
    return fields, text[match.end() :]


class _SectionBuilder:
    """Collects lines under the current heading path and emits Blocks when the path changes."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.path: list[tuple[int, str]] = []
        self.lines: list[str] = []

    @property
    def heading_path(self) -> list[str]:
        return [title for _, title in self.path]

    def flush(self) -> None:
        text = "\n".join(self.lines).strip("\n")
        if text.strip():
            self.blocks.append(Block(text=text, kind="text", heading_path=self.heading_path))
        self.lines = []

    def heading(self, level: int, title: str) -> None:
        self.flush()
        while self.path and self.path[-1][0] >= level:
            self.path.pop()
        self.path.append((level, title))

    def code(self, text: str) -> None:
        self.flush()
        self.blocks.append(Block(text=text, kind="code", heading_path=self.heading_path))


def parse_markdown(text: str) -> tuple[list[Block], str | None]:
    """Blocks of a Markdown body and its first H1 (if any)."""
    builder = _SectionBuilder()
    first_h1: str | None = None
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE_RE.match(line)
        if fence:
            marker = fence.group(1)
            # The fence closes with the same character, at least as many times (CommonMark).
            closing = re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}[ \t]*$")
            end = i + 1
            while end < len(lines) and not closing.match(lines[end]):
                end += 1
            builder.code("\n".join(lines[i : end + 1]).rstrip())
            i = end + 1
            continue
        atx = _ATX_RE.match(line)
        if atx:
            title = (atx.group(2) or "").strip()
            if title:
                level = len(atx.group(1))
                builder.heading(level, title)
                if level == 1 and first_h1 is None:
                    first_h1 = title
            i += 1
            continue
        # Setext: a single non-blank paragraph line underlined with === (h1) or --- (h2).
        underline = _SETEXT_RE.match(lines[i + 1]) if i + 1 < len(lines) else None
        previous_blank = not builder.lines or not builder.lines[-1].strip()
        if underline and line.strip() and previous_blank and not line.startswith(("    ", "\t")):
            level = 1 if underline.group(1).startswith("=") else 2
            builder.heading(level, line.strip())
            if level == 1 and first_h1 is None:
                first_h1 = line.strip()
            i += 2
            continue
        builder.lines.append(line)
        i += 1
    builder.flush()
    return builder.blocks, first_h1


class MarkdownLoader(Loader):
    suffixes = (".md", ".markdown")

    def load(self, raw: bytes, info: SourceInfo) -> list[LoadedDocument]:
        text = decode_text(raw, info.source)
        front_matter, body = parse_front_matter(text)
        blocks, first_h1 = parse_markdown(body)
        if not blocks:
            raise IngestError(info.source, "no text content (only headings or front matter)")
        title = front_matter.get("title") or first_h1 or info.path.stem
        extra = {k: v for k, v in front_matter.items() if k != "title"}
        return [
            info.document(
                title=title,
                blocks=blocks,
                language=detect_language(body),
                metadata=extra,
            )
        ]
