"""Reads of the timeline."""

from __future__ import annotations

from django.db.models import QuerySet

from memoryhub.core.pagination import Page, keyset_page
from memoryhub.timeline.models import Event


def session_events_page(*, workspace_id: int, session_id: str, cursor: str | None, limit: int) -> Page[Event]:
    """A session's timeline, in order."""
    return keyset_page(events_in(workspace_id=workspace_id, session_id=session_id), key="id", cursor=cursor, limit=limit)


def events_in(*, workspace_id: int, session_id: str | None = None) -> QuerySet[Event]:
    """The workspace's events, or one session's."""
    events = Event.objects.filter(workspace_id=workspace_id)
    return events if session_id is None else events.filter(session_id=session_id)


def newest_events(*, workspace_id: int, session_id: str | None = None, limit: int = 100) -> QuerySet[Event]:
    return events_in(workspace_id=workspace_id, session_id=session_id).order_by("-id")[:limit]


def feed_events(
    *, workspace_id: int, after: int, session_id: str | None = None, kinds: list[str] | None = None, actor: str | None = None,
    limit: int = 500,
) -> list[Event]:
    """The live feed's next events after `after`, oldest first. Ids are final only once
    committed, and given in commit order per workspace (migration 0004), so `id > after`
    never skips an event that commits late."""
    events = events_in(workspace_id=workspace_id, session_id=session_id).filter(id__gt=after)
    if kinds:
        events = events.filter(kind__in=kinds)
    if actor:
        events = events.filter(actor=actor)
    return list(events.order_by("id")[:limit])


def feed_position(*, workspace_id: int, session_id: str | None = None) -> int:
    """The newest event id in scope (0 for none): where a stream without Last-Event-ID
    starts."""
    return events_in(workspace_id=workspace_id, session_id=session_id).order_by("-id").values_list("id", flat=True).first() or 0


def feed_item(event: Event) -> dict[str, object]:
    return {
        "id": event.id, "kind": event.kind, "at": event.at.isoformat(), "actor": event.actor, "session_id": event.session_id or None,
        "summary": event.summary, "ref": event.ref,
    }
