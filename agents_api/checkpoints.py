"""Checkpoints and fork (docs/api.md, "Checkpoints")."""

from __future__ import annotations

from typing import Any

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
from agents_api.sessions import session_output
from memoryhub.checkpoints import selectors, services
from memoryhub.checkpoints.models import Checkpoint
from memoryhub.conversations.messages import messages_in_order
from memoryhub.conversations.models import Session
from memoryhub.core.errors import NotFound
from memoryhub.representations.checkpoints import checkpoint_json
from memoryhub.representations.conversations import message_json

PARTS = list(services.CHECKPOINT_PARTS)


def checkpoint_full(checkpoint: Checkpoint, session: Session, parts: list[str]) -> dict[str, Any]:
    body = checkpoint_json(checkpoint)
    if "state" in parts:
        body["state"] = selectors.checkpoint_state(checkpoint)
    if "summary" in parts:
        body["summary"] = checkpoint.summary
    if "messages" in parts:
        body["messages"] = [message_json(m) for m in messages_in_order(session=session, upto_seq=checkpoint.message_seq)]
    if "plan" in parts:
        body["plan"] = checkpoint.plan
    return body


def _parts(request: Request) -> list[str]:
    """The parts a load returns: ?include= (default state and summary) minus ?exclude=."""

    def listed(name: str) -> list[str]:
        return [p for p in request.query_params.get(name, "").split(",") if p]

    return services.checkpoint_parts(include=listed("include"), exclude=listed("exclude"), default=("state", "summary"))


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
        checkpoint = services.checkpoint_save(session=self.session, actor=request.user.actor, **data)
        return Response(checkpoint_json(checkpoint), status=201)

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
        parts = _parts(request)
        # Only ASCII digits: "²".isdigit() is true, and int() refuses it.
        number = int(version) if version.isascii() and version.isdigit() and len(version) <= 10 else None
        if version != "latest" and number is None:
            raise NotFound("No such checkpoint.", code="CHECKPOINT_NOT_FOUND")
        return Response(checkpoint_full(_checkpoint(self.session, number), self.session, parts))


def _checkpoint(session: Session, version: int | None) -> Checkpoint:
    """Version `version` of the session's checkpoints, or the latest (None)."""
    checkpoint = selectors.checkpoint_load(session=session, version=version)
    if checkpoint is None:
        raise NotFound("No such checkpoint.", code="CHECKPOINT_NOT_FOUND")
    return checkpoint


class ResumeView(SessionAPIView):
    class ResumeSerializer(StrictInputSerializer):
        from_version = serializers.IntegerField(min_value=1, max_value=INT32_MAX, required=False, allow_null=True, default=None)

    @extend_schema(
        request=ResumeSerializer, responses=ResumedCheckpointSerializer,
        summary="Resume: the checkpoint (latest, or from_version) with its state, summary, messages and plan; recorded on the timeline",
    )
    def post(self, request: Request, session_id: str) -> Response:
        data = self.input(self.ResumeSerializer)
        checkpoint = _checkpoint(self.session, data["from_version"])
        services.checkpoint_resumed(session=self.session, checkpoint=checkpoint, actor=request.user.actor)
        return Response(checkpoint_full(checkpoint, self.session, list(services.CHECKPOINT_PARTS)))


class ForkView(SessionAPIView):
    class ForkSerializer(StrictInputSerializer):
        from_version = serializers.IntegerField(min_value=1, max_value=INT32_MAX)
        new_session_id = IdentifierField()

    @extend_schema(request=ForkSerializer, responses={201: ForkedSessionSerializer}, summary="Fork a new session from any checkpoint version")
    def post(self, request: Request, session_id: str) -> Response:
        data = self.input(self.ForkSerializer)
        fork = services.checkpoint_fork(session=self.session, actor=request.user.actor, **data)
        return Response({**session_output(fork), "forked_from": {"session_id": self.session.session_id, "version": data["from_version"]}}, status=201)
