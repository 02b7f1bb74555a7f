"""A self-contained HTML page for one run: the path through the graph, a timing waterfall, each step.

No script or style is fetched from anywhere: the graph is drawn as an inline SVG computed here from the
stored topology (layered top to bottom, visited nodes and taken edges highlighted), and the Mermaid text
of the same diagram (with the visited nodes styled) is embedded for pasting into any Mermaid viewer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from html import escape
from pathlib import Path
from typing import Any

from agent.tracing.events import GraphEdge, GraphTopology, RunTrace

START, END = "__start__", "__end__"
_LAYER_GAP = 90
_NODE_HEIGHT = 36
_NODE_GAP = 28
_CHAR_WIDTH = 7.4
_MARGIN = 24


def _topology_or_path(trace: RunTrace) -> GraphTopology:
    """The stored topology, or (for a run recorded without one) the visited path as a chain."""
    if trace.graph is not None and trace.graph.nodes:
        return trace.graph
    chain: list[str] = [START]
    for node in trace.path:
        if node not in chain:
            chain.append(node)
    chain.append(END)
    edges = [GraphEdge(source=a, target=b) for a, b in zip(chain, chain[1:], strict=False)]
    return GraphTopology(nodes=chain, edges=edges)


def _back_edges(nodes: list[str], edges: list[GraphEdge]) -> set[tuple[str, str]]:
    """Edges closing a cycle (found by an iterative DFS from the start), drawn as loops on the side."""
    successors: dict[str, list[str]] = {n: [] for n in nodes}
    for edge in edges:
        successors.setdefault(edge.source, []).append(edge.target)
    back: set[tuple[str, str]] = set()
    state: dict[str, int] = {}  # 1 = on the DFS stack, 2 = done
    roots = [START] if START in successors else []
    roots += [n for n in nodes if n != START]
    for root in roots:
        if root in state:
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        state[root] = 1
        while stack:
            node, index = stack.pop()
            children = successors.get(node, [])
            if index < len(children):
                stack.append((node, index + 1))
                child = children[index]
                if state.get(child) == 1:
                    back.add((node, child))
                elif child not in state:
                    state[child] = 1
                    stack.append((child, 0))
            else:
                state[node] = 2
    return back


def _layers(nodes: list[str], edges: list[GraphEdge], back: set[tuple[str, str]]) -> dict[str, int]:
    """Longest-path layering over the acyclic part of the graph (bounded by the node count)."""
    layer = dict.fromkeys(nodes, 0)
    forward = [
        (e.source, e.target) for e in edges if (e.source, e.target) not in back and e.source != e.target
    ]
    for _ in range(len(nodes)):
        changed = False
        for source, target in forward:
            if source in layer and target in layer and layer[target] < layer[source] + 1:
                layer[target] = layer[source] + 1
                changed = True
        if not changed:
            break
    if END in layer and len(layer) > 1:  # the end sits alone at the bottom
        layer[END] = max(v for k, v in layer.items() if k != END) + 1
    return layer


def _node_width(label: str) -> float:
    return max(70.0, len(label) * _CHAR_WIDTH + 26)


def graph_svg(topology: GraphTopology, path: list[str], finished: bool) -> str:
    """An SVG drawing of the graph with the visited nodes filled and the edges taken drawn in red."""
    nodes = list(topology.nodes)
    edges = [e for e in topology.edges if e.source in nodes and e.target in nodes]
    back = _back_edges(nodes, edges)
    layer = _layers(nodes, edges, back)
    rows: dict[int, list[str]] = {}
    for node in nodes:
        rows.setdefault(layer[node], []).append(node)
    # Order each row by where its predecessors sit (one barycentre sweep keeps edges from crossing much).
    x_center: dict[str, float] = {}
    row_widths = {r: sum(_node_width(n) for n in ns) + _NODE_GAP * (len(ns) - 1) for r, ns in rows.items()}
    canvas_width = max(row_widths.values(), default=200) + 2 * _MARGIN + 160
    for row in sorted(rows):
        members = rows[row]
        if row > 0:

            def barycentre(node: str) -> float:
                parents = [x_center[e.source] for e in edges if e.target == node and e.source in x_center]
                return sum(parents) / len(parents) if parents else canvas_width / 2

            members.sort(key=barycentre)
        x = (canvas_width - 160 - row_widths[row]) / 2
        for node in members:
            width = _node_width(node)
            x_center[node] = x + width / 2
            x += width + _NODE_GAP
    y_top = {n: _MARGIN + layer[n] * _LAYER_GAP for n in nodes}
    height = _MARGIN * 2 + (max(layer.values(), default=0)) * _LAYER_GAP + _NODE_HEIGHT

    visits: dict[str, int] = {}
    for node in path:
        visits[node] = visits.get(node, 0) + 1
    full_path = [START, *path, *([END] if finished else [])]
    edge_names = {(e.source, e.target) for e in edges}
    taken = {(a, b) for a, b in zip(full_path, full_path[1:], strict=False) if (a, b) in edge_names}

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" width="{canvas_width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {canvas_width:.0f} {height:.0f}" role="img" aria-label="graph path">',
        "<defs>"
        '<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#90a4ae"/></marker>'
        '<marker id="arrow-taken" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#d32f2f"/></marker>'
        "</defs>",
    ]
    loop_offset = 0
    for edge in edges:
        source, target = edge.source, edge.target
        was_taken = (source, target) in taken
        style = 'stroke="#d32f2f" stroke-width="2.6"' if was_taken else 'stroke="#90a4ae" stroke-width="1.3"'
        dash = ' stroke-dasharray="5,4"' if edge.conditional else ""
        marker = "arrow-taken" if was_taken else "arrow"
        if (source, target) in back or source == target:
            # A loop back up: leave the source's right side, run along the right margin, enter the target.
            loop_offset += 14
            x1 = x_center[source] + _node_width(source) / 2
            y1 = y_top[source] + _NODE_HEIGHT / 2
            x2 = x_center[target] + _node_width(target) / 2
            y2 = y_top[target] + _NODE_HEIGHT / 2
            xr = max(x1, x2) + 30 + loop_offset
            d = f"M{x1:.1f},{y1:.1f} C{xr:.1f},{y1:.1f} {xr:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"
        else:
            x1, y1 = x_center[source], y_top[source] + _NODE_HEIGHT
            x2, y2 = x_center[target], y_top[target]
            mid = (y1 + y2) / 2
            d = f"M{x1:.1f},{y1:.1f} C{x1:.1f},{mid:.1f} {x2:.1f},{mid:.1f} {x2:.1f},{y2:.1f}"
        parts.append(
            f'<path class="edge{" taken" if was_taken else ""}" data-source="{escape(source)}" '
            f'data-target="{escape(target)}" d="{d}" fill="none" {style}{dash} marker-end="url(#{marker})"/>'
        )
    for node in nodes:
        width = _node_width(node)
        x = x_center[node] - width / 2
        visited = node in visits or (node == START) or (node == END and finished)
        fill, stroke = ("#ffe082", "#e65100") if visited else ("#eceff1", "#90a4ae")
        rounded = 18 if node in (START, END) else 6
        parts.append(
            f'<g class="node{" visited" if visited else ""}" data-node="{escape(node)}">'
            f'<rect x="{x:.1f}" y="{y_top[node]:.1f}" width="{width:.1f}" height="{_NODE_HEIGHT}" '
            f'rx="{rounded}" fill="{fill}" stroke="{stroke}" stroke-width="{2 if visited else 1}"/>'
            f'<text x="{x_center[node]:.1f}" y="{y_top[node] + _NODE_HEIGHT / 2 + 4:.1f}" '
            f'text-anchor="middle" font-size="13">{escape(node)}</text>'
        )
        if visits.get(node, 0) > 1:
            parts.append(
                f'<text x="{x + width - 4:.1f}" y="{y_top[node] - 4:.1f}" text-anchor="end" '
                f'font-size="11" fill="#e65100">×{visits[node]}</text>'
            )
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def mermaid_with_path(topology: GraphTopology, path: list[str]) -> str:
    """The graph's Mermaid text with the visited nodes styled (paste into any Mermaid viewer)."""
    if not topology.mermaid:
        return ""
    visited = [n for n in dict.fromkeys(path) if n.replace("_", "").isalnum()]
    if not visited:
        return topology.mermaid
    return (
        topology.mermaid.rstrip()
        + "\n\tclassDef visited fill:#ffe082,stroke:#e65100,stroke-width:2px;\n"
        + f"\tclass {','.join(visited)} visited;\n"
    )


