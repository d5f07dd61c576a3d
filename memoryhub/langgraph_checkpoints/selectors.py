"""Reads of LangGraph checkpoints: a page of checkpoints with their channel values and
pending writes, in three queries whatever the page size."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from memoryhub.conversations.models import Session
from memoryhub.core.errors import ApplicationError, NotFound
from memoryhub.core.models import Agent
from memoryhub.core.pagination import Page
from memoryhub.langgraph_checkpoints.models import GraphBlob, GraphCheckpoint, GraphWrite


@dataclass
class StoredValue:
    """A value as LangGraph serialised it (`serde.dumps_typed`)."""

    type: str
    data: bytes


@dataclass
class GraphCheckpointRow:
    id: int
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str
    checkpoint: StoredValue
    metadata: dict[str, Any]
    created_at: Any
    channel_values: list[tuple[str, StoredValue]] = field(default_factory=list)
    pending_writes: list[tuple[str, str, StoredValue]] = field(default_factory=list)  # task id, channel, value


def graph_thread_get(*, agent: Agent, thread_id: str) -> Session:
    """The agent's own thread (its session), or 404."""
    session = Session.objects.select_related("workspace").filter(workspace_id=agent.workspace_id, agent=agent, session_id=thread_id).first()
    if session is None:
        raise NotFound("No such thread.", code="THREAD_NOT_FOUND")
    return session


def graph_threads_of(*, agent: Agent, thread_ids: list[str]) -> list[Session]:
    """Those of `thread_ids` that are the agent's threads; others are left out."""
    return list(Session.objects.select_related("workspace").filter(workspace_id=agent.workspace_id, agent=agent, session_id__in=thread_ids))


def _cursor_encode(checkpoint_id: str, pk: int) -> str:
    return base64.urlsafe_b64encode(json.dumps([checkpoint_id, pk]).encode()).decode().rstrip("=")


def _cursor_decode(cursor: str) -> tuple[str, int]:
    try:
        checkpoint_id, pk = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, TypeError):
        checkpoint_id = pk = None
    if not isinstance(checkpoint_id, str) or type(pk) is not int or not 0 < pk < 2**63 or "\x00" in checkpoint_id:
        raise ApplicationError("The cursor is not one this API gave out.", code="INVALID_CURSOR")
    return checkpoint_id, pk


def graph_checkpoints_page(
    *, agent: Agent, thread_id: str | None, checkpoint_ns: str | None, checkpoint_id: str | None, before: str | None,
    metadata: dict[str, Any] | None, cursor: str | None, limit: int,
) -> Page[Any]:
    """The agent's checkpoints, newest (greatest checkpoint id) first, as LangGraph's
    `list` gives them: of one thread or all, one namespace or all, `before` a checkpoint
    id, whose metadata contains `metadata`. A page follows the (checkpoint id, row id)
    of the last row of the one before."""
    table, sessions = GraphCheckpoint._meta.db_table, Session._meta.db_table
    where = ["s.workspace_id = %s", "s.agent_id = %s"]
    params: list[Any] = [agent.workspace_id, agent.pk]
    for condition, value in (
        ("s.session_id = %s", thread_id), ("c.checkpoint_ns = %s", checkpoint_ns), ("c.checkpoint_id = %s", checkpoint_id),
        ("c.checkpoint_id < %s", before), ("c.metadata @> %s::jsonb", json.dumps(metadata) if metadata else None),
    ):
        if value is not None:
            where.append(condition)
            params.append(value)
    if cursor:
        after_id, after_pk = _cursor_decode(cursor)
        where.append("(c.checkpoint_id, c.id) < (%s, %s)")
        params += [after_id, after_pk]
    with connection.cursor() as db:
        db.execute(
            f"""SELECT c.id, s.session_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint, c.metadata,
                       c.created_at
                FROM {table} c JOIN {sessions} s ON s.id = c.session_id
                WHERE {' AND '.join(where)} ORDER BY c.checkpoint_id DESC, c.id DESC LIMIT %s""",
            [*params, limit + 1],
        )
        found = db.fetchall()
    rows = [
        GraphCheckpointRow(
            id=pk, thread_id=thread, checkpoint_ns=ns, checkpoint_id=cid, parent_checkpoint_id=parent,
            checkpoint=StoredValue(kind, bytes(data)), metadata=json.loads(meta) if isinstance(meta, str) else meta, created_at=created,
        )
        for pk, thread, ns, cid, parent, kind, data, meta, created in found[:limit]
    ]
    _load_values(rows)
    more = len(found) > limit
    return Page(results=rows, next=_cursor_encode(rows[-1].checkpoint_id, rows[-1].id) if more else None)  # type: ignore[arg-type]


def _load_values(rows: list[GraphCheckpointRow]) -> None:
    """Each checkpoint's channel values (the versions it names) and pending writes, in
    the order LangGraph replays them (task path, task id, index)."""
    if not rows:
        return
    by_id = {row.id: row for row in rows}
    checkpoints, blobs, writes = (m._meta.db_table for m in (GraphCheckpoint, GraphBlob, GraphWrite))
    with connection.cursor() as db:
        db.execute(
            f"""SELECT c.id, b.channel, b.type, b.blob FROM {checkpoints} c
                CROSS JOIN LATERAL jsonb_each_text(c.channel_versions) v
                JOIN {blobs} b ON b.session_id = c.session_id AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = v.key AND b.version = v.value
                WHERE c.id = ANY(%s) ORDER BY c.id, b.channel""",
            [list(by_id)],
        )
        for pk, channel, kind, data in db.fetchall():
            by_id[pk].channel_values.append((channel, StoredValue(kind, bytes(data))))
        db.execute(
            f"""SELECT c.id, w.task_id, w.channel, w.type, w.blob FROM {checkpoints} c
                JOIN {writes} w ON w.session_id = c.session_id AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id
                WHERE c.id = ANY(%s) ORDER BY c.id, w.task_path, w.task_id, w.idx""",
            [list(by_id)],
        )
        for pk, task_id, channel, kind, data in db.fetchall():
            by_id[pk].pending_writes.append((task_id, channel, StoredValue(kind, bytes(data))))
