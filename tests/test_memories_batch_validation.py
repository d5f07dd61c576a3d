"""A memory item's quick check (plainly valid items, the bulk of a batch) against DRF's
own validation: wherever the quick check answers, DRF must give the same item."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from agents_api.memories import MAX_KEY_LENGTH, MAX_TAG_LENGTH, MAX_TAGS, MemoryInputSerializer, _NeedsFullValidation

REFUSED = "refused"

# Each field's values: plain ones, and the odd ones DRF refuses or quietly changes
# (numbers as text, spaces it trims, blanks, NUL, lone surrogates, limits ±1).
odd_text = st.sampled_from(["", " ", " a", "a ", "a\x00b", "\ud800", "é", "0", "\n"])
text = st.one_of(st.text(max_size=12), odd_text, st.integers(-3, 3), st.floats(allow_nan=False), st.booleans(), st.none(), st.lists(st.text(max_size=2), max_size=2))
identifier = st.one_of(st.from_regex(r"[a-z0-9\-]{1,12}", fullmatch=True), text, st.sampled_from(["u" * 255, "u" * 256]))
tag = st.one_of(st.from_regex(r"[a-z]{1,8}", fullmatch=True), text, st.sampled_from(["t" * MAX_TAG_LENGTH, "t" * (MAX_TAG_LENGTH + 1)]))
json_value = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8), lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8)
vector = st.lists(st.floats(-1, 1, allow_nan=False, width=32), min_size=1, max_size=8)

FIELDS = {
    "content": st.one_of(st.text(min_size=1, max_size=40), text, st.sampled_from(["c" * 32_000, "c" * 32_001, "  padded  "])),
    "user_id": identifier,
    "scope": st.one_of(st.sampled_from(["agent", "shared", "global", "user", "AGENT"]), text),
    "store": st.one_of(identifier, st.just("s" * 65)),
    "memory_type": st.one_of(st.sampled_from(["note", "factual", "episodic", "procedural", "Note"]), text),
    "tags": st.one_of(st.lists(tag, max_size=4), st.lists(st.just("dup"), min_size=MAX_TAGS, max_size=MAX_TAGS + 2), text, st.dictionaries(st.text(max_size=2), st.text(max_size=2), max_size=2)),
    "metadata": st.one_of(st.dictionaries(st.text(max_size=6), json_value, max_size=4), json_value, st.just({"big": "x" * 70_000})),
    "data": st.one_of(st.dictionaries(st.text(max_size=6), json_value, max_size=4), json_value),
    "key": st.one_of(identifier, st.just("k" * MAX_KEY_LENGTH), st.just("k" * (MAX_KEY_LENGTH + 1))),
    "ttl_seconds": st.one_of(st.integers(-2, 10), st.sampled_from([315_360_000, 315_360_001, 2**64, "60", 60.0, True]), st.none()),
    "expires_at": st.one_of(st.none(), st.sampled_from(["2030-01-01T00:00:00Z", "tomorrow", 5])),
    "embedding": st.one_of(st.none(), vector, st.sampled_from([[], [1, 2.5], [True], ["1"], [float("inf")], [1e400], "1,2"]), st.lists(st.just(0.5), min_size=4097, max_size=4097)),
    "unknown_field": st.integers(),
}
items = st.one_of(
    st.fixed_dictionaries({}, optional=FIELDS),
    st.fixed_dictionaries({"content": st.text(min_size=1, max_size=20), "user_id": st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True)}, optional={k: v for k, v in FIELDS.items() if k not in ("content", "user_id", "unknown_field")}),
    st.none(), st.lists(st.integers(), max_size=2), st.text(max_size=4),
)


def quick(item: Any) -> dict[str, Any] | None:
    try:
        return MemoryInputSerializer()._plainly_valid(item)
    except _NeedsFullValidation:
        return None


def drf(item: Any) -> Any:
    try:
        return serializers.Serializer.run_validation(MemoryInputSerializer(), item)
    except serializers.ValidationError:
        return REFUSED


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(items)
@example({"content": "Met Ana in Lisbon.", "user_id": "user-1", "tags": ["trip", "trip"], "embedding": [0.25, -1, 3]})
@example({"content": "x", "user_id": " user-1"})
@example({"content": "x", "user_id": "u", "ttl_seconds": True})
def test_it_gives_what_drf_gives_wherever_it_answers(item: Any) -> None:
    checked = quick(item)
    if checked is not None:
        assert checked == drf(item)


def test_it_answers_for_the_items_agents_send() -> None:
    item = {
        "content": "Ana moved to Lisbon in May; she prefers tea.",
        "user_id": "user-42",
        "tags": ["profile", "travel", "profile"],
        "metadata": {"source": "chat", "turn": 12},
        "embedding": [0.1] * 384,
        "key": "profile:home",
        "ttl_seconds": 3600,
        "memory_type": "factual",
        "scope": "shared",
        "store": "default",
        "data": {"city": "Lisbon"},
    }
    checked = quick(item)
    assert checked is not None
    assert checked["tags"] == ["profile", "travel"]
    assert checked == drf(item)
    assert quick({"content": "Ana likes tea.", "user_id": "user-42"}) == drf({"content": "Ana likes tea.", "user_id": "user-42"})


def test_it_leaves_refusals_and_coercions_to_drf() -> None:
    for item in (
        {"content": "x", "user_id": "u1 "},  # DRF trims it
        {"content": "x", "user_id": "u1", "ttl_seconds": "60"},  # DRF turns it into 60
        {"content": "   ", "user_id": "u1"},  # blank
        {"content": "x", "user_id": "u1", "colour": "red"},  # unknown field
        {"content": "x", "user_id": "u1", "embedding": [float("inf")]},
    ):
        assert quick(item) is None
    assert drf({"content": "x", "user_id": "u1 "})["user_id"] == "u1"
    assert drf({"content": "x", "user_id": "u1", "colour": "red"}) == REFUSED
