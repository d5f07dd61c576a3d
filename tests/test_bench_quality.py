"""Retrieval quality on the shipped LoCoMo-layout dataset: the default (hybrid) must
find the evidence better than either leg alone."""

from __future__ import annotations

from benchmarks.memory_quality import DEFAULT_DATASET, bench_quality


def test_it_ranks_evidence_better_with_hybrid_than_with_either_leg(db: None) -> None:
    variants = {"keyword": {"mode": "keyword"}, "semantic": {"mode": "semantic"}, "hybrid": {"mode": "hybrid"}}
    result = bench_quality(dataset=DEFAULT_DATASET, variants=variants, log=lambda line: None)
    assert result.questions >= 60 and result.turns >= 300
    recall = result.recall
    for k in (1, 5):
        assert recall["hybrid"][k] > recall["keyword"][k], recall
        assert recall["hybrid"][k] > recall["semantic"][k], recall
    assert recall["hybrid"][10] >= max(recall["keyword"][10], recall["semantic"][10]), recall
    # Each question category is reported on its own (LoCoMo numbers them; we name them).
    assert {"category multi-hop", "category temporal", "category single-hop"} <= set(result.by_group["hybrid"])
    recall_at_10, questions = result.by_group["hybrid"]["all"]
    assert questions == result.questions and recall_at_10 == recall["hybrid"][10]
