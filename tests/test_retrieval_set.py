"""The shipped retrieval set (benchmarks/data/hub_conversations.json) is what the quality
benchmark reports on: big enough, with a held-out part, every evidence id a real turn,
and exactly what its generator writes."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import retrieval_set
from benchmarks.memory_quality import HUB_DATASET, locomo_turns


def test_it_ships_at_least_500_questions_with_a_held_out_split_and_every_category() -> None:
    samples = json.loads(HUB_DATASET.read_text())
    questions = [qa for sample in samples for qa in sample["qa"]]
    assert len(questions) >= 500
    splits = Counter(qa["split"] for qa in questions)
    assert set(splits) == {"tuning", "held-out"}
    assert 0.25 <= splits["held-out"] / len(questions) <= 0.35, splits
    # A conversation is wholly tuning or wholly held-out: nothing of the held-out
    # conversations is seen while tuning.
    assert all(len({qa["split"] for qa in sample["qa"]}) == 1 for sample in samples)
    for split in splits:
        assert {qa["category"] for qa in questions if qa["split"] == split} == set(retrieval_set.CATEGORIES)


def test_it_points_every_question_at_turns_of_its_own_conversation() -> None:
    for sample in json.loads(HUB_DATASET.read_text()):
        turns = {dia_id: text for dia_id, _, text, _ in locomo_turns(sample)}
        assert len(turns) >= 150  # long conversations, many sessions
        for qa in sample["qa"]:
            assert qa["evidence"] and set(qa["evidence"]) <= set(turns), qa
        multi_hop = [qa for qa in sample["qa"] if qa["category"] == "multi-hop"]
        assert all(len({e.split(":")[0] for e in qa["evidence"]}) == 2 for qa in multi_hop), "multi-hop spans two sessions"


def test_it_is_exactly_what_the_seeded_generator_writes() -> None:
    assert retrieval_set.build() == json.loads(HUB_DATASET.read_text())
