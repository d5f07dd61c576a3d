"""Reads of approvals: one, the inbox and the session's, the decided ones, and the
remembered rules."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Q, QuerySet

from memoryhub.approvals.models import Approval, ApprovalRule, ApprovalStatus, unexpired
from memoryhub.core.errors import NotFound
from memoryhub.core.pagination import Page, keyset_page
from memoryhub.core.selectors import Principal


def visible_approvals(*, principal: Principal) -> QuerySet[Approval]:
    """An agent's own requests; every request of an operator's workspace."""
    approvals = Approval.objects.filter(workspace=principal.workspace).select_related("session", "agent")
    return approvals.filter(agent=principal.agent) if principal.is_agent else approvals


def approval_get(*, principal: Principal, approval_id: int) -> Approval:
    approval = visible_approvals(principal=principal).filter(pk=approval_id).first()
    if approval is None:
        raise NotFound("No such approval.", code="APPROVAL_NOT_FOUND")
    return approval


def approvals_page(*, principal: Principal, status: str | None, session_id: str | None, cursor: str | None, limit: int) -> Page[Approval]:
    """Newest first."""
    approvals = visible_approvals(principal=principal)
    # As the requests' current_status says: past its expiry a pending request is expired.
    if status == ApprovalStatus.PENDING:
        approvals = approvals.filter(unexpired(), status=status)
    elif status == ApprovalStatus.EXPIRED:
        approvals = approvals.filter(Q(status=status) | (Q(status=ApprovalStatus.PENDING) & ~unexpired()))
    elif status:
        approvals = approvals.filter(status=status)
    if session_id:
        approvals = approvals.filter(session__session_id=session_id)
    return keyset_page(approvals, key="-id", cursor=cursor, limit=limit)


def rules_page(*, principal: Principal, cursor: str | None, limit: int) -> Page[ApprovalRule]:
    rules = ApprovalRule.objects.filter(workspace=principal.workspace).select_related("agent", "session")  # the console names them
    return keyset_page(rules, key="-id", cursor=cursor, limit=limit)


def pending_approvals(*, principal: Principal) -> QuerySet[Approval]:
    """Requests still waiting for a human, oldest first (the inbox index). One past its
    expiry is left out before the sweep marks it: it can no longer be approved."""
    return (
        visible_approvals(principal=principal)
        .filter(unexpired(), status=ApprovalStatus.PENDING)
        .order_by("created_at", "id")
    )


def approvals_among(*, principal: Principal, ids: Iterable[int]) -> list[Approval]:
    return list(visible_approvals(principal=principal).filter(pk__in=list(ids)).order_by("id"))


def decided_approvals_page(
    *, principal: Principal, status: str | None, tool: str, agent: str, session_id: str, cursor: str | None, limit: int
) -> Page[Approval]:
    """Every request no longer pending (expired ones included), newest request first;
    `tool` matches part of the name, the others exactly."""
    approvals = visible_approvals(principal=principal).exclude(status=ApprovalStatus.PENDING)
    if status:
        approvals = approvals.filter(status=status)
    if tool:
        approvals = approvals.filter(tool__icontains=tool)
    if agent:
        approvals = approvals.filter(agent__name=agent)
    if session_id:
        approvals = approvals.filter(session__session_id=session_id)
    return keyset_page(approvals, key="-id", cursor=cursor, limit=limit)


def approval_workspace_id(*, approval_id: int, workspace_ids: list[int]) -> int | None:
    """Which of these workspaces the approval belongs to, if any (a link names only the
    approval: the console finds the operator's workspace that holds it)."""
    return Approval.objects.filter(pk=approval_id, workspace_id__in=workspace_ids).values_list("workspace_id", flat=True).first()
