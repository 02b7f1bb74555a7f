"""The follow-up conversation sets: every turn-2 gold is something their documents state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SETS = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize("name", ["follow_ups", "follow_ups_heldout"])
def test_every_conversation_has_a_gold_answer_its_documents_state(name: str) -> None:
    folder = SETS / name
    documents = " ".join(p.read_text(encoding="utf-8") for p in sorted((folder / "docs").glob("*.md")))
    conversations = json.loads((folder / "conversations.json").read_text(encoding="utf-8"))
    assert len({c["id"] for c in conversations}) == len(conversations)
    unstated = [c["id"] for c in conversations if not any(alias in documents for alias in c["gold"])]
    assert unstated == []
    assert all(c["turn1"] and c["turn2"] and c["pattern"] for c in conversations)
