"""Webhooks (docs/notifications.md): a workspace's endpoints, their secrets and delivery
logs. Admins only: an endpoint decides where the workspace's events go."""

from __future__ import annotations

from typing import Any

import orjson
from django.http import HttpResponseBase
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from agents_api.base import PAGE_PARAMETERS, HubAPIView
from agents_api.outputs import paged
from agents_api.permissions import operator_with_role
from agents_api.serializers import StrictInputSerializer
from memoryhub.core.models import Role
from memoryhub.notifications import selectors, services
from memoryhub.notifications.models import EVENT_NAMES, DeliveryStatus, WebhookDelivery, WebhookEndpoint, WebhookFormat
from memoryhub.representations import iso_datetime
from memoryhub.serving.http_errors import envelope


def webhook_output(endpoint: WebhookEndpoint) -> dict[str, Any]:
    return {
        "id": endpoint.pk, "url": endpoint.url, "events": endpoint.events, "format": endpoint.format,
        "include_content": endpoint.include_content, "enabled": endpoint.enabled, "disabled_reason": endpoint.disabled_reason or None,
        "description": endpoint.description, "created_at": iso_datetime(endpoint.created_at),
        "previous_secret_until": iso_datetime(endpoint.previous_secret_until) if endpoint.previous_secret else None,
    }


def delivery_output(delivery: WebhookDelivery) -> dict[str, Any]:
    status = delivery.delivery_status
    return {
        "id": delivery.pk, "message_id": delivery.message_id, "event": delivery.event, "status": status, "attempts": delivery.attempts,
        "last_status_code": delivery.last_status_code, "error": delivery.error or None,
        "next_attempt_at": iso_datetime(delivery.next_attempt_at) if status == "pending" else None,
        "created_at": iso_datetime(delivery.created_at), "finished_at": iso_datetime(delivery.finished_at),
        "redelivery_of": delivery.redelivery_of_id,
    }


class WebhookSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.URLField()
    events = serializers.ListField(child=serializers.ChoiceField(choices=EVENT_NAMES))
    format = serializers.ChoiceField(choices=WebhookFormat.choices)
    include_content = serializers.BooleanField()
    enabled = serializers.BooleanField()
    disabled_reason = serializers.CharField(allow_null=True, help_text="Why the hub turned it off (a 410 from the receiver).")
    description = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    previous_secret_until = serializers.DateTimeField(
        allow_null=True, help_text="After a rotation: until then, deliveries carry a signature with the old secret too.",
    )


class WebhookSecretSerializer(WebhookSerializer):
    secret = serializers.CharField(help_text="`whsec_` + base64: shown in this answer only; store it now.")


class SecretSerializer(serializers.Serializer):
    secret = serializers.CharField(help_text="The new secret, shown in this answer only.")
    previous_secret_until = serializers.DateTimeField(help_text="The old secret signs deliveries too until then.")


class DeliverySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    message_id = serializers.CharField(help_text="`webhook-id`: the same on every attempt and redelivery.")
    event = serializers.CharField()
    status = serializers.ChoiceField(choices=DeliveryStatus.choices)
    attempts = serializers.IntegerField()
    last_status_code = serializers.IntegerField(allow_null=True)
    error = serializers.CharField(allow_null=True, help_text="What went wrong with the last attempt.")
    next_attempt_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    redelivery_of = serializers.IntegerField(allow_null=True)


class EventsField(serializers.ListField):
    child = serializers.ChoiceField(choices=EVENT_NAMES)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_empty=False, max_length=len(EVENT_NAMES), **kwargs)


class SecretNotReplayed:
    """A secret is shown once: the replay of a POST that made one (same Idempotency-Key)
    answers 409 instead, since stored answers travel in the database and its backups."""

    def replay_answer(self, response: HttpResponseBase) -> tuple[int, bytes]:
        return 409, orjson.dumps(envelope(
            "SECRET_NOT_REPLAYED",
            "This request made a webhook secret already; it is shown once. If the answer was lost, rotate the secret.",
            {},
        ))


