"""Checkpoints and fork (docs/api.md, "Checkpoints")."""

from __future__ import annotations


from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import PAGE_PARAMETERS, SessionAPIView
from agents_api.outputs import (
    CheckpointSerializer,
    ForkedSessionSerializer,
    LoadedCheckpointSerializer,
    ResumedCheckpointSerializer,
    paged,
)
from agents_api.serializers import INT32_MAX, IdentifierField, StrictInputSerializer
from memoryhub.checkpoints import selectors, services
from memoryhub.core.errors import NotFound
from memoryhub.operations import checkpoints as operations
from memoryhub.representations.checkpoints import checkpoint_json

PARTS = list(services.CHECKPOINT_PARTS)


def _listed(request: Request, name: str) -> list[str]:
    return [part for part in request.query_params.get(name, "").split(",") if part]


class CheckpointsView(SessionAPIView):
    class CheckpointInputSerializer(StrictInputSerializer):
        expected_version = serializers.IntegerField(min_value=0, max_value=INT32_MAX - 1)
        state = serializers.JSONField()
        current_step = IdentifierField(required=False, default="", allow_blank=True)
        label = IdentifierField(required=False, default="", allow_blank=True)
        include = serializers.ListField(child=serializers.ChoiceField(choices=PARTS), required=False, allow_null=True, default=None)
        exclude = serializers.ListField(child=serializers.ChoiceField(choices=PARTS), required=False, allow_null=True, default=None)

    @extend_schema(request=CheckpointInputSerializer, responses={201: CheckpointSerializer}, summary="Save a checkpoint (version = expected_version + 1)")
    def post(self, request: Request, session_id: str) -> Response:
        data = self.input(self.CheckpointInputSerializer)
        return Response(operations.checkpoint_save_answer(principal=request.user, session=self.session, **data), status=201)

    @extend_schema(
        parameters=PAGE_PARAMETERS, responses=paged(CheckpointSerializer), summary="List checkpoints, newest first (metadata only)",
        operation_id="checkpoints_list",
    )
    def get(self, request: Request, session_id: str) -> Response:
        return self.page_response(selectors.checkpoints_page(session=self.session, **self.page_query()), checkpoint_json)


class CheckpointDetailView(SessionAPIView):
    @extend_schema(
        parameters=[OpenApiParameter("include", str, description="comma-separated: state, messages, plan, summary"), OpenApiParameter("exclude", str)],
        responses=LoadedCheckpointSerializer, summary="One checkpoint (`latest` or a version), with the parts asked for", operation_id="checkpoints_retrieve",
    )
    def get(self, request: Request, session_id: str, version: str) -> Response:
        include, exclude = _listed(request, "include"), _listed(request, "exclude")
        # Only ASCII digits: "²".isdigit() is true, and int() refuses it.
        number = int(version) if version.isascii() and version.isdigit() and len(version) <= 10 else None
        if version != "latest" and number is None:
            raise NotFound("No such checkpoint.", code="CHECKPOINT_NOT_FOUND")
        return Response(operations.checkpoint_load_answer(principal=request.user, session=self.session, version=number, include=include, exclude=exclude))


class ResumeView(SessionAPIView):
    class ResumeSerializer(StrictInputSerializer):
        from_version = serializers.IntegerField(min_value=1, max_value=INT32_MAX, required=False, allow_null=True, default=None)

    @extend_schema(
        request=ResumeSerializer, responses=ResumedCheckpointSerializer,
        summary="Resume: the checkpoint (latest, or from_version) with its state, summary, messages and plan; recorded on the timeline",
    )
    def post(self, request: Request, session_id: str) -> Response:
        data = self.input(self.ResumeSerializer)
        return Response(operations.checkpoint_resume_answer(principal=request.user, session=self.session, from_version=data["from_version"]))


class ForkView(SessionAPIView):
    class ForkSerializer(StrictInputSerializer):
        from_version = serializers.IntegerField(min_value=1, max_value=INT32_MAX)
        new_session_id = IdentifierField()

    @extend_schema(request=ForkSerializer, responses={201: ForkedSessionSerializer}, summary="Fork a new session from any checkpoint version")
    def post(self, request: Request, session_id: str) -> Response:
        data = self.input(self.ForkSerializer)
        return Response(operations.checkpoint_fork_answer(principal=request.user, session=self.session, **data), status=201)
