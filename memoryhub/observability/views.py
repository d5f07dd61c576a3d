"""`/metrics` for Prometheus: off unless MEMORYHUB_METRICS_TOKEN or
MEMORYHUB_METRICS_ALLOWED_IPS is set (docs/operations/logs-and-metrics.md, "Logs and metrics")."""

from __future__ import annotations

import hmac
import ipaddress
import os

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client import multiprocess

from memoryhub.observability.collector import HubCollector

_hub = CollectorRegistry()
_hub.register(HubCollector())


def _allowed(request: HttpRequest) -> bool:
    token = settings.MEMORYHUB_METRICS_TOKEN
    if token and hmac.compare_digest(request.headers.get("Authorization", "").encode(), f"Bearer {token}".encode()):
        return True
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return any(address in network for network in settings.MEMORYHUB_METRICS_ALLOWED_NETWORKS)


def exposition() -> bytes:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # Several worker processes: every process's counters, from their files.
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    return generate_latest(registry) + generate_latest(_hub)


def metrics(request: HttpRequest) -> HttpResponse:
    if not settings.MEMORYHUB_METRICS_TOKEN and not settings.MEMORYHUB_METRICS_ALLOWED_NETWORKS:
        raise Http404("metrics are off")
    if not _allowed(request):
        response = HttpResponse("metrics: a bearer token or an allowed address is required\n", status=401, content_type="text/plain")
        if settings.MEMORYHUB_METRICS_TOKEN:
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
