"""Plain text: one block; the chunker finds paragraphs and sentences in it."""

from __future__ import annotations

from tools.knowledge_base.loaders.base import Loader, SourceInfo, decode_text
from tools.knowledge_base.records import Block, LoadedDocument
from tools.knowledge_base.text_units import detect_language


class TextLoader(Loader):
    suffixes = (".txt", ".text")

    def load(self, raw: bytes, info: SourceInfo) -> list[LoadedDocument]:
        text = decode_text(raw, info.source).strip()
        return [
            info.document(
                title=info.path.stem,
                blocks=[Block(text=text, kind="text")],
                language=detect_language(text),
            )
        ]
