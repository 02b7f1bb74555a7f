"""Sentence-window chunking: one sentence per indexed chunk (dense, precise matching), with the
±N sentences around it in the same section kept as ``window`` for the generator to read."""

from __future__ import annotations

from tools.knowledge_base.chunkers._units import DocumentUnits, join_units
from tools.knowledge_base.chunkers.base import Chunker, DraftChunk


class SentenceWindowChunker(Chunker):
    name = "sentence_window"

    def chunk_sections(self, units: DocumentUnits) -> list[DraftChunk]:
        radius = self.settings.sentence_window
        drafts: list[DraftChunk] = []
        for section in units.sections:
            sentences = section.units
            for i, sentence in enumerate(sentences):
                window = sentences[max(0, i - radius) : i + radius + 1]
                drafts.append(DraftChunk(units=[sentence], window=join_units(window)))
        return drafts
