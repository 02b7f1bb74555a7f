"""Bad input: one IngestError naming the file and the reason, for each case the issue lists."""

from __future__ import annotations

import io
import os
import shutil
import socket
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from core.errors import IngestError
from core.settings import Settings, load_settings
from tools.knowledge_base.loaders.factory import iter_candidate_files, load_file

REPO = Path(__file__).resolve().parents[3]
SAMPLE_PDF = REPO / "samples" / "release-notes.pdf"


@pytest.fixture
def settings(ragpilot_home: Path) -> Settings:
    return Settings()


def _load_error(path: Path, settings: Settings) -> IngestError:
    with pytest.raises(IngestError) as caught:
        load_file(path, settings)
    error = caught.value
    assert error.source == path.absolute().as_posix()
    assert str(error).startswith(error.source + ": ")
    return error


def test_empty_file(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "empty.md"
    path.write_bytes(b"  \n\n ")
    assert _load_error(path, settings).reason == "empty file"


def test_binary_file_with_a_text_suffix(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    assert "binary file" in _load_error(path, settings).reason


def test_undecodable_bytes_without_nul(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "noise.txt"
    path.write_bytes(bytes(b if b else 1 for b in os.urandom(4000)))
    reason = _load_error(path, settings).reason
    assert "undecodable" in reason or "binary" in reason


def test_file_over_the_size_limit(tmp_path: Path, ragpilot_home: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_text("A sentence of text. " * 200)  # 4 KB
    error = _load_error(path, Settings(ingest={"max_file_mb": 0.001}))
    assert "over the limit ingest.max_file_mb=0.001" in error.reason


def test_corrupt_pdf(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n" + os.urandom(300))
    assert "corrupt PDF" in _load_error(path, settings).reason


def test_truncated_pdf(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "truncated.pdf"
    path.write_bytes(SAMPLE_PDF.read_bytes()[:700])
    reason = _load_error(path, settings).reason
    assert "corrupt PDF" in reason or "no text layer" in reason


def test_encrypted_pdf(settings: Settings, tmp_path: Path) -> None:
    writer = PdfWriter(clone_from=PdfReader(SAMPLE_PDF))
    writer.encrypt(user_password="s3cret", owner_password="owner")
    path = tmp_path / "locked.pdf"
    with path.open("wb") as handle:
        writer.write(handle)
    assert _load_error(path, settings).reason == "encrypted PDF (password required)"


def test_owner_password_only_pdf_is_readable(settings: Settings, tmp_path: Path) -> None:
    # Encrypted with an empty user password: every viewer opens it, so we do too.
    writer = PdfWriter(clone_from=PdfReader(SAMPLE_PDF))
    writer.encrypt(user_password="", owner_password="owner")
    path = tmp_path / "restricted.pdf"
    with path.open("wb") as handle:
        writer.write(handle)
    doc = load_file(path, settings)[0]
    assert any("Obstacle-aware rerouting" in b.text for b in doc.blocks)


def test_pdf_without_text_layer(settings: Settings, tmp_path: Path) -> None:
    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    writer.add_blank_page(width=595, height=842)
    buffer = io.BytesIO()
    writer.write(buffer)
    path = tmp_path / "scan.pdf"
    path.write_bytes(buffer.getvalue())
    assert _load_error(path, settings).reason == "no text layer (scanned PDF?)"


def test_unreadable_spreadsheet(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "orders.xlsx"
    path.write_bytes(b"PK\x03\x04 this is not really a zip archive" * 10)
    assert "unreadable spreadsheet" in _load_error(path, settings).reason


def test_spreadsheet_without_data_rows(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "header-only.csv"
    path.write_text("OrderID,Customer\n")
    assert _load_error(path, settings).reason == "spreadsheet has no data rows"


def test_jsonl_where_every_line_is_bad(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text('not json\n{"title": "no id", "text": "x"}\n{"_id": "a", "text": ""}\n')
    reason = _load_error(path, settings).reason
    assert reason.startswith("no valid JSONL record") and "line 1" in reason


def test_corrupt_gzip(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00" + os.urandom(200))
    assert "corrupt gzip" in _load_error(path, settings).reason


def test_invalid_sidecar_names_the_sidecar(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "handbook.md"
    shutil.copyfile(REPO / "samples" / "handbook.md", path)
    sidecar = tmp_path / "handbook.md.meta.json"
    sidecar.write_text('{"acl": [], "colour": "red"}')
    with pytest.raises(IngestError) as caught:
        load_file(path, settings)
    assert caught.value.source == sidecar.absolute().as_posix()
    assert "acl" in caught.value.reason and "colour" in caught.value.reason


def test_empty_acl_argument_is_refused(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("Text.")
    with pytest.raises(IngestError, match="acl must be a non-empty list"):
        load_file(path, settings, acl=[])


def test_unsupported_type(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "photo.png"
    path.write_bytes(b"\x89PNG")
    assert _load_error(path, settings).reason.startswith("unsupported file type")


def test_missing_path_in_candidate_listing(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no such file or directory"):
        iter_candidate_files([tmp_path / "nowhere"])


def test_one_bad_file_does_not_affect_the_next(settings: Settings, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\x00\x01\x02")
    good = tmp_path / "good.txt"
    good.write_text("Still loads.")
    with pytest.raises(IngestError):
        load_file(bad, settings)
    assert load_file(good, settings)[0].blocks[0].text == "Still loads."


def test_a_fifo_under_a_directory_is_reported_and_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")  # opening it for reading would block forever
    (tmp_path / "good.md").write_text("# Good\n\nStill listed.")
    problems: list[IngestError] = []

    supported, _ = iter_candidate_files([tmp_path], problems)

    assert [p.name for p in supported] == ["good.md"]
    assert [(Path(p.source).name, p.reason) for p in problems] == [
        ("pipe.md", "not a regular file but a FIFO (named pipe): skipped")
    ]


def test_a_fifo_given_directly_is_named_as_a_fifo_not_as_missing(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.txt")

    with pytest.raises(IngestError, match="FIFO"):
        iter_candidate_files([tmp_path / "pipe.txt"])


def test_a_broken_symlink_and_a_socket_are_reported(tmp_path: Path) -> None:
    (tmp_path / "dangling.md").symlink_to(tmp_path / "gone.md")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "s.sock"))
        problems: list[IngestError] = []
        iter_candidate_files([tmp_path], problems)
    reasons = {Path(p.source).name: p.reason for p in problems}
    assert reasons == {
        "dangling.md": "a broken symbolic link",
        "s.sock": "not a regular file but a socket: skipped",
    }


def test_a_gzip_bomb_is_stopped_at_the_size_limit_while_it_decompresses(tmp_path: Path) -> None:
    import gzip
    import resource

    settings = load_settings(home=tmp_path / "home", ingest={"max_file_mb": 1})
    bomb = tmp_path / "bomb.jsonl.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as out:  # 300 MB of spaces, written 1 MB at a time
        for _ in range(300):
            out.write(b" " * (1024 * 1024))
    assert bomb.stat().st_size < 1024 * 1024  # passes the compressed-size check
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    with pytest.raises(IngestError, match=r"decompresses to more than ingest.max_file_mb=1 MB"):
        load_file(bomb, settings)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before
    assert grown_kib < 64 * 1024  # megabytes, not the 300 MB it inflates to


def test_an_xlsx_formula_column_without_saved_values_is_named_in_a_warning(
    settings: Settings, tmp_path: Path
) -> None:
    from openpyxl import Workbook

    workbook = Workbook()
    sheet = workbook.active
    sheet.title = "Orders"
    sheet.append(["OrderID", "Qty", "Total"])
    sheet.append(["A-1", 2, "=B2*10"])  # openpyxl writes formulas without their results, as scripts do
    sheet.append(["A-2", 3, "=B3*10"])
    path = tmp_path / "orders.xlsx"
    workbook.save(path)
    warnings: list[str] = []

    (document,) = load_file(path, settings, warnings=warnings)

    assert warnings == [
        f"{path.as_posix()}: sheet 'Orders', column 'Total' holds formulas whose results were never saved, "
        "so it was indexed empty; open and save the file in a spreadsheet program to store them"
    ]
    assert "A-1" in " ".join(b.text for b in document.blocks)  # the rest of the sheet is indexed


def test_symlink_loops_are_reported_and_a_link_to_a_parent_directory_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.md").write_text("# A\n\nA document with enough text to index.\n")
    (root / "sub" / "up").symlink_to("..")  # a directory cycle: not followed
    (root / "self").symlink_to("self")
    (root / "ping").symlink_to("pong")
    (root / "pong").symlink_to("ping")
    problems: list[IngestError] = []
    supported, _ = iter_candidate_files([root], problems)
    assert supported == [(root / "sub" / "a.md").absolute()]
    assert sorted(Path(p.source).name for p in problems) == ["ping", "pong", "self"]
    assert all("Too many levels of symbolic links" in p.reason for p in problems)
