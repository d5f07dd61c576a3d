"""Reads of checkpoints: the hot path of resuming after a crash."""

from __future__ import annotations

import json
from typing import Any

from django.db.models import QuerySet

from memoryhub.checkpoints.models import Checkpoint, state_read
from memoryhub.conversations.models import Session
from memoryhub.core.pagination import Page, keyset_page
from memoryhub.core.sql import prepared_cursor

CHECKPOINT_COLUMNS = (
    "id", "version", "label", "current_step", "state", "state_bytes", "stored_bytes", "message_seq", "summary", "plan", "bundle",
    "created_at", "last_call_id", "tool_calls",
)


def checkpoint_load(*, session: Session, version: int | None = None) -> Checkpoint | None:
    """The latest checkpoint (or one version) in one plain query: resuming after a
    crash is the hot path, and the ORM's query building cost more than the read."""
    where = "session_id = %s" + (" AND version = %s" if version is not None else "")
    params = [session.pk] + ([version] if version is not None else [])
    with prepared_cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(CHECKPOINT_COLUMNS)} FROM {Checkpoint._meta.db_table} WHERE {where} ORDER BY version DESC LIMIT 1",
            params, prepare=True,
        )
        row = cursor.fetchone()
    if row is None:
        return None
    values = dict(zip(CHECKPOINT_COLUMNS, row, strict=True))
    for name in ("bundle", "plan"):
        if isinstance(values[name], str):
            values[name] = json.loads(values[name])
    checkpoint = Checkpoint(session=session, workspace_id=session.workspace_id, user_id=session.user_id, **values)
    checkpoint._state.adding = False
    return checkpoint


def checkpoints_of(*, session: Session) -> QuerySet[Checkpoint]:
    """Newest first, without the state and the plan: lists show metadata only."""
    return session.checkpoints.order_by("-version").defer("state", "plan")


def checkpoints_page(*, session: Session, cursor: str | None, limit: int) -> Page[Checkpoint]:
    return keyset_page(checkpoints_of(session=session), key="-version", cursor=cursor, limit=limit)


def checkpoint_state(checkpoint: Checkpoint) -> Any:
    return state_read(checkpoint.state)
