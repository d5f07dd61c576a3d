"""Writes of LangGraph checkpoints: put, pending writes, delete, copy, prune.

The semantics are those of LangGraph's reference savers (InMemorySaver, PostgresSaver):
a checkpoint put again replaces the earlier one, a channel value is stored once per
version, a task's regular writes are kept as first sent and its special writes
(negative indexes: error, interrupt, resume…) replaced."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from memoryhub.conversations.models import Session
from memoryhub.conversations.sessions import ensure_session_active, session_create
from memoryhub.core.errors import ApplicationError, Conflict, NotFound
from memoryhub.core.models import Agent
from memoryhub.langgraph_checkpoints.models import GraphBlob, GraphCheckpoint, GraphWrite
from memoryhub.timeline.services import event_record

PRUNE_STRATEGIES = ("keep_latest", "delete")


@dataclass(frozen=True)
class Blob:
    channel: str
    version: str
    type: str
    data: bytes


@dataclass(frozen=True)
class Write:
    idx: int
    channel: str
    type: str
    data: bytes


def graph_thread_open(*, agent: Agent, thread_id: str, user_id: str | None) -> Session:
    """The session of the thread, started on first use. `user_id` names the end user of
    a new thread only: an existing one keeps its own (a resumed run may not know it)."""
    session = Session.objects.select_related("workspace", "agent").filter(workspace_id=agent.workspace_id, session_id=thread_id).first()
    if session is None:
        if not user_id:
            raise ApplicationError("A new thread needs the user_id it is about.", code="USER_ID_REQUIRED")
        session, _ = session_create(agent=agent, session_id=thread_id, user_id=user_id, metadata={"langgraph": True})
    elif session.agent_id != agent.pk:
        raise Conflict("This thread id is taken.", code="SESSION_ID_TAKEN")
    ensure_session_active(session)  # an operator's suspension pauses the graph too
    return session


def _size_check(sizes: int) -> None:
    limit = settings.MEMORYHUB_MAX_CHECKPOINT_BYTES
    if sizes > limit:
        raise ApplicationError(
            f"The serialized values are {sizes} bytes; the limit is {limit}.", code="PAYLOAD_TOO_LARGE", status=413,
            details={"limit_bytes": limit, "state_bytes": sizes},
        )


def graph_checkpoint_put(
    *, session: Session, checkpoint_ns: str, checkpoint_id: str, parent_checkpoint_id: str, type: str, checkpoint: bytes,
    metadata: dict[str, Any], channel_versions: dict[str, str], blobs: list[Blob], actor: str,
) -> GraphCheckpoint:
    _size_check(len(checkpoint) + sum(len(b.data) for b in blobs))
    owner = {"workspace_id": session.workspace_id, "user_id": session.user_id, "session": session, "checkpoint_ns": checkpoint_ns}
    run_id = metadata.get("run_id")
    row = GraphCheckpoint(
        **owner, checkpoint_id=checkpoint_id, parent_checkpoint_id=parent_checkpoint_id, type=type, checkpoint=checkpoint,
        metadata=metadata, channel_versions=channel_versions, run_id=run_id if isinstance(run_id, str) else "",
    )
    with transaction.atomic():
        GraphBlob.objects.bulk_create(
            [GraphBlob(**owner, channel=b.channel, version=b.version, type=b.type, blob=b.data) for b in blobs], ignore_conflicts=True,
        )
        GraphCheckpoint.objects.bulk_create(
            [row], update_conflicts=True, unique_fields=["session", "checkpoint_ns", "checkpoint_id"],
            update_fields=["parent_checkpoint_id", "type", "checkpoint", "metadata", "channel_versions", "run_id", "updated_at"],
        )
        if checkpoint_ns == "":
            # Subgraphs' checkpoints (other namespaces) would drown the thread's own steps.
            step, source = metadata.get("step"), metadata.get("source")
            event_record(
                workspace=session.workspace, kind="checkpoint", actor=actor, user_id=session.user_id, session_id=session.session_id,
                summary=f"LangGraph checkpoint {checkpoint_id}" + (f" (step {step}, {source})" if step is not None else "")
                + f", {len(checkpoint) + sum(len(b.data) for b in blobs)} bytes.",
                ref={"type": "graph_checkpoint", "checkpoint_id": checkpoint_id, "checkpoint_ns": checkpoint_ns},
            )
    return row


def graph_writes_put(*, session: Session, checkpoint_ns: str, checkpoint_id: str, task_id: str, task_path: str, writes: list[Write]) -> int:
    """Store a task's pending writes; returns how many rows were written or replaced."""
    _size_check(sum(len(w.data) for w in writes))
    rows = [
        GraphWrite(
            workspace_id=session.workspace_id, user_id=session.user_id, session=session, checkpoint_ns=checkpoint_ns,
            checkpoint_id=checkpoint_id, task_id=task_id, task_path=task_path, idx=w.idx, channel=w.channel, type=w.type, blob=w.data,
        )
        for w in writes
    ]
    regular = [row for row in rows if row.idx >= 0]
    special = [row for row in rows if row.idx < 0]
    with transaction.atomic():
        # bulk_create does not say which rows a conflict skipped: the count is of those
        # not there before (informational; the unique constraint settles races).
        there = set(
            GraphWrite.objects.filter(
                session=session, checkpoint_ns=checkpoint_ns, checkpoint_id=checkpoint_id, task_id=task_id, idx__in=[r.idx for r in regular],
            ).values_list("idx", flat=True)
        ) if regular else set()
        GraphWrite.objects.bulk_create(regular, ignore_conflicts=True)
        stored = [row for row in regular if row.idx not in there]
        if special:
            GraphWrite.objects.bulk_create(
                special, update_conflicts=True, unique_fields=["session", "checkpoint_ns", "checkpoint_id", "task_id", "idx"],
                update_fields=["channel", "type", "blob", "task_path", "updated_at"],
            )
    return len(stored) + len(special)


