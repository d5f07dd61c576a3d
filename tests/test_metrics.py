"""/metrics for Prometheus: off unless configured, then behind a bearer token or an
address list; requests by route template; queue, indexer, approval and purge gauges
from the database; every worker's counts with several ASGI processes."""

from __future__ import annotations

import ipaddress
import time
import uuid
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from memoryhub.approvals.models import Approval
from memoryhub.compliance.models import PurgeRequest
from memoryhub.memory.models import MemoryEntry
from memoryhub.notifications.models import WebhookDelivery, WebhookEndpoint
from memoryhub.notifications.services import EndpointInput, webhook_create, webhook_test
from tests.conftest import Actors, api_client, start_hub
from tests.seed_every_table import seed

TOKEN = "scrape-token-for-tests"


def scrape(client: Client | None = None) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = (client or Client()).get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"].startswith("text/plain; version=")
    return samples(response.content.decode())


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_it_is_off_unless_a_token_or_an_address_is_set(db: None, settings) -> None:  # type: ignore[no-untyped-def]
    settings.MEMORYHUB_METRICS_TOKEN, settings.MEMORYHUB_METRICS_ALLOWED_NETWORKS = "", []
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer anything").status_code == 404


def test_it_wants_the_bearer_token(db: None, settings) -> None:  # type: ignore[no-untyped-def]
    settings.MEMORYHUB_METRICS_TOKEN, settings.MEMORYHUB_METRICS_ALLOWED_NETWORKS = TOKEN, []
    refused = Client().get("/metrics")
    assert refused.status_code == 401 and refused["WWW-Authenticate"].startswith("Bearer")
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert b"memoryhub_http_requests_total" in Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content


def test_an_allowed_address_needs_no_token_and_others_are_refused(db: None, settings) -> None:  # type: ignore[no-untyped-def]
    settings.MEMORYHUB_METRICS_TOKEN, settings.MEMORYHUB_METRICS_ALLOWED_NETWORKS = "", [ipaddress.ip_network("127.0.0.0/8")]
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 401


def test_it_counts_and_times_requests_by_route_template(actors: Actors, settings) -> None:  # type: ignore[no-untyped-def]
    settings.MEMORYHUB_METRICS_TOKEN = TOKEN
    entry_id = str(uuid.uuid4())
    route = (("method", "GET"), ("route", "/api/v1/memories/<str:entry_id>"))
    count = ("memoryhub_http_requests_total", (*route, ("status", "404")))
    before = scrape()
    assert api_client(actors.bot_key).get(f"/api/v1/memories/{entry_id}").status_code == 404
    text = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content.decode()
    after = samples(text)
    assert after[count] - before.get(count, 0) == 1
    timed = ("memoryhub_http_request_duration_seconds_count", tuple(sorted(route)))
    assert after[timed] - before.get(timed, 0) == 1
    assert entry_id not in text  # the template, never the path


def test_it_reports_the_queue_the_indexer_approvals_and_purges_from_the_database(transactional_db: None, settings) -> None:  # type: ignore[no-untyped-def]
    settings.MEMORYHUB_METRICS_TOKEN = TOKEN
    seed()
    now = timezone.now()
    Approval.objects.update(status="pending", expires_at=None, created_at=now - timedelta(seconds=90))
    MemoryEntry.objects.update(vector_indexed=False, created_at=now - timedelta(seconds=40))
    PurgeRequest.objects.update(status="done", dry_run=False, started_at=now - timedelta(seconds=10), finished_at=now - timedelta(seconds=7.5))
    found = scrape()
    assert found[("memoryhub_approvals_waiting", ())] == 1
    assert 89 < found[("memoryhub_approvals_oldest_waiting_seconds", ())] < 300
    assert found[("memoryhub_indexer_unindexed_rows", ())] == 1
    assert 39 < found[("memoryhub_indexer_oldest_unindexed_seconds", ())] < 300
    assert found[("memoryhub_purge_duration_seconds_count", ())] == 1
    assert found[("memoryhub_purge_duration_seconds_sum", ())] == 2.5
    assert found[("memoryhub_purge_last_duration_seconds", ())] == 2.5
    assert found[("memoryhub_purges_live", (("status", "queued"),))] == 0
    assert ("memoryhub_task_queue_depth", (("queue", "in_process"),)) in found
    assert found[("memoryhub_streams_open", ())] == 0


