"""Plans (CONTRACT.md, plan rows)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents_api.serializers import StrictCharField, StrictInputSerializer
from agents_api.sessions import _agent_of
from memoryhub.conversations import selectors as session_selectors
from memoryhub.plans import selectors, services
from memoryhub.plans.models import StepStatus


class StepInputSerializer(StrictInputSerializer):
    step_id = StrictCharField(max_length=100)
    description = StrictCharField(max_length=4000)
    depends_on = serializers.ListField(child=StrictCharField(max_length=100), required=False, default=list, max_length=100)
    parent = StrictCharField(max_length=100, required=False, allow_null=True, default=None)


class PlanView(APIView):
    class PlanInputSerializer(StrictInputSerializer):
        goal = StrictCharField(max_length=4000)
        steps = StepInputSerializer(many=True, max_length=services.MAX_STEPS)

    @extend_schema(request=PlanInputSerializer, responses=OpenApiTypes.OBJECT, summary="Replace the session's plan (the old one stays in history)")
    def put(self, request: Request, session_id: str) -> Response:
        agent = _agent_of(request.user)
        session = session_selectors.session_get(principal=request.user, session_id=session_id)
        serializer = self.PlanInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        steps = [services.StepInput(**step) for step in serializer.validated_data["steps"]]
        services.plan_replace(session=session, goal=serializer.validated_data["goal"], steps=steps, actor=f"agent:{agent.name}")
        return Response(selectors.plan_snapshot(session=session))

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="The current plan")
    def get(self, request: Request, session_id: str) -> Response:
        session = session_selectors.session_get(principal=request.user, session_id=session_id)
        selectors.current_plan(session=session)
        return Response(selectors.plan_snapshot(session=session))


class StepView(APIView):
    class StepChangeSerializer(StrictInputSerializer):
        status = serializers.ChoiceField(choices=StepStatus.choices)
        summary = StrictCharField(max_length=4000, required=False, allow_null=True, default=None, allow_blank=True)

    @extend_schema(request=StepChangeSerializer, responses=OpenApiTypes.OBJECT, summary="Move a step (pending → running → done / failed)")
    def patch(self, request: Request, session_id: str, step_id: str) -> Response:
        agent = _agent_of(request.user)
        session = session_selectors.session_get(principal=request.user, session_id=session_id)
        serializer = self.StepChangeSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        step = services.step_transition(session=session, step_id=step_id, actor=f"agent:{agent.name}", **serializer.validated_data)
        return Response({"step_id": step.step_id, "status": step.status, "summary": step.summary, "depends_on": step.depends_on, "parent": step.parent})


class PlanRenderView(APIView):
    @extend_schema(parameters=[OpenApiParameter("current", str)], responses=OpenApiTypes.OBJECT, summary="The plan as a compact prompt slice")
    def get(self, request: Request, session_id: str) -> Response:
        session = session_selectors.session_get(principal=request.user, session_id=session_id)
        plan = selectors.current_plan(session=session)
        return Response({"text": selectors.plan_render(plan=plan, current=request.query_params.get("current") or None)})
