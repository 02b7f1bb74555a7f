"""Every regular expression and word table in ``graphs/`` is listed in ``docs/rules.md``, with what keeps it
and where its test cases are: a rule added without a row fails here (issue 22)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "docs" / "rules.md"
# Wiring modules name nodes, loops and settings, not words read from text.
WIRING = {"graph.py", "routing.py", "answer_checks.py", "state.py", "run_context.py", "inspection.py"}
COLLECTIONS = (ast.Set, ast.Dict, ast.SetComp, ast.DictComp)


def _is_word_table(value: ast.expr) -> bool:
    """A set or dict of strings (possibly wrapped in frozenset(), or two joined with ``|``)."""
    if isinstance(value, ast.Call) and ast.unparse(value.func) == "frozenset" and value.args:
        value = value.args[0]
    if isinstance(value, ast.BinOp):
        return _is_word_table(value.left) and _is_word_table(value.right)
    strings = [n for n in ast.walk(value) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return isinstance(value, COLLECTIONS) and len(strings) >= 4


def rules_in(path: Path) -> list[str]:
    """The module-level names of ``path`` bound to ``re.compile(...)`` or to a word table."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        compiled = isinstance(value, ast.Call) and ast.unparse(value.func) == "re.compile"
        if compiled or (path.name not in WIRING and _is_word_table(value)):
            found += [t.id for t in targets if isinstance(t, ast.Name)]
    return found


def test_the_scan_finds_regular_expressions_and_word_tables() -> None:
    assert "MONTHS_AND_SEASONS" in rules_in(ROOT / "graphs" / "rag" / "lexicon.py")
    assert "_SPELLED" in rules_in(ROOT / "graphs" / "rag" / "lexicon.py")
    assert "_ANOTHER" in rules_in(ROOT / "graphs" / "rag" / "nodes" / "_exclusions.py")


def test_every_rule_in_graphs_has_a_row_in_the_inventory() -> None:
    listed = INVENTORY.read_text(encoding="utf-8")
    unlisted = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted((ROOT / "graphs").rglob("*.py"))
        for name in rules_in(path)
        if f"`{name}`" not in listed
    ]
    assert unlisted == []


def test_every_test_file_the_inventory_names_exists() -> None:
    named = set(re.findall(r"`(tests/[\w/]+\.py)`", INVENTORY.read_text(encoding="utf-8")))
    assert named and [n for n in sorted(named) if not (ROOT / n).is_file()] == []
