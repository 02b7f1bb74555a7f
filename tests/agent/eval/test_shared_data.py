"""The benchmark data is found beside the repository or where RAGPILOT_SHARED_DATA points; when it is
missing, one error says where it was looked for and how to point elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.eval.shared_data import (
    BESIDE_THE_REPOSITORY,
    SHARED_DATA_VARIABLE,
    require_shared_data,
    shared_data_dir,
)
from core.errors import ConfigError


def test_without_the_variable_the_data_sits_beside_the_repository(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(SHARED_DATA_VARIABLE, raising=False)

    assert shared_data_dir() == BESIDE_THE_REPOSITORY
    assert BESIDE_THE_REPOSITORY.parts[-2:] == ("shared", "data")


def test_the_variable_points_at_a_folder_elsewhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv(SHARED_DATA_VARIABLE, str(tmp_path))

    assert require_shared_data() == tmp_path


def test_a_missing_folder_is_one_error_naming_it_and_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    missing = tmp_path / "nowhere"
    monkeypatch.setenv(SHARED_DATA_VARIABLE, str(missing))

    with pytest.raises(ConfigError) as raised:
        require_shared_data()

    assert str(missing) in str(raised.value) and SHARED_DATA_VARIABLE in str(raised.value)
