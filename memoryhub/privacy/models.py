"""The hub's privacy policy in data: users blocked after a purge, and each workspace's
retention limits."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from memoryhub.core.models import Workspace


class BlockedUser(models.Model):
    """A purged user the hub refuses new records for, until an admin lifts the block."""

    user_id_exemption = "Stores only a keyed hash of the blocked user_id, never the user_id."

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="blocked_users")
    user_hash = models.CharField(max_length=64)
    # The purge that asked for the block, by id: the purge lives in a higher layer
    # (compliance) and a block outlives nothing of it but this number.
    purge_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "compliance_blockeduser"
        constraints = [models.UniqueConstraint(fields=["workspace", "user_hash"], name="blocked_user_unique")]


class RetentionKind(models.TextChoices):
    TOOL_OUTPUTS = "tool_outputs", "Raw tool outputs"
    CHECKPOINTS = "checkpoints", "Checkpoints"
    WORKING_MEMORIES = "working_memories", "Working memories"
    SESSIONS = "sessions", "Inactive sessions"
    APPROVALS = "approvals", "Decided approvals"
    USAGE = "usage", "Usage records"


# What each kind's number means, the value used when a workspace sets none, and the
# largest accepted (a century: beyond it dates overflow).
RETENTION_RULES: dict[str, tuple[str, int | None, int]] = {
    RetentionKind.TOOL_OUTPUTS: ("days a raw tool output is kept (its redacted summary stays)", None, 36_500),
    RetentionKind.CHECKPOINTS: ("newest checkpoints kept per session (labelled ones always)", 50, 100_000),
    RetentionKind.WORKING_MEMORIES: ("hours a working memory lives when written without a TTL", 1, 876_000),
    RetentionKind.SESSIONS: ("days after its last activity a session is deleted with everything in it", None, 36_500),
    RetentionKind.APPROVALS: ("days a decided or expired approval request is kept (pending ones stay)", None, 36_500),
    RetentionKind.USAGE: ("days a minute of model usage (with its end user) is kept; its daily totals stay", 90, 36_500),
}


class RetentionPolicy(models.Model):
    """A workspace's limit for one kind of record; no row means the default."""

    user_id_exemption = "A workspace-wide setting: a kind and a number."

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="retention_policies")
    kind = models.CharField(max_length=20, choices=RetentionKind.choices)
    # None: keep forever (where the kind allows it).
    value = models.PositiveIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        db_table = "compliance_retentionpolicy"
        constraints = [models.UniqueConstraint(fields=["workspace", "kind"], name="retention_policy_unique")]
