"""``ragpilot search "query"``: hybrid search from the shell, with why each hit was found."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any, cast

import typer

from agent.cli.app import app, fail
from core.errors import ConfigError, FilterError, ProviderUnavailable
from core.settings import Settings, load_settings
from tools.knowledge_base.records import Hit

SNIPPET_CHARS = 240


class SearchModeOption(StrEnum):
    dense = "dense"
    sparse = "sparse"
    hybrid = "hybrid"


class RerankOption(StrEnum):
    none = "none"
    auto = "auto"
    offline = "offline"
    cohere = "cohere"
    cross_encoder = "cross_encoder"


def parse_filter_option(text: str | None) -> dict[str, Any] | None:
    """The ``--filter`` JSON as a validated filter object; FilterError names what is wrong and where."""
    if text is None:
        return None
    from tools.knowledge_base.store.filters import parse_filter

    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FilterError("$", f"not valid JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(value, dict):
        raise FilterError("$", f"a filter is a JSON object, got {type(value).__name__}")
    parse_filter(value)
    return value


def explain(hit: Hit) -> str:
    """Why a hit is here: each leg's rank and score, and the rerank score."""
    parts = [f"{name} #{leg.rank} ({leg.score:.4g})" for name, leg in hit.legs.items()]
    if hit.rerank_score is not None:
        parts.append(f"rerank {hit.rerank_score:.4g}")
    if hit.expanded_from:
        parts.append(f"context of {hit.expanded_from}")
    return " · ".join(parts) or "-"


def location(hit: Hit) -> str:
    chunk = hit.chunk
    where = hit.url or hit.source
    if chunk is None:
        return where
    if chunk.sheet is not None:
        where += f" {chunk.sheet}:{chunk.row}" if chunk.row is not None else f" {chunk.sheet}"
    elif chunk.page_start is not None:
        pages = (
            chunk.page_start
            if chunk.page_end in (None, chunk.page_start)
            else f"{chunk.page_start}-{chunk.page_end}"
        )
        where += f" p.{pages}"
    return where


def hit_json(rank: int, hit: Hit) -> dict[str, Any]:
    data = hit.model_dump(mode="json", exclude={"chunk"})
    chunk = hit.chunk
    data["rank"] = rank
    if chunk is not None:
        data.update(
            kind=chunk.kind, page_start=chunk.page_start, page_end=chunk.page_end, sheet=chunk.sheet,
            row=chunk.row, position=chunk.position, heading_path=chunk.heading_path, metadata=chunk.metadata,
        )  # fmt: skip
    return data


def print_hits(hits: list[Hit]) -> None:
    if not hits:
        typer.echo("no hits")
        return
    for rank, hit in enumerate(hits, start=1):
        snippet = " ".join(hit.text.split())
        if len(snippet) > SNIPPET_CHARS:
            snippet = snippet[:SNIPPET_CHARS] + "…"
        typer.echo(f"{rank:>3}. {hit.score:.4f}  {hit.title or hit.doc_id} — {location(hit)}")
        typer.echo(f"     why: {explain(hit)}")
        typer.echo(f"     {snippet}")


@app.command("search")
def search_command(
    query: Annotated[str, typer.Argument(help="what to look for")],
    mode: Annotated[
        SearchModeOption | None, typer.Option("--mode", help="default: search.mode setting")
    ] = None,
    filter_json: Annotated[
        str | None,
        typer.Option("--filter", help='metadata filter as JSON, e.g. \'{"metadata.year": {"$gte": 2020}}\''),
    ] = None,
    top_k: Annotated[
        int | None, typer.Option("--top-k", min=1, max=1000, help="default: search.top_k setting")
    ] = None,
    rerank: Annotated[
        RerankOption, typer.Option("--rerank", help="rerank the fused candidates")
    ] = RerankOption.none,
    expand: Annotated[bool, typer.Option("--expand", help="add neighbours, parents and linked rows")] = False,
    groups: Annotated[
        list[str] | None, typer.Option("--group", help="search as these ACL groups (repeatable)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """Search the knowledge base and show why each hit was found."""
    from tools.expand_context import expand_context
    from tools.knowledge_base.knowledge_base import KnowledgeBase
    from tools.search import SearchRequest, hybrid_search

    if not query.strip():
        fail("the query is empty: give the words to search for", 2)
    try:
        user_filter = parse_filter_option(filter_json)
        settings = load_settings(**({"user_groups": groups} if groups else {}))
        reranker = _reranker(settings, rerank)
    except FilterError as exc:
        fail(str(exc), 2)
    except (ConfigError, ProviderUnavailable) as exc:
        fail(str(exc), 2)
    wanted = top_k or settings.search.top_k
    # A reranker sees more candidates than it returns.
    depth = max(wanted, settings.rerank.candidates) if reranker is not None else wanted
    try:
        request = SearchRequest(
            queries=[query], mode=mode.value if mode else None, top_k=depth, filter=user_filter
        )
        with KnowledgeBase.open(settings) as kb:
            hits = hybrid_search(request, kb, settings.user_groups)
            if reranker is not None:
                hits = reranker.rerank(query, hits, wanted)
            hits = hits[:wanted]
            if expand:
                hits = expand_context(hits, kb, settings.user_groups, settings.expand)
    except FilterError as exc:
        fail(str(exc), 2)
    except ConfigError as exc:
        fail(str(exc), 2)
    except ProviderUnavailable as exc:
        fail(str(exc), 1)
    if as_json:
        payload = {
            "query": query,
            "mode": request.mode or settings.search.mode,
            "rerank": rerank.value,
            "groups": settings.user_groups,
            "hits": [hit_json(rank, hit) for rank, hit in enumerate(hits, start=1)],
        }
        typer.echo(json.dumps(payload, ensure_ascii=False))
    else:
        print_hits(hits)


def _reranker(settings: Settings, choice: RerankOption) -> Any:
    if choice is RerankOption.none:
        return None
    from tools.rerank.factory import RerankerChoice, get_reranker

    return get_reranker(settings, provider=cast(RerankerChoice, choice.value))
