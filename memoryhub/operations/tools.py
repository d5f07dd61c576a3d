"""The tool-call log: record a call, recall its raw output."""

from __future__ import annotations

from typing import Any

from memoryhub.conversations.models import Session
from memoryhub.core.selectors import Principal
from memoryhub.representations.tools import tool_call_json
from memoryhub.tools.selectors import tool_result_get
from memoryhub.tools.services import ToolCallInput, tool_call_record


def tool_call_record_answer(*, principal: Principal, session: Session, item: ToolCallInput) -> dict[str, Any]:
    return tool_call_json(tool_call_record(session=session, item=item, actor=principal.actor))


def tool_result_answer(*, principal: Principal, call_id: str) -> dict[str, Any]:
    call, output = tool_result_get(principal=principal, call_id=call_id)
    return {"call_id": call.call_id, "tool": call.tool, "result": output, "result_bytes": call.result_bytes}
