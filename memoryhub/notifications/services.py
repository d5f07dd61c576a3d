"""Writes of notifications: webhook endpoints (admins), operators' email choices, and the
deliveries an event queues.

An event queues one delivery per endpoint (and per operator's inbox) that wants it, in
the transaction of what it announces: a rollback announces nothing, a commit loses
nothing. The commit wakes the pump (pump.py), which sends them."""

from __future__ import annotations

from decimal import Decimal
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memoryhub.core.audit import audit_record
from memoryhub.core.errors import ApplicationError, Forbidden
from memoryhub.core.jobs import JobStatus
from memoryhub.core.models import Membership, Role, Workspace
from memoryhub.core.selectors import operator_actor
from memoryhub.notifications import formats
from memoryhub.notifications.addresses import url_refusal
from memoryhub.notifications.pump import pump_wake
from memoryhub.notifications.models import (
    EMAIL_EVENTS,
    EVENTS,
    TEST_EVENT,
    EmailDelivery,
    NotificationSetting,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookFormat,
)
from memoryhub.notifications.signing import secret_new
from memoryhub.usage.metering import budget_exceeded

SETTINGS_PATH = "/settings/notifications/"
ROTATION_OVERLAP = timedelta(hours=24)


def _message_id() -> str:
    """`webhook-id`: one per message, whatever endpoints it goes to and however often."""
    return "msg_" + uuid.uuid4().hex


def public_url(path: str) -> str:
    """An absolute URL of the console, for people who follow it from a message."""
    return settings.MEMORYHUB_PUBLIC_URL.rstrip("/") + path


# --- endpoints -------------------------------------------------------------------------


def _ensure_admin(membership: Membership) -> None:
    if not membership.allows(Role.ADMIN):
        raise Forbidden("Webhooks need the admin role.")


def _checked_url(url: str) -> str:
    if refusal := url_refusal(url):
        raise ApplicationError(f"The webhook URL {refusal}.", code="INVALID_WEBHOOK_URL", details={"url": url})
    return url


def _checked_events(events: list[str]) -> list[str]:
    unknown = sorted(set(events) - set(EVENTS))
    if unknown or not events:
        raise ApplicationError(
            "Name at least one event, from: " + ", ".join(EVENTS) + ".", code="INVALID_WEBHOOK_EVENTS", details={"unknown": unknown},
        )
    return list(dict.fromkeys(events))


@dataclass(frozen=True)
class EndpointInput:
    url: str
    events: list[str]
    format: str = WebhookFormat.STANDARD
    include_content: bool = False
    description: str = ""


def webhook_create(*, membership: Membership, item: EndpointInput) -> WebhookEndpoint:
    """A new endpoint, enabled, with a new secret (the caller shows it once)."""
    _ensure_admin(membership)
    actor = operator_actor(membership.user)
    with transaction.atomic():
        endpoint = WebhookEndpoint.objects.create(
            workspace=membership.workspace, url=_checked_url(item.url), events=_checked_events(item.events), format=item.format,
            include_content=item.include_content, description=item.description, secret=secret_new(), created_by=actor,
        )
        audit_record(
            action="webhook_created", actor=actor, workspace=membership.workspace, target=f"webhook:{endpoint.pk}",
            details={"url": endpoint.url, "events": endpoint.events, "format": endpoint.format, "include_content": endpoint.include_content},
        )
    return endpoint


def webhook_update(*, membership: Membership, endpoint: WebhookEndpoint, changes: dict[str, Any]) -> WebhookEndpoint:
    """Changes any of url, events, enabled, include_content, description; turning an
    endpoint the hub disabled back on clears the reason."""
    _ensure_admin(membership)
    if "url" in changes:
        _checked_url(changes["url"])
    if "events" in changes:
        changes["events"] = _checked_events(changes["events"])
    for field, value in changes.items():
        setattr(endpoint, field, value)
    if changes.get("enabled"):
        endpoint.disabled_reason = ""
    with transaction.atomic():
        endpoint.save()
        audit_record(
            action="webhook_changed", actor=operator_actor(membership.user), workspace=membership.workspace,
            target=f"webhook:{endpoint.pk}", details=changes,
        )
    return endpoint


