"""Sessions and their messages: the short-term memory of an agent."""

from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.db import models

from memoryhub.core.models import Agent, MemoryRecord


class SummaryPolicy(models.TextChoices):
    MANUAL = "manual", "manual"
    ROLLING = "rolling", "rolling"


class Session(MemoryRecord):
    """One conversation, keyed by the client's own id (unique per workspace)."""

    session_id = models.CharField(max_length=255)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="sessions")
    metadata = models.JSONField(default=dict, blank=True)
    # What the agent keeps beside the conversation (a framework's session state): written
    # key by key, on its own or with an append, in the same transaction.
    state = models.JSONField(default=dict, blank=True)
    # The last seq handed out. Appends take it with a conditional UPDATE … RETURNING,
    # which serialises them per session: seqs are strictly increasing, never reused.
    last_seq = models.PositiveBigIntegerField(default=0)
    # Branches: the session this one was copied from, and up to which seq.
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="branches")
    parent_seq = models.PositiveBigIntegerField(null=True, blank=True)
    label = models.CharField(max_length=200, blank=True, default="")
    # Rolling summary chain: `manual` summarises when the agent asks, `rolling` after
    # every exchange in the background; only messages after last_summary_index are new.
    summary_policy = models.CharField(max_length=8, choices=SummaryPolicy.choices, default=SummaryPolicy.MANUAL)
    last_summary_index = models.PositiveBigIntegerField(default=0)
    meta_compaction_threshold = models.PositiveIntegerField(default=10)
    # The latest checkpoint version: saves move it with a conditional UPDATE, so of
    # racing writers with the same expected_version exactly one wins.
    checkpoint_version = models.PositiveIntegerField(default=0)
    # Set when an operator answers an approval with `suspend`: the agent is to pause
    # (no new approval requests, no resume) until an operator reactivates the session.
    suspended_at = models.DateTimeField(null=True, blank=True)
    suspended_by = models.CharField(max_length=200, blank=True, default="")

    class Meta(MemoryRecord.Meta):
        constraints = [
            *MemoryRecord.Meta.constraints,
            models.UniqueConstraint(fields=["workspace", "session_id"], name="session_unique_client_id"),
        ]
        indexes = [
            # Lists of an agent's sessions by what a framework wrote in their metadata (its app).
            GinIndex(fields=["metadata"], name="session_metadata_gin", opclasses=["jsonb_path_ops"]),
        ]

    def __str__(self) -> str:
        return self.session_id


class Role(models.TextChoices):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class Message(MemoryRecord):
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="messages")
    seq = models.PositiveBigIntegerField()
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField(blank=True, default="")
    tool_calls = models.JSONField(null=True, blank=True)
    tool_call_id = models.CharField(max_length=255, null=True, blank=True)
    pinned = models.BooleanField(default=False)
    revision = models.PositiveIntegerField(default=1)
    # An agent framework's own form of the message, as JSON text rather than jsonb: it is
    # handed back exactly as it came, key order included (jsonb would sort the keys).
    item = models.TextField(null=True, blank=True)

    class Meta(MemoryRecord.Meta):
        constraints = [
            *MemoryRecord.Meta.constraints,
            models.UniqueConstraint(fields=["session", "seq"], name="message_unique_seq"),
        ]
        indexes = [
            models.Index(fields=["session", "tool_call_id"], name="message_tool_call", condition=models.Q(tool_call_id__isnull=False)),
            # Contexts read the protected messages of a session without scanning it.
            models.Index(fields=["session", "seq"], name="message_protected", condition=models.Q(pinned=True) | models.Q(role="system")),
            # Finding the call a tool result answers, without scanning the session.
            GinIndex(fields=["tool_calls"], name="message_tool_calls_gin", opclasses=["jsonb_path_ops"], condition=models.Q(tool_calls__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.seq} {self.role}"


class MessageRevision(MemoryRecord):
    """An earlier content of an edited message, kept for the timeline and the console."""

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="revisions")
    revision = models.PositiveIntegerField()
    content = models.TextField(blank=True, default="")
    replaced_at = models.DateTimeField(auto_now_add=True)

    class Meta(MemoryRecord.Meta):
        constraints = [
            *MemoryRecord.Meta.constraints,
            models.UniqueConstraint(fields=["message", "revision"], name="revision_unique_number"),
        ]


class Summary(MemoryRecord):
    """A stored summary of a range of a session's messages: computed once, reused by
    every context read that needs the same range."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="summaries")
    from_seq = models.PositiveBigIntegerField()
    to_seq = models.PositiveBigIntegerField()
    summariser = models.CharField(max_length=100)
    text = models.TextField()

    class Meta(MemoryRecord.Meta):
        verbose_name_plural = "summaries"
        constraints = [
            *MemoryRecord.Meta.constraints,
            models.UniqueConstraint(fields=["session", "from_seq", "to_seq", "summariser"], name="summary_unique_range"),
        ]


class ChainSummary(MemoryRecord):
    """One link of a session's rolling summary chain: the summary of the messages
    from_seq..to_seq, made when they were new. Compacted into a long-term memory and
    deleted when the chain grows past the session's threshold."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="chain")
    index = models.PositiveIntegerField()
    from_seq = models.PositiveBigIntegerField()
    to_seq = models.PositiveBigIntegerField()
    summariser = models.CharField(max_length=100)
    text = models.TextField()

    class Meta(MemoryRecord.Meta):
        verbose_name = "summary chain link"
        constraints = [
            *MemoryRecord.Meta.constraints,
            models.UniqueConstraint(fields=["session", "from_seq"], name="chain_unique_start"),
        ]
