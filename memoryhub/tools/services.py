"""Writes of the tool-call log: redacted before anything is stored."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from memoryhub.conversations.models import Session
from memoryhub.core.errors import ApplicationError, Conflict
from memoryhub.privacy.redaction import pseudonym_key, redact_json, redact_text
from memoryhub.timeline.services import event_record
from memoryhub.tools.models import ToolCall, ToolCallStatus, ToolResult, output_stored

ELISION = "\n… [{n} characters elided] …\n"


@dataclass
class ToolCallInput:
    tool: str
    args: Any
    result: Any
    call_id: str | None = None
    result_summary: str | None = None
    status: str = ToolCallStatus.OK
    step_id: str | None = None
    duration_ms: int | None = None
    cost: float | None = None


def head_and_tail(text: str, budget: int) -> str:
    """A summary that fits `budget`: the start and the end, with what is between counted."""
    if len(text) <= budget:
        return text
    half = max(1, (budget - 40) // 2)
    return text[:half] + ELISION.format(n=len(text) - 2 * half) + text[-half:]


def tool_call_record(*, session: Session, item: ToolCallInput, actor: str) -> ToolCall:
    """Redact args, output and summary first; only redacted text is stored or logged."""
    raw = item.result if isinstance(item.result, str) else json.dumps(item.result, ensure_ascii=False)
    limit = settings.MEMORYHUB_MAX_TOOL_RESULT_BYTES
    size = len(raw.encode())
    if size > limit:
        raise ApplicationError(
            f"The tool output is {size} bytes; the limit is {limit}.", code="PAYLOAD_TOO_LARGE", status=413,
            details={"limit_bytes": limit, "result_bytes": size},
        )
    key = pseudonym_key(session.workspace_id)
    args, counts = redact_json(item.args, key=key)
    output = redact_text(raw, key=key)
    counts.update(output.counts)
    if item.result_summary:
        summary = redact_text(item.result_summary, key=key)
        counts.update(summary.counts)
        summary_text = head_and_tail(summary.text, settings.MEMORYHUB_TOOL_SUMMARY_CHARS * 4)
    else:
        summary_text = head_and_tail(output.text, settings.MEMORYHUB_TOOL_SUMMARY_CHARS)
    call_id = item.call_id or f"call_{uuid.uuid4().hex[:24]}"
    try:
        with transaction.atomic():
            call = ToolCall.objects.create(
                workspace_id=session.workspace_id, user_id=session.user_id, session=session, agent_id=session.agent_id, call_id=call_id,
                tool=item.tool,
                args=args, result_summary=summary_text, status=item.status, step_id=item.step_id, duration_ms=item.duration_ms,
                cost=item.cost, result_bytes=size, redactions=dict(counts),
            )
            ToolResult.objects.create(
                workspace_id=session.workspace_id, user_id=session.user_id, call=call, data=output_stored(output.text)
            )
            event_record(
                workspace=session.workspace, kind="tool_call",
                summary=f"Tool {item.tool} ({item.status}), {size} bytes of output, {sum(counts.values())} redaction(s).",
                actor=actor, user_id=session.user_id, session_id=session.session_id, ref={"type": "tool_call", "call_id": call_id},
            )
    except IntegrityError:
        raise Conflict("You logged a tool call with this call_id already.", code="CALL_ID_TAKEN", details={"call_id": call_id}) from None
    return call
