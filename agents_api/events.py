"""The live feed (docs/api.md, "Timeline and live feed"): Server-Sent Events of the timeline.

The views here only decide whether a stream may open and what it carries (the caller,
the workspace, the session, the filters, where replay starts); the stream itself is sent
by the ASGI layer around Django (memoryhub/serving/event_stream.py), which asks these views for
that plan and then streams without a thread or a database connection per client.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import HubAPIView, SessionAPIView
from agents_api.permissions import operator_with_role
from agents_api.serializers import IdentifierField, StrictInputSerializer
from memoryhub.core import live
from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import Role
from memoryhub.core.selectors import Principal

INT64_MAX = 2**63 - 1

STREAM_DESCRIPTION = (
    "`text/event-stream`: each event has `id:` (its timeline id), `event:` (its kind) and `data:` (JSON: id, kind, at, actor, "
    "session_id, summary, ref); a comment line every 15 s keeps the connection alive. `Last-Event-ID` (or `last_event_id`) "
    "replays what came after that id first, with no gap and no duplicate."
)


class StreamQuerySerializer(StrictInputSerializer):
    last_event_id = serializers.IntegerField(min_value=0, max_value=INT64_MAX, required=False, allow_null=True, default=None,
                                             help_text="Replay from after this id (the Last-Event-ID header wins).")
    kind = serializers.CharField(required=False, allow_blank=True, default="", help_text="Only these kinds, comma-separated.")

    def validate_kind(self, value: str) -> list[str]:
        kinds = [k.strip() for k in value.split(",") if k.strip()]
        if any(not live.EVENT_KIND.match(k) for k in kinds):
            raise serializers.ValidationError("Kinds are lower-case names (message, tool, approval…), comma-separated.")
        return kinds


class WorkspaceStreamQuerySerializer(StreamQuerySerializer):
    session_id = IdentifierField(required=False, allow_null=True, default=None)
    agent = serializers.CharField(required=False, allow_null=True, default=None, max_length=200)


STREAM_PARAMETERS = [
    OpenApiParameter("Last-Event-ID", int, location=OpenApiParameter.HEADER, required=False, description="The last id received"),
]


class StreamView(HubAPIView):
    def plan(self, request: Request, *, principal: Principal, session_id: str | None, filters: dict[str, Any], actor: str | None) -> Response:
        if request.headers.get(live.STREAM_PLAN_HEADER) != live.STREAM_TOKEN:
            raise ApplicationError(
                "Event streams are served by the ASGI application (uvicorn memoryhub.asgi:application).", code="STREAM_NEEDS_ASGI"
            )
        header = request.META.get("HTTP_LAST_EVENT_ID", "").strip()
        after = filters["last_event_id"]
        if header:
            if not header.isdigit() or int(header) > INT64_MAX:
                raise ApplicationError("Last-Event-ID must be an event id (a whole number).", code="VALIDATION_ERROR")
            after = int(header)
        key = principal.key
        ends_on = [live.key_group(key)] if key is not None else []
        if principal.membership is not None:  # an operator's key
            ends_on.append(live.membership_group(principal.membership.pk))
        return Response(live.stream_plan(
            workspace_id=principal.workspace.pk, session_id=session_id, kinds=filters["kind"], actor=actor, after=after,
            ends_on=ends_on, ends_at=key.expires_at if key is not None else None,
        ))


class SessionEventsView(SessionAPIView, StreamView):
    @extend_schema(
        parameters=[StreamQuerySerializer, *STREAM_PARAMETERS], responses={(200, "text/event-stream"): OpenApiResponse(description=STREAM_DESCRIPTION)},
        summary="The session's events as they happen (Server-Sent Events); its agent or operators of its workspace",
    )
    def get(self, request: Request, session_id: str) -> Response:
        filters = self.input(StreamQuerySerializer, request.query_params.dict())
        return self.plan(request, principal=request.user, session_id=self.session.session_id, filters=filters, actor=None)


class WorkspaceEventsView(StreamView):
    permission_classes = [operator_with_role(Role.VIEWER)]

    @extend_schema(
        parameters=[WorkspaceStreamQuerySerializer, *STREAM_PARAMETERS],
        responses={(200, "text/event-stream"): OpenApiResponse(description=STREAM_DESCRIPTION)},
        summary="Every event of the workspace as it happens (operators), by session, agent or kind",
    )
    def get(self, request: Request) -> Response:
        filters = self.input(WorkspaceStreamQuerySerializer, request.query_params.dict())
        actor = f"agent:{filters['agent']}" if filters["agent"] else None
        return self.plan(request, principal=request.user, session_id=filters["session_id"], filters=filters, actor=actor)
