"""Who is calling (`/me`) and API keys: an operator issues and revokes agent keys; a key
revokes itself."""

from __future__ import annotations

from datetime import datetime

import orjson
from django.http import HttpResponseBase
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import PAGE_PARAMETERS, HubAPIView
from agents_api.outputs import paged
from agents_api.permissions import operator_with_role
from agents_api.serializers import StrictInputSerializer
from memoryhub.core import services
from memoryhub.core.errors import Forbidden, NotFound
from memoryhub.core.models import AgentKey, Role
from memoryhub.core.selectors import Principal, agent_keys_page, key_for_revocation
from memoryhub.serving.http_errors import envelope


class MeView(HubAPIView):
    class MeSerializer(serializers.Serializer):
        kind = serializers.ChoiceField(choices=["agent", "operator"])
        workspace = serializers.CharField()
        agent = serializers.CharField(allow_null=True)
        stores = serializers.ListField(child=serializers.CharField())
        operator = serializers.CharField(allow_null=True, help_text="The operator's username (operator keys only).")
        role = serializers.CharField(allow_null=True, help_text="viewer / approver / compliance / admin (operators only).")
        key_prefix = serializers.CharField(help_text="The public prefix of the key used for this request.")

    @extend_schema(responses=MeSerializer, summary="Who am I: the identity behind the presented key")
    def get(self, request: Request) -> Response:
        principal: Principal = request.user
        data = {
            "kind": principal.kind,
            "workspace": principal.workspace.slug,
            "agent": principal.agent.name if principal.agent else None,
            "stores": [store.name for store in principal.stores],
            "operator": principal.membership.user.get_username() if principal.membership else None,
            "role": principal.role,
            "key_prefix": principal.key.prefix,
        }
        return Response(self.MeSerializer(data).data)


class KeysView(HubAPIView):
    """Agent keys of the caller's workspace: list (operators) and issue (admins)."""

    class AgentKeyInputSerializer(StrictInputSerializer):
        agent = serializers.SlugField(max_length=64, help_text="Created if missing.")
        store = serializers.SlugField(max_length=64, required=False, default="default", help_text="Attached to the agent; created if missing.")
        label = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
        expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)

        def validate_expires_at(self, value: datetime | None) -> datetime | None:
            if value is not None and value <= timezone.now():
                raise serializers.ValidationError("Must be in the future.")
            return value

    class AgentKeySerializer(serializers.Serializer):
        prefix = serializers.CharField()
        agent = serializers.CharField(source="agent.name")
        stores = serializers.SerializerMethodField()
        label = serializers.CharField()
        status = serializers.CharField()
        created_at = serializers.DateTimeField()
        expires_at = serializers.DateTimeField(allow_null=True)
        revoked_at = serializers.DateTimeField(allow_null=True)
        last_used_at = serializers.DateTimeField(allow_null=True)

        def get_stores(self, key: AgentKey) -> list[str]:
            return [store.name for store in key.agent.stores.all()]

    class AgentKeyCreatedSerializer(AgentKeySerializer):
        key = serializers.CharField(help_text="The key itself. Shown once: store it now.")

    def get_permissions(self) -> list[BasePermission]:
        return [operator_with_role(Role.ADMIN if self.request.method == "POST" else Role.VIEWER)()]

    @extend_schema(
        parameters=PAGE_PARAMETERS, responses=paged(AgentKeySerializer), operation_id="v1_keys_list",
        summary="List the agent keys of the workspace (metadata only), oldest first",
    )
    def get(self, request: Request) -> Response:
        page = agent_keys_page(workspace=request.user.workspace, **self.page_query())
        return self.page_response(page, lambda key: self.AgentKeySerializer(key).data)

    @extend_schema(request=AgentKeyInputSerializer, responses={201: AgentKeyCreatedSerializer}, summary="Issue an agent key (admins)")
    def post(self, request: Request) -> Response:
        data = self.input(self.AgentKeyInputSerializer)
        key, plaintext = services.agent_key_provision(
            workspace=request.user.workspace, store=data["store"], agent=data["agent"], label=data["label"],
            expires_at=data["expires_at"], actor=request.user.actor,
        )
        key.key = plaintext  # type: ignore[attr-defined]
        return Response(self.AgentKeyCreatedSerializer(key).data, status=201)

    def replay_answer(self, response: HttpResponseBase) -> tuple[int, bytes]:
        # A key's secret is shown once and stored nowhere, replays included: stored answers
        # travel in the database and its backups, where a plaintext key would authenticate.
        minted = response.data  # type: ignore[attr-defined]
        return 409, orjson.dumps(envelope(
            "KEY_NOT_REPLAYED",
            f"This request issued key {minted['prefix']} (agent {minted['agent']}) already; its secret is shown once and kept "
            "nowhere. If the answer was lost, revoke that key and issue another.",
            {"prefix": minted["prefix"], "agent": minted["agent"]},
        ))


class KeyRevokeView(HubAPIView):
    @extend_schema(responses={204: None}, summary="Revoke a key by its prefix")
    def delete(self, request: Request, prefix: str) -> Response:
        """Admins revoke agent keys of their workspace; any operator revokes their own
        operator keys. Anything else answers 404: a prefix reveals nothing."""
        principal: Principal = request.user
        if not principal.is_operator:
            raise Forbidden("This needs an operator key.")
        key = key_for_revocation(principal=principal, prefix=prefix)
        if key is None:
            raise NotFound("No such key in this workspace.", code="KEY_NOT_FOUND")
        services.api_key_revoke(key=key, actor=principal.actor)
        return Response(status=204)
