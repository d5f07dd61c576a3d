"""`manage.py bench load`, briefly: the agent mix runs against a real hub process, stops
by itself, and reports latencies, statuses and the process's CPU and memory."""

from __future__ import annotations

import time

from benchmarks.load import bench_load


def test_it_runs_the_agent_mix_for_a_bounded_time_without_5xx(transactional_db: None) -> None:
    started = time.monotonic()
    result = bench_load(seconds=3, concurrency=3, streams=1, modes=["one"], redis_url="", log=lambda line: None)
    assert time.monotonic() - started < 40

    (mode,) = result.modes
    assert mode.server_errors == 0, mode.statuses
    assert mode.requests > 10
    assert {"write", "search", "me"} <= set(mode.latency_ms), mode.latency_ms
    assert all(lat["p50"] <= lat["p95"] <= lat["p99"] for lat in mode.latency_ms.values())
    assert mode.stream_failures == 0
    (hub,) = mode.processes
    assert hub.role == "hub-1" and hub.rss_peak_mb > 50 and hub.cpu_percent > 0
