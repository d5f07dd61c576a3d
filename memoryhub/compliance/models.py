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

    class Meta:
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
