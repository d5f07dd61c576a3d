from __future__ import annotations

from typing import Any

from memoryhub.approvals.models import Approval, ApprovalRule
from memoryhub.representations import iso_datetime


def approval_json(approval: Approval) -> dict[str, Any]:
    """An approval request (its session and agent loaded with it); `args` are the ones
    decided on (edited, or as asked), `requested_args` the agent's own."""
    return {
        "id": approval.pk, "status": approval.current_status, "session_id": approval.session.session_id, "agent": approval.agent.name,
        "tool": approval.tool, "args": approval.decided_args if approval.decided_args is not None else approval.args,
        "requested_args": approval.args, "allowed_decisions": approval.allowed_decisions, "context": approval.context,
        "response_schema": approval.response_schema, "decision": approval.decision or None, "reason": approval.reason,
        "decided_by": approval.decided_by or None, "decided_at": iso_datetime(approval.decided_at),
        "rule": approval.rule_id, "created_at": iso_datetime(approval.created_at), "expires_at": iso_datetime(approval.expires_at),
        "required_approvals": approval.required_approvals, "approvals": approvals_given(approval),
        "escalate_at": iso_datetime(approval.escalate_at), "escalated_at": iso_datetime(approval.escalated_at),
    }


def approvals_given(approval: Approval) -> list[dict[str, Any]]:
    """Who approved, so far: each approver of a request that needs several (in order), or
    the one approval that decided a request that needs one."""
    if approval.required_approvals > 1:
        return [{"by": vote.by, "at": iso_datetime(vote.at)} for vote in sorted(approval.votes.all(), key=lambda vote: vote.at)]
    if approval.decision == "approve":
        return [{"by": approval.decided_by, "at": iso_datetime(approval.decided_at)}]
    return []


def approval_rule_json(rule: ApprovalRule) -> dict[str, Any]:
    return {
        "id": rule.pk, "tool": rule.tool, "args": rule.args, "match": "exact" if rule.args_hash else "tool", "decision": rule.decision,
        "reason": rule.reason, "scope": rule.scope, "created_by": rule.created_by, "created_at": iso_datetime(rule.created_at),
    }
