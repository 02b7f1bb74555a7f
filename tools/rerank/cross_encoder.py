"""A user-supplied cross-encoder (sentence-transformers format) loaded from ``rerank.cross_encoder_path``.

No cross-encoder ships in a PyPI package (see offline-models.md), so this provider exists for users
who have one on disk, e.g. a copy of ``cross-encoder/ms-marco-MiniLM-L-6-v2``. It needs the optional
extra ``pip install 'ragpilot[cross-encoder]'`` (sentence-transformers and a CPU torch), and it never
downloads anything: the model loads with ``local_files_only=True``.

Each (query, passage) pair fits the model's window: the passage is cut with the model's own tokenizer,
the query is kept whole.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from core.settings import RerankSettings
from tools.knowledge_base.records import Hit
from tools.rerank._scoring import order_by_scores, passage_text
from tools.rerank.base import Reranker

log = logging.getLogger(__name__)

SETTING = "rerank.cross_encoder_path"
INSTALL_HINT = "pip install 'ragpilot[cross-encoder]'"
# A passage keeps at least this many tokens even when a very long query fills the window; the model's
# tokenizer then has to cut the query's tail (logged), since a pair without any passage is meaningless.
MIN_PASSAGE_TOKENS = 16
# Re-cuts tried when re-tokenizing a cut passage yields more tokens than the budget (subword edges).
MAX_CUT_ATTEMPTS = 4
# No token spans more characters than this; passages are pre-cut so a huge one is not tokenized whole.
MAX_CHARS_PER_TOKEN = 24


def _check_model_dir(path: Path | None) -> Path:
    if path is None:
        raise ConfigError(f"{SETTING} is not set: name a sentence-transformers cross-encoder directory")
    path = path.expanduser()
    if not path.is_dir():
        raise ConfigError(f"{SETTING}: {path} is not a directory")
    if not (path / "config.json").is_file():
        raise ConfigError(
            f"{SETTING}: {path} has no config.json; expected a cross-encoder saved with "
            "CrossEncoder.save() or save_pretrained()"
        )
    return path.resolve()


@lru_cache(maxsize=2)
def _load_cross_encoder(path: str) -> Any:
    """Load (once per process and directory) the model at ``path``; ConfigError when that fails."""
    try:
        from sentence_transformers import CrossEncoder
    except ImportError as exc:
        raise ConfigError(
            f"{SETTING} is set but sentence-transformers is not installed: {INSTALL_HINT}"
        ) from exc
    try:
        return CrossEncoder(path, local_files_only=True, device="cpu")
    except Exception as exc:  # a user's directory can be broken in many ways; say which file and why
        raise ConfigError(f"{SETTING}: could not load a cross-encoder from {path}: {exc}") from exc


def _model_window(model: Any) -> int:
    """The model's maximum input length in tokens (sentence-transformers renamed the attribute in v6)."""
    for attribute in ("max_seq_length", "max_length"):
        value = getattr(model, attribute, None)
        if isinstance(value, int) and value > 0:
            return value
    return int(model.tokenizer.model_max_length)


class CrossEncoderReranker(Reranker):
    """Scores (query, passage) pairs with a local cross-encoder; scores are the model's activation
    output (a sigmoid in 0..1 for the usual one-label models), so ``rerank.threshold`` uses that scale."""

    name = "cross_encoder"

    def __init__(self, options: RerankSettings) -> None:
        path = _check_model_dir(options.cross_encoder_path)
        self.options = options
        self.model = _load_cross_encoder(str(path))
        self.tokenizer = self.model.tokenizer
        self.window = min(_model_window(self.model), options.max_tokens)

    def passage_budget(self, query: str) -> int:
        """Tokens left for the passage once the whole query and the special tokens are in the window."""
        query_tokens = len(self.tokenizer(query, add_special_tokens=False)["input_ids"])
        budget = self.window - query_tokens - self.tokenizer.num_special_tokens_to_add(pair=True)
        if budget < MIN_PASSAGE_TOKENS:
            log.warning(
                "query of %d tokens leaves %d of the %d-token window for passages; the model will cut the query",
                query_tokens,
                budget,
                self.window,
            )
        return max(budget, MIN_PASSAGE_TOKENS)

    def truncate_passage(self, passage: str, budget: int) -> str:
        """The longest prefix of ``passage`` (cut on a token edge) that the tokenizer counts within ``budget``."""
        text = passage[: budget * MAX_CHARS_PER_TOKEN]
        keep = budget
        for _ in range(MAX_CUT_ATTEMPTS):
            if len(self.tokenizer(text, add_special_tokens=False)["input_ids"]) <= budget:
                return text
            text = self._cut_to_tokens(text, keep)
            keep -= 1  # a cut inside a word can re-tokenize into more pieces; aim lower next time
        # Still over after the bounded attempts (pathological text): the model's own truncation finishes it.
        return self._cut_to_tokens(text, max(keep, 1))

    def _cut_to_tokens(self, text: str, keep: int) -> str:
        if getattr(self.tokenizer, "is_fast", False):
            offsets = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)[
                "offset_mapping"
            ]
            return text[: offsets[keep - 1][1]] if len(offsets) > keep else text
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return str(self.tokenizer.decode(ids[:keep]))

    def pairs(self, query: str, hits: Sequence[Hit]) -> list[tuple[str, str]]:
        """The (query, passage) pairs the model scores: query whole, each passage cut to fit the window."""
        budget = self.passage_budget(query)
        return [(query, self.truncate_passage(passage_text(hit), budget)) for hit in hits]

    def rerank(self, query: str, hits: Sequence[Hit], top_n: int) -> list[Hit]:
        """Hits reordered by the cross-encoder's score, below ``rerank.threshold`` dropped, at most top_n."""
        hits = list(hits)
        if not hits or top_n <= 0:
            return []
        scores = self.model.predict(self.pairs(query, hits), batch_size=16, show_progress_bar=False)
        return order_by_scores(hits, [float(s) for s in scores], top_n, self.options.threshold)
