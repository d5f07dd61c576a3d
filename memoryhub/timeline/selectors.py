"""Reads of the timeline."""

from __future__ import annotations

from django.db.models import QuerySet

from memoryhub.core.pagination import Page, keyset_page
from memoryhub.timeline.models import Event


def session_events_page(*, workspace_id: int, session_id: str, cursor: str | None, limit: int) -> Page[Event]:
    """A session's timeline, in order."""
    return keyset_page(Event.objects.filter(workspace_id=workspace_id, session_id=session_id), key="id", cursor=cursor, limit=limit)


def newest_session_events(*, workspace_id: int, session_id: str, limit: int = 100) -> QuerySet[Event]:
    return Event.objects.filter(workspace_id=workspace_id, session_id=session_id).order_by("-id")[:limit]
