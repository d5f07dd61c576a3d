"""Writes of notifications: webhook endpoints (admins), the deliveries events queue, and
sending them.

An event queues one delivery per endpoint that wants it, in the transaction of what it
announces: a rollback announces nothing, a commit loses nothing. After the commit a
pump claims the due deliveries (a conditional update: one process sends each), sends
them on a bounded pool, and writes each outcome; failures wait their turn on the retry
schedule, and the periodic task starts the pump for retries and for deliveries a dead
process held."""

from __future__ import annotations

import random
from decimal import Decimal
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from memoryhub.core import tasking
from memoryhub.core.audit import audit_record
from memoryhub.core.errors import ApplicationError, Forbidden
from memoryhub.core.jobs import JobStatus, job_stall_cutoff, stalled
from memoryhub.core.models import Membership, Role, Workspace
from memoryhub.core.selectors import operator_actor
from memoryhub.notifications import formats
from memoryhub.notifications.addresses import url_refusal
from memoryhub.notifications.models import (
    EMAIL_EVENTS,
    EVENTS,
    Delivery,
    EmailDelivery,
    NotificationSetting,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookFormat,
)
from memoryhub.notifications.sending import Attempt, delivery_attempt, email_attempt
from memoryhub.notifications.signing import secret_new
from memoryhub.timeline.services import event_record
from memoryhub.usage.metering import budget_exceeded

DELIVER_TASK = "memoryhub.notifications.tasks.deliver_webhooks"
SETTINGS_PATH = "/settings/notifications/"
ROTATION_OVERLAP = timedelta(hours=24)
TEST_EVENT = "webhook.test"


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
    with transaction.atomic():
        [delivery] = _deliveries_queue(
            endpoints=[endpoint], event=TEST_EVENT, title=f"Test event from MemoryHub ({membership.workspace.slug})", data=data,
            content=None, user_id="",
        )
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
        tasking.enqueue(DELIVER_TASK)
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
    endpoints = list(WebhookEndpoint.objects.filter(workspace=workspace, enabled=True, events__contains=[event]))
    if endpoints:
        queued += len(_deliveries_queue(endpoints=endpoints, event=event, title=title, data=data, content=content, user_id=user_id))
    return queued


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
    tasking.enqueue(DELIVER_TASK)
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


def _deliveries_queue(
    *, endpoints: list[WebhookEndpoint], event: str, title: str, data: dict[str, Any], content: dict[str, Any] | None, user_id: str,
) -> list[WebhookDelivery]:
    at = timezone.now()
    message_id = "msg_" + uuid.uuid4().hex
    deliveries = WebhookDelivery.objects.bulk_create([
        WebhookDelivery(
            workspace_id=endpoint.workspace_id, endpoint=endpoint, user_id=user_id, message_id=message_id, event=event,
            body=formats.body(
                format=endpoint.format, event=event, at=at, title=title, data=data, content=content if endpoint.include_content else None,
            ).decode(),
            created_at=at, next_attempt_at=at,
        )
        for endpoint in endpoints
    ])
    tasking.enqueue(DELIVER_TASK)
    return deliveries


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


# --- sending ---------------------------------------------------------------------------

_pump = threading.Lock()
_pump_again = threading.Event()


@dataclass(frozen=True)
class Channel:
    """A kind of delivery: its table, which of its rows may be sent, and how one is sent."""

    model: type[Delivery]
    sendable: Q
    related: tuple[str, ...]
    attempt: Callable[[Any], Attempt]


def _webhook_attempt(delivery: WebhookDelivery) -> Attempt:
    endpoint = delivery.endpoint
    return delivery_attempt(url=endpoint.url, message_id=delivery.message_id, body=delivery.body.encode(), secrets_now=endpoint.secrets())


def _email_attempt(delivery: EmailDelivery) -> Attempt:
    return email_attempt(to=delivery.address, subject=delivery.subject, body=delivery.body)


CHANNELS = (
    Channel(model=WebhookDelivery, sendable=Q(endpoint__enabled=True), related=("endpoint",), attempt=_webhook_attempt),
    Channel(model=EmailDelivery, sendable=Q(), related=(), attempt=_email_attempt),
)


def deliveries_send() -> int:
    """Send every due delivery, as long as there are some; returns how many were tried.
    One pump per process: a wake-up while it runs only asks it to look again, so a burst
    of commits starts one pump, not one per commit."""
    tried = 0
    while True:
        if not _pump.acquire(blocking=False):
            _pump_again.set()
            return tried
        try:
            _pump_again.clear()
            tried += _pump_run()
        finally:
            _pump.release()
        # A wake-up that came after the pump's last look and before it let go.
        if not _pump_again.is_set():
            return tried