def graph_thread_delete(*, session: Session, actor: str) -> int:
    """Every checkpoint, value and write of the thread; the session (its messages, its
    timeline) stays. Returns how many checkpoints were deleted."""
    with transaction.atomic():
        GraphWrite.objects.filter(session=session).delete()
        GraphBlob.objects.filter(session=session).delete()
        deleted, _ = GraphCheckpoint.objects.filter(session=session).delete()
        if deleted:
            event_record(
                workspace=session.workspace, kind="checkpoint", actor=actor, user_id=session.user_id, session_id=session.session_id,
                summary=f"LangGraph thread deleted: {deleted} checkpoints.", ref={"type": "graph_thread", "deleted": deleted},
            )
    return deleted


def graph_thread_copy(*, source: Session, agent: Agent, target_thread_id: str, actor: str) -> tuple[Session, int]:
    """Copy every checkpoint, value and write of `source` to the thread `target_thread_id`
    (started for the same end user); what the target has already is kept."""
    if not GraphCheckpoint.objects.filter(session=source).exists():
        raise NotFound("This thread has no checkpoints.", code="THREAD_NOT_FOUND")
    with transaction.atomic():
        target = graph_thread_open(agent=agent, thread_id=target_thread_id, user_id=source.user_id)
        if target.pk == source.pk:
            raise ApplicationError("A thread cannot be copied onto itself.", code="INVALID_TARGET")
        copied = 0
        for model, columns in (
            (GraphCheckpoint, "checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata, channel_versions, run_id"),
            (GraphBlob, "checkpoint_ns, channel, version, type, blob"),
            (GraphWrite, "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob"),
        ):
            with connection.cursor() as cursor:
                cursor.execute(
                    f"""INSERT INTO {model._meta.db_table} (workspace_id, user_id, created_at, updated_at, session_id, {columns})
                        SELECT workspace_id, %s, now(), now(), %s, {columns} FROM {model._meta.db_table} WHERE session_id = %s
                        ORDER BY id ON CONFLICT DO NOTHING""",
                    [target.user_id, target.pk, source.pk],
                )
                if model is GraphCheckpoint:
                    copied = cursor.rowcount
        for session, summary in ((source, f"LangGraph thread copied to {target.session_id}"), (target, f"LangGraph thread copied from {source.session_id}")):
            event_record(
                workspace=source.workspace, kind="checkpoint", actor=actor, user_id=session.user_id, session_id=session.session_id,
                summary=f"{summary}: {copied} checkpoints.", ref={"type": "graph_thread", "from": source.session_id, "to": target.session_id},
            )
    return target, copied


