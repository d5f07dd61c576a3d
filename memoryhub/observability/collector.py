"""Gauges made at scrape time from the database and the task queue: the same answer
from whichever hub process is scraped, however many there are."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, F, Min, Sum
from django.utils import timezone
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, SummaryMetricFamily
from prometheus_client.registry import Collector

from memoryhub.approvals.models import Approval, ApprovalStatus
from memoryhub.core.jobs import JobStatus
from memoryhub.compliance.models import PurgeRequest
from memoryhub.core import tasking
from memoryhub.memory.models import MemoryEntry
from memoryhub.notifications.models import EmailDelivery, WebhookDelivery, WebhookEndpoint
from memoryhub.usage.models import UsageDaily


def _age(moment: Any, now: float) -> float:
    return max(0.0, now - moment.timestamp()) if moment is not None else 0.0


def celery_queue(queue: str = "celery") -> tuple[int, float | None]:
    """Messages waiting in the Redis queue, and when the oldest was queued (the
    `enqueued_at` header tasking.dispatch adds; kombu pushes on the left, so the oldest
    is on the right)."""
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2)
    depth = int(client.llen(queue))
    oldest = None
    if depth:
        raw = client.lindex(queue, -1)
        try:
            oldest = float(json.loads(raw)["headers"]["enqueued_at"])
        except (TypeError, ValueError, KeyError):
            oldest = None
    return depth, oldest


class HubCollector(Collector):
    def collect(self) -> Iterator[Any]:
        now = time.time()
        depth, oldest = celery_queue() if settings.REDIS_URL else tasking.in_process_queue()
        queue = "celery" if settings.REDIS_URL else "in_process"
        yield _gauge("memoryhub_task_queue_depth", "Background tasks queued and not started yet.", depth, queue=queue)
        yield _gauge(
            "memoryhub_task_queue_oldest_seconds", "Age of the oldest task still queued (0 when none).",
            max(0.0, now - oldest) if oldest else 0.0, queue=queue,
        )

        lag = MemoryEntry.objects.filter(vector_indexed=False, embedding__isnull=False).aggregate(rows=Count("pk"), oldest=Min("created_at"))
        yield _gauge("memoryhub_indexer_unindexed_rows", "Memory entries with a vector not yet in the HNSW index (searched exactly meanwhile).", lag["rows"])
        yield _gauge("memoryhub_indexer_oldest_unindexed_seconds", "Age of the oldest of them (0 when none).", _age(lag["oldest"], now))

        pending = Approval.objects.filter(status=ApprovalStatus.PENDING, expires_at__gt=timezone.now()) | Approval.objects.filter(
            status=ApprovalStatus.PENDING, expires_at__isnull=True
        )
        waiting = pending.aggregate(rows=Count("pk"), oldest=Min("created_at"))
        yield _gauge("memoryhub_approvals_waiting", "Approval requests waiting for an operator's decision.", waiting["rows"])
        yield _gauge("memoryhub_approvals_oldest_waiting_seconds", "Age of the oldest of them (0 when none).", _age(waiting["oldest"], now))

        live = PurgeRequest.objects.filter(dry_run=False, status__in=[JobStatus.QUEUED, JobStatus.RUNNING])
        statuses = GaugeMetricFamily("memoryhub_purges_live", "Purges queued or running.", labels=["status"])
        counted = dict(live.values_list("status").annotate(n=Count("pk")).values_list("status", "n"))
        for status in (JobStatus.QUEUED, JobStatus.RUNNING):
            statuses.add_metric([status.value], counted.get(status, 0))
        yield statuses
        finished = PurgeRequest.objects.filter(dry_run=False, status__in=[JobStatus.DONE, JobStatus.FAILED], started_at__isnull=False)
        totals = finished.aggregate(n=Count("pk"), seconds=Sum(F("finished_at") - F("started_at")))
        summary = SummaryMetricFamily(
            "memoryhub_purge_duration_seconds", "Time from a purge's start to its receipt (storage clean-up excluded), finished purges.",
            labels=[],
        )
        summary.add_metric([], count_value=totals["n"], sum_value=totals["seconds"].total_seconds() if totals["seconds"] else 0.0)
        yield summary
        last = finished.order_by("-finished_at").values_list("started_at", "finished_at").first()
        yield _gauge(
            "memoryhub_purge_last_duration_seconds", "Duration of the latest finished purge (0 when none).",
            (last[1] - last[0]).total_seconds() if last else 0.0,
        )

        yield from _deliveries(now)
        yield from _model_usage()


def _deliveries(now: float) -> Iterator[Any]:
    """Webhooks and emails waiting to be sent, the oldest one that is due (a pump that
    fell behind, or a hub that sends nothing), the failures of the last day, and the
    endpoints their receivers turned off."""
    waiting = GaugeMetricFamily("memoryhub_deliveries_waiting", "Deliveries not sent yet (queued, retrying or being sent).", labels=["channel"])
    overdue = GaugeMetricFamily("memoryhub_deliveries_oldest_due_seconds", "How long the oldest due delivery has waited (0 when none).", labels=["channel"])
    failed = GaugeMetricFamily("memoryhub_deliveries_failed_24h", "Deliveries that failed for good in the last 24 hours.", labels=["channel"])
    day_ago = timezone.now() - timedelta(days=1)
    for channel, model in (("webhook", WebhookDelivery), ("email", EmailDelivery)):
        waiting.add_metric([channel], model.objects.filter(status__in=[JobStatus.QUEUED, JobStatus.RUNNING]).count())
        due = model.objects.filter(status=JobStatus.QUEUED, next_attempt_at__lte=timezone.now()).aggregate(oldest=Min("next_attempt_at"))
        overdue.add_metric([channel], _age(due["oldest"], now))
        failed.add_metric([channel], model.objects.filter(status=JobStatus.FAILED, finished_at__gte=day_ago).count())
    yield from (waiting, overdue, failed)
    yield _gauge("memoryhub_webhooks_disabled", "Webhook endpoints turned off (by an admin, or by a receiver's 410).",
                 WebhookEndpoint.objects.filter(enabled=False).count())


def _model_usage() -> Iterator[Any]:
    """Model calls per provider and operation, from the days' totals of every workspace
    (which only grow: retention takes minutes, never days), so counters in any process."""
    calls = CounterMetricFamily("memoryhub_model_calls", "Calls to embedding, summarising and reranking models.", labels=["provider", "operation"])
    tokens = CounterMetricFamily("memoryhub_model_tokens", "Tokens those calls read (input) and wrote (output).", labels=["provider", "operation", "direction"])
    cost = CounterMetricFamily("memoryhub_model_cost", "What those calls cost, by MEMORYHUB_PRICES.", labels=["provider", "operation"])
    rows = UsageDaily.objects.values("provider", "operation").annotate(
        calls=Sum("calls"), input_tokens=Sum("input_tokens"), output_tokens=Sum("output_tokens"), cost=Sum("cost"),
    ).order_by("provider", "operation")
    for row in rows:
        labels = [row["provider"], row["operation"]]
        calls.add_metric(labels, row["calls"])
        tokens.add_metric([*labels, "input"], row["input_tokens"])
        tokens.add_metric([*labels, "output"], row["output_tokens"])
        cost.add_metric(labels, float(row["cost"]))
    yield from (calls, tokens, cost)


def _gauge(name: str, documentation: str, value: float, **labels: str) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=list(labels))
    family.add_metric(list(labels.values()), value)
    return family
