"""Files that ragpilot derives once into the per-machine model cache: locks, hashes and trust markers.

A derived file (the assembled GGUF, the converted e5 encoder) is written beside its target, renamed into
place, and vouched for by a sidecar ``<name>.sha256`` marker holding its hash and size, so later starts
trust it without re-reading it; ``ragpilot doctor`` re-hashes. An ``fcntl`` lock keeps concurrent
processes from deriving the same file twice or reading a half-written one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

_READ_BLOCK_BYTES = 8 * 1024 * 1024


def marker_path(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def marker_vouches_for(target: Path, expected_sha256: str | None = None) -> bool:
    """True when the marker records ``expected_sha256`` (any hash, if None) and the file's recorded size."""
    try:
        recorded_sha, recorded_size = marker_path(target).read_text(encoding="ascii").split()
        matches = expected_sha256 is None or recorded_sha == expected_sha256
        return matches and target.stat().st_size == int(recorded_size)
    except (OSError, ValueError):
        return False


def recorded_sha256(target: Path) -> str | None:
    try:
        return marker_path(target).read_text(encoding="ascii").split()[0]
    except (OSError, IndexError):
        return None


def write_marker(target: Path, sha256: str) -> None:
    marker = marker_path(target)
    tmp = marker.with_name(marker.name + ".tmp")
    tmp.write_text(f"{sha256} {target.stat().st_size}\n", encoding="ascii")
    os.replace(tmp, marker)


@contextlib.contextmanager
def exclusive_lock(lock_path: Path) -> Iterator[None]:
    """Hold an ``fcntl`` lock on ``lock_path`` (created if absent): one process at a time, across processes."""
    with open(lock_path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def sha256_of_file(path: Path) -> str:
    """The file's sha256, read in blocks (about 2 s for the 1.1 GB GGUF)."""
    digest = hashlib.sha256()
    with open(path, "rb") as src:
        while block := src.read(_READ_BLOCK_BYTES):
            digest.update(block)
    return digest.hexdigest()
