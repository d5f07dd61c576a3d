"""Human in the loop: tool calls waiting for an operator's decision, and the decisions
operators asked the hub to remember."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from memoryhub.conversations.models import Session
from memoryhub.core.models import Agent, MemoryRecord


class ApprovalStatus(models.TextChoices):
    PENDING = "pending", "pending"
    APPROVED = "approved", "approved"
    EDITED = "edited", "edited"
    REJECTED = "rejected", "rejected"
    SUSPENDED = "suspended", "suspended"
    EXPIRED = "expired", "expired"


class Decision(models.TextChoices):
    APPROVE = "approve", "approve"
    EDIT = "edit", "edit"
    REJECT = "reject", "reject"
    SUSPEND = "suspend", "suspend"


# What each decision makes of a request.
DECIDED_STATUS = {
    Decision.APPROVE: ApprovalStatus.APPROVED,
    Decision.EDIT: ApprovalStatus.EDITED,
    Decision.REJECT: ApprovalStatus.REJECTED,
    Decision.SUSPEND: ApprovalStatus.SUSPENDED,
}


class RuleScope(models.TextChoices):
    WORKSPACE = "workspace", "workspace"
    AGENT = "agent", "agent"
    SESSION = "session", "session"


class ApprovalRule(MemoryRecord):
    """A remembered decision: later requests of the tool (with the same arguments, or
    any, for a wildcard) are decided at once. Carries the user_id of the session it was
    made in, so that the purge of that user takes it along."""

    scope = models.CharField(max_length=9, choices=RuleScope.choices, default=RuleScope.WORKSPACE)
    agent = models.ForeignKey(Agent, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    session = models.ForeignKey(Session, null=True, blank=True, on_delete=models.CASCADE, related_name="approval_rules")
    tool = models.CharField(max_length=200)
    # SHA-256 of the arguments as canonical JSON (sorted keys); empty: any arguments.
    args_hash = models.CharField(max_length=64, blank=True, default="")
    args = models.JSONField(null=True, blank=True)  # shown to operators; None for a wildcard
    decision = models.CharField(max_length=8, choices=Decision.choices)
    reason = models.TextField(blank=True, default="")
    created_by = models.CharField(max_length=200)

    class Meta(MemoryRecord.Meta):
        indexes = [models.Index(fields=["workspace", "tool"], name="approval_rule_tool")]


class Approval(MemoryRecord):
    """One tool call waiting for (or given) a human's decision; recorded before the tool
    runs, so an agent that crashed finds it instead of asking twice."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="approvals")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    tool = models.CharField(max_length=200)
    args = models.JSONField(default=dict)
    allowed_decisions = ArrayField(models.CharField(max_length=8, choices=Decision.choices))
    context = models.JSONField(null=True, blank=True)  # for the human: why, a plan excerpt
    response_schema = models.JSONField(null=True, blank=True)  # what edited args must satisfy
    status = models.CharField(max_length=9, choices=ApprovalStatus.choices, default=ApprovalStatus.PENDING)
    expires_at = models.DateTimeField(null=True, blank=True)
    decision = models.CharField(max_length=8, choices=Decision.choices, blank=True, default="")
    decided_args = models.JSONField(null=True, blank=True)  # the args the agent is to use
    reason = models.TextField(blank=True, default="")
    decided_by = models.CharField(max_length=200, blank=True, default="")
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_from = models.GenericIPAddressField(null=True, blank=True)
    rule = models.ForeignKey(ApprovalRule, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # The policy: approved once this many different approvers approved (the first reject
    # rejects); announced to the admins once if still undecided at `escalate_at`.
    required_approvals = models.PositiveSmallIntegerField(default=1)
    escalate_at = models.DateTimeField(null=True, blank=True)
    escalated_at = models.DateTimeField(null=True, blank=True)

    class Meta(MemoryRecord.Meta):
        indexes = [
            models.Index(fields=["workspace", "status", "created_at"], name="approval_inbox"),
            models.Index(fields=["session", "status"], name="approval_session_status"),
            models.Index(fields=["expires_at"], name="approval_expiry", condition=Q(status="pending")),
            models.Index(fields=["escalate_at"], name="approval_escalation", condition=Q(status="pending", escalated_at__isnull=True)),
        ]

    @property
    def current_status(self) -> str:
        """The status as of now: a pending request past its expiry is expired already,
        before the periodic sweep records it (a decision would be refused anyway)."""
        if self.status == ApprovalStatus.PENDING and self.expires_at is not None and self.expires_at <= timezone.now():
            return ApprovalStatus.EXPIRED
        return self.status


class ApprovalVote(models.Model):
    """One approver's approval of a request that needs several: each approver once (the
    unique constraint settles two clicks at once), the request approved with the last."""

    user_id_exemption = "An operator's vote on an approval, deleted with it; names the operator, not the end user."

    # Also ON DELETE CASCADE in the database (migration 0003): a purge deletes approvals by SQL.
    approval = models.ForeignKey(Approval, on_delete=models.CASCADE, related_name="votes")
    by = models.CharField(max_length=200)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["approval", "by"], name="approval_vote_once")]


def unexpired() -> Q:
    return Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now())
