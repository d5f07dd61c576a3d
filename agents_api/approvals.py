"""Human in the loop (docs/api.md, "Approvals"): agents ask, operators decide, agents continue."""

from __future__ import annotations


from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import PAGE_PARAMETERS, AgentAPIView, HubAPIView, ListQuerySerializer
from agents_api.outputs import ApprovalRuleSerializer, ApprovalSerializer, paged
from agents_api.permissions import operator_with_role
from agents_api.serializers import IdentifierField, StrictCharField, StrictInputSerializer
from memoryhub.approvals import selectors, services
from memoryhub.approvals.models import ApprovalStatus, Decision, RuleScope
from memoryhub.conversations.sessions import session_get
from memoryhub.core.models import Role
from memoryhub.operations import approvals as operations
from memoryhub.representations.approvals import approval_json, approval_rule_json
from memoryhub.serving.long_poll import MAX_WAIT


class ApprovalsView(AgentAPIView):
    written = "Approval requests"

    class ApprovalInputSerializer(StrictInputSerializer):
        session_id = IdentifierField()
        tool = StrictCharField(max_length=200)
        args = serializers.DictField()
        allowed_decisions = serializers.ListField(
            child=serializers.ChoiceField(choices=Decision.values), required=False, allow_empty=False, default=list(Decision.values),
        )
        context = serializers.JSONField(required=False, allow_null=True, default=None)
        expires_in = serializers.IntegerField(min_value=1, max_value=services.MAX_EXPIRES_IN, required=False, allow_null=True, default=None)
        response_schema = serializers.DictField(required=False, allow_null=True, default=None)
        required_approvals = serializers.IntegerField(
            min_value=1, max_value=services.MAX_REQUIRED_APPROVALS, required=False, default=1,
            help_text="Different approvers who must approve; the first reject rejects.",
        )
        escalate_after = serializers.IntegerField(
            min_value=1, max_value=services.MAX_EXPIRES_IN, required=False, allow_null=True, default=None,
            help_text="Seconds: still undecided then, the workspace's admins hear of it once (feed, webhooks, email).",
        )

    class ApprovalQuerySerializer(ListQuerySerializer):
        status = serializers.ChoiceField(choices=ApprovalStatus.values, required=False, allow_null=True, default=None)
        session_id = IdentifierField(required=False, allow_null=True, default=None)

    @extend_schema(request=ApprovalInputSerializer, responses={201: ApprovalSerializer, 200: ApprovalSerializer},
                   summary="Ask a human before a risky tool call (200 when a remembered decision answers at once)")
    def post(self, request: Request) -> Response:
        data = self.input(self.ApprovalInputSerializer)
        session = session_get(principal=request.user, session_id=data.pop("session_id"))
        made = operations.approval_request_answer(principal=request.user, session=session, item=services.ApprovalInput(**data))
        return Response(made.body, status=201 if made.new else 200)

    @extend_schema(
        parameters=[*PAGE_PARAMETERS, OpenApiParameter("status", str, enum=ApprovalStatus.values), OpenApiParameter("session_id", str)],
        responses=paged(ApprovalSerializer), operation_id="v1_approvals_list", summary="Approval requests, newest first: an agent's own, a workspace's for operators",
    )
    def get(self, request: Request) -> Response:
        filters = self.input(self.ApprovalQuerySerializer, request.query_params.dict())
        page = selectors.approvals_page(principal=request.user, status=filters["status"], session_id=filters["session_id"], **self.page_query())
        return self.page_response(page, approval_json)


class ApprovalDetailView(HubAPIView):
    class WaitSerializer(StrictInputSerializer):
        wait = serializers.IntegerField(
            min_value=0, max_value=MAX_WAIT, required=False, default=0,
            help_text="Seconds to wait for a decision while the request is pending (long poll; served by the ASGI application).",
        )

    @extend_schema(parameters=[WaitSerializer], responses=ApprovalSerializer, summary="One approval request and its decision; `wait` long-polls")
    def get(self, request: Request, approval_id: int) -> Response:
        # The waiting itself happens around Django (memoryhub/serving/long_poll.py), so that no
        # thread or connection is held; here `wait` is only checked.
        self.input(self.WaitSerializer, request.query_params.dict())
        return Response(operations.approval_answer(principal=request.user, approval_id=approval_id))


class DecisionView(HubAPIView):
    permission_classes = [operator_with_role(Role.APPROVER)]

    class DecisionInputSerializer(StrictInputSerializer):
        decision = serializers.ChoiceField(choices=Decision.values)
        args = serializers.JSONField(required=False, allow_null=True, default=None)
        reason = StrictCharField(max_length=4000, required=False, allow_blank=True, default="")
        remember = serializers.ChoiceField(choices=["none", "exact", "tool"], default="none")
        remember_scope = serializers.ChoiceField(
            choices=RuleScope.values, default=RuleScope.WORKSPACE, help_text="Where a remembered decision applies: the workspace, the agent or the session."
        )

    @extend_schema(request=DecisionInputSerializer, responses=ApprovalSerializer, summary="Decide a pending request (approvers and admins)")
    def post(self, request: Request, approval_id: int) -> Response:
        approval = selectors.approval_get(principal=request.user, approval_id=approval_id)
        data = self.input(self.DecisionInputSerializer)
        decided = services.approval_decide(
            membership=request.user.membership, approval=approval, address=request.META.get("REMOTE_ADDR"), **data
        )
        return Response(approval_json(decided))


class RulesView(HubAPIView):
    permission_classes = [operator_with_role(Role.VIEWER)]

    @extend_schema(parameters=PAGE_PARAMETERS, responses=paged(ApprovalRuleSerializer), summary="Remembered decisions, newest first")
    def get(self, request: Request) -> Response:
        return self.page_response(selectors.rules_page(principal=request.user, **self.page_query()), approval_rule_json)


class RuleDetailView(HubAPIView):
    permission_classes = [operator_with_role(Role.APPROVER)]

    @extend_schema(responses={204: None}, summary="Revoke a remembered decision")
    def delete(self, request: Request, rule_id: int) -> Response:
        services.approval_rule_revoke(membership=request.user.membership, rule_id=rule_id)
        return Response(status=204)
