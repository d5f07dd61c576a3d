"""`bench duplicates` in small: the labelled set is scored written singly and in batches
(each its own lookup), creates and batches are timed both ways, and the report says each
against its goal."""

from __future__ import annotations

from benchmarks.duplicates import bench_duplicates, report


def test_it_scores_the_labelled_set_and_times_creates_and_batches_both_ways(transactional_db: None) -> None:
    lines: list[str] = []
    result = bench_duplicates(people=3, rows=300, creates=10, batches=1, log=lines.append)
    for way in ("single", "batch"):
        counts = result.labelled[way]
        assert (counts.positives, counts.negatives) == (36, 12)
        # What the hub promises: the same memory said again is found, another one alike never is.
        assert counts.recall == 1.0 and counts.false_positives == 0, way
    assert 0 < result.create_ms_without["p50"] and 0 < result.create_ms["p50"]
    assert 0 < result.batch_per_second and 0 < result.batch_per_second_without
    report(result, write=lines.append)
    assert sum("precision 1.000 (goal ≥ 0.95: met)" in line for line in lines) == 2
    assert any("ms with detection" in line for line in lines)
    assert any(line.startswith("batches of 500:") and "entries/s with detection" in line for line in lines)
