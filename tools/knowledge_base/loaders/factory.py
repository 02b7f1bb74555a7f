"""Choose a loader by file name, resolve the file's identity and ACL, and load it.

Identity: ``doc_id`` = ``<stem>-<first 12 hex of sha1(absolute posix path)>`` (stable per path; BEIR
records keep their ``_id``), ``source`` = the absolute posix path, ``content_hash`` = sha256 of the
bytes. ACL: the ``acl`` argument wins, else the sidecar ``<file>.meta.json``, else
``settings.ingest.default_acl``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.errors import IngestError, RagpilotError
from core.settings import Settings
from tools.knowledge_base.loaders.base import Loader, SourceInfo, check_size_and_read
from tools.knowledge_base.loaders.html import HtmlLoader
from tools.knowledge_base.loaders.jsonl import JsonlLoader
from tools.knowledge_base.loaders.markdown import MarkdownLoader
from tools.knowledge_base.loaders.pdf import PdfLoader
from tools.knowledge_base.loaders.table import CsvLoader, XlsxLoader
from tools.knowledge_base.loaders.text import TextLoader
from tools.knowledge_base.records import LoadedDocument, content_hash

logger = logging.getLogger(__name__)

SIDECAR_SUFFIX = ".meta.json"
_LOADER_TYPES: tuple[type[Loader], ...] = (
    MarkdownLoader,
    TextLoader,
    HtmlLoader,
    PdfLoader,
    XlsxLoader,
    CsvLoader,
    JsonlLoader,
)
# Longest first, so ".jsonl.gz" is matched before any shorter ending.
SUPPORTED_SUFFIXES: tuple[str, ...] = tuple(
    sorted({s for loader in _LOADER_TYPES for s in loader.suffixes}, key=len, reverse=True)
)
_MAX_WALKED_FILES = 1_000_000


class Sidecar(BaseModel):
    """``<file>.meta.json``: who may read the file, extra metadata, a title."""

    model_config = ConfigDict(extra="forbid")

    acl: list[str] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    title: str | None = None

    @field_validator("acl")
    @classmethod
    def _groups_not_empty(cls, groups: list[str] | None) -> list[str] | None:
        if groups is not None and (not groups or any(not g.strip() for g in groups)):
            raise ValueError("must be a non-empty list of non-empty group names")
        return groups


def suffix_of(path: Path) -> str | None:
    """The supported ending of ``path`` (lower-case), or None."""
    name = path.name.lower()
    if name.endswith(SIDECAR_SUFFIX):
        return None
    return next((s for s in SUPPORTED_SUFFIXES if name.endswith(s) and len(name) > len(s)), None)


def is_supported(path: Path | str) -> bool:
    return suffix_of(Path(path)) is not None


def iter_candidate_files(
    paths: Iterable[Path | str], problems: list[IngestError] | None = None
) -> tuple[list[Path], list[Path]]:
    """Files under ``paths`` split into (supported, unsupported), each sorted, without duplicates.

    Directories are walked recursively (symlinked directories are not followed); hidden files and
    directories and ``*.meta.json`` sidecars are skipped. A path given explicitly is taken as is.
    Raises IngestError for a path that does not exist or is not a regular file. Under a directory, what
    cannot be read as a file (a FIFO, socket or device would block or make no sense; an unreadable
    subdirectory; a broken link) is appended to ``problems``, one IngestError each, and passed over.
    """
    found: dict[Path, None] = {}
    problems = problems if problems is not None else []
    for given in paths:
        path = Path(given)
        if path.is_dir():

            def unreadable(error: OSError, top: Path = path) -> None:
                where = Path(error.filename).as_posix() if error.filename else top.as_posix()
                problems.append(IngestError(where, f"cannot read this directory: {error.strerror or error}"))

            for root, dirs, files in os.walk(path, followlinks=False, onerror=unreadable):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    if name.startswith(".") or name.lower().endswith(SIDECAR_SUFFIX):
                        continue
                    candidate = Path(root) / name
                    not_a_file = _not_a_regular_file(candidate)
                    if not_a_file:
                        problems.append(IngestError(candidate.as_posix(), not_a_file))
                        continue
                    found[candidate.absolute()] = None
                    if len(found) > _MAX_WALKED_FILES:
                        raise IngestError(
                            path.as_posix(), f"more than {_MAX_WALKED_FILES} files under this directory"
                        )
        elif path.is_file():
            if not path.name.lower().endswith(SIDECAR_SUFFIX):
                found[path.absolute()] = None
        else:
            raise IngestError(path.as_posix(), _not_a_regular_file(path) or "no such file or directory")
    supported = sorted(p for p in found if is_supported(p))
    unsupported = sorted(p for p in found if not is_supported(p))
    return supported, unsupported


def _not_a_regular_file(path: Path) -> str | None:
    """Why ``path`` cannot be read as a document (without opening it: a FIFO would block), or None."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "a broken symbolic link" if path.is_symlink() else None
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    for test, kind in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):  # fmt: skip
        if test(mode):
            return f"not a regular file but {kind}: skipped"
    return None


