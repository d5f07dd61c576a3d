"""What model calls cost: sums per minute (with the end user they were for, kept as long
as the retention settings say), per day (about no one, kept for good), and budgets."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from memoryhub.core.models import USER_ID_MAX_LENGTH, Agent, Workspace


class Operation(models.TextChoices):
    EMBED = "embed"
    SUMMARIZE = "summarize"
    RERANK = "rerank"


class UsageSums(models.Model):
    """The sums both granularities keep."""

    provider = models.CharField(max_length=64)
    operation = models.CharField(max_length=16, choices=Operation.choices)
    calls = models.BigIntegerField(default=0)
    items = models.BigIntegerField(default=0)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    duration_ms = models.BigIntegerField(default=0)
    cost = models.DecimalField(max_digits=20, decimal_places=9, default=0)

    class Meta:
        abstract = True


class UsageRecord(UsageSums):
    """One minute of one kind of call, by one agent (none: an operator's, or the hub's own
    work), for one end user ("" when a call served several)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey(Agent, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    user_id = models.CharField(max_length=USER_ID_MAX_LENGTH, blank=True, default="")
    minute = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "agent", "user_id", "provider", "operation", "minute"], name="usage_record_key", nulls_distinct=False,
            ),
        ]
        indexes = [models.Index(fields=["workspace", "minute"], name="usage_record_ws_minute")]


class UsageDaily(UsageSums):
    """A day's totals per agent, provider and operation: what GET /usage and budgets read,
    and what stays when the minutes are gone."""

    user_id_exemption = "Totals of a day per agent, provider and operation: about no end user."

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    agent = models.ForeignKey(Agent, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    day = models.DateField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "day", "agent", "provider", "operation"], name="usage_daily_key", nulls_distinct=False),
        ]


class Budget(models.Model):
    """A workspace's monthly limit on what priced model calls may cost."""

    user_id_exemption = "A workspace-wide setting."

    workspace = models.OneToOneField(Workspace, on_delete=models.CASCADE, related_name="budget")
    monthly_limit = models.DecimalField(max_digits=20, decimal_places=6, null=True, blank=True)
    warn_at = models.DecimalField(max_digits=20, decimal_places=6, null=True, blank=True)
    # The month ("2026-12") whose warning was given: one event a month, however many writers cross it.
    warned_month = models.CharField(max_length=7, blank=True, default="")
    # The same for the month whose limit was reached.
    exceeded_month = models.CharField(max_length=7, blank=True, default="")
    updated_at = models.DateTimeField(default=timezone.now)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    def __str__(self) -> str:
        return f"budget of {self.workspace_id}: {self.monthly_limit}"
