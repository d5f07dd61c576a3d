"""Reads of sessions and messages."""

from __future__ import annotations

from typing import Any

import json

from django.db import connection
from django.db.models import Count, Q, QuerySet

from memoryhub.core.errors import NotFound
from memoryhub.timeline.models import Event
from memoryhub.core.selectors import Principal
from memoryhub.conversations.models import Checkpoint, Message, Role, Session


def visible_sessions(principal: Principal) -> QuerySet[Session]:
    """Agents see the sessions they own; operators every session of their workspace."""
    sessions = Session.objects.filter(workspace=principal.workspace)
    if principal.is_agent:
        sessions = sessions.filter(agent=principal.agent)
    return sessions


def session_get(*, principal: Principal, session_id: str) -> Session:
    session = visible_sessions(principal).select_related("agent", "workspace").filter(session_id=session_id).first()
    if session is None:
        raise NotFound("No such session.", code="SESSION_NOT_FOUND")
    return session


def session_summary(session: Session) -> dict[str, Any]:
    """Message counts in one query."""
    counts = session.messages.aggregate(
        messages=Count("pk"),
        pinned=Count("pk", filter=Q(pinned=True)),
        **{role: Count("pk", filter=Q(role=role)) for role in Role.values},
    )
    return {
        "messages": counts["messages"],
        "pinned": counts["pinned"],
        "by_role": {role: counts[role] for role in Role.values},
    }


def messages_in_order(*, session: Session) -> QuerySet[Message]:
    return session.messages.order_by("seq")


def session_events(*, session: Session, after: int = 0, limit: int = 100) -> QuerySet[Event]:
    """The session's timeline, in order, from the event after `after` (its id)."""
    return Event.objects.filter(workspace_id=session.workspace_id, session_id=session.session_id, id__gt=after).order_by("id")[:limit]


CHECKPOINT_COLUMNS = (
    "id", "version", "label", "current_step", "state", "state_bytes", "stored_bytes", "message_seq", "summary", "plan", "bundle",
    "created_at", "last_call_id", "tool_calls",
)


def checkpoint_load(*, session: Session, version: int | None = None) -> Checkpoint | None:
    """The latest checkpoint (or one version) in one plain query: resuming after a
    crash is the hot path, and the ORM's query building cost more than the read."""
    where = "session_id = %s" + (" AND version = %s" if version is not None else "")
    params = [session.pk] + ([version] if version is not None else [])
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(CHECKPOINT_COLUMNS)} FROM {Checkpoint._meta.db_table} WHERE {where} ORDER BY version DESC LIMIT 1",
            params,
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
