"""Plans (docs/api.md, "Plans")."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import SessionAPIView
from agents_api.outputs import PlanRenderSerializer, PlanSerializer, StepSerializer
from agents_api.serializers import IdentifierField, StrictCharField, StrictInputSerializer
from memoryhub.plans import selectors, services
from memoryhub.plans.models import StepStatus
from memoryhub.tools.selectors import tool_calls_by_step, tool_summaries_by_step


class StepInputSerializer(StrictInputSerializer):
    step_id = IdentifierField()
    description = StrictCharField(max_length=4000)
    depends_on = serializers.ListField(child=IdentifierField(), required=False, default=list, max_length=100)
    parent = IdentifierField(required=False, allow_null=True, default=None)


class PlanView(SessionAPIView):
    class PlanInputSerializer(StrictInputSerializer):
        goal = StrictCharField(max_length=4000)
        steps = StepInputSerializer(many=True, max_length=services.MAX_STEPS)

    def _snapshot(self) -> Response:
        return Response(selectors.plan_snapshot(session=self.session, tool_calls=tool_calls_by_step(session=self.session)))

    @extend_schema(request=PlanInputSerializer, responses=PlanSerializer, summary="Replace the session's plan (the old one stays in history)")
    def put(self, request: Request, session_id: str) -> Response:
        data = self.input(self.PlanInputSerializer)
        steps = [services.StepInput(**step) for step in data["steps"]]
        services.plan_replace(session=self.session, goal=data["goal"], steps=steps, actor=request.user.actor)
        return self._snapshot()

    @extend_schema(responses=PlanSerializer, summary="The current plan")
    def get(self, request: Request, session_id: str) -> Response:
        selectors.current_plan(session=self.session)
        return self._snapshot()


class StepView(SessionAPIView):
    class StepChangeSerializer(StrictInputSerializer):
        status = serializers.ChoiceField(choices=StepStatus.choices)
        summary = StrictCharField(max_length=4000, required=False, allow_null=True, default=None, allow_blank=True)

    @extend_schema(request=StepChangeSerializer, responses=StepSerializer, summary="Move a step (pending → running → done / failed)")
    def patch(self, request: Request, session_id: str, step_id: str) -> Response:
        data = self.input(self.StepChangeSerializer)
        step = services.step_transition(session=self.session, step_id=step_id, actor=request.user.actor, **data)
        return Response({"step_id": step.step_id, "status": step.status, "summary": step.summary, "depends_on": step.depends_on, "parent": step.parent})


class PlanRenderView(SessionAPIView):
    @extend_schema(parameters=[OpenApiParameter("current", str)], responses=PlanRenderSerializer, summary="The plan as a compact prompt slice")
    def get(self, request: Request, session_id: str) -> Response:
        plan = selectors.current_plan(session=self.session)
        text = selectors.plan_render(
            plan=plan, current=request.query_params.get("current") or None, tool_calls=tool_summaries_by_step(session=self.session)
        )
        return Response({"text": text})
