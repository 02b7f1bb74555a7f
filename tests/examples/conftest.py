"""A tiny real knowledge base and the examples loaded from their files (examples/ is not a package)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from agent.agent import Agent
from core.settings import Settings, load_settings
from tools.knowledge_base.ingest import ingest

REPO_ROOT = Path(__file__).resolve().parents[2]

POLICY = """# Leave policy of Example Corp

## Sick leave
Employees of Example Corp get 12 days of paid sick leave per year.
From the fourth consecutive day of sickness, a medical certificate is required.

## Remote work
Employees may work remotely up to 2 days per week after their probation period.
"""


def load_example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", REPO_ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # type hints of its classes resolve through sys.modules
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    home = tmp_path_factory.mktemp("examples-home")
    docs = home.parent / f"{home.name}-docs"
    docs.mkdir()
    (docs / "leave-policy.md").write_text(POLICY, encoding="utf-8")
    settings = load_settings(home=home)  # the offline defaults, reranker included
    report = ingest([docs], settings, progress=False)
    assert report.added == 1, report
    return settings


@pytest.fixture(scope="module")
def example_agent(example_settings: Settings) -> Iterator[Agent]:
    agent = Agent(example_settings)
    yield agent
    agent.close()
