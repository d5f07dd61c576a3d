"""Compliance: purges (CONTRACT.md, "Compliance")."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents_api.permissions import operator_with_role
from agents_api.serializers import StrictInputSerializer, UserIdField, iso_datetime, validated
from memoryhub.compliance import services
from memoryhub.compliance.models import PurgeRequest
from memoryhub.core.errors import NotFound
from memoryhub.core.models import Role


def purge_output(purge: PurgeRequest) -> dict[str, Any]:
    return {
        "id": purge.pk, "status": purge.status, "dry_run": purge.dry_run, "progress": round(purge.progress, 4), "counts": purge.counts,
        "receipt": purge.receipt or None, "created_at": iso_datetime(purge.created_at), "finished_at": iso_datetime(purge.finished_at),
    }


class PurgesView(APIView):
    permission_classes = [operator_with_role(Role.COMPLIANCE)]

    class PurgeInputSerializer(StrictInputSerializer):
        user_id = UserIdField()
        dry_run = serializers.BooleanField(default=False)
        block_new_writes = serializers.BooleanField(default=False)

    @extend_schema(request=PurgeInputSerializer, responses={202: OpenApiTypes.OBJECT}, summary="Erase one end user (compliance operators)")
    def post(self, request: Request) -> Response:
        data = validated(self.PurgeInputSerializer, request.data).validated_data
        purge = services.purge_request(
            membership=request.user.membership, user_id=data["user_id"], dry_run=data["dry_run"], block_new_writes=data["block_new_writes"]
        )
        return Response(purge_output(purge), status=202)


class PurgeDetailView(APIView):
    permission_classes = [operator_with_role(Role.COMPLIANCE)]

    @extend_schema(responses=OpenApiTypes.OBJECT, summary="A purge's status, progress, counts and receipt")
    def get(self, request: Request, purge_id: int) -> Response:
        purge = PurgeRequest.objects.filter(pk=purge_id, workspace=request.user.workspace).first()
        if purge is None:
            raise NotFound("No such purge.", code="PURGE_NOT_FOUND")
        return Response(purge_output(purge))


class BlockLiftView(APIView):
    permission_classes = [operator_with_role(Role.ADMIN)]

    class BlockLiftSerializer(StrictInputSerializer):
        user_id = UserIdField()

    @extend_schema(request=BlockLiftSerializer, responses={204: None}, summary="Lift the write block of a purged user (admins)")
    def post(self, request: Request) -> Response:
        data = validated(self.BlockLiftSerializer, request.data).validated_data
        digest = services.user_hash(workspace_id=request.user.workspace.pk, user_id=data["user_id"])
        if not services.block_lift(membership=request.user.membership, user_hash_value=digest):
            raise NotFound("This user is not blocked.", code="NOT_BLOCKED")
        return Response(status=204)
