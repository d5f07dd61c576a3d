"""Writes of human in the loop: requests, decisions (exactly one wins), remembered
decisions, expiry. Fail closed: nothing is ever approved by default."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import orjson
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from memoryhub.approvals.models import DECIDED_STATUS, Approval, ApprovalRule, ApprovalStatus, ApprovalVote, Decision, RuleScope, unexpired
from memoryhub.approvals.schemas import SchemaRefused, response_schema_check, response_schema_violation
from memoryhub.conversations.models import Session
from memoryhub.conversations.sessions import ensure_session_active, session_suspend
from memoryhub.core import live
from memoryhub.core.audit import audit_record
from memoryhub.core.errors import ApplicationError, Conflict, Forbidden, NotFound
from memoryhub.core.models import Membership, Role
from memoryhub.core.selectors import agent_actor, operator_actor
from memoryhub.notifications.services import notification_queue, public_url
from memoryhub.privacy.services import ensure_not_blocked
from memoryhub.timeline.services import event_record

MAX_EXPIRES_IN = 30 * 86400
MAX_ARGS_BYTES = 256 * 1024
MAX_REQUIRED_APPROVALS = 10


def args_hash(args: dict[str, Any]) -> str:
    """The arguments as canonical JSON (sorted keys), hashed: key order never matters."""
    return hashlib.sha256(orjson.dumps(args, option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass
class ApprovalInput:
    tool: str
    args: dict[str, Any]
    allowed_decisions: list[str]
    context: Any = None
    expires_in: int | None = None
    response_schema: dict[str, Any] | None = None
    required_approvals: int = 1
    escalate_after: int | None = None


def _ensure_args_fit(args: dict[str, Any]) -> None:
    if len(orjson.dumps(args)) > MAX_ARGS_BYTES:
        raise ApplicationError(f"args are larger than {MAX_ARGS_BYTES} bytes.", code="PAYLOAD_TOO_LARGE", status=413)


def _matching_rule(*, session: Session, tool: str, args: dict[str, Any]) -> ApprovalRule | None:
    """The remembered decision for this call: exact arguments first, then the tool's
    wildcard; within each, the narrowest scope (session, agent, workspace)."""
    scoped = ApprovalRule.objects.filter(workspace_id=session.workspace_id, tool=tool).filter(
        Q(scope=RuleScope.WORKSPACE) | Q(scope=RuleScope.AGENT, agent_id=session.agent_id) | Q(scope=RuleScope.SESSION, session=session)
    )
    narrowest = {RuleScope.SESSION: 0, RuleScope.AGENT: 1, RuleScope.WORKSPACE: 2}
    for wanted in (args_hash(args), ""):
        rules = sorted(scoped.filter(args_hash=wanted), key=lambda rule: (narrowest[rule.scope], -rule.pk))
        if rules:
            return rules[0]
    return None


def _announce(approval: Approval, *, event: str, title: str) -> None:
    """The approval's webhook event: names, status and the console's link for everyone;
    the args and context an approver reads only for endpoints that asked for content."""
    data = {
        "approval_id": str(approval.pk), "status": approval.status, "tool": approval.tool, "agent": approval.agent.name,
        "session_id": approval.session.session_id, "url": public_url(f"/approvals/{approval.pk}/"),
        "expires_at": approval.expires_at.isoformat() if approval.expires_at else None,
    }
    if approval.decided_by:
        data |= {"decision": approval.decision, "decided_by": approval.decided_by}
    context = approval.context
    notification_queue(
        workspace=approval.workspace, event=event, title=title, data=data, content={"args": approval.args, "context": context},
        user_id=approval.user_id, summary=context if isinstance(context, str) else "" if context is None else orjson.dumps(context).decode(),
    )


def approval_request(*, session: Session, item: ApprovalInput) -> tuple[Approval, bool]:
    """Record the request (pending, or decided at once by a remembered rule). Returns the
    approval and whether it waits for a human."""
    _ensure_args_fit(item.args)
    if item.response_schema is not None:
        try:
            response_schema_check(item.response_schema)
        except SchemaRefused as refused:
            raise ApplicationError(f"response_schema cannot be used: {refused}", code="INVALID_SCHEMA") from None
    ensure_not_blocked(workspace_id=session.workspace_id, user_id=session.user_id)
    ensure_session_active(session)
    now = timezone.now()
    rule = _matching_rule(session=session, tool=item.tool, args=item.args)
    if rule is not None and rule.decision not in item.allowed_decisions:
        rule = None  # a remembered decision the agent does not accept now: ask a human
    if rule is not None and rule.decision == Decision.APPROVE and item.required_approvals > 1:
        rule = None  # one person's remembered approval is not the several people the call asks for
    approval = Approval(
        workspace=session.workspace, user_id=session.user_id, session=session, agent=session.agent, tool=item.tool,
        args=item.args, allowed_decisions=item.allowed_decisions, context=item.context, response_schema=item.response_schema,
        expires_at=now + timedelta(seconds=item.expires_in) if item.expires_in else None,
        required_approvals=item.required_approvals, escalate_at=now + timedelta(seconds=item.escalate_after) if item.escalate_after else None,
    )
    if rule is not None:
        approval.status, approval.decision, approval.rule = DECIDED_STATUS[rule.decision], rule.decision, rule
        approval.decided_args = item.args if rule.decision == Decision.APPROVE else None
        approval.reason, approval.decided_by, approval.decided_at = rule.reason, f"rule:{rule.pk}", now
    with transaction.atomic():
        approval.save(force_insert=True)
        event_record(
            workspace=session.workspace, kind="approval",
            summary=f"Approval requested for {item.tool}" + (f", decided by rule #{rule.pk}: {rule.decision}." if rule else "."),
            actor=agent_actor(session.agent), user_id=session.user_id, session_id=session.session_id,
            ref={"type": "approval", "id": str(approval.pk), "status": approval.status},
        )
        if rule is None:
            _announce(approval, event="approval.requested", title=f"Approval needed: {session.agent.name} asks to run {item.tool}")
        else:
            _announce(approval, event="approval.decided", title=f"{item.tool} {approval.status} by a remembered decision")
    return approval, rule is None


def approval_decide(
    *, membership: Membership, approval: Approval, decision: str, args: Any = None, reason: str = "", remember: str = "none",
    remember_scope: str = RuleScope.WORKSPACE, address: str | None = None,
) -> Approval:
    """One decision wins: the update is conditional on the request still pending and
    unexpired, so of two operators deciding at once one gets 409."""
    if not membership.allows(Role.APPROVER):  # admins too
        raise Forbidden("Deciding needs the approver or admin role.")
    if decision not in approval.allowed_decisions:
        raise ApplicationError(
            f"{decision!r} is not allowed for this request.", code="HITL_DECISION", details={"allowed_decisions": approval.allowed_decisions}
        )
    decided_args: Any = None
    if decision == Decision.EDIT:
        if not isinstance(args, dict):
            raise ApplicationError("Edited args must be a JSON object.", code="HITL_DECISION")
        _ensure_args_fit(args)
        if approval.response_schema is not None:
            if violation := response_schema_violation(approval.response_schema, args):
                raise ApplicationError(f"The edited args break the response schema: {violation}", code="HITL_SCHEMA")
        decided_args = args
    elif decision == Decision.APPROVE:
        decided_args = approval.args
    if remember != "none" and decision not in (Decision.APPROVE, Decision.REJECT):
        raise ApplicationError("Only approvals and rejections can be remembered.", code="HITL_DECISION")
    several = approval.required_approvals > 1
    if several and (decision == Decision.EDIT or remember != "none"):
        raise ApplicationError(
            f"This request needs {approval.required_approvals} approvers: it can be approved, rejected or suspended, not edited or "
            "remembered by one of them.", code="HITL_DECISION",
        )
    now = timezone.now()
    actor = operator_actor(membership.user)
    with transaction.atomic():
        if several and decision == Decision.APPROVE and not _vote_completes(approval=approval, actor=actor, address=address):
            approval.refresh_from_db()
            return approval
        won = Approval.objects.filter(unexpired(), pk=approval.pk, status=ApprovalStatus.PENDING).update(
            status=DECIDED_STATUS[decision], decision=decision, decided_args=decided_args, reason=reason, decided_by=actor, decided_at=now,
            decided_from=address,
        )
        if not won:
            _refuse_decided(approval)
        if decision == Decision.SUSPEND:
            session_suspend(session=approval.session, actor=actor, reason=reason)
        if remember != "none":
            ApprovalRule.objects.create(
                workspace_id=approval.workspace_id, user_id=approval.user_id, tool=approval.tool, decision=decision, reason=reason,
                args_hash=args_hash(approval.args) if remember == "exact" else "", args=approval.args if remember == "exact" else None,
                created_by=actor, scope=remember_scope,
                agent_id=approval.agent_id if remember_scope == RuleScope.AGENT else None,
                session_id=approval.session_id if remember_scope == RuleScope.SESSION else None,
            )
        event_record(
            workspace=membership.workspace, kind="approval", summary=f"Approval for {approval.tool}: {decision} by {actor}.", actor=actor,
            user_id=approval.user_id, session_id=approval.session.session_id,
            ref={"type": "approval", "id": str(approval.pk), "status": DECIDED_STATUS[decision]},
        )
        audit_record(
            action="approval_decided", actor=actor, workspace=membership.workspace, target=f"approval:{approval.pk}",
            # No tool name or args: the audit log outlives purges, and agents name tools freely.
            details={"decision": decision, "remember": remember}, ip=address,
        )
        live.publish(groups=[live.approval_group(approval.pk)], message={"approval": approval.pk, "status": DECIDED_STATUS[decision]})
        approval.refresh_from_db()
        _announce(approval, event="approval.decided", title=f"{approval.tool} {approval.status} by {actor}")
    return approval


def _refuse_decided(approval: Approval) -> None:
    approval.refresh_from_db()
    if approval.status == ApprovalStatus.PENDING:  # past its expiry, not yet swept
        raise Conflict("This request expired.", code="APPROVAL_EXPIRED")
    raise Conflict(
        f"This request was decided already ({approval.status}, by {approval.decided_by}).", code="APPROVAL_DECIDED",
        details={"status": approval.status, "decided_by": approval.decided_by},
    )


def _vote_completes(*, approval: Approval, actor: str, address: str | None) -> bool:
    """One approver's approval of a request that needs several (inside the decision's
    transaction): whether it is the last one needed. The row is locked first, so two
    approvals at once are counted one after the other; each approver counts once."""
    if not Approval.objects.select_for_update().filter(unexpired(), pk=approval.pk, status=ApprovalStatus.PENDING).exists():
        _refuse_decided(approval)
    try:
        with transaction.atomic():
            ApprovalVote.objects.create(approval=approval, by=actor)
    except IntegrityError:
        raise Conflict(
            "You approved this request already; it needs another approver.", code="APPROVAL_ALREADY_APPROVED_BY_YOU",
            details={"required_approvals": approval.required_approvals},
        ) from None
    votes = ApprovalVote.objects.filter(approval=approval).count()
    if votes >= approval.required_approvals:
        return True
    # Not decided yet: the feed and the audit log say who approved, the agent waits on.
    event_record(
        workspace=approval.workspace, kind="approval",
        summary=f"Approval for {approval.tool}: {votes} of {approval.required_approvals} approvals ({actor}).", actor=actor,
        user_id=approval.user_id, session_id=approval.session.session_id,
        ref={"type": "approval", "id": str(approval.pk), "status": ApprovalStatus.PENDING},
    )
    audit_record(
        action="approval_approved_in_part", actor=actor, workspace=approval.workspace, target=f"approval:{approval.pk}",
        details={"approvals": votes, "required_approvals": approval.required_approvals}, ip=address,
    )
    return False


def approvals_escalate() -> int:
    """Pending requests past their `escalate_at` are escalated, once (periodic): the feed,
    webhooks and the admins' email hear that nobody decided."""
    now = timezone.now()
    escalated = 0
    due = Approval.objects.filter(status=ApprovalStatus.PENDING, escalated_at__isnull=True, escalate_at__lte=now)
    for approval in due.select_related("session", "workspace", "agent"):
        with transaction.atomic():
            if not Approval.objects.filter(pk=approval.pk, status=ApprovalStatus.PENDING, escalated_at__isnull=True).update(escalated_at=now):
                continue
            escalated += 1
            waited = int((now - approval.created_at).total_seconds() // 60)
            event_record(
                workspace=approval.workspace, kind="approval", summary=f"Approval for {approval.tool} undecided after {waited} min: escalated.",
                user_id=approval.user_id, session_id=approval.session.session_id,
                ref={"type": "approval", "id": str(approval.pk), "status": ApprovalStatus.PENDING, "escalated": True},
            )
            approval.escalated_at = now
            _announce(approval, event="approval.escalated", title=f"Still undecided after {waited} min: {approval.agent.name} asks to run {approval.tool}")
    return escalated


def approvals_expire() -> int:
    """Pending requests past their expiry become expired (periodic): never approved."""
    now = timezone.now()
    expired = 0
    for approval in Approval.objects.filter(status=ApprovalStatus.PENDING, expires_at__lte=now).select_related("session", "workspace", "agent"):
        with transaction.atomic():
            if Approval.objects.filter(pk=approval.pk, status=ApprovalStatus.PENDING).update(status=ApprovalStatus.EXPIRED, decided_at=now):
                expired += 1
                event_record(
                    workspace=approval.workspace, kind="approval", summary=f"Approval for {approval.tool} expired.", user_id=approval.user_id,
                    session_id=approval.session.session_id, ref={"type": "approval", "id": str(approval.pk), "status": "expired"},
                )
                live.publish(groups=[live.approval_group(approval.pk)], message={"approval": approval.pk, "status": ApprovalStatus.EXPIRED})
                approval.status = ApprovalStatus.EXPIRED
                _announce(approval, event="approval.expired", title=f"Approval for {approval.tool} expired undecided")
    return expired


def approval_rule_revoke(*, membership: Membership, rule_id: int) -> None:
    if not membership.allows(Role.APPROVER):
        raise Forbidden("Revoking needs the approver or admin role.")
    rule = ApprovalRule.objects.filter(workspace=membership.workspace, pk=rule_id).first()
    if rule is None:
        raise NotFound("No such rule.", code="RULE_NOT_FOUND")
    with transaction.atomic():
        rule.delete()
        audit_record(
            action="approval_rule_revoked", actor=operator_actor(membership.user), workspace=membership.workspace,
            target=f"approval_rule:{rule_id}", details={"decision": rule.decision},
        )
