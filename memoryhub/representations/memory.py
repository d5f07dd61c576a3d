from __future__ import annotations

from typing import Any

from memoryhub.memory.models import MemoryEntry
from memoryhub.memory.selectors import Revision
from memoryhub.memory.services import Written
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
        "revision": entry.version,
        "source": source_json(entry),
        "review": entry.review,
    }


def written_json(written: Written, *, entry: MemoryEntry | None = None) -> dict[str, Any]:
    """A create's answer for one item: the entry (`entry`, if read back otherwise),
    whether it was a duplicate the caller could already see, and the entries like it."""
    return {
        **memory_json(entry or written.entry),
        "duplicate": written.duplicate,
        "similar": [{"id": str(like.id), "score": like.score} for like in written.similar],
    }


def source_json(entry: MemoryEntry) -> dict[str, Any]:
    """Where the entry came from: its kind and, of what names it, only what is set."""
    named = {
        "session_id": entry.source_session_id, "seq": entry.source_seq, "call_id": entry.source_call_id,
        "episode_id": entry.source_episode_id, "import_id": entry.source_import_id,
    }
    return {"kind": entry.source_kind, **{name: value for name, value in named.items() if value is not None}}


def revision_json(revision: Revision) -> dict[str, Any]:
    return {
        "revision": revision.revision, "content": revision.content, "tags": revision.tags, "metadata": revision.metadata,
        "data": revision.data, "change": revision.change, "changed_by": revision.changed_by,
        "changed_at": iso_datetime(revision.changed_at), "reason": revision.reason,
    }


def item_json(entry: MemoryEntry) -> dict[str, Any]:
    """An item of LangGraph's store: a memory under (namespace, key), its value the data."""
    return {
        "namespace": list(entry.namespace or []),
        "key": entry.key,
        "value": entry.data,
        "user_id": entry.user_id,
        "created_at": iso_datetime(entry.created_at),
        "updated_at": iso_datetime(entry.updated_at),
        "expires_at": iso_datetime(entry.expires_at),
    }
