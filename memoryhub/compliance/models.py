"""Right to be forgotten: purge requests and their receipts; what retention removed."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from memoryhub.core.jobs import Job
from memoryhub.core.models import Workspace


class PurgeRequest(Job):
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
    counts = models.JSONField(default=dict, blank=True)
    receipt = models.JSONField(default=dict, blank=True)
    # The job that holds the purge: each batch commits only while its token is here and
    # its heartbeat fresh, so a resumed job and a slow old one never both delete.
    runner = models.CharField(max_length=32, blank=True, default="")
    attempts = models.PositiveSmallIntegerField(default=0)
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


class RetentionRun(models.Model):
    """What one pass of the retention job removed in one workspace."""

    user_id_exemption = "Counts per kind for a whole workspace, nothing about any one user."

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="retention_runs")
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    counts = models.JSONField(default=dict, blank=True)