def file_doc_id(path: Path) -> str:
    """``<stem>-<12 hex>``: readable, and stable for as long as the file keeps its path."""
    absolute = path.absolute().as_posix()
    return f"{path.stem}-{hashlib.sha1(absolute.encode('utf-8')).hexdigest()[:12]}"


def read_sidecar(path: Path) -> Sidecar | None:
    """The sidecar of ``path`` if one exists; IngestError naming the sidecar if it is invalid."""
    sidecar_path = path.with_name(path.name + SIDECAR_SUFFIX)
    if not sidecar_path.is_file():
        return None
    source = sidecar_path.absolute().as_posix()
    try:
        return Sidecar.model_validate(json.loads(sidecar_path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IngestError(source, f"invalid sidecar: not readable JSON ({exc})") from exc
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'sidecar'}: {e['msg']}" for e in exc.errors()
        )
        raise IngestError(source, f"invalid sidecar: {problems}") from exc


def _loader_for(suffix: str, settings: Settings) -> Loader:
    for loader_type in _LOADER_TYPES:
        if suffix in loader_type.suffixes:
            if loader_type in (XlsxLoader, CsvLoader):
                return loader_type(key_columns=settings.ingest.key_columns)  # type: ignore[call-arg]
            return loader_type()
    raise AssertionError(f"no loader registered for {suffix}")  # SUPPORTED_SUFFIXES comes from the loaders


def load_file(
    path: Path,
    settings: Settings,
    acl: list[str] | None = None,
    warnings: list[str] | None = None,
) -> list[LoadedDocument]:
    """Load one file into documents (one per file; one per record for BEIR JSONL).

    Raises ``IngestError(source, reason)`` for an unsupported type, a file over
    ``settings.ingest.max_file_mb``, an empty, binary or undecodable file, a corrupt or encrypted
    PDF, an unreadable spreadsheet, an invalid sidecar, or a JSONL file with no valid record.
    Problems that cost only part of a file (bad JSONL lines, an unreadable PDF page) are appended to
    ``warnings`` when given, and logged.
    """
    path = Path(path)
    source = path.absolute().as_posix()
    suffix = suffix_of(path)
    if suffix is None:
        raise IngestError(
            source, f"unsupported file type (supported: {', '.join(sorted(SUPPORTED_SUFFIXES))})"
        )
    if acl is not None and (not acl or any(not g.strip() for g in acl)):
        raise IngestError(source, "acl must be a non-empty list of non-empty group names")
    sidecar = read_sidecar(path)
    raw = check_size_and_read(path.absolute(), settings.ingest.max_file_mb)
    info = SourceInfo(
        path=path,
        source=source,
        doc_id=file_doc_id(path),
        content_hash=content_hash(raw),
        acl=list(acl or (sidecar.acl if sidecar and sidecar.acl else settings.ingest.default_acl)),
        metadata={"file_type": suffix.lstrip(".").split(".")[0], **(sidecar.metadata if sidecar else {})},
        title=sidecar.title if sidecar and sidecar.title else None,
        max_bytes=int(settings.ingest.max_file_mb * 1024 * 1024),
    )
    try:
        documents = _loader_for(suffix, settings).load(raw, info)
    except RagpilotError:
        raise
    except Exception as exc:  # a parser failing on input we did not foresee is still bad input
        raise IngestError(source, f"could not parse {suffix} file ({type(exc).__name__}: {exc})") from exc
    for message in info.warnings:
        logger.warning(message)
    if warnings is not None:
        warnings.extend(info.warnings)
    return documents
