"""Retrieval quality on the shipped LoCoMo-layout dataset: the default (hybrid) must
find the evidence better than either leg alone."""

from __future__ import annotations

from benchmarks.memory_quality import DEFAULT_DATASET, bench_quality, locomo_turns


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


def test_it_stores_a_shared_photo_with_its_caption() -> None:
    sample = {"conversation": {
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Caroline", "dia_id": "D1:1", "text": "Look what I made!", "blip_caption": "a photo of a clay vase"},
            {"speaker": "Melanie", "dia_id": "D1:2", "text": "Wow, lovely."},
        ],
    }}
    assert list(locomo_turns(sample)) == [
        ("D1:1", "Caroline", "Look what I made! [shares a photo: a photo of a clay vase]", "1:56 pm on 8 May, 2023"),
        ("D1:2", "Melanie", "Wow, lovely.", "1:56 pm on 8 May, 2023"),
    ]
