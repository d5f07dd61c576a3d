"""The session timeline (CONTRACT.md)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import SessionAPIView
from agents_api.serializers import int_param, iso_datetime
from memoryhub.timeline.selectors import session_events


class TimelineView(SessionAPIView):
    @extend_schema(
        parameters=[OpenApiParameter("after", int, description="events after this id"), OpenApiParameter("limit", int)],
        responses=OpenApiTypes.OBJECT, summary="The session's events in order",
    )
    def get(self, request: Request, session_id: str) -> Response:
        session = self.session
        after = int_param(request, "after", 0)
        limit = int_param(request, "limit", 100, low=1, high=500)
        events = list(session_events(workspace_id=session.workspace_id, session_id=session.session_id, after=after, limit=limit + 1))
        more = len(events) > limit
        events = events[:limit]
        body = [{"id": e.id, "kind": e.kind, "at": iso_datetime(e.at), "actor": e.actor, "summary": e.summary, "ref": e.ref} for e in events]
        return Response({"results": body, "next": events[-1].id if more else None})
