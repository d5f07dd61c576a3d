"""The session timeline (docs/api.md, "Timeline and live feed")."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import PAGE_PARAMETERS, SessionAPIView
from agents_api.outputs import TimelineEventSerializer, paged
from memoryhub.representations import iso_datetime
from memoryhub.timeline.models import Event
from memoryhub.timeline.selectors import session_events_page


class TimelineView(SessionAPIView):
    @extend_schema(parameters=PAGE_PARAMETERS, responses=paged(TimelineEventSerializer), summary="The session's events in order")
    def get(self, request: Request, session_id: str) -> Response:
        page = session_events_page(workspace_id=self.session.workspace_id, session_id=self.session.session_id, **self.page_query())
        return self.page_response(page, event_output)


def event_output(event: Event) -> dict[str, Any]:
    return {"id": event.id, "kind": event.kind, "at": iso_datetime(event.at), "actor": event.actor, "summary": event.summary, "ref": event.ref}
