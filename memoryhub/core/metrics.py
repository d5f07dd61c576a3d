"""The hub's Prometheus metrics that processes count themselves (docs/operations/logs-and-metrics.md,
"Metrics"). Gauges read from the database are made at scrape time instead
(memoryhub/observability/collector.py), so they are right whichever process is scraped.

With PROMETHEUS_MULTIPROC_DIR set (several ASGI workers), prometheus_client keeps these
in files there and /metrics adds up every process's.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram, disable_created_metrics

# The `_created` series double every counter's and histogram's output for nothing a
# dashboard of the hub uses.
disable_created_metrics()

REQUESTS = Counter(
    "memoryhub_http_requests", "HTTP requests answered, by method, route template and status.", ["method", "route", "status"]
)
REQUEST_SECONDS = Histogram(
    "memoryhub_http_request_duration_seconds", "Time to answer an HTTP request, by method and route template.", ["method", "route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0),
)
# "livesum": the open ones of the processes alive now (a dead worker's count drops out).
STREAMS_OPEN = Gauge("memoryhub_streams_open", "Server-sent event streams open now.", multiprocess_mode="livesum")
APPROVAL_WAITERS = Gauge(
    "memoryhub_approval_waiters", "Agents long-polling an approval decision now (?wait=).", multiprocess_mode="livesum"
)
