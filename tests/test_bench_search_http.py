"""`bench search-http` in small: questions go over HTTP to a real hub, which embeds
them, filters and ranks; the answers agree with exact search."""

from __future__ import annotations

import dataclasses

from benchmarks.search_http import bench_search_http, report
from memoryhub.memory.models import MemoryEntry


def test_it_times_hybrid_search_over_http_and_checks_it_against_exact_search(transactional_db: None) -> None:
    lines: list[str] = []
    result = bench_search_http(rows=600, real=100, users=20, queries=40, burst=1000, log=lines.append)
    assert result.failed == 0
    assert 0 < result.latency_ms["p50"] <= result.latency_ms["p95"] < 5000
    assert result.recall_queries == 40 and result.recall_at_10 >= 0.9  # below the exact-search threshold: exact both ways
    report(result, write=lines.append)
    assert any("recall@10 vs exact search" in line for line in lines)
    # The burst: written through the API while searching went on, all indexed, then removed.
    assert result.burst["written"] == 1000 and result.burst["during"]["n"] > 0
    assert result.burst["during"]["refused"] == 0  # every search answered, none rate-limited
    assert result.burst["drain_seconds"] is not None and result.burst["left_unindexed"] == 0
    assert any("every new row in HNSW" in line for line in lines)
    assert MemoryEntry.objects.count() == 600
    assert any(line.startswith("setup: entries loaded and indexed ") for line in lines)
    # A rerun over the same workspace loads nothing, and its report says so rather than leaving "setup:" bare.
    rerun_lines: list[str] = []
    report(dataclasses.replace(result, setup_seconds={}), write=rerun_lines.append)
    assert "setup: the workspace of an earlier run, reused" in rerun_lines


def test_it_can_ask_about_users_without_tags(transactional_db: None) -> None:
    lines: list[str] = []
    result = bench_search_http(rows=150, real=100, users=5, queries=20, filters="user", log=lines.append)
    assert result.failed == 0 and result.recall_queries == 20 and result.recall_at_10 >= 0.9
    report(result, write=lines.append)
    assert any("user filter, 1 worker: p50" in line for line in lines) and not any("tag filter" in line for line in lines)


def test_it_loads_again_a_workspace_an_earlier_run_left_short(transactional_db: None) -> None:
    bench_search_http(rows=100, real=100, users=5, queries=10, filters="user", log=lambda line: None)
    loaded = MemoryEntry.objects.order_by("pk")
    MemoryEntry.objects.filter(pk__in=list(loaded.values_list("pk", flat=True)[:75])).delete()  # as if stopped while loading
    lines: list[str] = []
    result = bench_search_http(rows=100, real=100, users=5, queries=10, filters="user", log=lines.append)
    assert any("holds 25 entries, not 100" in line for line in lines)
    assert MemoryEntry.objects.count() == 100 and result.failed == 0 and result.recall_at_10 >= 0.9
    # Complete now, the next run measures it as it is.
    rerun: list[str] = []
    bench_search_http(rows=100, real=100, users=5, queries=10, filters="user", log=rerun.append)
    assert any("reusing workspace" in line for line in rerun) and MemoryEntry.objects.count() == 100