def webhook_delete(*, membership: Membership, endpoint: WebhookEndpoint) -> None:
    """The endpoint and its delivery log; what was still to be sent is not sent."""
    _ensure_admin(membership)
    with transaction.atomic():
        audit_record(
            action="webhook_deleted", actor=operator_actor(membership.user), workspace=membership.workspace,
            target=f"webhook:{endpoint.pk}", details={"url": endpoint.url},
        )
        endpoint.delete()


def webhook_secret_rotate(*, membership: Membership, endpoint: WebhookEndpoint) -> WebhookEndpoint:
    """A new secret; the one it replaces keeps signing too for ROTATION_OVERLAP."""
    _ensure_admin(membership)
    with transaction.atomic():
        endpoint.previous_secret, endpoint.secret = endpoint.secret, secret_new()
        endpoint.previous_secret_until = timezone.now() + ROTATION_OVERLAP
        endpoint.save(update_fields=["secret", "previous_secret", "previous_secret_until", "updated_at"])
        audit_record(
            action="webhook_secret_rotated", actor=operator_actor(membership.user), workspace=membership.workspace,
            target=f"webhook:{endpoint.pk}",
        )
    return endpoint


def webhook_test(*, membership: Membership, endpoint: WebhookEndpoint) -> WebhookDelivery:
    """A `webhook.test` delivery to this endpoint, whatever its events (and enabled or not:
    testing a disabled endpoint is how one finds out it works again)."""
    _ensure_admin(membership)
    data = {"webhook_id": str(endpoint.pk), "workspace": membership.workspace.slug, "url": public_url("/settings/webhooks/")}
    at = timezone.now()
    title = f"Test event from MemoryHub ({membership.workspace.slug})"
    delivery = WebhookDelivery.objects.create(
        workspace_id=endpoint.workspace_id, endpoint=endpoint, message_id=_message_id(), event=TEST_EVENT,
        body=formats.body(format=endpoint.format, event=TEST_EVENT, at=at, title=title, data=data, content=None).decode(),
        created_at=at, next_attempt_at=at,
    )
    transaction.on_commit(pump_wake)
    return delivery


def delivery_redeliver(*, membership: Membership, delivery: WebhookDelivery) -> WebhookDelivery:
    """The same message (same `webhook-id` and body) sent again, as a new delivery."""
    _ensure_admin(membership)
    with transaction.atomic():
        again = WebhookDelivery.objects.create(
            workspace_id=delivery.workspace_id, endpoint_id=delivery.endpoint_id, user_id=delivery.user_id,
            message_id=delivery.message_id, event=delivery.event, body=delivery.body, redelivery_of=delivery,
        )
        audit_record(
            action="webhook_redelivered", actor=operator_actor(membership.user), workspace=membership.workspace,
            target=f"webhook:{delivery.endpoint_id}", details={"delivery": delivery.pk, "message_id": delivery.message_id},
        )
        transaction.on_commit(pump_wake)
    return again


# --- events ----------------------------------------------------------------------------


