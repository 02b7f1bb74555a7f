"""Where the public benchmark sets live: ``../shared/data`` beside the repository, or wherever
``RAGPILOT_SHARED_DATA`` points (a clone elsewhere, a CI cache). The sets are never copied into the repo."""

from __future__ import annotations

import os
from pathlib import Path

from core.errors import ConfigError

SHARED_DATA_VARIABLE = "RAGPILOT_SHARED_DATA"
BESIDE_THE_REPOSITORY = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def shared_data_dir() -> Path:
    """The benchmark data folder, as configured; it may not exist (``require_shared_data`` says so)."""
    configured = os.environ.get(SHARED_DATA_VARIABLE)
    return Path(configured).expanduser() if configured else BESIDE_THE_REPOSITORY


def require_shared_data() -> Path:
    """The benchmark data folder, or one ConfigError naming where it was looked for and how to point
    elsewhere."""
    folder = shared_data_dir()
    if not folder.is_dir():
        raise ConfigError(
            f"the benchmark data folder {folder} does not exist: put the shared data beside the "
            f"repository (../shared/data) or set {SHARED_DATA_VARIABLE} to its path"
        )
    return folder
