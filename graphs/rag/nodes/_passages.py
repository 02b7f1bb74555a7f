"""Passages as the models see them: numbered, delimited, and treated as data.

Retrieved text goes inside ``<passage id="n" ...>`` tags. Anything in the text that looks like one of
our delimiters is neutralised, so a document cannot close its own passage and speak as the prompt.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

from graphs.rag.nodes._question_facts import writes_traditional
from graphs.rag.state import ContextPassage
from tools.knowledge_base.records import Hit

_DELIMITER_LIKE = re.compile(r"<(\s*/?\s*(?:passages?|question|answer|sentences?)\b)", re.IGNORECASE)


def neutralise_delimiters(text: str) -> str:
    """Replace the ``<`` of any tag-like text that imitates our delimiters with ``&lt;``."""
    return _DELIMITER_LIKE.sub(r"&lt;\1", text)


def source_name(source: str | None) -> str | None:
    """A local file's name without its directories, as the models see it.

    The absolute path says nothing the model needs, changes the prompt (and so the greedy answer) with
    the directory the files were ingested from, and would send the user's directory layout to a hosted
    model."""
    if not source:
        return None
    return PurePath(source).name or source


def format_passages(passages: Sequence[ContextPassage]) -> str:
    """The ``<passages>`` block of a prompt: one ``<passage id="n" title=... source=...>`` per passage."""
    parts = ["<passages>"]
    for p in passages:
        attributes = f'id="{p["n"]}"'
        if p.get("title"):
            attributes += f' title="{html.escape(p["title"], quote=True)}"'
        location = p.get("url") or source_name(p.get("source"))
        if location:
            attributes += f' source="{html.escape(location, quote=True)}"'
        if p.get("page") is not None:
            attributes += f' page="{p["page"]}"'
        parts.append(f"<passage {attributes}>\n{neutralise_delimiters(p['text'].strip())}\n</passage>")
    parts.append("</passages>")
    return "\n".join(parts)


def hit_page(hit: Hit) -> int | None:
    return hit.chunk.page_start if hit.chunk is not None else None


def passage_from_hit(n: int, hit: Hit, text: str) -> ContextPassage:
    """A numbered context passage for ``hit`` whose generator-facing text is ``text``."""
    return ContextPassage(
        n=n,
        chunk_id=hit.chunk_id,
        doc_id=hit.doc_id,
        source=hit.source,
        title=hit.title,
        page=hit_page(hit),
        url=hit.url,
        origin=hit.origin,
        text=text,
    )


def renumber(passages: Sequence[ContextPassage]) -> list[ContextPassage]:
    """The same passages numbered 1..n in order."""
    return [ContextPassage(**{**p, "n": i}) for i, p in enumerate(passages, start=1)]  # type: ignore[typeddict-item]


def hits_from_state(raw: Sequence[dict[str, Any]]) -> list[Hit]:
    """Validate the hit dicts kept in state back into ``Hit`` models."""
    return [Hit.model_validate(h) for h in raw]


def hits_to_state(hits: Sequence[Hit]) -> list[dict[str, Any]]:
    return [h.model_dump(mode="json") for h in hits]


def language_name(language: str, traditional: bool = False) -> str:
    """The answer language as prompts name it; Chinese in the script the user asked in."""
    if language != "zh":
        return "English"
    return "Traditional Chinese (繁體中文)" if traditional else "Simplified Chinese (简体中文)"


def answer_language(state: Mapping[str, Any], match_script: bool) -> str:
    """The "Answer language" line of a prompt for this turn (``match_script``: ``graph.answer_in_users_script``)."""
    return language_name(state.get("language", "en"), writes_traditional(state, match_script))
