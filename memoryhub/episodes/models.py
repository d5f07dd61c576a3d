"""Episodes: finished tasks, remembered to guide similar ones."""

from __future__ import annotations

from django.db import models

from memoryhub.conversations.models import Session
from memoryhub.core.models import MemoryRecord


# The tag of an episode's own memory, by which similar past episodes are found.
EPISODE_TAG = "agent-episode"


class EpisodeOutcome(models.TextChoices):
    SUCCESS = "success", "success"
    FAILURE = "failure", "failure"
    HANDOFF = "handoff", "handoff"


class Episode(MemoryRecord):
    """A finished task: what was asked, how it ended, what happened. Its narrative is
    also a long-term `episodic` memory (tag `agent-episode`), which is how similar past
    episodes are found."""

    agent = models.ForeignKey("core.Agent", on_delete=models.CASCADE, related_name="episodes")
    session = models.ForeignKey(Session, null=True, blank=True, on_delete=models.SET_NULL, related_name="episodes")
    task = models.TextField()
    outcome = models.CharField(max_length=8, choices=EpisodeOutcome.choices)
    narrative = models.TextField()
    tools_used = models.JSONField(default=dict, blank=True)
    elapsed_ms = models.PositiveBigIntegerField(null=True, blank=True)
    cost = models.FloatField(null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    memory = models.OneToOneField("memory.MemoryEntry", null=True, blank=True, on_delete=models.SET_NULL, related_name="episode")

    class Meta(MemoryRecord.Meta):
        db_table = "plans_episode"  # kept from before the layout by concept: no data moved
        indexes = [models.Index(fields=["workspace", "-created_at"], name="episode_ws_created")]
