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
    step_id = models.CharField(max_length=100)
    position = models.PositiveIntegerField()
    description = models.TextField()
    status = models.CharField(max_length=8, choices=StepStatus.choices, default=StepStatus.PENDING)
    depends_on = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    parent = models.CharField(max_length=100, null=True, blank=True)
    summary = models.TextField(blank=True, default="")

    class Meta(MemoryRecord.Meta):
        constraints = [
            *MemoryRecord.Meta.constraints,
            models.UniqueConstraint(fields=["plan", "step_id"], name="step_unique_id"),
        ]


class ToolCall(MemoryRecord):
    """One tool call of a session, redacted before it was stored. The listing carries
    the summary; the raw output lives beside it in ToolResult."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="tool_calls")
    call_id = models.CharField(max_length=255)
    tool = models.CharField(max_length=200)
    args = models.JSONField(default=dict, blank=True)
    result_summary = models.TextField(blank=True, default="")
    status = models.CharField(max_length=8, choices=[("ok", "ok"), ("error", "error")], default="ok")
    step_id = models.CharField(max_length=100, null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    cost = models.FloatField(null=True, blank=True)
    result_bytes = models.PositiveIntegerField(default=0)
    redactions = models.JSONField(default=dict, blank=True)

    class Meta(MemoryRecord.Meta):
        constraints = [
            *MemoryRecord.Meta.constraints,
            models.UniqueConstraint(fields=["workspace", "call_id"], name="tool_call_unique_id"),
        ]
        indexes = [models.Index(fields=["session", "created_at"], name="tool_call_session")]


class ToolResult(MemoryRecord):
    """The (redacted) raw output of a tool call, zlib-compressed, recalled by call_id."""

    call = models.OneToOneField(ToolCall, on_delete=models.CASCADE, related_name="result")
    data = models.BinaryField()

    class Meta(MemoryRecord.Meta):
        verbose_name = "raw tool output"


class Episode(MemoryRecord):
    """A finished task: what was asked, how it ended, what happened. Its narrative is
    also a long-term `episodic` memory (tag `agent-episode`), which is how similar past
    episodes are found."""

    agent = models.ForeignKey("core.Agent", on_delete=models.CASCADE, related_name="episodes")
    session = models.ForeignKey(Session, null=True, blank=True, on_delete=models.SET_NULL, related_name="episodes")
    task = models.TextField()
    outcome = models.CharField(max_length=8, choices=[("success", "success"), ("failure", "failure"), ("handoff", "handoff")])
    narrative = models.TextField()
    tools_used = models.JSONField(default=dict, blank=True)
    elapsed_ms = models.PositiveBigIntegerField(null=True, blank=True)
    cost = models.FloatField(null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    memory = models.OneToOneField("memory.MemoryEntry", null=True, blank=True, on_delete=models.SET_NULL, related_name="episode")

    class Meta(MemoryRecord.Meta):
        indexes = [models.Index(fields=["workspace", "-created_at"], name="episode_ws_created")]
