"""PDF (pypdf): one or more blocks per page, ``page`` 1-based; headings from the outline when the file
has one, else from short title-like or numbered lines followed by body text."""

from __future__ import annotations

import io
import re
from collections import Counter
from dataclasses import dataclass

from pypdf import PdfReader
from pypdf.generic import Destination

from core.errors import IngestError
from tools.knowledge_base.loaders.base import Loader, SourceInfo
from tools.knowledge_base.records import Block, LoadedDocument
from tools.knowledge_base.text_units import detect_language

_NUMBERED_HEADING_RE = re.compile(r"^(\d{1,2}(?:\.\d{1,2})*)\.?\s+(\S.*)$")
_SENTENCE_END = tuple(".,;:!?。，；：！？")
_MAX_OUTLINE_ITEMS = 5000


@dataclass(frozen=True)
class _Heading:
    page: int  # 0-based
    level: int
    title: str


class PdfLoader(Loader):
    suffixes = (".pdf",)

    def load(self, raw: bytes, info: SourceInfo) -> list[LoadedDocument]:
        reader = _open(raw, info.source)
        page_texts = _extract_pages(reader, info)
        if not any(t.strip() for t in page_texts):
            raise IngestError(info.source, "no text layer (scanned PDF?)")
        page_texts = _drop_running_headers(page_texts)
        outline = _outline_headings(reader)
        blocks = _blocks_from_outline(page_texts, outline) if outline else _blocks_from_layout(page_texts)
        if not blocks:
            raise IngestError(info.source, "no text layer (scanned PDF?)")
        title = _metadata_title(reader) or (outline[0].title if outline else None)
        if not title:
            title = next((b.heading_path[0] for b in blocks if b.heading_path), info.path.stem)
        return [
            info.document(
                title=title,
                blocks=blocks,
                language=detect_language(" ".join(page_texts)[:4000]),
                metadata={"pages": len(page_texts)},
            )
        ]


def _open(raw: bytes, source: str) -> PdfReader:
    try:
        reader = PdfReader(io.BytesIO(raw), strict=False)
    except Exception as exc:  # pypdf raises many types on damaged files
        raise IngestError(source, f"corrupt PDF ({type(exc).__name__}: {exc})") from exc
    if reader.is_encrypted:
        # Owner-password-only PDFs open with an empty user password; anything else is locked.
        try:
            opened = reader.decrypt("")
        except Exception as exc:
            raise IngestError(source, "encrypted PDF (password required)") from exc
        if not opened:
            raise IngestError(source, "encrypted PDF (password required)")
    try:
        _ = len(reader.pages)
    except Exception as exc:
        raise IngestError(source, f"corrupt PDF ({type(exc).__name__}: {exc})") from exc
    return reader


def _extract_pages(reader: PdfReader, info: SourceInfo) -> list[str]:
    texts: list[str] = []
    failures = 0
    for number, page in enumerate(reader.pages, start=1):
        try:
            texts.append(_reflow(page.extract_text() or ""))
        except Exception as exc:
            failures += 1
            info.warnings.append(f"{info.source}: page {number} skipped ({type(exc).__name__}: {exc})")
            texts.append("")
    if texts and failures == len(texts):
        raise IngestError(info.source, "corrupt PDF (no page could be read)")
    return texts


def _reflow(text: str) -> str:
    """Join lines that a PDF wrapped inside a sentence; keep line breaks that end sentences or lines
    that look like headings or list items."""
    lines = [line.rstrip() for line in text.replace("\r", "\n").split("\n")]
    out: list[str] = []
    for line in lines:
        stripped = line.strip()
        if not stripped:
            if out and out[-1] != "":
                out.append("")
            continue
        if out and out[-1]:
            previous = out[-1]
            if previous.endswith("-") and stripped[:1].islower():
                out[-1] = previous[:-1] + stripped  # de-hyphenate "infor-\nmation"
                continue
            if not previous.endswith(_SENTENCE_END) and stripped[:1].islower():
                out[-1] = previous + " " + stripped
                continue
        out.append(stripped)
    return "\n".join(out).strip()


def _drop_running_headers(page_texts: list[str]) -> list[str]:
    """Remove lines repeated at the top or bottom of most pages (running headers, page footers)."""
    if len(page_texts) < 2:
        return page_texts

    def shape(line: str) -> str:
        return re.sub(r"\d+", "#", line.strip().lower())

    edges: Counter[str] = Counter()
    for text in page_texts:
        lines = [ln for ln in text.split("\n") if ln.strip()]
        for line in {shape(x) for x in lines[:1] + lines[-1:]}:
            edges[line] += 1
    repeated = {line for line, n in edges.items() if n > len(page_texts) / 2}
    if not repeated:
        return page_texts
    cleaned = []
    for text in page_texts:
        lines = text.split("\n")
        non_blank = [i for i, ln in enumerate(lines) if ln.strip()]
        edge_indexes = set(non_blank[:1] + non_blank[-1:])
        cleaned.append(
            "\n".join(ln for i, ln in enumerate(lines) if not (i in edge_indexes and shape(ln) in repeated))
        )
    return cleaned


