"""The MCP endpoint (`/mcp`, streamable HTTP, the official `mcp` SDK): a front end beside
the REST API (the top layer in `.importlinter`) that never imports `agents_api`.

Each tool parses its arguments (pydantic, from its type hints: agents_mcp/arguments.py)
and makes one call to memoryhub.operations, the same call the REST view makes, as the
agent whose key authenticated (auth.py), through one runner (running.py: rate limits,
errors in the REST API's envelope). The tools are in memory_tools.py and
session_tools.py; app.py holds the server and its ASGI endpoint, which
memoryhub/serving/mcp_mount.py imports by this module's path on the first `/mcp`
request and routes `/mcp` to."""

from __future__ import annotations

from agents_mcp import memory_tools, session_tools  # noqa: F401  (registers the tools)
from agents_mcp.app import McpEndpoint, server

__all__ = ["McpEndpoint", "server"]
