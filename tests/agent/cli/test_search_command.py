"""``ragpilot search``: readable hits with why they were found, JSON output, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from tests.tools.search_corpus import build_corpus

runner = CliRunner()


@pytest.fixture(scope="module")
def corpus_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("cli") / "home"
    build_corpus(home)
    return home


@pytest.fixture
def env(corpus_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.chdir(tmp_path)  # no ragpilot.toml from the repo
    return {"RAGPILOT_HOME": str(corpus_home), "RAGPILOT_USER_GROUPS": '["A"]'}


def run(env: dict[str, str], *args: str):
    return runner.invoke(app, ["search", *args], env=env)


def test_json_output_is_one_object_with_typed_hits(env):
    result = run(env, "unused vacation days", "--json", "--top-k", "3", "--mode", "hybrid")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["query"] == "unused vacation days" and payload["mode"] == "hybrid"
    hits = payload["hits"]
    assert [h["rank"] for h in hits] == [1, 2, 3]
    assert hits[0]["chunk_id"] == "handbook::c2"
    assert set(hits[0]["legs"]) == {"dense", "sparse"} and hits[0]["legs"]["dense"]["rank"] >= 1


def test_readable_output_explains_each_hit(env):
    result = run(env, "Acme order 1001", "--top-k", "2", "--mode", "hybrid")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].lstrip().startswith("1.")
    assert "Orders:1" in result.stdout  # sheet:row of the row hit
    assert "why: dense #" in result.stdout and "sparse #" in result.stdout


def test_groups_option_selects_whose_chunks_are_visible(env):
    as_a = json.loads(run(env, "Zephyr Robotics acquisition", "--json", "--top-k", "50").stdout)
    assert not any(h["doc_id"] == "board-minutes" for h in as_a["hits"])
    as_b = json.loads(run(env, "Zephyr Robotics acquisition", "--json", "--group", "B").stdout)
    assert as_b["hits"][0]["doc_id"] == "board-minutes" and as_b["groups"] == ["B"]


def test_filter_option_restricts_hits(env):
    result = run(env, "policy", "--json", "--top-k", "50", "--filter", '{"doc_id": "security"}')
    hits = json.loads(result.stdout)["hits"]
    assert {h["doc_id"] for h in hits} == {"security"} and len(hits) == 2


@pytest.mark.parametrize(
    "bad_filter, message",
    [
        ('{"year": {"$near": 3}}', "invalid filter at $.year"),
        ("{not json", "not valid JSON"),
        ("[1]", "a filter"),
    ],
)
def test_a_malformed_filter_prints_the_filter_error_and_exits_2(env, bad_filter, message):
    result = run(env, "vacation", "--filter", bad_filter)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stdout == ""


def test_expand_marks_context_pieces(env):
    result = run(env, "hotel costs per night", "--json", "--top-k", "1", "--mode", "dense", "--expand")
    hits = json.loads(result.stdout)["hits"]
    assert [h["chunk_id"] for h in hits] == ["handbook::c4", "handbook::c5"]
    assert hits[0]["expanded_from"] == "handbook::c5" and hits[1]["expanded_from"] is None


def test_rerank_none_keeps_the_fusion_order(env):
    fused = json.loads(run(env, "hotel costs", "--json", "--top-k", "3").stdout)["hits"]
    plain = json.loads(run(env, "hotel costs", "--json", "--top-k", "3", "--rerank", "none").stdout)["hits"]
    assert [h["chunk_id"] for h in fused] == [h["chunk_id"] for h in plain]
    assert all(h["rerank_score"] is None for h in plain)


@pytest.mark.parametrize("query", ["", "   "])
def test_an_empty_query_is_one_error_line_not_a_traceback(env, query):
    result = run(env, query)

    assert result.exit_code == 2
    assert result.output.strip() == "error: the query is empty: give the words to search for"


def test_a_huge_integer_in_a_filter_is_one_error_line(env):
    result = run(env, "vacation", "--filter", '{"metadata.year": 99999999999999999999999999999}')

    assert result.exit_code == 2
    assert result.output.startswith("error: invalid filter at $.metadata.year: integer")
