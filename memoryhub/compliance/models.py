"""Right to be forgotten: purge requests and their receipts."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from memoryhub.core.models import Workspace


class PurgeStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class PurgeRequest(models.Model):
    """One erasure of one end user's data in a workspace."""

    user_id_exemption = (
        "Holds only a keyed hash of the user_id it erased; the user_id itself is kept in "
        "pending_user_id while the job runs and blanked when it ends."
    )

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="purges")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    user_hash = models.CharField(max_length=64, db_index=True)
    pending_user_id = models.CharField(max_length=255, blank=True, default="")
    dry_run = models.BooleanField(default=False)
    status = models.CharField(max_length=8, choices=PurgeStatus.choices, default=PurgeStatus.QUEUED)
    progress = models.FloatField(default=0.0)
    counts = models.JSONField(default=dict, blank=True)
    receipt = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The job that holds the purge: each batch commits only while its token is here and
    # its heartbeat fresh, so a resumed job and a slow old one never both delete.
    runner = models.CharField(max_length=32, blank=True, default="")
    attempts = models.PositiveSmallIntegerField(default=0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Set when a VACUUM with index clean-up has removed the deleted rows from every
    # index (vectors from HNSW included); see services.purged_storage_clean.
    storage_cleaned_at = models.DateTimeField(null=True, blank=True)
    vacuum_seconds = models.FloatField(null=True, blank=True)

    @property
    def total_deleted(self) -> int:
        return sum(self.counts.values()) if not self.dry_run else 0

    class Meta:
        indexes = [
            # The write fence (fence.py) looks up live purges by the user_id in clear.
            models.Index(
                fields=["workspace", "pending_user_id"], name="purge_live_user",
                condition=models.Q(status__in=["queued", "running"], dry_run=False),
            )
        ]
        constraints = [
            # Two purges of one user in one workspace coalesce: at most one is live.
            models.UniqueConstraint(
                fields=["workspace", "user_hash"],
                condition=models.Q(status__in=["queued", "running"], dry_run=False),
                name="purge_one_live_per_user",
            )
        ]


class BlockedUser(models.Model):
    """A purged user the hub refuses new records for, until an admin lifts the block."""

    user_id_exemption = "Stores only a keyed hash of the blocked user_id, never the user_id."

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="blocked_users")
    user_hash = models.CharField(max_length=64)
    purge = models.ForeignKey(PurgeRequest, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "user_hash"], name="blocked_user_unique")]


class RetentionKind(models.TextChoices):
    TOOL_OUTPUTS = "tool_outputs", "Raw tool outputs"
    CHECKPOINTS = "checkpoints", "Checkpoints"
    WORKING_MEMORIES = "working_memories", "Working memories"
    SESSIONS = "sessions", "Inactive sessions"


# What each kind's number means, the value used when a workspace sets none, and the
# largest accepted (a century: beyond it dates overflow).
RETENTION_RULES: dict[str, tuple[str, int | None, int]] = {
    RetentionKind.TOOL_OUTPUTS: ("days a raw tool output is kept (its redacted summary stays)", None, 36_500),
    RetentionKind.CHECKPOINTS: ("newest checkpoints kept per session (labelled ones always)", 50, 100_000),
    RetentionKind.WORKING_MEMORIES: ("hours a working memory lives when written without a TTL", 1, 876_000),
    RetentionKind.SESSIONS: ("days after its last activity a session is deleted with everything in it", None, 36_500),
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
        constraints = [models.UniqueConstraint(fields=["workspace", "kind"], name="retention_policy_unique")]


class RetentionRun(models.Model):
    """What one pass of the retention job removed in one workspace."""

    user_id_exemption = "Counts per kind for a whole workspace, nothing about any one user."

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="retention_runs")
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    counts = models.JSONField(default=dict, blank=True)


class AuditEntry(models.Model):
    """Who did what to access, keys, purges and policies. Rows are only ever inserted:
    a database trigger refuses UPDATE and DELETE (see fence.py). The workspace is kept
    by id and slug rather than a foreign key, so deleting a workspace leaves its record."""

    user_id_exemption = "Names operators, never end users: purges are recorded by the keyed hash of the user_id."

    workspace_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    workspace_slug = models.CharField(max_length=100, blank=True, default="")
    actor = models.CharField(max_length=200)
    action = models.CharField(max_length=50, db_index=True)
    target = models.CharField(max_length=200, blank=True, default="")
    details = models.JSONField(default=dict, blank=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