def notification_queue(
    *, workspace: Workspace, event: str, title: str, data: dict[str, Any], content: dict[str, Any] | None = None, user_id: str = "",
    summary: str = "",
) -> int:
    """Announce `event` to the workspace's endpoints that want it, and email the operators
    who asked for it, once the current transaction commits. `data` holds ids, names, status
    and console URLs; `content` what an approver would read (args, a summary), sent only to
    endpoints with include_content; `summary` a line of it for the emails (which go to the
    workspace's own operators). `user_id` names the end user the event is about, so a purge
    takes the deliveries. Returns how many deliveries were queued."""
    if event not in EVENTS:
        raise ValueError(f"{event!r} is not a webhook event (notifications.models.EVENTS)")
    data = {"workspace": workspace.slug} | data
    queued = _emails_queue(workspace=workspace, event=event, title=title, data=data, summary=summary, user_id=user_id)
    at = timezone.now()
    # Every form a body can take here, chosen per endpoint by the statement: finding the
    # endpoints and queueing their deliveries is one round trip, in the request that
    # announces (a workspace without webhooks pays that one statement, finding none).
    bodies = {
        (form, with_content): formats.body(format=form, event=event, at=at, title=title, data=data, content=content if with_content else None).decode()
        for form in WebhookFormat.values for with_content in (False, True)
    }
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {WebhookDelivery._meta.db_table}
                (workspace_id, endpoint_id, user_id, event, message_id, body, attempts, next_attempt_at, status, progress, error, created_at)
            SELECT e.workspace_id, e.id, %(user_id)s, %(event)s, %(message_id)s,
                   CASE WHEN e.format = 'slack' THEN (CASE WHEN e.include_content THEN %(slack_content)s ELSE %(slack)s END)
                        ELSE (CASE WHEN e.include_content THEN %(standard_content)s ELSE %(standard)s END) END,
                   0, %(at)s, %(queued)s, 0, '', %(at)s
            FROM {WebhookEndpoint._meta.db_table} AS e
            WHERE e.workspace_id = %(workspace_id)s AND e.enabled AND e.events @> ARRAY[%(event)s]::varchar[]
            """,
            {
                "user_id": user_id, "event": event, "message_id": _message_id(), "at": at, "queued": JobStatus.QUEUED,
                "workspace_id": workspace.pk, "slack": bodies["slack", False], "slack_content": bodies["slack", True],
                "standard": bodies["standard", False], "standard_content": bodies["standard", True],
            },
        )
        made = cursor.rowcount
    if made:
        transaction.on_commit(pump_wake)
    return queued + made


def _emails_queue(*, workspace: Workspace, event: str, title: str, data: dict[str, Any], summary: str, user_id: str) -> int:
    if not settings.MEMORYHUB_EMAIL_URL or event not in EMAIL_EVENTS:
        return 0
    chosen = NotificationSetting.objects.filter(membership__workspace=workspace, events__contains=[event]).select_related("membership")
    recipients = [setting for setting in chosen if setting.membership.allows(EMAIL_EVENTS[event])]
    if not recipients:
        return 0
    subject, body = formats.email(workspace=workspace.slug, title=title, data=data, summary=summary, settings_url=public_url(SETTINGS_PATH))
    EmailDelivery.objects.bulk_create([
        EmailDelivery(
            workspace=workspace, user_id=user_id, event=event, membership=setting.membership, address=setting.email, subject=subject, body=body,
        )
        for setting in recipients
    ])
    transaction.on_commit(pump_wake)
    return len(recipients)


def notification_setting_set(*, membership: Membership, email: str, events: list[str]) -> NotificationSetting:
    """Which emails this operator wants of this workspace, and where. An event the role
    does not receive (approval requests for viewers, escalations for non-admins) is refused."""
    unknown = sorted(set(events) - set(EMAIL_EVENTS))
    if unknown:
        raise ApplicationError(
            "Emails exist for: " + ", ".join(EMAIL_EVENTS) + ".", code="VALIDATION_ERROR", details={"unknown": unknown},
        )
    beyond = [event for event in events if not membership.allows(EMAIL_EVENTS[event])]
    if beyond:
        raise Forbidden(
            "Your role does not receive " + ", ".join(beyond) + " emails: approval requests go to approvers and admins, escalations to admins.",
            code="FORBIDDEN",
        )
    with transaction.atomic():
        setting, _ = NotificationSetting.objects.update_or_create(membership=membership, defaults={"email": email, "events": list(dict.fromkeys(events))})
        audit_record(
            action="notification_settings_changed", actor=operator_actor(membership.user), workspace=membership.workspace,
            details={"events": setting.events},
        )
    return setting


def budget_announce(
    *, signal: object, workspace_id: int, spent: Decimal, warn_at: Decimal | None, limit: Decimal | None, **_: Any,
) -> None:
    """The month's budget warning or exhaustion (memoryhub.usage sends each once a month)."""
    exceeded = signal is budget_exceeded
    workspace = Workspace.objects.get(pk=workspace_id)
    title = (
        f"{workspace.slug}: the month's model budget ({limit}) is spent; priced calls are refused until the 1st" if exceeded
        else f"{workspace.slug}: model costs this month reached {spent}, past the warning at {warn_at}"
    )
    notification_queue(
        workspace=workspace, event="budget.exceeded" if exceeded else "budget.warning", title=title,
        data={
            "spent": float(spent), "warn_at": None if warn_at is None else float(warn_at), "limit": None if limit is None else float(limit),
            "url": public_url("/usage/"),
        },
    )
