"""The tool-call log of a session and the raw outputs kept beside it."""

from __future__ import annotations

import zlib
from typing import Any

from django.db import models

from memoryhub.conversations.models import Session
from memoryhub.core.models import MemoryRecord


class ToolCallStatus(models.TextChoices):
    OK = "ok", "ok"
    ERROR = "error", "error"


class ToolCall(MemoryRecord):
    """One tool call of a session, redacted before it was stored. The listing carries
    the summary; the raw output lives beside it in ToolResult."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="tool_calls")
    # The session's agent, kept here so that call ids are unique per agent: an agent
    # learns nothing from another agent's ids (a taken id would tell it they exist).
    agent = models.ForeignKey("core.Agent", on_delete=models.CASCADE, related_name="+")
    call_id = models.CharField(max_length=255)
    tool = models.CharField(max_length=200)
    args = models.JSONField(default=dict, blank=True)
    result_summary = models.TextField(blank=True, default="")
    status = models.CharField(max_length=8, choices=ToolCallStatus.choices, default=ToolCallStatus.OK)
    step_id = models.CharField(max_length=200, null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    cost = models.FloatField(null=True, blank=True)
    result_bytes = models.PositiveIntegerField(default=0)
    redactions = models.JSONField(default=dict, blank=True)

    class Meta(MemoryRecord.Meta):
        db_table = "plans_toolcall"  # kept from before the layout by concept: no data moved
        constraints = [
            *MemoryRecord.Meta.constraints,
            models.UniqueConstraint(fields=["agent", "call_id"], name="tool_call_unique_per_agent"),
        ]
        indexes = [models.Index(fields=["session", "created_at"], name="tool_call_session")]


class ToolResult(MemoryRecord):
    """The (redacted) raw output of a tool call, zlib-compressed, recalled by call_id."""

    call = models.OneToOneField(ToolCall, on_delete=models.CASCADE, related_name="result")
    data = models.BinaryField()

    class Meta(MemoryRecord.Meta):
        db_table = "plans_toolresult"  # kept from before the layout by concept: no data moved
        verbose_name = "raw tool output"


def output_stored(text: str) -> bytes:
    """A (redacted) tool output as ToolResult keeps it."""
    return zlib.compress(text.encode(), 1)


def output_read(stored: Any) -> str | None:
    """The output ToolResult keeps, as text (None for none)."""
    return None if stored is None else zlib.decompress(bytes(stored)).decode()
