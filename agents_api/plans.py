"""Plans (CONTRACT.md, plan rows)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents_api.serializers import StrictCharField, StrictInputSerializer, UserIdField, iso_datetime, json_size_ok, validated
from agents_api.sessions import agent_of
from memoryhub.conversations.sessions import session_get
from memoryhub.core.errors import ApplicationError
from memoryhub.episodes import selectors as episode_selectors
from memoryhub.episodes import services as episode_services
from memoryhub.episodes.models import Episode
from memoryhub.plans import selectors, services
from memoryhub.plans.models import StepStatus
from memoryhub.tools import selectors as tool_selectors
from memoryhub.tools import services as tool_services
from memoryhub.tools.models import ToolCall


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
        agent_of(request.user)
        session = session_get(principal=request.user, session_id=session_id)
        serializer = validated(self.PlanInputSerializer, request.data)
        steps = [services.StepInput(**step) for step in serializer.validated_data["steps"]]
        services.plan_replace(session=session, goal=serializer.validated_data["goal"], steps=steps, actor=request.user.actor)
        return Response(selectors.plan_snapshot(session=session, tool_calls=tool_selectors.tool_calls_by_step(session=session)))

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="The current plan")
    def get(self, request: Request, session_id: str) -> Response:
        session = session_get(principal=request.user, session_id=session_id)
        selectors.current_plan(session=session)
        return Response(selectors.plan_snapshot(session=session, tool_calls=tool_selectors.tool_calls_by_step(session=session)))


class StepView(APIView):
    class StepChangeSerializer(StrictInputSerializer):
        status = serializers.ChoiceField(choices=StepStatus.choices)
        summary = StrictCharField(max_length=4000, required=False, allow_null=True, default=None, allow_blank=True)

    @extend_schema(request=StepChangeSerializer, responses=OpenApiTypes.OBJECT, summary="Move a step (pending → running → done / failed)")
    def patch(self, request: Request, session_id: str, step_id: str) -> Response:
        agent_of(request.user)
        session = session_get(principal=request.user, session_id=session_id)
        serializer = validated(self.StepChangeSerializer, request.data)
        step = services.step_transition(session=session, step_id=step_id, actor=request.user.actor, **serializer.validated_data)
        return Response({"step_id": step.step_id, "status": step.status, "summary": step.summary, "depends_on": step.depends_on, "parent": step.parent})


class PlanRenderView(APIView):
    @extend_schema(parameters=[OpenApiParameter("current", str)], responses=OpenApiTypes.OBJECT, summary="The plan as a compact prompt slice")
    def get(self, request: Request, session_id: str) -> Response:
        session = session_get(principal=request.user, session_id=session_id)
        plan = selectors.current_plan(session=session)
        text = selectors.plan_render(
            plan=plan, current=request.query_params.get("current") or None, tool_calls=tool_selectors.tool_summaries_by_step(session=session)
        )
        return Response({"text": text})


def tool_call_output(call: ToolCall) -> dict[str, Any]:
    return {
        "call_id": call.call_id, "tool": call.tool, "args": call.args, "result_summary": call.result_summary, "status": call.status,
        "step_id": call.step_id, "duration_ms": call.duration_ms, "cost": call.cost, "result_bytes": call.result_bytes,
        "redactions": call.redactions, "created_at": iso_datetime(call.created_at),
    }


class ToolCallsView(APIView):
    class ToolCallInputSerializer(StrictInputSerializer):
        call_id = StrictCharField(max_length=255, required=False, allow_null=True, default=None)
        tool = StrictCharField(max_length=200)
        args = serializers.JSONField(required=False, default=dict)
        result = serializers.JSONField(required=False, default="")
        result_summary = StrictCharField(max_length=20_000, required=False, allow_null=True, default=None, allow_blank=True)
        status = serializers.ChoiceField(choices=["ok", "error"], default="ok")
        step_id = StrictCharField(max_length=100, required=False, allow_null=True, default=None)
        duration_ms = serializers.IntegerField(min_value=0, required=False, allow_null=True, default=None)
        cost = serializers.FloatField(min_value=0, required=False, allow_null=True, default=None)

    @extend_schema(request=ToolCallInputSerializer, responses={201: OpenApiTypes.OBJECT}, summary="Log a tool call (PII and secrets redacted first)")
    def post(self, request: Request, session_id: str) -> Response:
        agent_of(request.user)
        session = session_get(principal=request.user, session_id=session_id)
        serializer = validated(self.ToolCallInputSerializer, request.data)
        call = tool_services.tool_call_record(
            session=session, item=tool_services.ToolCallInput(**serializer.validated_data), actor=request.user.actor
        )
        return Response(tool_call_output(call), status=201)

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="The session's tool-call log (summaries only)")
    def get(self, request: Request, session_id: str) -> Response:
        session = session_get(principal=request.user, session_id=session_id)
        return Response({"results": [tool_call_output(c) for c in tool_selectors.tool_calls_of(session=session)]})


class ToolResultView(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT, summary="The (redacted) raw output of a tool call")
    def get(self, request: Request, call_id: str) -> Response:
        call, output = tool_selectors.tool_result_get(principal=request.user, call_id=call_id)
        return Response({"call_id": call.call_id, "tool": call.tool, "result": output, "result_bytes": call.result_bytes})


def episode_output(episode: Episode) -> dict[str, Any]:
    return {
        "id": episode.pk, "user_id": episode.user_id, "agent": episode.agent.name, "task": episode.task, "outcome": episode.outcome,
        "narrative": episode.narrative, "tools_used": episode.tools_used, "elapsed_ms": episode.elapsed_ms, "cost": episode.cost,
        "session_id": episode.session.session_id if episode.session_id else None, "metadata": episode.metadata,
        "created_at": iso_datetime(episode.created_at),
    }


class EpisodesView(APIView):
    class EpisodeInputSerializer(StrictInputSerializer):
        user_id = UserIdField()
        task = StrictCharField(max_length=4000)
        outcome = serializers.ChoiceField(choices=["success", "failure", "handoff"])
        narrative = StrictCharField(max_length=4000)
        session_id = StrictCharField(max_length=255, required=False, allow_null=True, default=None)
        tools_used = serializers.DictField(child=serializers.IntegerField(min_value=0), required=False, default=dict)
        elapsed_ms = serializers.IntegerField(min_value=0, required=False, allow_null=True, default=None)
        cost = serializers.FloatField(min_value=0, required=False, allow_null=True, default=None)
        metadata = serializers.DictField(required=False, default=dict, validators=[json_size_ok])

    @extend_schema(request=EpisodeInputSerializer, responses={201: OpenApiTypes.OBJECT}, summary="Record a finished task")
    def post(self, request: Request) -> Response:
        agent = agent_of(request.user)
        serializer = validated(self.EpisodeInputSerializer, request.data)
        data = serializer.validated_data
        session = session_get(principal=request.user, session_id=data["session_id"]) if data["session_id"] else None
        if session is not None and session.user_id != data["user_id"]:
            raise ApplicationError("The session is about another user_id.", code="SESSION_USER_MISMATCH")
        episode = episode_services.episode_record(agent=agent, item=episode_services.EpisodeInput(**data), session=session)
        return Response(episode_output(episode), status=201)


class SimilarEpisodesView(APIView):
    class SimilarInputSerializer(StrictInputSerializer):
        task = StrictCharField(max_length=4000)
        k = serializers.IntegerField(min_value=1, max_value=20, default=3)
        outcome = serializers.ChoiceField(choices=["success", "failure", "handoff"], required=False, allow_null=True, default=None)
        user_id = UserIdField(required=False, allow_null=True, default=None)

    @extend_schema(request=SimilarInputSerializer, responses=OpenApiTypes.OBJECT, summary="The most similar past episodes, with guidance")
    def post(self, request: Request) -> Response:
        serializer = validated(self.SimilarInputSerializer, request.data)
        similar = episode_selectors.episodes_similar(principal=request.user, **serializer.validated_data)
        return Response({
            "results": [{"episode": episode_output(s.episode), "score": round(s.score, 6)} for s in similar],
            "guidance": episode_selectors.guidance(similar),
        })


class EpisodeDraftView(APIView):
    @extend_schema(request=None, responses=OpenApiTypes.OBJECT, summary="Draft an episode from the session, to confirm and post")
    def post(self, request: Request, session_id: str) -> Response:
        session = session_get(principal=request.user, session_id=session_id)
        outcome = request.data.get("outcome") if isinstance(request.data, dict) else None
        if outcome not in (None, "success", "failure", "handoff"):
            raise ApplicationError("outcome must be success, failure or handoff.", code="VALIDATION_ERROR")
        return Response(episode_selectors.episode_draft(session=session, outcome=outcome))
