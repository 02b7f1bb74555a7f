"""Every prompt ragpilot sends lives here as a Markdown file; code loads them by name."""

from __future__ import annotations

from functools import cache
from importlib import resources

from core.errors import ConfigError


@cache
def load_prompt(name: str) -> str:
    """Return the text of ``prompts/<name>.md``; a missing prompt raises ConfigError naming the file."""
    resource = resources.files(__name__) / f"{name}.md"
    if not resource.is_file():
        raise ConfigError(f"prompt file prompts/{name}.md does not exist")
    return resource.read_text(encoding="utf-8")