def _outline_headings(reader: PdfReader) -> list[_Heading]:
    headings: list[_Heading] = []
    try:
        outline = reader.outline
    except Exception:
        return []

    def visit(items: list, level: int) -> None:
        for item in items:
            if len(headings) >= _MAX_OUTLINE_ITEMS:
                return
            if isinstance(item, list):
                visit(item, level + 1)
            elif isinstance(item, Destination):
                try:
                    page = reader.get_destination_page_number(item)
                except Exception:
                    continue
                title = " ".join(str(item.title or "").split())
                if title and page is not None and page >= 0:
                    headings.append(_Heading(page=page, level=level, title=title))

    visit(outline, 1)
    return headings


def _find_heading(text: str, title: str, start: int) -> tuple[int, int] | None:
    """Where an outline title starts a line in the page text (whitespace-insensitive)."""
    words = [re.escape(w) for w in title.split()]
    if not words:
        return None
    pattern = re.compile(r"(?:^|\n)[ \t]*(" + r"\s+".join(words) + r")[ \t]*(?=\n|$)", re.IGNORECASE)
    match = pattern.search(text, start)
    if not match:
        # Some writers put the heading and its first line on one text line.
        pattern = re.compile(r"(?:^|\n)[ \t]*(" + r"\s+".join(words) + r")", re.IGNORECASE)
        match = pattern.search(text, start)
    return (match.start(1), match.end(1)) if match else None


def _blocks_from_outline(page_texts: list[str], outline: list[_Heading]) -> list[Block]:
    by_page: dict[int, list[_Heading]] = {}
    for heading in outline:
        by_page.setdefault(heading.page, []).append(heading)
    blocks: list[Block] = []
    path: list[tuple[int, str]] = []
    for index, text in enumerate(page_texts):
        cursor = 0
        for heading in by_page.get(index, []):
            found = _find_heading(text, heading.title, cursor)
            # A heading missing from the text layer still opens its section at this point.
            if found:
                _append_block(blocks, text[cursor : found[0]], path, index + 1)
                cursor = found[1]
            while path and path[-1][0] >= heading.level:
                path.pop()
            path.append((heading.level, heading.title))
        _append_block(blocks, text[cursor:], path, index + 1)
    return blocks


def looks_like_heading(line: str, next_line: str | None) -> int | None:
    """The heading level of a short title-like or numbered line followed by body text, else None."""
    stripped = line.strip()
    if not (2 <= len(stripped) <= 80) or stripped.endswith(_SENTENCE_END) or len(stripped.split()) > 12:
        return None
    if not any(c.isalpha() for c in stripped):
        return None
    if next_line is None or not next_line.strip():
        return None
    numbered = _NUMBERED_HEADING_RE.match(stripped)
    if numbered and numbered.group(2)[:1].isupper():
        return numbered.group(1).count(".") + 1
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'’-]*", stripped)]
    significant = [w for w in words if len(w) >= 4]
    if not words or not words[0][0].isupper():
        return None
    title_case = bool(significant) and sum(w[0].isupper() for w in significant) / len(significant) >= 0.8
    body_follows = len(next_line.strip()) > len(stripped) or next_line.strip().endswith(_SENTENCE_END)
    return 1 if title_case and body_follows else None


def _blocks_from_layout(page_texts: list[str]) -> list[Block]:
    blocks: list[Block] = []
    path: list[tuple[int, str]] = []
    for index, text in enumerate(page_texts):
        lines = text.split("\n")
        body: list[str] = []
        for i, line in enumerate(lines):
            next_line = next((ln for ln in lines[i + 1 :] if ln.strip()), None)
            level = looks_like_heading(line, next_line)
            if level is None:
                body.append(line)
                continue
            _append_block(blocks, "\n".join(body), path, index + 1)
            body = []
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, line.strip()))
        _append_block(blocks, "\n".join(body), path, index + 1)
    return blocks


def _append_block(blocks: list[Block], text: str, path: list[tuple[int, str]], page: int) -> None:
    text = text.strip()
    if text:
        blocks.append(Block(text=text, kind="text", heading_path=[t for _, t in path], page=page))


def _metadata_title(reader: PdfReader) -> str | None:
    try:
        title = reader.metadata.title if reader.metadata else None
    except Exception:
        return None
    title = " ".join(str(title).split()) if title else ""
    # Writers often leave placeholders such as "Untitled" or "Microsoft Word - draft.docx".
    if not title or title.lower() in {"untitled", "title"} or title.lower().startswith("microsoft word"):
        return None
    return title
