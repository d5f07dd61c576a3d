"""Imports (docs/portability.md): a MemoryHub archive or a ChatGPT, Claude or Mem0 export
loaded into a store and agent in the background; admins only."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import HubAPIView
from agents_api.permissions import operator_with_role
from agents_api.serializers import StrictInputSerializer, UserIdField
from memoryhub.core.errors import NotFound
from memoryhub.core.models import Role
from memoryhub.portability import imports, selectors
from memoryhub.portability.models import Import, ImportFormat
from memoryhub.representations import iso_datetime

ImportSerializer = inline_serializer("Import", {
    "id": serializers.IntegerField(), "status": serializers.CharField(), "format": serializers.CharField(),
    "store": serializers.CharField(), "agent": serializers.CharField(), "user_id": serializers.CharField(allow_null=True),
    "dry_run": serializers.BooleanField(), "progress": serializers.FloatField(), "filename": serializers.CharField(),
    "bytes": serializers.IntegerField(), "sha256": serializers.CharField(),
    "counts": inline_serializer("ImportCounts", {
        "created": serializers.IntegerField(), "skipped": serializers.IntegerField(), "refused": serializers.IntegerField(),
        "kinds": serializers.DictField(child=serializers.DictField(child=serializers.IntegerField())),
    }),
    "refusals": inline_serializer("ImportRefusal", {
        "kind": serializers.CharField(), "reason": serializers.CharField(), "count": serializers.IntegerField(),
    }, many=True),
    "created_at": serializers.DateTimeField(), "finished_at": serializers.DateTimeField(allow_null=True),
    "error": serializers.CharField(allow_null=True),
})


def import_output(job: Import) -> dict[str, Any]:
    counts = {"created": 0, "skipped": 0, "refused": 0, "kinds": {}, **job.counts}
    return {
        "id": job.pk, "status": job.status, "format": job.format, "store": job.store.name, "agent": job.agent.name,
        "user_id": job.user_id or None, "dry_run": job.dry_run, "progress": round(job.progress, 4), "filename": job.filename,
        "bytes": job.bytes, "sha256": job.sha256, "counts": counts, "refusals": job.refusals,
        "created_at": iso_datetime(job.created_at), "finished_at": iso_datetime(job.finished_at), "error": job.error or None,
    }


class ImportsView(HubAPIView):
    permission_classes = [operator_with_role(Role.ADMIN)]
    parser_classes = [MultiPartParser]

    class ImportInputSerializer(StrictInputSerializer):
        file = serializers.FileField()
        format = serializers.ChoiceField(choices=ImportFormat.choices)
        store = serializers.CharField(max_length=64)
        agent = serializers.CharField(max_length=64)
        user_id = UserIdField(required=False)
        dry_run = serializers.BooleanField(default=False)

    @extend_schema(request={"multipart/form-data": ImportInputSerializer}, responses={202: ImportSerializer},
                   summary="Import an archive or a ChatGPT, Claude or Mem0 export (background job)")
    def post(self, request: Request) -> Response:
        data = self.input(self.ImportInputSerializer)
        upload = data["file"]
        job = imports.import_request(
            membership=request.user.membership, upload=upload, filename=upload.name or "", format=data["format"],
            store=data["store"], agent=data["agent"], user_id=data.get("user_id", ""), dry_run=data["dry_run"],
        )
        return Response(import_output(job), status=202)


class ImportDetailView(HubAPIView):
    permission_classes = [operator_with_role(Role.ADMIN)]

    @extend_schema(responses=ImportSerializer, summary="An import's status, progress, counts and refusals")
    def get(self, request: Request, import_id: str) -> Response:
        job = selectors.import_of(workspace=request.user.workspace, import_id=import_id)
        if job is None:
            raise NotFound("No such import.", code="IMPORT_NOT_FOUND")
        return Response(import_output(job))
