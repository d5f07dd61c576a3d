"""What the hub tells other systems: webhook endpoints and their deliveries.

A delivery is a job (core/jobs.py): written in the transaction of what caused it, so
that what was rolled back is never announced and what committed is never lost, and
sent after the commit by whichever process claims it first."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from memoryhub.core.jobs import Job, JobStatus
from memoryhub.core.models import USER_ID_MAX_LENGTH, Membership, Role, Workspace

# Every event an endpoint can ask for, and what sends it (the contract's list).
EVENTS: dict[str, str] = {
    "approval.requested": "an agent asked for a human's decision",
    "approval.decided": "an operator (or a remembered rule) decided an approval",
    "approval.expired": "an approval expired undecided",
    "approval.escalated": "an approval stayed undecided past its escalate_after",
    "memory.flagged": "a memory was flagged for review",
    "memory.quarantined": "a memory was quarantined",
    "purge.completed": "an end user's data was purged",
    "export.completed": "an export is ready to download",
    "import.completed": "an import finished",
    "budget.warning": "the month's model costs reached the workspace's warning threshold",
    "budget.exceeded": "the month's model budget is spent",
    "webhook.test": "sent by POST /api/v1/webhooks/{id}/test, whatever the endpoint's events",
}
EVENT_NAMES = list(EVENTS)
# Sent to an endpoint on request, whatever its events (and whether it is on).
TEST_EVENT = "webhook.test"


class WebhookFormat(models.TextChoices):
    STANDARD = "standard"
    SLACK = "slack"


class WebhookEndpoint(models.Model):
    user_id_exemption = "A workspace's receiver of events: a URL and the events it wants, about no end user."

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    url = models.URLField(max_length=2000)
    events = ArrayField(models.CharField(max_length=64))
    format = models.CharField(max_length=8, choices=WebhookFormat.choices, default=WebhookFormat.STANDARD)
    include_content = models.BooleanField(default=False)
    enabled = models.BooleanField(default=True)
    description = models.CharField(max_length=500, blank=True, default="")
    # Kept whole, not hashed: the hub signs with it. `whsec_` + base64 of 32 random bytes.
    secret = models.CharField(max_length=100)
    # After a rotation, deliveries are signed with the old secret too until this passes, so
    # receivers can switch without dropping one.
    previous_secret = models.CharField(max_length=100, blank=True, default="")
    previous_secret_until = models.DateTimeField(null=True, blank=True)
    # Why the hub turned it off (a 410 from the receiver), shown beside `enabled`.
    disabled_reason = models.CharField(max_length=300, blank=True, default="")
    created_by = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "enabled"], name="webhook_ws_enabled")]

    def __str__(self) -> str:
        return f"webhook {self.pk} → {self.url}"

    def secrets(self) -> list[str]:
        """The secrets a delivery is signed with now: the current one, and the previous one
        for a day after a rotation."""
        if self.previous_secret and self.previous_secret_until and self.previous_secret_until > timezone.now():
            return [self.secret, self.previous_secret]
        return [self.secret]


class DeliveryStatus(models.TextChoices):
    """What the API shows of a delivery's job status."""

    PENDING = "pending"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class Delivery(Job):
    """One message to one place (a webhook endpoint, an operator's inbox), with its
    retries. `status` is the job's: queued (waiting for `next_attempt_at`), running (being
    sent), done (accepted) or failed (out of retries, refused, or its endpoint gone)."""

    id = models.BigAutoField(primary_key=True)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    # The end user the event is about (empty for workspace-level events): a purge of that
    # user deletes the deliveries about them, sent or not (their content may name them).
    user_id = models.CharField(max_length=USER_ID_MAX_LENGTH, blank=True, default="", db_index=True)
    event = models.CharField(max_length=64)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    # The receiver's answer to the last attempt: an HTTP status, or an SMTP reply code.
    last_status_code = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def delivery_status(self) -> str:
        if self.status == JobStatus.DONE:
            return DeliveryStatus.SUCCEEDED
        if self.status == JobStatus.FAILED:
            return DeliveryStatus.FAILED
        return DeliveryStatus.PENDING


class WebhookDelivery(Delivery):
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    # `webhook-id`: the same on every attempt and on a redelivery, so receivers de-duplicate.
    message_id = models.CharField(max_length=64, db_index=True)
    # The request body, as sent on every attempt (signatures are made per attempt).
    body = models.TextField()
    # Also ON DELETE SET NULL in the database (migration 0003): a purge deletes deliveries by SQL.
    redelivery_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        indexes = [
            models.Index(fields=["endpoint", "-id"], name="delivery_endpoint_newest"),
            models.Index(fields=["next_attempt_at"], name="delivery_due", condition=Q(status=JobStatus.QUEUED)),
            models.Index(fields=["heartbeat_at"], name="delivery_running", condition=Q(status=JobStatus.RUNNING)),
        ]

    def __str__(self) -> str:
        return f"delivery {self.pk} ({self.event}) → endpoint {self.endpoint_id}"


# The events operators may have emailed to them, and the role that receives each: whoever
# can decide a request hears of it; escalations go to admins.
EMAIL_EVENTS: dict[str, str] = {"approval.requested": Role.APPROVER, "approval.escalated": Role.ADMIN}
EMAIL_EVENT_NAMES = list(EMAIL_EVENTS)


class NotificationSetting(models.Model):
    """What one operator of one workspace wants emailed, and where."""

    user_id_exemption = "An operator's choice of emails and their address; about no end user."

    membership = models.OneToOneField(Membership, on_delete=models.CASCADE, related_name="notification_setting")
    email = models.EmailField(max_length=254)
    events = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.membership}: {', '.join(self.events) or 'no'} emails to {self.email}"


class EmailDelivery(Delivery):
    """One email to one operator, sent by the same pump as webhooks."""

    membership = models.ForeignKey(Membership, on_delete=models.CASCADE, related_name="+")
    address = models.EmailField(max_length=254)
    subject = models.CharField(max_length=300)
    body = models.TextField()

    class Meta:
        indexes = [
            models.Index(fields=["next_attempt_at"], name="email_due", condition=Q(status=JobStatus.QUEUED)),
            models.Index(fields=["heartbeat_at"], name="email_running", condition=Q(status=JobStatus.RUNNING)),
        ]

    def __str__(self) -> str:
        return f"email {self.pk} ({self.event}) → {self.address}"
