"""Writes of long-term memory, one module per job: `inputs` (what a write is given and
answers), `rows` (an entry's stored columns from what it was given, one way for every
path), `writing` (creating entries: `memory_write`), `changes` (updates, reverts,
deletions, each a revision), `review` (people's judgement: review actions, merges, bulk
actions) and `upkeep` (the hub's own work: expiry, re-embedding)."""

from memoryhub.memory.services.changes import ensure_may_change, memory_delete, memory_revert, memory_update
from memoryhub.memory.services.inputs import MemoryChanges, MemoryInput, Source, Written, search_extra_text
from memoryhub.memory.services.review import (
    BULK_ACTIONS,
    MAX_BULK,
    MAX_MERGED,
    REVIEW_ACTIONS,
    duplicates_dismiss,
    ensure_may_merge,
    memories_bulk_apply,
    memory_merge,
    memory_review,
    review_settings_set,
)
from memoryhub.memory.services.upkeep import memory_reembed, memory_sweep_expired
from memoryhub.memory.services.writing import memory_write

__all__ = [
    "BULK_ACTIONS", "MAX_BULK", "MAX_MERGED", "REVIEW_ACTIONS", "MemoryChanges", "MemoryInput", "Source", "Written",
    "duplicates_dismiss", "ensure_may_change", "ensure_may_merge", "memories_bulk_apply", "memory_delete", "memory_merge",
    "memory_reembed", "memory_revert", "memory_review", "memory_sweep_expired", "memory_update", "memory_write",
    "review_settings_set", "search_extra_text",
]
