"""Table rows stay one chunk each whatever the method; every document gets exactly one summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.settings import ChunkingSettings, Settings
from tools.knowledge_base.chunkers.factory import chunk_document
from tools.knowledge_base.loaders.factory import load_file

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "samples"
DATA = REPO / "tests" / "data"
METHODS = ["recursive", "sentence_window", "hierarchical"]


def whitespace_tokens(text: str) -> int:
    return len(text.split())


@pytest.fixture
def settings(ragpilot_home: Path) -> Settings:
    return Settings()


@pytest.mark.parametrize("method", METHODS)
def test_each_row_becomes_one_keyed_chunk(method: str, settings: Settings) -> None:
    doc = load_file(SAMPLES / "orders.xlsx", settings)[0]
    chunks = chunk_document(
        doc, ChunkingSettings(method=method, chunk_tokens=16, overlap_tokens=0), whitespace_tokens
    )
    rows = [c for c in chunks if c.kind == "row"]
    assert len(rows) == 15 + 6
    order = next(c for c in rows if c.keys.get("OrderID") == "NW-1007")
    assert order.chunk_id == f"{doc.doc_id}::row::Orders::7"
    assert (order.sheet, order.row) == ("Orders", 7)
    assert order.keys == {"OrderID": "NW-1007", "CustomerID": "C-101"}
    assert order.text.startswith("OrderID: NW-1007\n")  # whole, although longer than 16 tokens
    assert order.chunker == method and order.searchable and order.level == 0
    # Neighbours are the rows above and below in the same sheet.
    assert (
        order.prev_id == f"{doc.doc_id}::row::Orders::6" and order.next_id == f"{doc.doc_id}::row::Orders::8"
    )
    last_order = next(c for c in rows if c.row == 15 and c.sheet == "Orders")
    assert last_order.next_id is None
    first_customer = next(c for c in rows if c.row == 1 and c.sheet == "Customers")
    assert first_customer.prev_id is None


@pytest.mark.parametrize("method", METHODS)
def test_sheet_summaries_are_searchable_chunks(method: str, settings: Settings) -> None:
    doc = load_file(SAMPLES / "orders.xlsx", settings)[0]
    chunks = chunk_document(doc, ChunkingSettings(method=method), whitespace_tokens)
    sheets = [c for c in chunks if c.kind == "sheet_summary"]
    assert [c.chunk_id for c in sheets] == [f"{doc.doc_id}::sheet::Orders", f"{doc.doc_id}::sheet::Customers"]
    assert all(c.searchable for c in sheets)
    assert "15 rows" in sheets[0].text and "Key columns: OrderID, CustomerID" in sheets[0].text


def test_positions_follow_document_order_across_sheets(settings: Settings) -> None:
    doc = load_file(SAMPLES / "orders.xlsx", settings)[0]
    chunks = [c for c in chunk_document(doc, ChunkingSettings(), whitespace_tokens) if c.kind != "summary"]
    assert [c.position for c in chunks] == list(range(len(chunks)))
    assert [c.kind for c in chunks[:2]] == ["sheet_summary", "row"]
    assert chunks[16].kind == "sheet_summary" and chunks[16].sheet == "Customers"


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sample", ["handbook.md", "产品手册.md", "release-notes.pdf", "orders.xlsx"])
def test_exactly_one_summary_record_per_document(method: str, sample: str, settings: Settings) -> None:
    doc = load_file(SAMPLES / sample, settings)[0]
    chunks = chunk_document(doc, ChunkingSettings(method=method), whitespace_tokens)
    summaries = [c for c in chunks if c.kind == "summary"]
    assert len(summaries) == 1 and chunks[-1] is summaries[0]
    summary = summaries[0]
    assert summary.chunk_id == f"{doc.doc_id}::summary"
    assert not summary.searchable
    assert summary.content_hash == doc.content_hash  # the document's hash, for incremental ingest
    assert summary.metadata["n_chunks"] == len(chunks) - 1
    assert summary.acl == doc.acl and summary.chunker == method
    assert summary.text.startswith(doc.title)


def test_text_summary_lists_headings_and_first_sentences(settings: Settings) -> None:
    doc = load_file(SAMPLES / "handbook.md", settings)[0]
    summary = chunk_document(doc, ChunkingSettings(), whitespace_tokens)[-1]
    assert "Sections: Leave policy; Annual leave; Sick leave" in summary.text
    assert "Northwind Robotics designs warehouse and inspection robots" in summary.text
    assert whitespace_tokens(summary.text) <= 130


def test_table_summary_gives_columns_and_row_counts(settings: Settings) -> None:
    doc = load_file(SAMPLES / "orders.xlsx", settings)[0]
    summary = chunk_document(doc, ChunkingSettings(), whitespace_tokens)[-1]
    assert summary.text.split("\n") == [
        "orders",
        "Sheet Orders: 15 rows; columns: OrderID, OrderDate, CustomerID, Product, Quantity, UnitPriceEUR, Status.",
        "Sheet Customers: 6 rows; columns: CustomerID, Company, Country, City, AccountManager, Segment.",
    ]


def test_jsonl_records_chunk_independently(settings: Settings) -> None:
    docs = load_file(DATA / "mini-corpus.jsonl", settings)
    chunks = [chunk_document(d, ChunkingSettings(), whitespace_tokens) for d in docs]
    assert [[c.chunk_id for c in cs] for cs in chunks][0] == ["d1::recursive::0", "d1::summary"]
    assert chunks[0][0].title == "Annual leave at Northwind"
    assert chunks[0][0].metadata["year"] == 2025
