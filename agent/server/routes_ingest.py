"""``POST /ingest``: index uploaded files, readable by the caller's groups (never wider)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, HTTPException, UploadFile, status

from agent.server.identity import Caller
from agent.server.runs import CallerDep, HolderDep, ServerBusy, busy_error, http_error
from agent.server.schemas import IngestedFile, IngestOut
from core.errors import RagpilotError

router = APIRouter(tags=["ingest"])

_SAFE_FILENAME = re.compile(r"[^A-Za-z0-9._\-\u4e00-\u9fff]+")


@router.post("/ingest", response_model=IngestOut)
def ingest_files(
    who: CallerDep,
    holder: HolderDep,
    files: Annotated[list[UploadFile], File(description="documents to index (any supported format)")],
    acl: Annotated[
        str | None,
        Form(description="comma-separated groups allowed to read these files; default: all the caller's"),
    ] = None,
) -> IngestOut:
    """Index uploaded files, readable by the caller's groups (or the subset named in ``acl``).

    Files are kept under ``<home>/uploads/<owner>/``; uploading a file of the same name again
    replaces its previous version in the index.
    """
    from tools.knowledge_base.ingest import ingest
    from tools.knowledge_base.loaders.factory import is_supported

    groups = _ingest_acl(who, acl)
    settings = holder.settings
    upload_dir = settings.home / "uploads" / who.owner
    upload_dir.mkdir(parents=True, exist_ok=True)
    saved: dict[str, Path] = {}  # one entry per distinct file name
    results: list[IngestedFile] = []
    limit = int(settings.ingest.max_file_mb * 1024 * 1024)
    for upload in files:
        name = _safe_filename(upload.filename or "upload")
        path = upload_dir / name
        if not is_supported(path):
            results.append(IngestedFile(filename=name, status="failed", error="unsupported file type"))
            continue
        data = upload.file.read(limit + 1)
        if len(data) > limit:
            results.append(
                IngestedFile(
                    filename=name,
                    status="failed",
                    error=f"larger than ingest.max_file_mb={settings.ingest.max_file_mb}",
                )
            )
            continue
        path.write_bytes(data)
        saved[path.absolute().as_posix()] = path
    if saved:
        try:
            knowledge_base = holder.get().resources.knowledge_base
            with holder.run_slot():
                # One run per file, so each file gets its own status.
                for path in saved.values():
                    report = ingest([path], settings, acl=groups, progress=False, kb=knowledge_base)
                    results.append(_file_result(path.name, report))
        except ServerBusy:
            raise busy_error() from None
        except RagpilotError as exc:
            raise http_error(exc) from exc
    return IngestOut(acl=groups, files=results)


def _file_result(name: str, report: Any) -> IngestedFile:
    if report.skipped:
        return IngestedFile(filename=name, status="failed", error=report.skipped[0].reason)
    if report.added or report.updated:
        return IngestedFile(filename=name, status="ingested", chunks=report.chunks_written)
    return IngestedFile(filename=name, status="unchanged")


def _safe_filename(name: str) -> str:
    """The upload's base name with anything but letters, digits, CJK, '.', '-', '_' replaced."""
    base = Path(name.replace("\\", "/")).name.strip() or "upload"
    cleaned = _SAFE_FILENAME.sub("_", base).lstrip(".")
    return cleaned[:128] or "upload"


def _ingest_acl(who: Caller, acl: str | None) -> list[str]:
    """The groups a caller's upload is readable by: its own, or a subset of them (never wider)."""
    if acl is None:
        return list(who.groups)
    wanted = [g.strip() for g in acl.split(",") if g.strip()]
    if not wanted:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            f"acl names no group ({acl!r}): name one or more of the caller's groups, or leave it out",
        )
    foreign = [g for g in wanted if g not in who.groups]
    if foreign:
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, f"acl names groups the caller is not in: {', '.join(foreign)}"
        )
    return wanted
