from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryhub.core.selectors import Principal


class MeView(APIView):
    class OutputSerializer(serializers.Serializer):
        kind = serializers.ChoiceField(choices=["agent", "operator"])
        workspace = serializers.CharField()
        agent = serializers.CharField(allow_null=True)
        stores = serializers.ListField(child=serializers.CharField())
        operator = serializers.CharField(allow_null=True, help_text="The operator's username (operator keys only).")
        role = serializers.CharField(allow_null=True, help_text="viewer / approver / compliance / admin (operators only).")
        key_prefix = serializers.CharField(help_text="The public prefix of the key used for this request.")

    @extend_schema(responses=OutputSerializer, summary="Who am I: the identity behind the presented key")
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
        return Response(self.OutputSerializer(data).data)
