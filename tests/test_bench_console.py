"""`bench console` in small: every console page answers with the demo data and a long
session, and the report puts each page's time beside the goal."""

from __future__ import annotations

from benchmarks.console import GOAL_MS, bench_console, report


def test_it_times_every_console_page_with_the_demo_and_a_long_session(db: None) -> None:
    lines: list[str] = []
    result = bench_console(events=300, repeat=1, log=lines.append)
    assert {"demo: overview", "demo: busiest session timeline", "demo: compliance", "long session: newest events"} <= set(result.pages)
    assert all(0 < timing["p50"] and timing["queries"] > 0 for timing in result.pages.values())
    report(result, write=lines.append)
    assert sum(f"(goal ≤ {GOAL_MS:.0f} ms)" in line for line in lines) == len(result.pages)
