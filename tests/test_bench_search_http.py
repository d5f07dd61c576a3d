"""`bench search-http` in small: questions go over HTTP to a real hub, which embeds
them, filters and ranks; the answers agree with exact search."""

from __future__ import annotations

from benchmarks.search_http import bench_search_http, report


def test_it_times_hybrid_search_over_http_and_checks_it_against_exact_search(transactional_db: None) -> None:
    lines: list[str] = []
    result = bench_search_http(rows=600, real=300, users=20, queries=40, log=lines.append)
    assert result.failed == 0
    assert 0 < result.latency_ms["p50"] <= result.latency_ms["p95"] < 5000
    assert result.recall_queries == 40 and result.recall_at_10 >= 0.9  # below the exact-search threshold: exact both ways
    report(result, write=lines.append)
    assert any("recall@10 vs exact search" in line for line in lines)
