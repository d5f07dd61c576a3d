"""Sending what notifications queued: one pump per process claims due deliveries (a
conditional update under SKIP LOCKED: one process sends each), sends them on a bounded
pool, writes each outcome as it comes, and leaves failures to the retry schedule; the
periodic task starts it for retries and takes up what a dead process held."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from memoryhub.core import tasking
from memoryhub.core.audit import audit_record
from memoryhub.core.jobs import JobStatus, job_stall_cutoff, stalled
from memoryhub.core.models import Workspace
from memoryhub.notifications.models import TEST_EVENT, Delivery, EmailDelivery, WebhookDelivery, WebhookEndpoint
from memoryhub.notifications.sending import Attempt, delivery_attempt, email_attempt
from memoryhub.timeline.services import event_record

DELIVER_TASK = "memoryhub.notifications.tasks.deliver_webhooks"

_pump = threading.Lock()
_pump_again = threading.Event()
# In-process mode: a wake-up is queued on the task threads and has not started yet.
_wake_queued = threading.Event()


def pump_wake() -> None:
    """After a commit that queued deliveries: the pump looks at once. In one process a
    burst of commits queues one wake-up (a running pump is asked to look again), not a
    task each; Celery workers get a message each (a worker's pump coalesces them)."""
    if tasking.in_process():
        if _pump.locked():
            _pump_again.set()
            return
        if _wake_queued.is_set():
            return
        _wake_queued.set()
    tasking.dispatch(DELIVER_TASK)


@dataclass(frozen=True)
class Channel:
    """A kind of delivery: its table, which of its rows may be sent, and how one is sent."""

    model: type[Delivery]
    sendable: Q
    related: tuple[str, ...]
    attempt: Callable[[Any], Attempt]
    # Whether this hub sends any (no mail server, no emails: nothing to look for).
    active: Callable[[], bool] = lambda: True


def _webhook_attempt(delivery: WebhookDelivery) -> Attempt:
    endpoint = delivery.endpoint
    return delivery_attempt(url=endpoint.url, message_id=delivery.message_id, body=delivery.body.encode(), secrets_now=endpoint.secrets())


def _email_attempt(delivery: EmailDelivery) -> Attempt:
    return email_attempt(to=delivery.address, subject=delivery.subject, body=delivery.body)


CHANNELS = (
    # A turned-off endpoint still gets its test events: that is how one finds out it works again.
    Channel(
        model=WebhookDelivery, sendable=Q(endpoint__enabled=True) | Q(event=TEST_EVENT), related=("endpoint",), attempt=_webhook_attempt,
    ),
    Channel(model=EmailDelivery, sendable=Q(), related=(), attempt=_email_attempt, active=lambda: bool(settings.MEMORYHUB_EMAIL_URL)),
)


def deliveries_send() -> int:
    """Send every due delivery, as long as there are some; returns how many were tried.
    One pump per process: a wake-up while it runs only asks it to look again, so a burst
    of commits starts one pump, not one per commit."""
    _wake_queued.clear()
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
    capacity = settings.MEMORYHUB_WEBHOOK_WORKERS * 4
    senders = tasking.pool("memoryhub-delivery", workers=settings.MEMORYHUB_WEBHOOK_WORKERS)
    in_flight: dict[Future[Attempt], tuple[Channel, Delivery]] = {}
    tried = 0
    while True:
        if len(in_flight) <= capacity // 2:
            for channel in (channel for channel in CHANNELS if channel.active()):
                for delivery in _claim(channel, limit=capacity - len(in_flight)):
                    in_flight[senders.submit(channel.attempt, delivery)] = (channel, delivery)
        if not in_flight:
            return tried
        done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
        delivered: dict[tuple[Channel, int | None], list[int]] = {}
        for future in done:
            channel, delivery = in_flight.pop(future)
            try:
                attempt = future.result()
            except Exception as exc:  # a bug in sending must not stall the queue
                attempt = Attempt(error=f"{type(exc).__name__}: {exc}"[:300])
            if attempt.delivered:  # the common case, written together below
                delivered.setdefault((channel, attempt.status_code), []).append(delivery.pk)
            else:
                _outcome_record(channel, delivery, attempt)
            tried += 1
        for (channel, status_code), ids in delivered.items():
            channel.model.objects.filter(pk__in=ids, status=JobStatus.RUNNING).update(
                status=JobStatus.DONE, progress=1.0, finished_at=timezone.now(), attempts=F("attempts") + 1, last_status_code=status_code,
                error="", heartbeat_at=None,
            )


def _claim(channel: Channel, *, limit: int) -> list[Delivery]:
    """Up to `limit` due deliveries of the channel, now running under this process; rows
    another process is claiming are skipped, not waited for."""
    if limit <= 0:
        return []
    now = timezone.now()
    rows = channel.model.objects
    due = rows.filter(channel.sendable, status=JobStatus.QUEUED, next_attempt_at__lte=now).order_by("next_attempt_at").values("pk")[:limit]
    subquery, params = due.query.sql_with_params()
    table = channel.model._meta.db_table
    # One statement: the rows claimed are locked, updated and named at once (a pump's claim
    # is most of its own work in a burst); FOR UPDATE … SKIP LOCKED leaves another
    # process's claim alone.
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET status = %s, heartbeat_at = %s, started_at = %s "
            f"WHERE id IN ({subquery} FOR UPDATE OF {table} SKIP LOCKED) RETURNING id",
            [JobStatus.RUNNING, now, now, *params],
        )
        ids = [row[0] for row in cursor.fetchall()]
    if not ids:
        return []
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


def deliveries_sweep() -> int:
    """Deliveries that ended more than MEMORYHUB_DELIVERY_RETENTION_DAYS ago are deleted
    (the log is for finding out what happened lately, not an archive); how many."""
    cutoff = timezone.now() - timedelta(days=settings.MEMORYHUB_DELIVERY_RETENTION_DAYS)
    return sum(
        channel.model.objects.filter(status__in=[JobStatus.DONE, JobStatus.FAILED], finished_at__lt=cutoff).delete()[0] for channel in CHANNELS
    )


def deliveries_resume() -> int:
    """Deliveries whose sender died mid-send are queued again (the receiver may see them
    twice, under the same `webhook-id`); returns how many."""
    cutoff = job_stall_cutoff()
    return sum(channel.model.objects.filter(stalled(cutoff)).update(status=JobStatus.QUEUED, heartbeat_at=None) for channel in CHANNELS)
