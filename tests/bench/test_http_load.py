"""The standing short load test: ten clients for a few seconds against the real server and a fake LLM
over HTTP: no hang, no leak, no status but 200 / 503 (queue full) / 404 (unknown thread), and
/healthz answering throughout. ``bench/http_load.py`` runs the long version (50 clients)."""

from __future__ import annotations

from pathlib import Path

from bench.http_load import SECRETS, leaked, run_load


def test_the_leak_check_sees_the_other_tenants_secret_only() -> None:
    assert leaked(f"the code word is {SECRETS['team-b']}", "team-a")
    assert not leaked(f"the code word is {SECRETS['team-a']}", "team-a")


def test_ten_clients_mixing_asks_streams_drops_and_threads(tmp_path: Path) -> None:
    report = run_load(10, 8.0, home=tmp_path / "home", timeout_s=60.0)
    assert report["hangs"] == 0 and report["clients_stuck_after_the_deadline"] == 0
    assert report["leaks"] == [] and report["own_secret_answers"] > 0  # secrets do flow, to their owner
    assert report["error_count"] == 0, report["errors"]
    assert {k.rsplit(" ", 1)[1] for k in report["statuses"]} <= {"200", "503", "404"}
    assert (
        report["statuses"].get("/ask 200", 0) > 0
        and report["statuses"].get("/ask/stream (dropped) 200", 0) > 0
    )
    assert report["healthz"]["ok"] == report["healthz"]["checks"] > 0
