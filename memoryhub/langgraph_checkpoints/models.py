"""LangGraph checkpoints: what a LangGraph checkpointer (BaseCheckpointSaver) stores,
kept per hub Session (a LangGraph thread is the session of the same id), so operators
see threads on the timeline, purges erase them by user and retention bounds them.

Values are LangGraph's own serialisation (`serde.dumps_typed`: a type name and bytes),
stored as they came and never deserialised here: the hub cannot run the agent's
classes, and must not try to."""

from __future__ import annotations

from django.db import models

from memoryhub.conversations.models import Session
from memoryhub.core.models import MemoryRecord

NAMESPACE_MAX_LENGTH = 1000  # nested subgraphs: "parent:<task id>|child:<task id>|…"
NAME_MAX_LENGTH = 500  # channel names, task paths
ID_MAX_LENGTH = 200  # checkpoint, task and run ids (LangGraph's are UUIDs)
TYPE_MAX_LENGTH = 64  # the serializer's type name ("msgpack", "json", "empty"…)
# Ids and names compare byte by byte ("C"), as Python compares str: LangGraph takes the
# greatest checkpoint id as the latest, and replays writes in (task_path, task_id, idx)
# order; a linguistic collation would order some of them differently.
BYTEWISE = "C"


class GraphCheckpoint(MemoryRecord):
    """One checkpoint of a thread's namespace, without its channel values (GraphBlob)."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="graph_checkpoints")
    checkpoint_ns = models.CharField(max_length=NAMESPACE_MAX_LENGTH, blank=True, default="", db_collation=BYTEWISE)
    checkpoint_id = models.CharField(max_length=ID_MAX_LENGTH, db_collation=BYTEWISE)
    parent_checkpoint_id = models.CharField(max_length=ID_MAX_LENGTH, blank=True, default="", db_collation=BYTEWISE)
    type = models.CharField(max_length=TYPE_MAX_LENGTH)
    checkpoint = models.BinaryField()
    # Plain JSON, so lists can filter on it (`metadata @> filter`), as LangGraph's
    # PostgresSaver does.
    metadata = models.JSONField(default=dict, blank=True)
    # channel → version (as text): which GraphBlob rows hold this checkpoint's values.
    # The checkpoint itself is opaque here, so the client sends this part of it.
    channel_versions = models.JSONField(default=dict, blank=True)
    # metadata["run_id"], as a column: delete_for_runs finds a run's checkpoints by it.
    run_id = models.CharField(max_length=ID_MAX_LENGTH, blank=True, default="")

    class Meta(MemoryRecord.Meta):
        verbose_name = "LangGraph checkpoint"  # as purge receipts and the console name it
        constraints = [
            *MemoryRecord.Meta.constraints,
            models.UniqueConstraint(fields=["session", "checkpoint_ns", "checkpoint_id"], name="graph_checkpoint_unique_id"),
        ]
        indexes = [models.Index(fields=["workspace", "run_id"], name="graph_checkpoint_run", condition=~models.Q(run_id=""))]


class GraphBlob(MemoryRecord):
    """A channel's value at one version; checkpoints share the versions they did not change."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="graph_blobs")
    checkpoint_ns = models.CharField(max_length=NAMESPACE_MAX_LENGTH, blank=True, default="", db_collation=BYTEWISE)
    channel = models.CharField(max_length=NAME_MAX_LENGTH, db_collation=BYTEWISE)
    version = models.CharField(max_length=ID_MAX_LENGTH, db_collation=BYTEWISE)
    type = models.CharField(max_length=TYPE_MAX_LENGTH)
    blob = models.BinaryField()

    class Meta(MemoryRecord.Meta):
        verbose_name = "LangGraph channel value"
        constraints = [
            *MemoryRecord.Meta.constraints,
            models.UniqueConstraint(fields=["session", "checkpoint_ns", "channel", "version"], name="graph_blob_unique_version"),
        ]


class GraphWrite(MemoryRecord):
    """A pending write of a task, saved before the next checkpoint. Unique per task and
    index, so a task's writes sent again are stored once (special writes, with negative
    indexes, replace the earlier ones: LangGraph's WRITES_IDX_MAP)."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="graph_writes")
    checkpoint_ns = models.CharField(max_length=NAMESPACE_MAX_LENGTH, blank=True, default="", db_collation=BYTEWISE)
    checkpoint_id = models.CharField(max_length=ID_MAX_LENGTH, db_collation=BYTEWISE)
    task_id = models.CharField(max_length=ID_MAX_LENGTH, db_collation=BYTEWISE)
    task_path = models.CharField(max_length=NAME_MAX_LENGTH, blank=True, default="", db_collation=BYTEWISE)
    idx = models.IntegerField()
    channel = models.CharField(max_length=NAME_MAX_LENGTH, db_collation=BYTEWISE)
    type = models.CharField(max_length=TYPE_MAX_LENGTH)
    blob = models.BinaryField()

    class Meta(MemoryRecord.Meta):
        verbose_name = "LangGraph pending write"
        constraints = [
            *MemoryRecord.Meta.constraints,
            models.UniqueConstraint(fields=["session", "checkpoint_ns", "checkpoint_id", "task_id", "idx"], name="graph_write_unique_index"),
        ]
