"""`bench graph` in small: neighbours, paths (the lengths the generated facts say), no
paths and grounding over HTTP to a real hub, edges and factual creates in turn; the
report says each against its goal, and the workspace is gone afterwards."""

from __future__ import annotations

from benchmarks.graph import bench_graph, report
from memoryhub.core.models import Workspace
from memoryhub.memory.models import MemoryEntry


def test_it_times_neighbours_paths_grounding_and_edge_writes_over_http(transactional_db: None) -> None:
    lines: list[str] = []
    result = bench_graph(facts=600, entities=150, others=300, users=10, queries=5, dense=400, log=lines.append)
    assert result.facts == 600 and result.degrees["max"] > result.degrees["median"] > 0  # hubs and a long tail
    for kind in ("neighbors", "path", "no path", "grounding"):
        assert result.latency_ms[kind]["n"] > 0 and 0 < result.latency_ms[kind]["p50"] <= result.latency_ms[kind]["p95"] < 5000, kind
    assert result.latency_ms["neighbors"]["n"] == result.latency_ms["path"]["n"] == result.latency_ms["grounding"]["n"] == 5
    # Every path as short as the breadth-first walk of the generated facts found it; every text grounded.
    # The dense entity's answers all say truncated.
    assert result.wrong == {"path": 0, "grounding": 0, "dense neighbors": 0, "dense grounding": 0}
    assert result.write_ms["edges"]["n"] == result.write_ms["memories"]["n"] == 5 and result.write_ratio > 0
    report(result, write=lines.append)
    for goal in ("p95 ≤ 20 ms", "p95 ≤ 50 ms", "p95 ≤ 30 ms", "≤ 1.2×"):
        assert any(f"(goal {goal}: " in line for line in lines), goal
    assert any(line.startswith("neighbours, depth 2") for line in lines)
    assert any(line.startswith("path, none within 4 (404)") and "(no goal of its own)" in line for line in lines)
    assert any(line.startswith("POST /graph/edges p50") for line in lines)
    assert any(line.startswith("an entity made dense, 400 facts") for line in lines)
    assert any(line.startswith("  neighbours, depth 3, last page of 500") and "(goal p95 ≤ 20 ms: " in line for line in lines)
    assert not Workspace.objects.filter(slug__startswith="bench-graph-").exists() and not MemoryEntry.objects.exists()
