"""The console's reads that span several domains: the sessions list, with what each
session holds across conversations, tools, checkpoints, approvals and episodes."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from datetime import date, datetime, time
from typing import Any

from django.db.models import Count, DateTimeField, Exists, F, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from memoryhub.approvals.models import Approval, ApprovalStatus, unexpired
from memoryhub.checkpoints.models import Checkpoint
from memoryhub.conversations.models import Message, Session
from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import Workspace
from memoryhub.episodes.models import Episode
from memoryhub.timeline.models import Event
from memoryhub.tools.models import ToolCall

SESSION_STATUSES = {
    "active": "Active",
    "suspended": "Suspended",
    "finished": "Finished",  # an episode was recorded for it: the agent reported the task done
}

# Each order: the annotation it sorts by, and which way. Ties are broken by the primary
# key, so the pair is unique and the cursor can continue after it.
SESSION_ORDERS = {
    "recent": ("last_activity", True),
    "newest": ("created_at", True),
    "oldest": ("created_at", False),
    "messages": ("message_count", True),
}
SESSION_ORDER_NAMES = {"recent": "Last activity", "newest": "Newest first", "oldest": "Oldest first", "messages": "Most messages"}


@dataclass(frozen=True)
class SessionFilters:
    q: str = ""
    agent: str = ""
    store: str = ""
    user_id: str = ""
    status: str = ""
    started_from: date | None = None
    started_to: date | None = None
    order: str = "recent"


@dataclass
class SessionPage:
    rows: list[Session]
    next: str | None = None
    filters: SessionFilters = field(default_factory=SessionFilters)


def _count(model: type, *conditions: Q, **extra: Any) -> Subquery:
    rows = model.objects.filter(*conditions, session=OuterRef("pk"), **extra).order_by().values("session")
    return Coalesce(Subquery(rows.annotate(n=Count("pk")).values("n")[:1], output_field=IntegerField()), Value(0))


def sessions_listed(*, workspace: Workspace) -> QuerySet[Session]:
    """The workspace's sessions with the counts the list shows, each a correlated
    subquery: one statement per page whatever its length."""
    last_event = Event.objects.filter(workspace_id=OuterRef("workspace_id"), session_id=OuterRef("session_id")).order_by("-id")
    return (
        Session.objects.filter(workspace=workspace)
        .select_related("agent", "parent")
        .annotate(
            message_count=_count(Message),
            tool_call_count=_count(ToolCall),
            checkpoint_count=_count(Checkpoint),
            pending_approvals=_count(Approval, unexpired(), status=ApprovalStatus.PENDING),
            finished=Exists(Episode.objects.filter(session=OuterRef("pk"))),
            last_activity=Coalesce(Subquery(last_event.values("at")[:1], output_field=DateTimeField()), F("created_at")),
        )
    )


def session_listed(*, workspace: Workspace, session_id: str) -> Session | None:
    """One session of the workspace as the list shows it (with its counts); None if none."""
    return sessions_listed(workspace=workspace).filter(session_id=session_id).first()


def _cursor_encode(value: object, pk: int) -> str:
    raw = value.isoformat() if isinstance(value, datetime) else value
    return base64.urlsafe_b64encode(json.dumps([raw, pk]).encode()).decode().rstrip("=")


def _cursor_decode(cursor: str, *, datetimes: bool) -> tuple[object, int]:
    try:
        raw, pk = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        value = datetime.fromisoformat(raw) if datetimes else raw
        if type(pk) is not int or (not datetimes and type(value) is not int) or (datetimes and value.tzinfo is None):
            raise ValueError
    except (ValueError, TypeError, AttributeError):
        raise ApplicationError("That page link is not one this console gave out.", code="INVALID_CURSOR") from None
    return value, pk


def sessions_page(*, workspace: Workspace, filters: SessionFilters, cursor: str | None, limit: int) -> SessionPage:
    sessions = sessions_listed(workspace=workspace)
    if filters.q:
        sessions = sessions.filter(Q(session_id__icontains=filters.q) | Q(user_id=filters.q))
    if filters.agent:
        sessions = sessions.filter(agent__name=filters.agent)
    if filters.store:
        sessions = sessions.filter(agent__stores__name=filters.store)
    if filters.user_id:
        sessions = sessions.filter(user_id=filters.user_id)
    if filters.status == "suspended":
        sessions = sessions.filter(suspended_at__isnull=False)
    elif filters.status == "finished":
        sessions = sessions.filter(suspended_at__isnull=True, finished=True)
    elif filters.status == "active":
        sessions = sessions.filter(suspended_at__isnull=True, finished=False)
    tz = timezone.get_current_timezone()
    if filters.started_from:
        sessions = sessions.filter(created_at__gte=datetime.combine(filters.started_from, time.min, tzinfo=tz))
    if filters.started_to:
        sessions = sessions.filter(created_at__lt=datetime.combine(filters.started_to, time.max, tzinfo=tz))
    key, descending = SESSION_ORDERS[filters.order]
    if cursor:
        value, pk = _cursor_decode(cursor, datetimes=key != "message_count")
        after = Q(**{f"{key}__lt" if descending else f"{key}__gt": value}) | Q(**{key: value, "pk__lt" if descending else "pk__gt": pk})
        sessions = sessions.filter(after)
    ordering = [f"-{key}", "-pk"] if descending else [key, "pk"]
    found = list(sessions.order_by(*ordering)[: limit + 1])
    rows = found[:limit]
    more = len(found) > limit
    return SessionPage(rows=rows, next=_cursor_encode(getattr(rows[-1], key), rows[-1].pk) if more else None, filters=filters)