def _waterfall(trace: RunTrace) -> str:
    total = max(trace.total_ms, max((s.ms for s in trace.steps), default=0.0), 1.0)
    rows = []
    for step in trace.steps:
        offset = max(0.0, (step.started_at - trace.started_at).total_seconds() * 1000.0)
        left = min(100.0, offset / total * 100.0)
        width = max(0.4, min(100.0 - left, step.ms / total * 100.0))
        rows.append(
            f'<div class="wf-row" data-node="{escape(step.node)}">'
            f'<span class="wf-label">{step.seq}. {escape(step.node)}</span>'
            f'<span class="wf-track"><span class="wf-bar" style="left:{left:.2f}%;width:{width:.2f}%"></span></span>'
            f'<span class="wf-ms">{step.ms:.0f} ms</span></div>'
        )
    return (
        f'<div class="waterfall">{"".join(rows)}'
        f'<div class="wf-axis"><span>0 ms</span><span>{total:.0f} ms</span></div></div>'
    )


def _value_html(value: Any, depth: int = 0) -> str:
    """A decision value as nested lists (bounded depth so a pathological value cannot blow up the page)."""
    if depth > 6:
        return f"<code>{escape(json.dumps(value, ensure_ascii=False, default=str)[:300])}</code>"
    if isinstance(value, Mapping):
        items = "".join(
            f"<li><b>{escape(str(k))}</b>: {_value_html(v, depth + 1)}</li>" for k, v in value.items()
        )
        return f"<ul>{items}</ul>"
    if isinstance(value, list | tuple):
        if all(not isinstance(v, Mapping | list | tuple) for v in value):
            return escape(", ".join(str(v) for v in value))
        return "<ol>" + "".join(f"<li>{_value_html(v, depth + 1)}</li>" for v in value) + "</ol>"
    return escape(str(value))


