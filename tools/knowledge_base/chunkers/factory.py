"""``chunk_document``: cut one loaded document into Chunk records with the configured method.

Whatever the method, table rows become one ``row`` chunk each (never merged), sheet summaries become
``sheet_summary`` chunks, and every document gets exactly one ``summary`` record last.
"""

from __future__ import annotations

from collections.abc import Callable

from core.settings import ChunkingSettings
from tools.knowledge_base.chunkers._units import TokenCounter, split_into_units
from tools.knowledge_base.chunkers.base import Chunker, finish_chunks
from tools.knowledge_base.chunkers.hierarchical import HierarchicalChunker
from tools.knowledge_base.chunkers.recursive import RecursiveChunker
from tools.knowledge_base.chunkers.sentence_window import SentenceWindowChunker
from tools.knowledge_base.records import Chunk, LoadedDocument

CHUNKERS: dict[str, type[Chunker]] = {
    RecursiveChunker.name: RecursiveChunker,
    SentenceWindowChunker.name: SentenceWindowChunker,
    HierarchicalChunker.name: HierarchicalChunker,
}


def chunk_document(
    doc: LoadedDocument, chunking: ChunkingSettings, count_tokens: Callable[[str], int]
) -> list[Chunk]:
    """Chunks of ``doc`` in document order (parents before their children), then its summary.

    ``count_tokens`` is the embedder's tokenizer (``Embedder.count_tokens``); every searchable text
    chunk counts at most ``chunking.chunk_tokens`` with it (the smallest ``hierarchy_tokens`` size
    for the hierarchical method). Table rows are kept whole whatever their size.
    """
    counter = TokenCounter(count_tokens)
    chunker = CHUNKERS[chunking.method](chunking, counter)
    units = split_into_units(doc, counter, chunker.max_unit_tokens)
    drafts = chunker.chunk_sections(units)
    return finish_chunks(doc, units, drafts, chunker.name, counter)
