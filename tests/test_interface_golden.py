"""The hub's two published interfaces, held against committed copies: the OpenAPI schema
(agents, generated clients and the TypeScript types read it) and the MCP tools' names,
descriptions and argument and result schemas (agents' tool lists read them).

A refactor must leave both as they are; a change that means to move them rewrites the
copies on purpose (`MEMORYHUB_WRITE_GOLDEN=1 pytest tests/test_interface_golden.py`), and
the diff of tests/golden/ shows reviewers what agents will see."""

from __future__ import annotations

import asyncio
import difflib
import json
import os
from pathlib import Path
from typing import Any

from tests.schema_validation import schema_check

GOLDEN = Path(__file__).parent / "golden"


def _held(name: str, current: Any) -> None:
    path = GOLDEN / name
    text = json.dumps(current, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if os.environ.get("MEMORYHUB_WRITE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    held = path.read_text(encoding="utf-8")
    if text != held:
        diff = "".join(difflib.unified_diff(held.splitlines(True), text.splitlines(True), f"{name} (committed)", f"{name} (this code)", n=2))
        raise AssertionError(f"{name} moved: an interface agents rely on changed.\n{diff[:6000]}")


def test_it_publishes_the_openapi_schema_it_published_before() -> None:
    _held("openapi.json", schema_check().schema)


def test_it_offers_the_mcp_tools_it_offered_before() -> None:
    from agents_mcp.server import server

    tools = asyncio.run(server.list_tools())
    _held("mcp_tools.json", sorted((tool.model_dump(mode="json", exclude_none=True) for tool in tools), key=lambda tool: tool["name"]))
