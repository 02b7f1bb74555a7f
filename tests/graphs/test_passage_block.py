"""What the models see of a passage's origin: its file name or URL, never the directory it was ingested
from (the same documents in another folder give the same prompt, hence the same greedy answer)."""

from __future__ import annotations

from graphs.rag.nodes._passages import format_passages, source_name


def _passage(source: str | None, url: str | None = None) -> dict:
    return {"n": 1, "chunk_id": "c", "doc_id": "d", "source": source, "title": "Handbook", "page": 3,
            "url": url, "origin": "web" if url else "kb", "text": "Up to 5 days carry over."}  # fmt: skip


def test_the_prompt_names_the_file_not_its_directory() -> None:
    here = format_passages([_passage("/tmp/tmpk3j2/samples/handbook.md")])
    there = format_passages([_passage("/work/clone-7/samples/handbook.md")])
    assert here == there
    assert 'source="handbook.md"' in here and "samples" not in here and 'page="3"' in here


def test_a_web_passage_keeps_its_url() -> None:
    block = format_passages([_passage(None, url="https://example.org/leave?id=2")])
    assert 'source="https://example.org/leave?id=2"' in block


def test_source_name_of_relative_and_missing_sources() -> None:
    assert source_name("docs/产品手册.md") == "产品手册.md"
    assert source_name("handbook.md") == "handbook.md"
    assert source_name(None) is None and source_name("") is None
