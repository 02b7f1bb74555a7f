"""Hierarchical parent/child chunking (e.g. 2048/512/128 tokens): only the smallest chunks are
searched; their parents are stored for merging several small hits into one larger context.

Parents may span sections (they exist to give context); leaves never do, so a leaf's heading path
is exact. A parent whose only child would repeat its text is left out and the child attaches to
the next level up, so every stored parent really contains several children. No overlap: children
partition their parent exactly.
"""

from __future__ import annotations

from itertools import groupby

from tools.knowledge_base.chunkers._units import DocumentUnits, Unit, by_paragraph, by_section, pack_verified
from tools.knowledge_base.chunkers.base import Chunker, DraftChunk


class HierarchicalChunker(Chunker):
    name = "hierarchical"

    @property
    def max_unit_tokens(self) -> int:
        return self.counter.content_budget(self.settings.hierarchy_tokens[-1])

    def chunk_sections(self, units: DocumentUnits) -> list[DraftChunk]:
        return self._build(units.units, 0)

    def _build(self, units: list[Unit], depth: int) -> list[DraftChunk]:
        sizes = self.settings.hierarchy_tokens
        size = sizes[depth]
        if depth == len(sizes) - 1:
            leaves: list[DraftChunk] = []
            for _, section_units in groupby(units, key=by_section):
                groups = pack_verified(list(section_units), size, self.counter, group_keys=[by_paragraph])
                leaves.extend(DraftChunk(units=g, level=0) for g in groups)
            return leaves
        nodes: list[DraftChunk] = []
        for group in pack_verified(units, size, self.counter, group_keys=[by_section, by_paragraph]):
            children = self._build(group, depth + 1)
            if len(children) == 1:
                nodes.append(children[0])
            else:
                nodes.append(DraftChunk(units=group, level=len(sizes) - 1 - depth, children=children))
        return nodes
