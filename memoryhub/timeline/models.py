"""The append-only record of what happens in a workspace."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from memoryhub.core.models import USER_ID_MAX_LENGTH, Workspace


# Every kind of timeline event, and what records it. Streams filter by these names, and
# the live feed's test walks each of them through a stream.
EVENT_KINDS: dict[str, str] = {
    "run": "a session started, suspended or reactivated",
    "message": "a message appended to a session",
    "edit": "a message edited, or a session's last messages deleted",
    "branch": "a session branched at a message",
    "summary": "messages summarised, or a summary chain compacted into long-term memory",
    "plan": "a plan written, or one of its steps moved",
    "tool_call": "a tool call logged",
    "checkpoint": "a checkpoint saved (a session's, or a LangGraph thread's)",
    "resume": "a session resumed from a checkpoint",
    "fork": "a new session forked from a checkpoint",
    "approval": "an approval requested, decided or expired",
    "episode": "an episode recorded",
    "memory": "a memory changed or deleted",
    "purge": "an end user's data purged",
    "retention": "records removed by the workspace's retention policies",
    "budget": "the month's model costs reached the workspace's warning threshold",
    "webhook": "a webhook endpoint disabled because its receiver answered 410 Gone",
}


class Event(models.Model):
    """One thing that happened. Rows are only ever inserted; the compliance purge is the
    one path that deletes them. The id increases monotonically: feeds replay by it.

    `user_id` is empty for workspace-level events (an expiry sweep's counts), which
    hold no end-user data; otherwise it names the end user, so purges reach them.
    """

    id = models.BigAutoField(primary_key=True)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=USER_ID_MAX_LENGTH, blank=True, default="", db_index=True)
    session_id = models.CharField(max_length=255, blank=True, default="")
    kind = models.CharField(max_length=32)
    at = models.DateTimeField(default=timezone.now)
    actor = models.CharField(max_length=200)
    summary = models.CharField(max_length=300)
    ref = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name = "timeline event"
        indexes = [
            models.Index(fields=["workspace", "id"], name="event_ws_id"),
            models.Index(fields=["workspace", "session_id", "id"], name="event_ws_session_id"),
        ]

    def __str__(self) -> str:
        return f"#{self.id} {self.kind}: {self.summary}"
