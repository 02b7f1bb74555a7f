"""Recursive structure-aware chunking: sections (by heading path) first, then paragraphs, then
sentences, and slices of a sentence only when one sentence alone exceeds the size.

Sizes and overlap are in embedder tokens. A paragraph that fits in a chunk is never split; the
overlap is made of whole trailing sentences of the previous chunk in the same section.
"""

from __future__ import annotations

from tools.knowledge_base.chunkers._units import DocumentUnits, by_paragraph, pack_verified
from tools.knowledge_base.chunkers.base import Chunker, DraftChunk


class RecursiveChunker(Chunker):
    name = "recursive"

    def chunk_sections(self, units: DocumentUnits) -> list[DraftChunk]:
        drafts: list[DraftChunk] = []
        for section in units.sections:
            groups = pack_verified(
                section.units,
                self.settings.chunk_tokens,
                self.counter,
                overlap=self.settings.overlap_tokens,
                group_keys=[by_paragraph],
            )
            drafts.extend(DraftChunk(units=group) for group in groups)
        return drafts
