"""``langgraph.json`` names a graph LangGraph's tooling can load, with its input and output schemas."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_langgraph_json_names_a_loadable_compiled_graph_with_schemas(ragpilot_home: Path) -> None:
    config = json.loads((REPO_ROOT / "langgraph.json").read_text(encoding="utf-8"))
    path, attribute = config["graphs"]["ragpilot"].split(":")
    # Loaded the way LangGraph's server loads it: a file path, then an attribute.
    spec = importlib.util.spec_from_file_location("langgraph_json_ragpilot", REPO_ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    graph = getattr(module, attribute)
    assert graph.name == "ragpilot"
    input_schema = graph.get_input_jsonschema()
    assert input_schema["required"] == ["question"]
    # messages: the conversation so far, for a caller that keeps it instead of a thread (optional)
    assert set(input_schema["properties"]) == {"question", "route_request", "messages"}
    output = graph.get_output_jsonschema()["properties"]
    assert {"answer", "citations", "refused", "route", "steps", "messages"} <= set(output)
    assert not (ragpilot_home / "index").exists()  # building the graph loads no model and opens no index
