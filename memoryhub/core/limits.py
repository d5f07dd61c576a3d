"""Limits every front end holds client input to, defined once: the REST serializers and
the MCP tools' argument types both use them (docs/api.md, "Limits")."""

from __future__ import annotations

import json
from typing import Any

# A JSON object a client attaches (metadata, data, an item's value).
MAX_JSON_BYTES = 64 * 1024


def json_size_problem(value: Any) -> str | None:
    """Why `value` is too large to keep, or None."""
    if len(json.dumps(value, default=str)) > MAX_JSON_BYTES:
        return f"Must be at most {MAX_JSON_BYTES} bytes as JSON."
    return None
