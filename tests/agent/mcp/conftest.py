"""The MCP HTTP tests run against the same real server as the HTTP API tests."""

from tests.agent.server.conftest import api  # noqa: F401  (the fixture, shared)
