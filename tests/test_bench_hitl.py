"""`bench hitl` in small: waiters on a real hub hear every decision, and the report says
what waiting cost."""

from __future__ import annotations

from benchmarks.hitl import bench_hitl, report


def test_it_answers_every_waiter_and_measures_what_waiting_costs(transactional_db: None) -> None:
    lines: list[str] = []
    result = bench_hitl(waiters=30, rate=50, log=lines.append)
    assert result.failed == 0, lines
    assert result.waiting.db_busy == 0  # no connection held by a waiting agent
    assert result.waiting.fds >= result.before.fds + 30  # their sockets were open meanwhile
    assert 0 < result.latency_ms["p50"] <= result.latency_ms["p95"] < 5000
    report(result, write=lines.append)
    assert any("decision → agent's answer" in line for line in lines)
