"""Episodes: finished tasks and the most similar past ones (docs/api.md, "Episodes")."""

from __future__ import annotations

from collections import Counter
from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import PAGE_PARAMETERS, AgentAPIView, HubAPIView, ListQuerySerializer, SessionAPIView
from agents_api.outputs import EpisodeDraftSerializer, EpisodeSerializer, SimilarEpisodesSerializer, paged
from agents_api.serializers import (
    INT64_MAX,
    IdentifierField,
    StrictCharField,
    StrictInputSerializer,
    UserIdField,
    json_size_ok,
)
from memoryhub.conversations.sessions import session_get
from memoryhub.core.errors import ApplicationError
from memoryhub.episodes.models import EpisodeOutcome
from memoryhub.episodes.selectors import episode_draft, episodes_page
from memoryhub.episodes.services import EpisodeInput
from memoryhub.operations import episodes as operations
from memoryhub.representations.episodes import episode_json


@extend_schema_field({
    "oneOf": [
        {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
        {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 200}, "maxItems": 1000},
    ],
    "description": "Tool names with their call counts, or a list of tool names (counted).",
})
class ToolsUsedField(serializers.Field):
    """`{"name": count}` or, as agents usually have it, `["name", "name", …]`; stored as
    counts either way."""

    default_error_messages = {"invalid": "A {{name: count}} map or a list of tool names."}

    def to_internal_value(self, data: Any) -> dict[str, int]:
        if isinstance(data, list):
            names = serializers.ListField(child=StrictCharField(max_length=200), max_length=1000).run_validation(data)
            return dict(Counter(names))
        if isinstance(data, dict):
            return serializers.DictField(child=serializers.IntegerField(min_value=0)).run_validation(data)
        self.fail("invalid")

    def to_representation(self, value: dict[str, int]) -> dict[str, int]:
        return value


class EpisodesView(AgentAPIView):
    class EpisodeInputSerializer(StrictInputSerializer):
        user_id = UserIdField()
        task = StrictCharField(max_length=4000)
        outcome = serializers.ChoiceField(choices=EpisodeOutcome.values)
        narrative = StrictCharField(max_length=4000)
        session_id = IdentifierField(required=False, allow_null=True, default=None)
        tools_used = ToolsUsedField(required=False, default=dict)
        elapsed_ms = serializers.IntegerField(min_value=0, max_value=INT64_MAX, required=False, allow_null=True, default=None)
        cost = serializers.FloatField(min_value=0, required=False, allow_null=True, default=None)
        metadata = serializers.DictField(required=False, default=dict, validators=[json_size_ok])

    @extend_schema(request=EpisodeInputSerializer, responses={201: EpisodeSerializer}, summary="Record a finished task")
    def post(self, request: Request) -> Response:
        data = self.input(self.EpisodeInputSerializer)
        session = session_get(principal=request.user, session_id=data["session_id"]) if data["session_id"] else None
        return Response(operations.episode_record_answer(principal=request.user, session=session, item=EpisodeInput(**data)), status=201)

    class EpisodeQuerySerializer(ListQuerySerializer):
        outcome = serializers.ChoiceField(choices=EpisodeOutcome.values, required=False, allow_null=True, default=None)
        user_id = UserIdField(required=False, allow_null=True, default=None)

    @extend_schema(
        parameters=[*PAGE_PARAMETERS, OpenApiParameter("outcome", str, enum=EpisodeOutcome.values), OpenApiParameter("user_id", str)],
        responses=paged(EpisodeSerializer), summary="Episodes, newest first: an agent's own, or the workspace's for operators",
    )
    def get(self, request: Request) -> Response:
        filters = self.input(self.EpisodeQuerySerializer, request.query_params.dict())
        page = episodes_page(principal=request.user, outcome=filters["outcome"], user_id=filters["user_id"], **self.page_query())
        return self.page_response(page, episode_json)


class SimilarEpisodesView(HubAPIView):
    # A search, posted for its body: operators may ask too.
    throttle_scope = "searches"

    class SimilarInputSerializer(StrictInputSerializer):
        task = StrictCharField(max_length=4000)
        k = serializers.IntegerField(min_value=1, max_value=20, default=3)
        outcome = serializers.ChoiceField(choices=EpisodeOutcome.values, required=False, allow_null=True, default=None)
        user_id = UserIdField(required=False, allow_null=True, default=None)

    @extend_schema(request=SimilarInputSerializer, responses=SimilarEpisodesSerializer, summary="The most similar past episodes, with guidance")
    def post(self, request: Request) -> Response:
        return Response(operations.episodes_similar_answer(principal=request.user, **self.input(self.SimilarInputSerializer)))


class EpisodeDraftView(SessionAPIView):
    agent_methods = frozenset()  # a draft writes nothing: operators may ask too

    @extend_schema(request=None, responses=EpisodeDraftSerializer, summary="Draft an episode from the session, to confirm and post")
    def post(self, request: Request, session_id: str) -> Response:
        outcome = request.data.get("outcome") if isinstance(request.data, dict) else None
        if outcome not in (None, *EpisodeOutcome.values):
            raise ApplicationError("outcome must be success, failure or handoff.", code="VALIDATION_ERROR")
        return Response(episode_draft(session=self.session, outcome=outcome))