def graph_threads_prune(*, sessions: list[Session], strategy: str, actor: str) -> int:
    """`keep_latest`: each namespace of each thread keeps its latest checkpoint (with its
    writes and the values it needs); `delete`: nothing is kept. Returns checkpoints deleted."""
    if strategy not in PRUNE_STRATEGIES:
        raise ApplicationError(f"Unknown strategy {strategy!r}.", code="INVALID_STRATEGY", details={"strategies": list(PRUNE_STRATEGIES)})
    if not sessions:
        return 0
    ids = [s.pk for s in sessions]
    table = GraphCheckpoint._meta.db_table
    with transaction.atomic():
        with connection.cursor() as cursor:
            if strategy == "delete":
                cursor.execute(f"DELETE FROM {table} WHERE session_id = ANY(%s)", [ids])
            else:
                cursor.execute(
                    f"""DELETE FROM {table} WHERE session_id = ANY(%(ids)s) AND id NOT IN (
                            SELECT DISTINCT ON (session_id, checkpoint_ns) id FROM {table} WHERE session_id = ANY(%(ids)s)
                            ORDER BY session_id, checkpoint_ns, checkpoint_id DESC)""",
                    {"ids": ids},
                )
            deleted = cursor.rowcount
        graph_orphans_delete(session_ids=ids)
        for session in sessions:
            event_record(
                workspace=session.workspace, kind="checkpoint", actor=actor, user_id=session.user_id, session_id=session.session_id,
                summary=f"LangGraph thread pruned ({strategy}).", ref={"type": "graph_thread", "pruned": strategy},
            )
    return deleted


def graph_runs_delete(*, agent: Agent, run_ids: list[str]) -> int:
    """Every checkpoint of the agent's threads made by one of `run_ids` (metadata
    run_id), with its writes and the values no other checkpoint needs."""
    if not run_ids:
        return 0
    doomed = GraphCheckpoint.objects.filter(workspace_id=agent.workspace_id, session__agent=agent, run_id__in=run_ids)
    with transaction.atomic():
        session_ids = sorted(set(doomed.values_list("session_id", flat=True)))
        deleted, _ = GraphCheckpoint.objects.filter(pk__in=doomed.values("pk")).delete()
        graph_orphans_delete(session_ids=session_ids)
    return deleted


def graph_orphans_delete(*, session_ids: list[int]) -> None:
    """Writes whose checkpoint is gone, and values no remaining checkpoint names."""
    if not session_ids:
        return
    checkpoints, blobs, writes = (m._meta.db_table for m in (GraphCheckpoint, GraphBlob, GraphWrite))
    with connection.cursor() as cursor:
        cursor.execute(
            f"""DELETE FROM {writes} w WHERE w.session_id = ANY(%s) AND NOT EXISTS (
                    SELECT 1 FROM {checkpoints} c WHERE c.session_id = w.session_id AND c.checkpoint_ns = w.checkpoint_ns
                    AND c.checkpoint_id = w.checkpoint_id)""",
            [session_ids],
        )
        cursor.execute(
            f"""DELETE FROM {blobs} b WHERE b.session_id = ANY(%s) AND NOT EXISTS (
                    SELECT 1 FROM {checkpoints} c CROSS JOIN LATERAL jsonb_each_text(c.channel_versions) v
                    WHERE c.session_id = b.session_id AND c.checkpoint_ns = b.checkpoint_ns AND v.key = b.channel AND v.value = b.version)""",
            [session_ids],
        )


def graph_checkpoint_retain(*, keep: int, workspace_id: int) -> int:
    """Retention: each namespace of each thread keeps its newest `keep` checkpoints (the
    workspace's checkpoint policy, as for the hub's own checkpoints). Returns deleted."""
    table = GraphCheckpoint._meta.db_table
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"""DELETE FROM {table} WHERE id IN (SELECT id FROM (
                    SELECT id, row_number() OVER (PARTITION BY session_id, checkpoint_ns ORDER BY checkpoint_id DESC) AS rank
                    FROM {table} WHERE workspace_id = %s) ranked WHERE rank > %s)
                RETURNING session_id""",
            [workspace_id, keep],
        )
        rows = cursor.fetchall()
        graph_orphans_delete(session_ids=sorted({row[0] for row in rows}))
    return len(rows)

