"""The loader interface and the checks every loader shares: size, emptiness, binary content, decoding.

A loader turns the bytes of one file into ``LoadedDocument``s made of ``Block``s that keep the
file's structure (headings, pages, table rows). The factory reads the file once, runs the shared
checks, resolves identity and ACL into a ``SourceInfo`` and hands both to the loader.
"""

from __future__ import annotations

import codecs
import unicodedata
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from charset_normalizer import from_bytes

from core.errors import IngestError
from tools.knowledge_base.records import Block, LoadedDocument

# Tried in addition to charset-normalizer's guesses, because short Chinese or Western texts are
# where its ranking is least reliable.
_FALLBACK_ENCODINGS = ("gb18030", "big5", "cp1252")
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# A decoding in which fewer characters than this look like real text is not plausible.
_MIN_PLAUSIBILITY = 0.75


@dataclass
class SourceInfo:
    """Who a file is: everything the factory resolved before the loader parses it."""

    path: Path
    source: str
    doc_id: str
    content_hash: str
    acl: list[str]
    metadata: dict[str, Any] = field(default_factory=dict)
    title: str | None = None  # from the sidecar; wins over the title a loader finds
    max_bytes: int = 0
    warnings: list[str] = field(default_factory=list)

    def document(
        self,
        *,
        title: str,
        blocks: list[Block],
        language: str | None,
        metadata: dict[str, Any] | None = None,
        doc_id: str | None = None,
        content_hash: str | None = None,
    ) -> LoadedDocument:
        """A LoadedDocument carrying this source's identity, ACL and metadata. ``doc_id`` and
        ``content_hash`` override the file's own (one JSONL file holds many documents); ``metadata``
        found in the file is added to the sidecar's and wins over it."""
        return LoadedDocument(
            doc_id=doc_id or self.doc_id,
            source=self.source,
            title=self.title or title,
            blocks=blocks,
            content_hash=content_hash or self.content_hash,
            language=language,
            metadata={**self.metadata, **(metadata or {})},
            acl=list(self.acl),
        )


class Loader(ABC):
    """Parses one file format. Implementations raise ``IngestError`` naming the file and the reason."""

    #: lower-case file name endings this loader reads, e.g. (".md", ".markdown")
    suffixes: tuple[str, ...]

    @abstractmethod
    def load(self, raw: bytes, info: SourceInfo) -> list[LoadedDocument]:
        """Documents found in ``raw`` (the file's bytes, already checked for size and emptiness)."""


def check_size_and_read(path: Path, max_file_mb: float) -> bytes:
    """The file's bytes; IngestError if it is missing, over the size limit or empty."""
    source = path.as_posix()
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise IngestError(source, f"cannot read file: {exc.strerror or exc}") from exc
    limit = int(max_file_mb * 1024 * 1024)
    if size > limit:
        raise IngestError(
            source, f"file is {size / 1024 / 1024:.1f} MB, over the limit ingest.max_file_mb={max_file_mb:g}"
        )
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise IngestError(source, f"cannot read file: {exc.strerror or exc}") from exc
    if not raw.strip():
        raise IngestError(source, "empty file")
    return raw


def decode_text(raw: bytes, source: str) -> str:
    """Decode a text file: UTF-8 or a BOM first, else the most plausible of charset-normalizer's
    guesses (GBK, Big5, Latin-1, ...). IngestError for binary content or when nothing decodes."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            try:
                return _check_text(raw.decode(encoding), source)
            except UnicodeDecodeError as exc:
                raise IngestError(
                    source, f"undecodable text: invalid {encoding} after its byte-order mark"
                ) from exc
    if b"\x00" in raw:
        raise IngestError(source, "binary file (contains NUL bytes), not text")
    try:
        return _check_text(raw.decode("utf-8"), source)
    except UnicodeDecodeError:
        pass
    best_text, best_score = None, 0.0
    for encoding in _candidate_encodings(raw):
        try:
            text = raw.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
        score = plausibility(text)
        if score > best_score:  # ties keep the earlier (charset-normalizer's preferred) guess
            best_text, best_score = text, score
    if best_text is None or best_score < _MIN_PLAUSIBILITY:
        raise IngestError(
            source, "undecodable text: not UTF-8 and no plausible encoding found (binary file?)"
        )
    return _check_text(best_text, source)


def _candidate_encodings(raw: bytes) -> list[str]:
    guesses = [match.encoding for match in from_bytes(raw[:200_000])]
    return list(dict.fromkeys([*guesses, *_FALLBACK_ENCODINGS]))


def plausibility(text: str) -> float:
    """Share of characters (0..1) that look like real English/Chinese/Western text.

    Wrong decodings of GBK/Big5/Latin-1 bytes produce rare ideographs, Hangul, Latin-Extended
    letters, control and private-use characters; right ones produce ASCII, common hanzi and Latin-1.
    """
    weights = 0.0
    counted = 0
    for char in text[:20_000]:
        if char.isspace():
            continue
        counted += 1
        weights += _char_weight(char)
    return weights / counted if counted else 0.0


def _char_weight(char: str) -> float:
    code = ord(char)
    if 0x21 <= code <= 0x7E:
        return 1.0
    if 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF:
        try:
            char.encode("gb2312")
            return 1.0  # a common simplified character
        except UnicodeEncodeError:
            return 0.7  # traditional or rare
    if 0x3000 <= code <= 0x303F or 0xFF00 <= code <= 0xFFEF or 0x2000 <= code <= 0x206F:
        return 1.0 if code != 0xFFFD else 0.0
    if 0xA0 <= code <= 0xFF or char in "€™•–—…":
        return 0.9
    category = unicodedata.category(char)
    if category in ("Cc", "Cf", "Co", "Cn", "Cs"):
        return 0.0
    if 0xAC00 <= code <= 0xD7AF or 0x3040 <= code <= 0x30FF:
        return 0.4
    return 0.3


def _check_text(text: str, source: str) -> str:
    sample = text[:20_000]
    controls = sum(1 for c in sample if unicodedata.category(c) == "Cc" and c not in "\t\n\r\f\v")
    if sample and controls / len(sample) > 0.02:
        raise IngestError(source, "binary file (control characters), not text")
    if not text.strip():
        raise IngestError(source, "empty file")
    return text.replace("\r\n", "\n").replace("\r", "\n")
