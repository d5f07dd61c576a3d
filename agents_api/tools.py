"""The tool-call log and raw outputs (docs/api.md, "Tool calls")."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import PAGE_PARAMETERS, HubAPIView, SessionAPIView
from agents_api.outputs import ToolCallSerializer, ToolResultSerializer, paged
from agents_api.serializers import INT32_MAX, IdentifierField, StrictCharField, StrictInputSerializer
from memoryhub.operations import tools as operations
from memoryhub.representations.tools import tool_call_json
from memoryhub.tools.models import ToolCallStatus
from memoryhub.tools.selectors import tool_calls_page
from memoryhub.tools.services import ToolCallInput


class ToolCallsView(SessionAPIView):
    throttle_scopes = {"POST": "tool_calls"}
    class ToolCallInputSerializer(StrictInputSerializer):
        call_id = IdentifierField(required=False, allow_null=True, default=None)
        tool = StrictCharField(max_length=200)
        args = serializers.JSONField(required=False, default=dict)
        result = serializers.JSONField(required=False, default="")
        result_summary = StrictCharField(max_length=20_000, required=False, allow_null=True, default=None, allow_blank=True)
        status = serializers.ChoiceField(choices=ToolCallStatus.values, default=ToolCallStatus.OK)
        step_id = IdentifierField(required=False, allow_null=True, default=None)
        duration_ms = serializers.IntegerField(min_value=0, max_value=INT32_MAX, required=False, allow_null=True, default=None)
        cost = serializers.FloatField(min_value=0, required=False, allow_null=True, default=None)

    @extend_schema(request=ToolCallInputSerializer, responses={201: ToolCallSerializer}, summary="Log a tool call (PII and secrets redacted first)")
    def post(self, request: Request, session_id: str) -> Response:
        item = ToolCallInput(**self.input(self.ToolCallInputSerializer))
        return Response(operations.tool_call_record_answer(principal=request.user, session=self.session, item=item), status=201)

    @extend_schema(parameters=PAGE_PARAMETERS, responses=paged(ToolCallSerializer), summary="The session's tool-call log (summaries only), in order")
    def get(self, request: Request, session_id: str) -> Response:
        return self.page_response(tool_calls_page(session=self.session, **self.page_query()), tool_call_json)


class ToolResultView(HubAPIView):
    @extend_schema(responses=ToolResultSerializer, summary="The (redacted) raw output of a tool call")
    def get(self, request: Request, call_id: str) -> Response:
        return Response(operations.tool_result_answer(principal=request.user, call_id=call_id))
