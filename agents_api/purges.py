"""Compliance: purges (docs/api.md, "Compliance"); retention and the audit log (extensions)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import PAGE_PARAMETERS, HubAPIView
from agents_api.outputs import AuditEntrySerializer, PurgeSerializer, RetentionSerializer, paged
from agents_api.permissions import operator_with_role
from agents_api.serializers import StrictInputSerializer, UserIdField
from memoryhub.compliance import selectors, services
from memoryhub.compliance.models import PurgeRequest
from memoryhub.core.errors import NotFound
from memoryhub.core.models import Role
from memoryhub.privacy.models import RETENTION_RULES
from memoryhub.privacy.selectors import retention_defaults, retention_policies
from memoryhub.privacy.services import block_lift, retention_policies_set, user_hash
from memoryhub.representations import iso_datetime
from memoryhub.representations.audit import audit_entry_json


def purge_output(purge: PurgeRequest) -> dict[str, Any]:
    return {
        "id": purge.pk, "status": purge.status, "dry_run": purge.dry_run, "progress": round(purge.progress, 4), "counts": purge.counts,
        "receipt": purge.receipt or None, "created_at": iso_datetime(purge.created_at), "finished_at": iso_datetime(purge.finished_at),
        "storage_cleaned_at": iso_datetime(purge.storage_cleaned_at),
    }


class PurgesView(HubAPIView):
    permission_classes = [operator_with_role(Role.COMPLIANCE)]
    throttle_scopes = {"POST": "purges"}

    class PurgeInputSerializer(StrictInputSerializer):
        user_id = UserIdField()
        dry_run = serializers.BooleanField(default=False)
        block_new_writes = serializers.BooleanField(default=False)

    @extend_schema(
        parameters=PAGE_PARAMETERS, responses=paged(PurgeSerializer), operation_id="v1_purges_list",
        summary="Purges of the workspace, newest first, with their receipts (extension)",
    )
    def get(self, request: Request) -> Response:
        return self.page_response(selectors.purges_page(workspace=request.user.workspace, **self.page_query()), purge_output)

    @extend_schema(request=PurgeInputSerializer, responses={202: PurgeSerializer}, summary="Erase one end user (compliance operators)")
    def post(self, request: Request) -> Response:
        data = self.input(self.PurgeInputSerializer)
        purge = services.purge_request(
            membership=request.user.membership, user_id=data["user_id"], dry_run=data["dry_run"], block_new_writes=data["block_new_writes"]
        )
        return Response(purge_output(purge), status=202)


class PurgeDetailView(HubAPIView):
    permission_classes = [operator_with_role(Role.COMPLIANCE)]

    @extend_schema(responses=PurgeSerializer, summary="A purge's status, progress, counts and receipt")
    def get(self, request: Request, purge_id: int) -> Response:
        purge = selectors.purge_of(workspace=request.user.workspace, purge_id=purge_id, dry_runs=True)
        if purge is None:
            raise NotFound("No such purge.", code="PURGE_NOT_FOUND")
        return Response(purge_output(purge))


class BlockLiftView(HubAPIView):
    permission_classes = [operator_with_role(Role.ADMIN)]

    class BlockLiftSerializer(StrictInputSerializer):
        user_id = UserIdField()

    @extend_schema(request=BlockLiftSerializer, responses={204: None}, summary="Lift the write block of a purged user (admins)")
    def post(self, request: Request) -> Response:
        data = self.input(self.BlockLiftSerializer)
        digest = user_hash(workspace_id=request.user.workspace.pk, user_id=data["user_id"])
        if not block_lift(membership=request.user.membership, user_hash_value=digest):
            raise NotFound("This user is not blocked.", code="NOT_BLOCKED")
        return Response(status=204)


class RetentionView(HubAPIView):
    """The workspace's retention policies (extension): GET them, PUT some of them."""

    permission_classes = [operator_with_role(Role.COMPLIANCE)]

    class RetentionInputSerializer(StrictInputSerializer):
        policies = serializers.DictField(child=serializers.IntegerField(min_value=1, allow_null=True), allow_empty=False)

    def _body(self, request: Request) -> dict[str, Any]:
        workspace_id = request.user.workspace.pk
        defaults = retention_defaults()
        return {
            "policies": retention_policies(workspace_id=workspace_id),
            "defaults": defaults,
            "meaning": {kind: meaning for kind, (meaning, _, _) in RETENTION_RULES.items()},
            "max": {kind: largest for kind, (_, _, largest) in RETENTION_RULES.items()},
            "runs": [
                {"started_at": iso_datetime(run.started_at), "finished_at": iso_datetime(run.finished_at), "counts": run.counts}
                for run in selectors.retention_runs_of(workspace=request.user.workspace)[:20]
            ],
        }

    @extend_schema(responses=RetentionSerializer, summary="Retention policies, defaults and recent runs")
    def get(self, request: Request) -> Response:
        return Response(self._body(request))

    @extend_schema(request=RetentionInputSerializer, responses=RetentionSerializer, summary="Change retention policies (null: keep)")
    def put(self, request: Request) -> Response:
        retention_policies_set(membership=request.user.membership, policies=self.input(self.RetentionInputSerializer)["policies"])
        return Response(self._body(request))


class AuditView(HubAPIView):
    """The audit log of the workspace, newest first (extension)."""

    permission_classes = [operator_with_role(Role.COMPLIANCE)]

    @extend_schema(
        parameters=[*PAGE_PARAMETERS, OpenApiParameter("action", str, description="only entries of this action")],
        responses=paged(AuditEntrySerializer), summary="Audit log: logins, key changes, purges, policy changes",
    )
    def get(self, request: Request) -> Response:
        page = selectors.audit_page(workspace=request.user.workspace, action=request.query_params.get("action") or None, **self.page_query())
        return self.page_response(page, audit_entry_json)
