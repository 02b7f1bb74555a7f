"""A tiny randomly initialised cross-encoder, built on the spot for tests (no cross-encoder ships in a
PyPI package, and nothing may be downloaded).

A one-layer BERT with a one-label head and a WordPiece tokenizer over a small vocabulary, saved with
``save_pretrained`` in the sentence-transformers cross-encoder layout. Its scores mean nothing, but they
are a real model's scores over a real tokenizer. Needs the ``cross-encoder`` extra; callers skip without it.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

WINDOW = 64
WORDS = [
    "the",
    "a",
    "of",
    "and",
    "to",
    "in",
    "is",
    "how",
    "does",
    "rank",
    "fusion",
    "reciprocal",
    "combine",
    "dense",
    "sparse",
    "results",
    "lists",
    "query",
    "passage",
    "bread",
    "bake",
    "heat",
    "oven",
    "score",
    "retrieval",
    "model",
    "relevance",
    "order",
    "documents",
    "检",
    "索",
    "增",
    "强",
    "生",
    "成",
]


def build_tiny_cross_encoder(directory: Path) -> Path:
    """Save a random one-label BERT cross-encoder and its tokenizer into ``directory`` (no download)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("sentence_transformers")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    vocab += [f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz"] + list(
        "abcdefghijklmnopqrstuvwxyz0123456789.,?"
    )
    directory.mkdir(parents=True, exist_ok=True)
    vocab_file = directory / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    # transformers 5 builds a WordPiece tokenizer from a vocab dict; 4 from a vocab file.
    if "vocab_file" in inspect.signature(transformers.BertTokenizerFast.__init__).parameters:
        tokenizer = transformers.BertTokenizerFast(vocab_file=str(vocab_file), model_max_length=WINDOW)
    else:
        tokenizer = transformers.BertTokenizerFast(
            vocab={w: i for i, w in enumerate(vocab)}, model_max_length=WINDOW
        )
    torch.manual_seed(7)
    config = transformers.BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=WINDOW,
        num_labels=1,
        initializer_range=0.5,  # spread the random scores so orders differ
    )
    transformers.BertForSequenceClassification(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
