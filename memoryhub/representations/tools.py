from __future__ import annotations

from typing import Any

from memoryhub.representations import iso_datetime
from memoryhub.tools.models import ToolCall


def tool_call_json(call: ToolCall) -> dict[str, Any]:
    """A logged tool call: its redacted arguments and summary; the raw output is fetched
    apart, by call_id."""
    return {
        "call_id": call.call_id, "tool": call.tool, "args": call.args, "result_summary": call.result_summary, "status": call.status,
        "step_id": call.step_id, "duration_ms": call.duration_ms, "cost": call.cost, "result_bytes": call.result_bytes,
        "redactions": call.redactions, "created_at": iso_datetime(call.created_at),
    }
