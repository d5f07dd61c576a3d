"""Reads of the timeline."""

from __future__ import annotations

from django.db.models import QuerySet

from memoryhub.timeline.models import Event


def session_events(*, workspace_id: int, session_id: str, after: int = 0, limit: int = 100) -> QuerySet[Event]:
    """A session's timeline, in order, from the event after `after` (its id)."""
    return Event.objects.filter(workspace_id=workspace_id, session_id=session_id, id__gt=after).order_by("id")[:limit]


def newest_session_events(*, workspace_id: int, session_id: str, limit: int = 100) -> QuerySet[Event]:
    return Event.objects.filter(workspace_id=workspace_id, session_id=session_id).order_by("-id")[:limit]
