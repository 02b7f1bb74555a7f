"""Typed errors. Each message names the file, field or setting at fault."""

from __future__ import annotations


class RagpilotError(Exception):
    """Base class of every error ragpilot raises on purpose."""


class ConfigError(RagpilotError):
    """A setting is missing or invalid; the message names the field."""


class IngestError(RagpilotError):
    """One input file could not be ingested; the message names the file and the reason."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


class FilterError(RagpilotError):
    """A metadata filter is malformed; the message says what is wrong and where (a JSON path)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"invalid filter at {path}: {reason}")
        self.path = path
        self.reason = reason


class ProviderUnavailable(RagpilotError):
    """A provider is not configured or failed after its retries; the caller degrades."""

    def __init__(self, provider: str, reason: str) -> None:
        super().__init__(f"{provider} unavailable: {reason}")
        self.provider = provider
        self.reason = reason


class ModelAssetError(RagpilotError):
    """A local model file is missing or corrupt (e.g. a GGUF part package is not installed)."""


class StructuredOutputError(RagpilotError):
    """A model's structured reply was not valid JSON for the requested schema, even after one retry."""

    def __init__(self, schema_name: str, reason: str, raw_output: str) -> None:
        excerpt = raw_output if len(raw_output) <= 300 else raw_output[:300] + "..."
        super().__init__(
            f"model output for schema '{schema_name}' is invalid after a retry: {reason}; got: {excerpt!r}"
        )
        self.schema_name = schema_name
        self.reason = reason
        self.raw_output = raw_output