def _pump_run() -> int:
    """Claims due deliveries while there is room on the senders' pool and writes each
    outcome as it comes: a slow receiver holds up one sender, not the others."""
    capacity = settings.MEMORYHUB_WEBHOOK_WORKERS * 2
    senders = tasking.pool("memoryhub-delivery", workers=settings.MEMORYHUB_WEBHOOK_WORKERS)
    in_flight: dict[Future[Attempt], tuple[Channel, Delivery]] = {}
    tried = 0
    while True:
        if len(in_flight) <= capacity // 2:
            for channel in CHANNELS:
                for delivery in _claim(channel, limit=capacity - len(in_flight)):
                    in_flight[senders.submit(channel.attempt, delivery)] = (channel, delivery)
        if not in_flight:
            return tried
        done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
        for future in done:
            channel, delivery = in_flight.pop(future)
            try:
                attempt = future.result()
            except Exception as exc:  # a bug in sending must not stall the queue
                attempt = Attempt(error=f"{type(exc).__name__}: {exc}"[:300])
            _outcome_record(channel, delivery, attempt)
            tried += 1


def _claim(channel: Channel, *, limit: int) -> list[Delivery]:
    """Up to `limit` due deliveries of the channel, now running under this process; rows
    another process is claiming are skipped, not waited for."""
    if limit <= 0:
        return []
    now = timezone.now()
    rows = channel.model.objects
    with transaction.atomic():
        ids = list(
            rows.filter(channel.sendable, status=JobStatus.QUEUED, next_attempt_at__lte=now)
            .order_by("next_attempt_at").select_for_update(skip_locked=True, of=("self",)).values_list("pk", flat=True)[:limit]
        )
        if not ids:
            return []
        rows.filter(pk__in=ids).update(status=JobStatus.RUNNING, heartbeat_at=now, started_at=now)
    claimed = rows.filter(pk__in=ids).order_by("next_attempt_at")
    return list(claimed.select_related(*channel.related) if channel.related else claimed)


def retry_delay(*, attempts: int, retry_after: float | None) -> float | None:
    """Seconds until the next attempt after `attempts` failed ones (None: no more). The
    schedule's delay with ±20% jitter, so receivers that come back are not hit by every
    hub at once; never sooner than the receiver's Retry-After, never past the schedule's
    last step."""
    schedule = settings.MEMORYHUB_WEBHOOK_RETRY_SCHEDULE
    if attempts > len(schedule):
        return None
    delay = schedule[attempts - 1] * random.uniform(0.8, 1.2)
    if retry_after is not None:
        delay = max(delay, min(retry_after, max(schedule)))
    return delay


def _outcome_record(channel: Channel, delivery: Delivery, attempt: Attempt) -> None:
    now = timezone.now()
    mine = channel.model.objects.filter(pk=delivery.pk, status=JobStatus.RUNNING)
    attempts = delivery.attempts + 1
    fields: dict[str, Any] = {"attempts": F("attempts") + 1, "last_status_code": attempt.status_code, "error": attempt.error, "heartbeat_at": None}
    if attempt.delivered:
        mine.update(status=JobStatus.DONE, progress=1.0, finished_at=now, **fields)
        return
    gone = attempt.gone and isinstance(delivery, WebhookDelivery)
    delay = None if attempt.final or gone else retry_delay(attempts=attempts, retry_after=attempt.retry_after)
    if delay is None:
        if attempts > len(settings.MEMORYHUB_WEBHOOK_RETRY_SCHEDULE) and not attempt.final and not gone:
            fields["error"] = f"{attempt.error}; gave up after {attempts} attempts"
        with transaction.atomic():
            if mine.update(status=JobStatus.FAILED, finished_at=now, **fields) and gone:
                _endpoint_disable(delivery.endpoint, reason=f"the receiver answered 410 Gone to delivery {delivery.pk}")
        return
    mine.update(status=JobStatus.QUEUED, next_attempt_at=now + timedelta(seconds=delay), **fields)


def _endpoint_disable(endpoint: WebhookEndpoint, *, reason: str) -> None:
    """The receiver said the endpoint is gone: stop sending to it (its queued deliveries
    fail with it), and tell the workspace's admins where they look."""
    if not WebhookEndpoint.objects.filter(pk=endpoint.pk, enabled=True).update(enabled=False, disabled_reason=reason[:300]):
        return
    endpoint.deliveries.filter(status=JobStatus.QUEUED).update(
        status=JobStatus.FAILED, finished_at=timezone.now(), error="not sent: the endpoint was disabled",
    )
    workspace = Workspace.objects.get(pk=endpoint.workspace_id)
    audit_record(action="webhook_disabled", actor="system", workspace=workspace, target=f"webhook:{endpoint.pk}", details={"reason": reason})
    event_record(
        workspace=workspace, kind="webhook", summary=f"Webhook {endpoint.pk} disabled: {reason}.",
        ref={"type": "webhook.disabled", "id": str(endpoint.pk)},
    )


def deliveries_resume() -> int:
    """Deliveries whose sender died mid-send are queued again (the receiver may see them
    twice, under the same `webhook-id`); returns how many."""
    cutoff = job_stall_cutoff()
    return sum(channel.model.objects.filter(stalled(cutoff)).update(status=JobStatus.QUEUED, heartbeat_at=None) for channel in CHANNELS)
