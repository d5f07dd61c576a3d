"""Reads of the tool-call log and of the raw outputs kept beside it."""

from __future__ import annotations


from django.db.models import QuerySet

from memoryhub.conversations.models import Session
from memoryhub.core.errors import ApplicationError, NotFound
from memoryhub.core.models import Workspace
from memoryhub.core.pagination import Page, keyset_page
from memoryhub.core.selectors import Principal
from memoryhub.tools.models import ToolCall, ToolResult, output_read


def tool_calls_of(*, session: Session) -> QuerySet[ToolCall]:
    return session.tool_calls.order_by("created_at", "pk")


def tool_call_of(*, workspace: Workspace, session_id: str, call_id: str) -> ToolCall | None:
    return ToolCall.objects.filter(workspace=workspace, session__session_id=session_id, call_id=call_id).first()


def tool_result_get(*, principal: Principal, call_id: str) -> tuple[ToolCall, str]:
    """The redacted raw output of a call the caller may see: an agent's own; for an
    operator, the newest of that id in the workspace (ids are unique per agent)."""
    calls = ToolCall.objects.filter(workspace=principal.workspace, call_id=call_id).select_related("session")
    if principal.is_agent:
        calls = calls.filter(agent=principal.agent)
    call = calls.order_by("-id").first()
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
    return output_read(result.data)


def tool_summaries_by_step(*, session: Session) -> dict[str, list[str]]:
    by_step: dict[str, list[str]] = {}
    for step_id, tool, status, summary in session.tool_calls.exclude(step_id=None).order_by("created_at").values_list(
        "step_id", "tool", "status", "result_summary"
    ):
        by_step.setdefault(step_id, []).append(f"{tool} ({status}): {summary[:200]}")
    return by_step


def tool_calls_by_step(*, session: Session) -> dict[str, list[str]]:
    """The call_ids attached to each plan step, oldest first."""
    by_step: dict[str, list[str]] = {}
    for step_id, call_id in session.tool_calls.exclude(step_id=None).order_by("created_at").values_list("step_id", "call_id"):
        by_step.setdefault(step_id, []).append(call_id)
    return by_step


def tool_calls_page(*, session: Session, cursor: str | None, limit: int) -> Page[ToolCall]:
    """The log in the order the calls were recorded."""
    return keyset_page(session.tool_calls.all(), key="id", cursor=cursor, limit=limit)
