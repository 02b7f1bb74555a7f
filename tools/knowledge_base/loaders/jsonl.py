"""BEIR-style corpora (``.jsonl`` / ``.jsonl.gz``): one document per line with ``_id``, ``title``,
``text`` and optional ``metadata``. The record's ``_id`` is the doc_id, so benchmark qrels map directly."""

from __future__ import annotations

import gzip
import io
import json
import zlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.errors import IngestError
from tools.knowledge_base.loaders.base import Loader, SourceInfo
from tools.knowledge_base.records import Block, LoadedDocument, content_hash
from tools.knowledge_base.text_units import detect_language

# A .gz may expand far beyond the file-size limit; cap what we are willing to decompress.
_BLOCK_BYTES = 1 << 20
_MAX_WARNINGS_PER_FILE = 20


class BeirRecord(BaseModel):
    """One corpus line. Extra fields are ignored, as BEIR corpora vary."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(alias="_id", min_length=1)
    title: str = ""
    text: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("title", "text", mode="before")
    @classmethod
    def _none_as_empty(cls, value: Any) -> Any:
        return "" if value is None else value


class JsonlLoader(Loader):
    suffixes = (".jsonl.gz", ".jsonl")

    def load(self, raw: bytes, info: SourceInfo) -> list[LoadedDocument]:
        data = _decompress(raw, info) if info.source.lower().endswith(".gz") else raw
        documents: list[LoadedDocument] = []
        seen: set[str] = set()
        problems: list[str] = []
        lines = data.split(b"\n")
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = BeirRecord.model_validate(json.loads(line))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                problems.append(f"line {number}: not valid JSON ({exc})")
                continue
            except ValidationError as exc:
                fields = ", ".join(".".join(str(p) for p in e["loc"]) or "line" for e in exc.errors())
                problems.append(f"line {number}: bad record ({fields})")
                continue
            body = record.text.strip() or record.title.strip()
            if not body:
                problems.append(f"line {number}: record {record.id!r} has no text")
                continue
            if record.id in seen:
                problems.append(f"line {number}: duplicate _id {record.id!r} (first one kept)")
                continue
            seen.add(record.id)
            documents.append(
                info.document(
                    doc_id=record.id,
                    title=record.title.strip() or record.id,
                    blocks=[Block(text=body, kind="text")],
                    language=detect_language(record.title + " " + body),
                    content_hash=content_hash(record.title + "\n" + record.text),
                    metadata=record.metadata,
                )
            )
        if not documents:
            detail = f" (first problem: {problems[0]})" if problems else ""
            raise IngestError(info.source, f"no valid JSONL record with _id and text{detail}")
        for problem in problems[:_MAX_WARNINGS_PER_FILE]:
            info.warnings.append(f"{info.source}: {problem}; skipped")
        if len(problems) > _MAX_WARNINGS_PER_FILE:
            info.warnings.append(
                f"{info.source}: {len(problems) - _MAX_WARNINGS_PER_FILE} more bad lines skipped"
            )
        return documents


def _decompress(raw: bytes, info: SourceInfo) -> bytes:
    """The decompressed corpus, held to the same ``ingest.max_file_mb`` as an uncompressed file.

    Read in blocks and stopped at the limit, so a small file that inflates enormously (a "zip bomb")
    costs at most the limit in memory, never what it would inflate to.
    """
    limit = max(info.max_bytes, 1)
    blocks: list[bytes] = []
    size = 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as stream:
            while block := stream.read(_BLOCK_BYTES):
                size += len(block)
                if size > limit:
                    raise IngestError(
                        info.source,
                        f"decompresses to more than ingest.max_file_mb={limit / 1024 / 1024:g} MB (not read further)",
                    )
                blocks.append(block)
    except (OSError, EOFError, zlib.error) as exc:
        raise IngestError(info.source, f"corrupt gzip file ({exc})") from exc
    return b"".join(blocks)
