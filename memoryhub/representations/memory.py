from __future__ import annotations

from typing import Any

from memoryhub.memory.models import MemoryEntry
from memoryhub.representations import iso_datetime


def memory_json(entry: MemoryEntry) -> dict[str, Any]:
    """A long-term memory entry (its agent and store loaded with it)."""
    return {
        "id": str(entry.pk),
        "key": entry.key,
        "content": entry.content,
        "user_id": entry.user_id,
        "scope": entry.scope,
        "store": entry.store.name,
        "agent": entry.agent.name,
        "memory_type": entry.memory_type,
        "tags": entry.tags,
        "metadata": entry.metadata,
        "data": entry.data,
        "created_at": iso_datetime(entry.created_at),
        "updated_at": iso_datetime(entry.updated_at),
        "expires_at": iso_datetime(entry.expires_at),
        "version": entry.version,
        "invalidated_at": iso_datetime(entry.invalidated_at),
        "superseded_by": str(entry.superseded_by_id) if entry.superseded_by_id else None,
    }
