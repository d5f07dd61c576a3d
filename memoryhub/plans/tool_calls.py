"""The tool-call log: writes (redacted before storage) and reads."""

from __future__ import annotations

import json
import uuid
import zlib
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from memoryhub.conversations.models import Session
from memoryhub.core.errors import ApplicationError, Conflict, NotFound
from memoryhub.core.selectors import Principal
from memoryhub.plans.models import ToolCall, ToolResult
from memoryhub.redaction import redact_json, redact_text, workspace_key
from memoryhub.timeline.services import event_record

ELISION = "\n… [{n} characters elided] …\n"


@dataclass
class ToolCallInput:
    tool: str
    args: Any
    result: Any
    call_id: str | None = None
    result_summary: str | None = None
    status: str = "ok"
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
    key = workspace_key(settings.SECRET_KEY, session.workspace_id)
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
                workspace_id=session.workspace_id, user_id=session.user_id, session=session, call_id=call_id, tool=item.tool,
                args=args, result_summary=summary_text, status=item.status, step_id=item.step_id, duration_ms=item.duration_ms,
                cost=item.cost, result_bytes=size, redactions=dict(counts),
            )
            ToolResult.objects.create(
                workspace_id=session.workspace_id, user_id=session.user_id, call=call, data=zlib.compress(output.text.encode(), 1)
            )
            event_record(
                workspace=session.workspace, kind="tool_call",
                summary=f"Tool {item.tool} ({item.status}), {size} bytes of output, {sum(counts.values())} redaction(s).",
                actor=actor, user_id=session.user_id, session_id=session.session_id, ref={"type": "tool_call", "call_id": call_id},
            )
    except IntegrityError:
        raise Conflict("A tool call with this call_id exists already.", code="CALL_ID_TAKEN", details={"call_id": call_id}) from None
    return call


def tool_calls_of(*, session: Session) -> QuerySet[ToolCall]:
    return session.tool_calls.order_by("created_at", "pk")


def tool_result_get(*, principal: Principal, call_id: str) -> tuple[ToolCall, str]:
    """The redacted raw output of a call the caller may see (its session's)."""
    calls = ToolCall.objects.filter(workspace=principal.workspace, call_id=call_id).select_related("session")
    if principal.is_agent:
        calls = calls.filter(session__agent=principal.agent)
    call = calls.first()
    if call is None:
        raise NotFound("No such tool call.", code="TOOL_CALL_NOT_FOUND")
    return call, tool_output(call)


def tool_output(call: ToolCall) -> str:
    """The stored (redacted) raw output of `call`; 410 once retention removed it."""
    result = ToolResult.objects.filter(call=call).only("data").first()
    if result is None:
        raise ApplicationError(
            "This tool call's raw output was removed by the workspace's retention policy; its summary is kept.",
            code="TOOL_OUTPUT_EXPIRED", status=410,
        )
    return zlib.decompress(bytes(result.data)).decode()


def tool_summaries_by_step(*, session: Session) -> dict[str, list[str]]:
    by_step: dict[str, list[str]] = {}
    for step_id, tool, status, summary in session.tool_calls.exclude(step_id=None).order_by("created_at").values_list(
        "step_id", "tool", "status", "result_summary"
    ):
        by_step.setdefault(step_id, []).append(f"{tool} ({status}): {summary[:200]}")
    return by_step
