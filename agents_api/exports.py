"""Exports (docs/portability.md): an archive of the workspace (admins), of one session
(admins) or of one end user's data — an access request (compliance operators)."""

from __future__ import annotations

from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import HubAPIView
from agents_api.permissions import operator_with_role
from agents_api.serializers import StrictInputSerializer, UserIdField
from memoryhub.core.errors import Conflict, Forbidden, NotFound
from memoryhub.core.models import Role
from memoryhub.portability import selectors, services
from memoryhub.core.jobs import JobStatus
from memoryhub.portability.models import Export, ExportScope
from memoryhub.representations import iso_datetime


ExportSerializer = inline_serializer("Export", {
    "id": serializers.UUIDField(), "scope": serializers.CharField(), "status": serializers.CharField(),
    "progress": serializers.FloatField(), "counts": serializers.DictField(child=serializers.IntegerField()),
    "bytes": serializers.IntegerField(), "sha256": serializers.CharField(), "user_id": serializers.CharField(allow_null=True),
    "session_id": serializers.CharField(allow_null=True), "with_vectors": serializers.BooleanField(),
    "created_at": serializers.DateTimeField(), "finished_at": serializers.DateTimeField(allow_null=True),
    "expires_at": serializers.DateTimeField(), "error": serializers.CharField(allow_null=True),
})


def export_output(export: Export) -> dict[str, Any]:
    return {
        "id": str(export.pk), "scope": export.scope, "status": export.status, "progress": round(export.progress, 4), "counts": export.counts,
        "bytes": export.bytes, "sha256": export.sha256, "user_id": export.asked_user_id or None, "session_id": export.session_id or None,
        "with_vectors": export.with_vectors, "created_at": iso_datetime(export.created_at), "finished_at": iso_datetime(export.finished_at),
        "expires_at": iso_datetime(export.expires_at), "error": export.error or None,
    }


def _allowed(request: Request, scope: str) -> None:
    needed = selectors.export_scope_role(scope)
    if not request.user.allows(needed):
        raise Forbidden(f"A {scope} export needs an operator with the {needed} role.")


def _readable(request: Request, export_id: str) -> Export:
    export = selectors.export_of(workspace=request.user.workspace, export_id=export_id)
    if export is None:
        raise NotFound("No such export.", code="EXPORT_NOT_FOUND")
    _allowed(request, export.scope)
    return export


class ExportsView(HubAPIView):
    permission_classes = [operator_with_role(Role.VIEWER)]

    class ExportInputSerializer(StrictInputSerializer):
        scope = serializers.ChoiceField(choices=ExportScope.choices)
        user_id = UserIdField(required=False)
        session_id = serializers.CharField(max_length=255, required=False)
        with_vectors = serializers.BooleanField(default=False)

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if attrs["scope"] == ExportScope.USER and not attrs.get("user_id"):
                raise serializers.ValidationError({"user_id": ["A user export names its user_id."]})
            if attrs["scope"] == ExportScope.SESSION and not attrs.get("session_id"):
                raise serializers.ValidationError({"session_id": ["A session export names its session_id."]})
            return attrs

    @extend_schema(request=ExportInputSerializer, responses={202: ExportSerializer}, summary="Export an archive (background job)")
    def post(self, request: Request) -> Response:
        data = self.input(self.ExportInputSerializer)
        _allowed(request, data["scope"])
        export = services.export_request(
            membership=request.user.membership, scope=data["scope"], user_id=data.get("user_id", ""),
            session_id=data.get("session_id", ""), with_vectors=data["with_vectors"],
        )
        return Response(export_output(export), status=202)


class ExportDetailView(HubAPIView):
    permission_classes = [operator_with_role(Role.VIEWER)]

    @extend_schema(responses=ExportSerializer, summary="An export's status, progress and counts")
    def get(self, request: Request, export_id: str) -> Response:
        return Response(export_output(_readable(request, export_id)))


class ExportDownloadView(HubAPIView):
    permission_classes = [operator_with_role(Role.VIEWER)]

    @extend_schema(responses={(200, "application/zip"): OpenApiTypes.BINARY}, summary="Download a finished export's archive")
    def get(self, request: Request, export_id: str) -> StreamingHttpResponse:
        export = _readable(request, export_id)
        if export.status != JobStatus.DONE:
            raise Conflict("The export is not finished: see its status.", code="EXPORT_NOT_READY")
        response = StreamingHttpResponse(services.export_download(export=export), content_type="application/zip")
        response["Content-Length"] = str(export.bytes)
        response["Content-Disposition"] = f'attachment; filename="memoryhub-{export.scope}-{export.pk}.zip"'
        return response
