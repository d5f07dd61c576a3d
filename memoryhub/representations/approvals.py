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
    }


def approval_rule_json(rule: ApprovalRule) -> dict[str, Any]:
    return {
        "id": rule.pk, "tool": rule.tool, "args": rule.args, "match": "exact" if rule.args_hash else "tool", "decision": rule.decision,
        "reason": rule.reason, "scope": rule.scope, "created_by": rule.created_by, "created_at": iso_datetime(rule.created_at),
    }