def _answer_html(trace: RunTrace) -> str:
    if trace.error:
        return f'<section class="answer error"><h2>Error</h2><p>{escape(trace.error)}</p></section>'
    if trace.answer is None:
        return '<section class="answer"><h2>Answer</h2><p>(the run did not finish)</p></section>'
    answer = trace.answer
    citation_items = []
    for citation in answer.get("citations") or []:
        if not isinstance(citation, Mapping):
            continue
        where = citation.get("title") or citation.get("source") or citation.get("url") or ""
        page = f" p.{citation['page']}" if citation.get("page") else ""
        citation_items.append(f"<li>[{escape(str(citation.get('n', '?')))}] {escape(str(where) + page)}</li>")
    citations = "".join(citation_items)
    facts = " · ".join(
        f"{k}: {escape(str(answer[k]))}"
        for k in ("route", "crag_action", "refused", "llm_calls")
        if k in answer
    )
    return (
        '<section class="answer"><h2>Answer</h2>'
        f'<p class="answer-text">{escape(str(answer.get("answer", "")))}</p>'
        f'<p class="facts">{facts}</p><ul class="citations">{citations}</ul></section>'
    )


_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#263238;max-width:1200px}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:24px 0 8px}
.meta{color:#607d8b;font-size:13px} .question{font-size:16px;margin:8px 0 16px}
.graph-box{overflow-x:auto;border:1px solid #cfd8dc;border-radius:6px;padding:8px;background:#fafafa}
.waterfall{border:1px solid #cfd8dc;border-radius:6px;padding:8px}
.wf-row{display:flex;align-items:center;height:24px;font-size:13px}
.wf-label{width:230px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.wf-track{position:relative;flex:1;height:14px;background:#eceff1;border-radius:3px}
.wf-bar{position:absolute;top:0;height:14px;background:#ff8f00;border-radius:3px}
.wf-ms{width:80px;text-align:right;color:#455a64}
.wf-axis{display:flex;justify-content:space-between;margin-left:230px;margin-right:80px;color:#90a4ae;font-size:11px}
ol.steps>li{margin:6px 0} .steps ul,.steps ol{margin:2px 0 2px 8px;font-size:13px}
.step-head{font-weight:600} .step-ms{color:#607d8b;font-weight:400}
.answer-text{white-space:pre-wrap;background:#f1f8e9;padding:10px;border-radius:6px}
.error p{background:#ffebee;padding:10px;border-radius:6px}
ul.citations{list-style:none;padding-left:0}
pre.mermaid-text{font-size:12px;background:#f5f5f5;padding:8px;overflow-x:auto}
"""


def render_html(trace: RunTrace) -> str:
    """The whole page for ``trace`` as one HTML string (inline CSS and SVG; no external resources)."""
    topology = _topology_or_path(trace)
    steps = "".join(
        f'<li class="step" id="step-{s.seq}" data-node="{escape(s.node)}">'
        f'<details open><summary class="step-head">{escape(s.node)} '
        f'<span class="step-ms">{s.ms:.0f} ms · {s.started_at.strftime("%H:%M:%S.%f")[:-3]}</span></summary>'
        f"{_value_html(s.decision) if s.decision else '<p>(no decision recorded)</p>'}</details></li>"
        for s in trace.steps
    )
    mermaid = mermaid_with_path(topology, trace.path)
    mermaid_block = (
        f'<details><summary>Mermaid source (visited nodes styled)</summary><pre class="mermaid-text">'
        f"{escape(mermaid)}</pre></details>"
        if mermaid
        else ""
    )
    thread = f" · thread {escape(trace.thread_id)}" if trace.thread_id else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ragpilot run {escape(trace.run_id)}</title><style>{_CSS}</style></head>
<body>
<h1>ragpilot run <span id="run-id">{escape(trace.run_id)}</span></h1>
<div class="meta">{escape(trace.started_at.isoformat(timespec="seconds"))}{thread} · {len(trace.steps)} steps ·
{trace.total_ms:.0f} ms</div>
<p class="question">{escape(trace.question)}</p>
<h2>Path through the graph</h2>
<p class="meta">{escape(" → ".join(trace.path))}</p>
<div class="graph-box">{graph_svg(topology, trace.path, trace.finished)}</div>
{mermaid_block}
<h2>Timing</h2>
{_waterfall(trace)}
{_answer_html(trace)}
<h2>Steps</h2>
<ol class="steps">{steps}</ol>
</body></html>
"""


def write_html(trace: RunTrace, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(trace), encoding="utf-8")
    return path
