"""Reads of notifications: a workspace's endpoints and their delivery logs."""

from __future__ import annotations

from memoryhub.core.errors import NotFound
from memoryhub.core.models import Membership, Workspace
from memoryhub.core.pagination import Page, keyset_page
from memoryhub.notifications.models import NotificationSetting, WebhookDelivery, WebhookEndpoint


def webhooks_page(*, workspace: Workspace, cursor: str | None, limit: int) -> Page[WebhookEndpoint]:
    """The workspace's webhooks, oldest first."""
    return keyset_page(WebhookEndpoint.objects.filter(workspace=workspace), key="id", cursor=cursor, limit=limit)


def webhook_get(*, workspace: Workspace, webhook_id: int) -> WebhookEndpoint:
    endpoint = WebhookEndpoint.objects.filter(workspace=workspace, pk=webhook_id).first()
    if endpoint is None:
        raise NotFound("No such webhook in this workspace.", code="WEBHOOK_NOT_FOUND")
    return endpoint


def deliveries_page(*, endpoint: WebhookEndpoint, cursor: str | None, limit: int) -> Page[WebhookDelivery]:
    """The endpoint's deliveries, newest first."""
    return keyset_page(WebhookDelivery.objects.filter(endpoint=endpoint), key="-id", cursor=cursor, limit=limit)


def delivery_get(*, endpoint: WebhookEndpoint, delivery_id: int) -> WebhookDelivery:
    delivery = WebhookDelivery.objects.filter(endpoint=endpoint, pk=delivery_id).first()
    if delivery is None:
        raise NotFound("No such delivery of this webhook.", code="DELIVERY_NOT_FOUND")
    return delivery


def notification_setting_of(*, membership: Membership) -> NotificationSetting | None:
    return NotificationSetting.objects.filter(membership=membership).first()
