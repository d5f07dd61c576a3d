"""`bench review` in small: every review tab (with its next and middle pages), the memory
of 100 revisions and the two API endpoints answer, the report puts each beside the goal,
and the workspace is gone afterwards."""

from __future__ import annotations

from benchmarks.review import GOAL_MS, PREFIX, REVISIONS, bench_review, report
from memoryhub.core.models import Workspace
from memoryhub.memory.models import MemoryDuplicate, MemoryEntry, MemoryRevision


def test_it_times_the_review_queue_and_a_memory_of_100_revisions(transactional_db: None) -> None:
    lines: list[str] = []
    result = bench_review(rows=2_000, repeat=2, log=lines.append)
    # Every timed request answered 200 (the benchmark raises otherwise), and each page was timed.
    for label in ("flagged", "quarantined", "not reviewed"):
        assert {f"console: {label}, first page", f"console: {label}, middle page", f"API: review-queue {label}, first page"} <= set(result.pages)
    assert {"console: not reviewed, next page", "API: review-queue not reviewed, next page"} <= set(result.pages)
    assert {"console: duplicates", f"console: a memory of {REVISIONS} revisions", "API: review-queue duplicates",
            f"API: {REVISIONS} revisions, operator key", f"API: {REVISIONS} revisions, agent key"} <= set(result.pages)
    assert all(0 < timing["p50"] <= timing["p95"] <= timing["max"] and timing["queries"] > 0 for timing in result.pages.values())
    assert result.waiting["flagged"] > 0 and result.waiting["quarantined"] > 0 and result.waiting["duplicate pairs"] >= 4

    report(result, write=lines.append)
    assert sum(f"(goal p95 ≤ {GOAL_MS:.0f} ms at 1M: " in line for line in lines) == len(result.pages)
    assert not Workspace.objects.filter(slug__startswith=PREFIX).exists()
    assert not MemoryEntry.objects.exists() and not MemoryRevision.objects.exists() and not MemoryDuplicate.objects.exists()
