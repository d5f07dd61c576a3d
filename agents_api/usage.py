"""Usage and cost (docs/usage.md): what model calls cost, grouped one way; the workspace's
monthly budget."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import HubAPIView
from agents_api.permissions import operator_with_role
from agents_api.serializers import StrictInputSerializer
from memoryhub.core.errors import Forbidden
from memoryhub.core.models import Role
from memoryhub.operations import usage as operations
from memoryhub.usage import selectors

SumsFields = {
    "calls": serializers.IntegerField(), "items": serializers.IntegerField(), "input_tokens": serializers.IntegerField(),
    "output_tokens": serializers.IntegerField(), "cost": serializers.FloatField(),
}
UsageSerializer = inline_serializer("Usage", {
    "results": inline_serializer("UsageLine", {"key": serializers.CharField(), **SumsFields}, many=True),
    "totals": inline_serializer("UsageTotals", SumsFields),
    "from": serializers.DateField(), "to": serializers.DateField(), "group_by": serializers.CharField(),
})
BudgetSerializer = inline_serializer("Budget", {
    "monthly_limit": serializers.FloatField(allow_null=True), "warn_at": serializers.FloatField(allow_null=True),
    "month": serializers.CharField(), "spent": serializers.FloatField(),
})


class UsageView(HubAPIView):
    class UsageQuerySerializer(StrictInputSerializer):
        to = serializers.DateField(required=False)
        group_by = serializers.ChoiceField(choices=selectors.GROUPS, default="provider")

        def get_fields(self) -> dict[str, serializers.Field]:
            # `from` is a Python keyword: the field is named here.
            return {**super().get_fields(), "from": serializers.DateField(required=False)}

    @extend_schema(
        parameters=[
            OpenApiParameter("from", date, description="first day (UTC), default the 1st of this month"),
            OpenApiParameter("to", date, description="last day (UTC, inclusive), default today"),
            OpenApiParameter("group_by", str, enum=list(selectors.GROUPS), description="default provider"),
        ],
        responses=UsageSerializer, summary="What model calls cost, grouped by provider, operation, agent or day",
    )
    def get(self, request: Request) -> Response:
        query = self.input(self.UsageQuerySerializer, request.query_params)
        return Response(operations.usage_answer(principal=request.user, start=query.get("from"), end=query.get("to"), group_by=query["group_by"]))


class BudgetView(HubAPIView):
    permission_classes = [operator_with_role(Role.VIEWER)]

    class BudgetInputSerializer(StrictInputSerializer):
        monthly_limit = serializers.DecimalField(max_digits=20, decimal_places=6, min_value=Decimal(0), allow_null=True)
        warn_at = serializers.DecimalField(max_digits=20, decimal_places=6, min_value=Decimal(0), allow_null=True, required=False, default=None)

    @extend_schema(responses=BudgetSerializer, summary="The workspace's monthly model budget and this month's spending")
    def get(self, request: Request) -> Response:
        return Response(operations.budget_answer(principal=request.user))

    @extend_schema(request=BudgetInputSerializer, responses=BudgetSerializer, summary="Set or lift the monthly model budget (admins)")
    def put(self, request: Request) -> Response:
        if not request.user.allows(Role.ADMIN):  # who, before what
            raise Forbidden("The budget needs the admin role.")
        data = self.input(self.BudgetInputSerializer)
        return Response(operations.budget_set_answer(principal=request.user, monthly_limit=data["monthly_limit"], warn_at=data["warn_at"]))
