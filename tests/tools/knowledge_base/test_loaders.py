"""Every loader on real small files: structure kept (headings, pages, rows, keys), identity and ACL."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from core.settings import Settings
from tools.knowledge_base.loaders.factory import (
    SUPPORTED_SUFFIXES,
    file_doc_id,
    is_supported,
    iter_candidate_files,
    load_file,
)

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "samples"
DATA = REPO / "tests" / "data"


@pytest.fixture
def settings(ragpilot_home: Path) -> Settings:
    return Settings()


def _copy(name: str, source_dir: Path, target_dir: Path) -> Path:
    target = target_dir / name
    shutil.copyfile(source_dir / name, target)
    return target


# --- identity -----------------------------------------------------------------------------------


def test_file_identity_is_stable_per_path_and_hashes_the_bytes(settings: Settings, tmp_path: Path) -> None:
    path = _copy("handbook.md", SAMPLES, tmp_path)
    first = load_file(path, settings)[0]
    again = load_file(path, settings)[0]
    absolute = path.absolute().as_posix()
    assert first.doc_id == again.doc_id == f"handbook-{hashlib.sha1(absolute.encode()).hexdigest()[:12]}"
    assert first.source == absolute
    assert first.content_hash == hashlib.sha256(path.read_bytes()).hexdigest()
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    assert file_doc_id(moved / "handbook.md") != first.doc_id


def test_supported_suffixes() -> None:
    assert {".md", ".txt", ".html", ".pdf", ".xlsx", ".csv", ".jsonl", ".jsonl.gz"} <= set(SUPPORTED_SUFFIXES)
    assert is_supported("notes.MD") and is_supported("corpus.jsonl.gz")
    assert not is_supported("image.png") and not is_supported("notes.md.meta.json")


def test_iter_candidate_files_recurses_and_skips_hidden_and_sidecars(tmp_path: Path) -> None:
    (tmp_path / "docs" / "deep").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    for name in [
        "docs/a.md",
        "docs/a.md.meta.json",
        "docs/deep/b.pdf",
        "docs/logo.png",
        "docs/.hidden.md",
        ".git/x.md",
    ]:
        (tmp_path / name).write_text("x")
    supported, unsupported = iter_candidate_files([tmp_path])
    assert [p.relative_to(tmp_path).as_posix() for p in supported] == ["docs/a.md", "docs/deep/b.pdf"]
    assert [p.relative_to(tmp_path).as_posix() for p in unsupported] == ["docs/logo.png"]


# --- ACL and sidecars -----------------------------------------------------------------------------


def test_acl_defaults_to_the_setting(tmp_path: Path, ragpilot_home: Path) -> None:
    path = _copy("产品手册.md", SAMPLES, tmp_path)
    doc = load_file(path, Settings(ingest={"default_acl": ["staff"]}))[0]
    assert doc.acl == ["staff"]


def test_sidecar_gives_acl_metadata_and_title(settings: Settings, tmp_path: Path) -> None:
    path = _copy("board-minutes.md", SAMPLES, tmp_path)
    path.with_name(path.name + ".meta.json").write_text(
        json.dumps({"acl": ["management"], "metadata": {"year": 2025}, "title": "Board minutes, March"})
    )
    doc = load_file(path, settings)[0]
    assert doc.acl == ["management"]
    assert doc.metadata["year"] == 2025 and doc.metadata["file_type"] == "md"
    assert doc.title == "Board minutes, March"


def test_acl_argument_wins_over_sidecar(settings: Settings, tmp_path: Path) -> None:
    path = _copy("board-minutes.md", SAMPLES, tmp_path)
    path.with_name(path.name + ".meta.json").write_text(json.dumps({"acl": ["management"]}))
    assert load_file(path, settings, acl=["auditors"])[0].acl == ["auditors"]


def test_bundled_sample_sidecar_restricts_board_minutes(settings: Settings) -> None:
    assert load_file(SAMPLES / "board-minutes.md", settings)[0].acl == ["management"]


# --- Markdown --------------------------------------------------------------------------------------


def test_markdown_headings_code_and_front_matter_title(settings: Settings) -> None:
    doc = load_file(SAMPLES / "handbook.md", settings)[0]
    assert doc.title == "Northwind Robotics Employee Handbook"  # from the front matter
    assert doc.language == "en"
    assert doc.metadata["owner"] == "People Team"
    annual = next(b for b in doc.blocks if "25 days of paid annual leave" in b.text)
    assert annual.heading_path == ["Northwind Robotics Employee Handbook", "Leave policy", "Annual leave"]
    code = [b for b in doc.blocks if b.kind == "code"]
    assert len(code) == 1
    assert code[0].text.startswith("```bash") and code[0].text.endswith("```")
    assert code[0].heading_path[-1] == "Passwords and devices"


def test_markdown_setext_headings_and_fenced_hashes(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text(
        "Robot Notes\n===========\n\nIntro text.\n\nSetup\n-----\n\n~~~\n# a comment, not a heading\n~~~\n\n"
        "## Usage ##\nRun it.\n"
    )
    doc = load_file(path, settings)[0]
    assert doc.title == "Robot Notes"  # first H1, no front matter
    assert [(b.kind, b.heading_path) for b in doc.blocks] == [
        ("text", ["Robot Notes"]),
        ("code", ["Robot Notes", "Setup"]),
        ("text", ["Robot Notes", "Usage"]),
    ]


def test_chinese_markdown(settings: Settings) -> None:
    doc = load_file(SAMPLES / "产品手册.md", settings)[0]
    assert doc.title == "北风机器人产品手册"
    assert doc.language == "zh"
    assert doc.doc_id.startswith("产品手册-")
    specs = next(b for b in doc.blocks if "200 公斤" in b.text)
    assert specs.heading_path == ["北风机器人产品手册", "HX-200 仓储搬运机器人", "技术参数"]


def test_markdown_title_falls_back_to_file_stem(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "plain-notes.md"
    path.write_text("Just a paragraph.\n\n## A section\nMore.\n")
    assert load_file(path, settings)[0].title == "plain-notes"


# --- plain text and encodings ------------------------------------------------------------------------


def test_gbk_encoded_text_is_detected_and_decoded(settings: Settings, tmp_path: Path) -> None:
    text = "北风机器人公司员工须知。员工每年享有二十五天带薪年假，病假需要医生证明。"
    path = tmp_path / "须知.txt"
    path.write_bytes(text.encode("gbk"))
    doc = load_file(path, settings)[0]
    assert doc.blocks[0].text == text
    assert doc.language == "zh" and doc.title == "须知"


@pytest.mark.parametrize(
    ("encoding", "text"),
    [
        ("big5", "北風機器人公司員工手冊。員工每年享有二十五天帶薪年假。"),
        ("latin-1", "Les employés ont droit à 25 jours de congé payé par année civile, à partir de janvier."),
        ("utf-16", "UTF-16 with a byte-order mark: 年假 25 天."),
    ],
)
def test_other_encodings_decode_correctly(
    settings: Settings, tmp_path: Path, encoding: str, text: str
) -> None:
    path = tmp_path / "note.txt"
    path.write_bytes(text.encode(encoding))
    assert load_file(path, settings)[0].blocks[0].text == text


# --- HTML -----------------------------------------------------------------------------------------------


def test_html_visible_text_headings_and_title(settings: Settings) -> None:
    doc = load_file(DATA / "service-page.html", settings)[0]
    assert doc.title == "Northwind Service Plans"
    everything = "\n".join(b.text for b in doc.blocks)
    assert "tracking" not in everything and "alert" not in everything and "Menu text" not in everything
    by_text = {b.text.split("\n")[0]: b for b in doc.blocks}
    assert by_text["Remote support answers within 4 hours on working days."].heading_path == [
        "Service plans",
        "Basic plan",
    ]
    pricing = next(b for b in doc.blocks if "HX-200 | 3,900 EUR" in b.text)
    assert pricing.heading_path == ["Service plans", "Premium plan", "Premium pricing"]
    assert any(b.kind == "code" and b.text.startswith("curl ") for b in doc.blocks)
    premium = next(b for b in doc.blocks if b.heading_path[-1] == "Premium plan")
    assert "Spare parts included\n\nYearly maintenance visit" in premium.text


# --- PDF ----------------------------------------------------------------------------------------------------


def test_pdf_pages_and_outline_headings(settings: Settings) -> None:
    doc = load_file(SAMPLES / "release-notes.pdf", settings)[0]
    assert doc.title == "Northwind Robotics Release Notes, Spring 2025"
    assert doc.metadata["pages"] == 3
    assert {b.page for b in doc.blocks} == {1, 2, 3}
    rerouting = next(b for b in doc.blocks if "Obstacle-aware rerouting" in b.text)
    assert rerouting.heading_path == ["1 HX-200 Firmware 4.2", "1.1 New features"]
    assert rerouting.page == 1
    known = next(b for b in doc.blocks if "thermal camera may drift" in b.text)
    assert known.heading_path == ["4 Known issues"] and known.page == 3
    # The running footer ("... page N") is not content.
    assert not any("Release Notes Spring 2025 - page" in b.text for b in doc.blocks)


def test_pdf_headings_recovered_from_layout_without_outline(settings: Settings) -> None:
    doc = load_file(DATA / "layout-headings.pdf", settings)[0]
    assert [(b.page, b.heading_path) for b in doc.blocks] == [
        (1, ["Warehouse Pilot Report"]),
        (1, ["1 Results"]),
        (1, ["1 Results", "1.1 Battery Use"]),
        (2, ["2 Lessons Learned"]),
    ]
    assert doc.blocks[1].text.startswith("Pick rates rose by 18 percent")


# --- spreadsheets --------------------------------------------------------------------------------------------


def test_xlsx_rows_keys_and_sheet_summaries(settings: Settings) -> None:
    doc = load_file(SAMPLES / "orders.xlsx", settings)[0]
    assert doc.metadata["sheets"] == ["Orders", "Customers"]
    summaries = [b for b in doc.blocks if b.kind == "table_summary"]
    assert [s.sheet for s in summaries] == ["Orders", "Customers"]
    assert summaries[0].text.startswith("Sheet Orders: 15 rows; columns: OrderID, OrderDate, CustomerID")
    orders = [b for b in doc.blocks if b.kind == "table_row" and b.sheet == "Orders"]
    customers = [b for b in doc.blocks if b.kind == "table_row" and b.sheet == "Customers"]
    assert len(orders) == 15 and len(customers) == 6
    seventh = orders[6]
    assert seventh.row == 7
    assert seventh.keys == {"OrderID": "NW-1007", "CustomerID": "C-101"}
    assert "OrderDate: 2025-02-27" in seventh.text and "Product: HX-200" in seventh.text
    assert "Quantity: 4" in seventh.text  # an integer, not "4.0"
    assert customers[0].keys == {"CustomerID": "C-101"}


def test_configured_key_columns_win_over_detection(tmp_path: Path, ragpilot_home: Path) -> None:
    doc = load_file(SAMPLES / "orders.xlsx", Settings(ingest={"key_columns": ["Product"]}))[0]
    rows = [b for b in doc.blocks if b.kind == "table_row"]
    assert rows[0].keys == {"Product": "HX-200"}
    # A sheet without the configured column falls back to detection.
    assert next(b for b in rows if b.sheet == "Customers").keys == {"CustomerID": "C-101"}


def test_csv_with_sniffed_delimiter_and_unique_column_key(settings: Settings) -> None:
    doc = load_file(DATA / "spare-parts.csv", settings)[0]
    rows = [b for b in doc.blocks if b.kind == "table_row"]
    assert len(rows) == 5
    assert rows[3].sheet == "spare-parts" and rows[3].row == 4
    # No column is named like an id, so the first all-unique column becomes the key.
    assert rows[3].keys == {"Part Number": "P-1004"}
    assert (
        rows[3].text
        == "Part Number: P-1004\nDescription: Thermal camera lens\nFits: S3\nStock: 3\nPrice EUR: 640"
    )


# --- BEIR JSONL ------------------------------------------------------------------------------------------------


def test_beir_jsonl_one_document_per_record_with_warnings(settings: Settings) -> None:
    warnings: list[str] = []
    docs = load_file(DATA / "mini-corpus.jsonl", settings, warnings=warnings)
    assert [d.doc_id for d in docs] == ["d1", "d2", "3"]
    first = docs[0]
    assert first.title == "Annual leave at Northwind"
    assert first.blocks[0].text == "Employees get 25 days of paid annual leave per year."
    assert first.metadata["year"] == 2025
    assert (
        first.content_hash
        == hashlib.sha256(
            ("Annual leave at Northwind\n" + "Employees get 25 days of paid annual leave per year.").encode()
        ).hexdigest()
    )
    assert docs[1].title == "d2"  # no title: the id stands in
    assert len(warnings) == 2
    assert "line 3" in warnings[0] and "not valid JSON" in warnings[0]
    assert "line 4" in warnings[1] and "_id" in warnings[1]


def test_beir_jsonl_gz(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl.gz"
    path.write_bytes(gzip.compress((DATA / "mini-corpus.jsonl").read_bytes()))
    docs = load_file(path, settings)
    assert [d.doc_id for d in docs] == ["d1", "d2", "3"]
    assert all(d.source == path.absolute().as_posix() for d in docs)
    assert docs[0].metadata["file_type"] == "jsonl"


# --- the bundled sample set --------------------------------------------------------------------------------


def test_sample_questions_point_at_loadable_files_holding_their_facts(settings: Settings) -> None:
    questions = json.loads((DATA / "sample_questions.json").read_text(encoding="utf-8"))["questions"]
    supported, _ = iter_candidate_files([SAMPLES])
    texts = {p.name: "\n".join(b.text for d in load_file(p, settings) for b in d.blocks) for p in supported}
    assert {s for q in questions for s in q["sources"]} == set(texts)  # every sample file is used
    # The facts each bridge question chains together are where the question says.
    assert (
        "OrderID: NW-1007\nOrderDate: 2025-02-27\nCustomerID: C-101\nProduct: HX-200" in texts["orders.xlsx"]
    )
    assert "HX-200 的额定载重为 200 公斤" in texts["产品手册.md"]
    assert "CustomerID: C-104\nCompany: Atlas Data Centers" in texts["orders.xlsx"]
    assert "AccountManager: Ana Ribeiro" in texts["orders.xlsx"]
    assert "sales budget of the customer's account manager" in texts["handbook.md"]
    assert "标准保修期为 24 个月" in texts[
        "产品手册.md"
    ] and "S3 firmware 1.6, planned for June 2025" in " ".join(
        texts["release-notes.pdf"].split()  # PDF lines wrap anywhere
    )
    assert "25 days of paid annual leave" in texts["handbook.md"]
    assert "dental" not in "\n".join(texts.values()).lower()
