"""Plans (docs/api.md, "Plans")."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import SessionAPIView
from agents_api.outputs import PlanRenderSerializer, PlanSerializer, StepSerializer
from agents_api.serializers import IdentifierField, StrictCharField, StrictInputSerializer
from memoryhub.operations import plans as operations
from memoryhub.plans import services
from memoryhub.plans.models import StepStatus


class StepInputSerializer(StrictInputSerializer):
    step_id = IdentifierField()
    description = StrictCharField(max_length=4000)
    depends_on = serializers.ListField(child=IdentifierField(), required=False, default=list, max_length=100)
    parent = IdentifierField(required=False, allow_null=True, default=None)


class PlanView(SessionAPIView):
    class PlanInputSerializer(StrictInputSerializer):
        goal = StrictCharField(max_length=4000)
        steps = StepInputSerializer(many=True, max_length=services.MAX_STEPS)

    @extend_schema(request=PlanInputSerializer, responses=PlanSerializer, summary="Replace the session's plan (the old one stays in history)")
    def put(self, request: Request, session_id: str) -> Response:
        data = self.input(self.PlanInputSerializer)
        steps = [services.StepInput(**step) for step in data["steps"]]
        return Response(operations.plan_replace_answer(principal=request.user, session=self.session, goal=data["goal"], steps=steps))

    @extend_schema(responses=PlanSerializer, summary="The current plan")
    def get(self, request: Request, session_id: str) -> Response:
        return Response(operations.plan_answer(principal=request.user, session=self.session))


class StepView(SessionAPIView):
    class StepChangeSerializer(StrictInputSerializer):
        status = serializers.ChoiceField(choices=StepStatus.choices)
        summary = StrictCharField(max_length=4000, required=False, allow_null=True, default=None, allow_blank=True)

    @extend_schema(request=StepChangeSerializer, responses=StepSerializer, summary="Move a step (pending → running → done / failed)")
    def patch(self, request: Request, session_id: str, step_id: str) -> Response:
        data = self.input(self.StepChangeSerializer)
        return Response(operations.plan_step_answer(principal=request.user, session=self.session, step_id=step_id, **data))


class PlanRenderView(SessionAPIView):
    @extend_schema(parameters=[OpenApiParameter("current", str)], responses=PlanRenderSerializer, summary="The plan as a compact prompt slice")
    def get(self, request: Request, session_id: str) -> Response:
        return Response(operations.plan_render_answer(principal=request.user, session=self.session, current=request.query_params.get("current") or None))
