"""An operator's own email notifications (docs/notifications.md, "Email"): which events of
the workspace, to which address."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import HubAPIView
from agents_api.serializers import StrictInputSerializer
from memoryhub.core.errors import Forbidden
from memoryhub.core.selectors import Principal
from memoryhub.notifications.models import EMAIL_EVENT_NAMES, NotificationSetting
from memoryhub.notifications.selectors import notification_setting_of
from memoryhub.notifications.services import notification_setting_set


def notifications_output(setting: NotificationSetting | None) -> dict[str, Any]:
    return {
        "email": setting.email if setting else None, "events": setting.events if setting else [],
        "email_enabled": bool(settings.MEMORYHUB_EMAIL_URL),
    }


class NotificationsSerializer(serializers.Serializer):
    email = serializers.EmailField(allow_null=True)
    events = serializers.ListField(child=serializers.ChoiceField(choices=EMAIL_EVENT_NAMES))
    email_enabled = serializers.BooleanField(help_text="Whether this hub sends email at all (MEMORYHUB_EMAIL_URL).")


class MeNotificationsView(HubAPIView):
    class NotificationsInputSerializer(StrictInputSerializer):
        email = serializers.EmailField(max_length=254)
        events = serializers.ListField(child=serializers.ChoiceField(choices=EMAIL_EVENT_NAMES), max_length=len(EMAIL_EVENT_NAMES))

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        principal: Principal = request.user
        if not principal.is_operator:
            raise Forbidden("Notifications are an operator's: use an operator key.")

    @extend_schema(responses=NotificationsSerializer, summary="The emails you get from this workspace (operator keys)")
    def get(self, request: Request) -> Response:
        return Response(notifications_output(notification_setting_of(membership=request.user.membership)))

    @extend_schema(request=NotificationsInputSerializer, responses=NotificationsSerializer, summary="Choose the emails you get from this workspace")
    def put(self, request: Request) -> Response:
        data = self.input(self.NotificationsInputSerializer)
        setting = notification_setting_set(membership=request.user.membership, email=data["email"], events=data["events"])
        return Response(notifications_output(setting))