def test_several_asgi_processes_are_counted_together(transactional_db: None, tmp_path: Path) -> None:
    shared = tmp_path / "prometheus"
    shared.mkdir()
    hub = start_hub({"PROMETHEUS_MULTIPROC_DIR": str(shared), "MEMORYHUB_METRICS_TOKEN": TOKEN}, workers=2)
    made = 0
    healthz = ("memoryhub_http_requests_total", (("method", "GET"), ("route", "/healthz"), ("status", "200")))
    try:
        # The harness's own probes while the hub started count too.
        probes = samples(httpx.get(f"{hub.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30).text).get(healthz, 0)
        deadline = time.monotonic() + 30
        # A new connection each time: the kernel spreads them over both workers.
        while made < 30 or len(list(shared.glob("counter_*.db"))) < 2:
            assert time.monotonic() < deadline, "only one worker answered"
            assert httpx.get(f"{hub.url}/healthz", timeout=30, headers={"Connection": "close"}).status_code == 200
            made += 1
        # Whichever worker answers the scrape, it reports every worker's requests.
        for _ in range(3):
            text = httpx.get(f"{hub.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}", "Connection": "close"}, timeout=30).text
            assert samples(text)[healthz] == probes + made
    finally:
        hub.stop()


def test_a_forwarded_for_header_does_not_make_a_client_an_allowed_address(transactional_db: None) -> None:
    # Served as `make run` serves it: no proxy is trusted unless TRUSTED_PROXIES names it.
    hub = start_hub({"MEMORYHUB_METRICS_ALLOWED_IPS": "10.0.0.0/8"})
    try:
        for header in ("X-Forwarded-For", "X-Real-IP", "Forwarded"):
            value = "for=10.1.2.3" if header == "Forwarded" else "10.1.2.3"
            assert httpx.get(f"{hub.url}/metrics", headers={header: value}, timeout=30).status_code == 401, header
    finally:
        hub.stop()


def test_it_counts_model_calls_per_provider_and_operation(actors: Actors, settings) -> None:  # type: ignore[no-untyped-def]
    from memoryhub.usage import metering
    from tests.conftest import remember

    settings.MEMORYHUB_METRICS_TOKEN, settings.MEMORYHUB_METRICS_ALLOWED_NETWORKS = TOKEN, []
    settings.MEMORYHUB_PRICES = '{"local": {"input_per_million": 1000}}'
    remember(actors.bot_key, "Ann prefers the aisle seat.")
    api_client(actors.bot_key).post("/api/v1/memories/search", {"query": "seat"}, format="json")
    metering.flush()  # what a running hub does every few seconds
    found = scrape()
    labels = (("operation", "embed"), ("provider", "local"))
    assert found[("memoryhub_model_calls_total", labels)] == 2
    tokens = found[("memoryhub_model_tokens_total", (("direction", "input"), *labels))]
    assert tokens > 0 and found[("memoryhub_model_cost_total", labels)] == pytest.approx(tokens * 1000 / 1_000_000)


def test_it_reports_deliveries_waiting_overdue_and_failed(actors: Actors, settings) -> None:  # type: ignore[no-untyped-def]
    settings.MEMORYHUB_METRICS_TOKEN = TOKEN
    endpoint = webhook_create(membership=actors.owner, item=EndpointInput(url="https://hooks.example.com/x", events=["purge.completed"]))
    webhook_test(membership=actors.owner, endpoint=endpoint)
    webhook_test(membership=actors.owner, endpoint=endpoint)
    late, failed = WebhookDelivery.objects.order_by("id")
    WebhookDelivery.objects.filter(pk=late.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=45))
    WebhookDelivery.objects.filter(pk=failed.pk).update(status="failed", finished_at=timezone.now())
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(enabled=False)
    found = scrape()
    assert found[("memoryhub_deliveries_waiting", (("channel", "webhook"),))] == 1
    assert 44 < found[("memoryhub_deliveries_oldest_due_seconds", (("channel", "webhook"),))] < 300
    assert found[("memoryhub_deliveries_failed_24h", (("channel", "webhook"),))] == 1
    assert found[("memoryhub_deliveries_waiting", (("channel", "email"),))] == 0
    assert found[("memoryhub_webhooks_disabled", ())] == 1