class WebhooksView(SecretNotReplayed, HubAPIView):
    permission_classes = [operator_with_role(Role.ADMIN)]

    class WebhookInputSerializer(StrictInputSerializer):
        url = serializers.CharField(max_length=2000)
        events = EventsField()
        format = serializers.ChoiceField(choices=WebhookFormat.choices, default=WebhookFormat.STANDARD)
        include_content = serializers.BooleanField(default=False, help_text="Send the args and summary an approver sees.")
        description = serializers.CharField(max_length=500, default="", allow_blank=True)

    @extend_schema(parameters=PAGE_PARAMETERS, responses=paged(WebhookSerializer), operation_id="v1_webhooks_list", summary="The workspace's webhooks (admins)")
    def get(self, request: Request) -> Response:
        return self.page_response(selectors.webhooks_page(workspace=request.user.workspace, **self.page_query()), webhook_output)

    @extend_schema(request=WebhookInputSerializer, responses={201: WebhookSecretSerializer}, summary="Add a webhook (admins); its secret is shown once")
    def post(self, request: Request) -> Response:
        data = self.input(self.WebhookInputSerializer)
        endpoint = services.webhook_create(membership=request.user.membership, item=services.EndpointInput(**data))
        return Response(webhook_output(endpoint) | {"secret": endpoint.secret}, status=201)


class WebhookDetailView(HubAPIView):
    permission_classes = [operator_with_role(Role.ADMIN)]

    class WebhookChangeSerializer(StrictInputSerializer):
        url = serializers.CharField(max_length=2000, required=False)
        events = EventsField(required=False)
        enabled = serializers.BooleanField(required=False)
        include_content = serializers.BooleanField(required=False)
        description = serializers.CharField(max_length=500, required=False, allow_blank=True)

    @extend_schema(responses=WebhookSerializer, summary="A webhook (admins)")
    def get(self, request: Request, webhook_id: int) -> Response:
        return Response(webhook_output(selectors.webhook_get(workspace=request.user.workspace, webhook_id=webhook_id)))

    @extend_schema(request=WebhookChangeSerializer, responses=WebhookSerializer, summary="Change a webhook's URL, events or state (admins)")
    def patch(self, request: Request, webhook_id: int) -> Response:
        endpoint = selectors.webhook_get(workspace=request.user.workspace, webhook_id=webhook_id)
        changes = self.input(self.WebhookChangeSerializer)
        endpoint = services.webhook_update(membership=request.user.membership, endpoint=endpoint, changes=changes)
        return Response(webhook_output(endpoint))

    @extend_schema(responses={204: None}, summary="Delete a webhook and its delivery log (admins)")
    def delete(self, request: Request, webhook_id: int) -> Response:
        endpoint = selectors.webhook_get(workspace=request.user.workspace, webhook_id=webhook_id)
        services.webhook_delete(membership=request.user.membership, endpoint=endpoint)
        return Response(status=204)


class WebhookRotateView(SecretNotReplayed, HubAPIView):
    permission_classes = [operator_with_role(Role.ADMIN)]

    @extend_schema(request=None, responses=SecretSerializer, summary="A new secret; the old one signs too for 24 h (admins)")
    def post(self, request: Request, webhook_id: int) -> Response:
        endpoint = selectors.webhook_get(workspace=request.user.workspace, webhook_id=webhook_id)
        endpoint = services.webhook_secret_rotate(membership=request.user.membership, endpoint=endpoint)
        return Response({"secret": endpoint.secret, "previous_secret_until": iso_datetime(endpoint.previous_secret_until)})


class WebhookTestView(HubAPIView):
    permission_classes = [operator_with_role(Role.ADMIN)]

    @extend_schema(request=None, responses={202: DeliverySerializer}, summary="Send a webhook.test delivery (admins)")
    def post(self, request: Request, webhook_id: int) -> Response:
        endpoint = selectors.webhook_get(workspace=request.user.workspace, webhook_id=webhook_id)
        return Response(delivery_output(services.webhook_test(membership=request.user.membership, endpoint=endpoint)), status=202)


class DeliveriesView(HubAPIView):
    permission_classes = [operator_with_role(Role.ADMIN)]

    @extend_schema(
        parameters=PAGE_PARAMETERS, responses=paged(DeliverySerializer), operation_id="v1_webhooks_deliveries_list",
        summary="A webhook's deliveries, newest first (admins)",
    )
    def get(self, request: Request, webhook_id: int) -> Response:
        endpoint = selectors.webhook_get(workspace=request.user.workspace, webhook_id=webhook_id)
        return self.page_response(selectors.deliveries_page(endpoint=endpoint, **self.page_query()), delivery_output)


class RedeliverView(HubAPIView):
    permission_classes = [operator_with_role(Role.ADMIN)]

    @extend_schema(request=None, responses={202: DeliverySerializer}, summary="Send a delivery's message again, same message id (admins)")
    def post(self, request: Request, webhook_id: int, delivery_id: int) -> Response:
        endpoint = selectors.webhook_get(workspace=request.user.workspace, webhook_id=webhook_id)
        delivery = selectors.delivery_get(endpoint=endpoint, delivery_id=delivery_id)
        again = services.delivery_redeliver(membership=request.user.membership, delivery=delivery)
        return Response(delivery_output(again), status=202)
