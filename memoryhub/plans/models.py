"""An agent's plan for a session: steps with statuses and dependencies."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q

from memoryhub.conversations.models import Session
from memoryhub.core.models import MemoryRecord


class Plan(MemoryRecord):
    """One version of a session's plan. `PUT …/plan` makes a new current one; the old
    ones stay, not current, as the plan's history."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="plans")
    version = models.PositiveIntegerField()
    goal = models.TextField()
    is_current = models.BooleanField(default=True)

    class Meta(MemoryRecord.Meta):
        constraints = [
            *MemoryRecord.Meta.constraints,
            models.UniqueConstraint(fields=["session", "version"], name="plan_unique_version"),
            models.UniqueConstraint(fields=["session"], condition=Q(is_current=True), name="plan_one_current"),
        ]


class StepStatus(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


# What a step may become from each status. `done` is final; a failed step may be retried.
TRANSITIONS = {
    StepStatus.PENDING: {StepStatus.RUNNING, StepStatus.FAILED},
    StepStatus.RUNNING: {StepStatus.DONE, StepStatus.FAILED},
    StepStatus.FAILED: {StepStatus.RUNNING, StepStatus.PENDING},
    StepStatus.DONE: set(),
}


class PlanStep(MemoryRecord):
    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="steps")
    step_id = models.CharField(max_length=200)
    position = models.PositiveIntegerField()
    description = models.TextField()
    status = models.CharField(max_length=8, choices=StepStatus.choices, default=StepStatus.PENDING)
    depends_on = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    parent = models.CharField(max_length=200, null=True, blank=True)
    summary = models.TextField(blank=True, default="")

    class Meta(MemoryRecord.Meta):
        constraints = [
            *MemoryRecord.Meta.constraints,
            models.UniqueConstraint(fields=["plan", "step_id"], name="step_unique_id"),
        ]
