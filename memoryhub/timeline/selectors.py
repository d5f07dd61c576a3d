"""Reads of the timeline."""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass
class Window:
    """A stretch of a session's timeline, oldest first, and whether more lies either side."""

    events: list[Event]
    earlier: bool
    later: bool


def timeline_window(
    *, workspace_id: int, session_id: str, kinds: list[str] | None = None, before: int | None = None, after: int | None = None,
    limit: int = 100,
) -> Window:
    """`limit` events after `after`, or before `before`, or the newest: long sessions are
    read a page at a time by id, never all at once."""
    events = events_in(workspace_id=workspace_id, session_id=session_id)
    if kinds:
        events = events.filter(kind__in=kinds)
    if after is not None:
        found = list(events.filter(id__gt=after).order_by("id")[: limit + 1])
        return Window(events=found[:limit], earlier=events.filter(id__lte=after).exists(), later=len(found) > limit)
    newest_first = list((events.filter(id__lt=before) if before is not None else events).order_by("-id")[: limit + 1])
    later = before is not None and events.filter(id__gte=before).exists()
    return Window(events=newest_first[:limit][::-1], earlier=len(newest_first) > limit, later=later)
