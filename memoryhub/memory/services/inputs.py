"""What a memory write is given and what it answers: the inputs the front ends and the
other domains build, and what each item became."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


from memoryhub.core.errors import ApplicationError
from memoryhub.memory.duplicates import Similar
from memoryhub.memory.models import MemoryEntry, MemoryType, Scope, SourceKind


@dataclass(frozen=True)
class Source:
    """Where a memory came from: `kind` (SourceKind) and what names it."""

    kind: str = SourceKind.API
    session_id: str | None = None
    seq: int | None = None
    call_id: str | None = None
    episode_id: int | None = None
    import_id: int | None = None

    @classmethod
    def named(cls, *, session_id: str | None = None, seq: int | None = None, call_id: str | None = None,
              episode_id: int | None = None) -> Source:
        """The source an agent names: {session_id, seq}, {session_id, call_id} or {episode_id}."""
        if episode_id is not None and session_id is None and seq is None and call_id is None:
            return cls(kind=SourceKind.EPISODE, episode_id=episode_id)
        if session_id is not None and seq is not None and call_id is None and episode_id is None:
            return cls(kind=SourceKind.MESSAGE, session_id=session_id, seq=seq)
        if session_id is not None and call_id is not None and seq is None and episode_id is None:
            return cls(kind=SourceKind.TOOL_CALL, session_id=session_id, call_id=call_id)
        raise ApplicationError(
            "source names one thing: {session_id, seq} (a message), {session_id, call_id} (a tool call) or {episode_id}.",
            code="VALIDATION_ERROR",
        )

    def columns(self) -> dict[str, Any]:
        return {
            "source_kind": self.kind, "source_session_id": self.session_id, "source_seq": self.seq, "source_call_id": self.call_id,
            "source_episode_id": self.episode_id, "source_import_id": self.import_id,
        }


@dataclass
class MemoryInput:
    """One entry to write, as an agent sent it (shapes already checked by the API)."""

    content: str
    user_id: str
    scope: str = Scope.AGENT
    store: str | None = None
    memory_type: str = MemoryType.NOTE
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] | None = None
    key: str | None = None
    ttl_seconds: int | None = None
    expires_at: datetime | None = None
    embedding: list[float] | None = None
    source: Source = field(default_factory=Source)


@dataclass
class MemoryChanges:
    content: str | None = None
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None
    data: dict[str, Any] | None = None
    ttl_seconds: int | None = None
    expires_at: datetime | None = None
    embedding: list[float] | None = None


@dataclass
class Written:
    """What a write did with one item: the entry it created, updated or found; whether
    that entry was a duplicate the caller could already see (skipped or updated); the
    entries like it (a kept item's)."""

    entry: MemoryEntry
    created: bool
    duplicate: bool = False
    similar: list[Similar] = field(default_factory=list)


def search_extra_text(tags: list[str], moment: datetime) -> str:
    """Indexed beside the content: tags, and the date in words, so that questions that
    name a date ("in May 2023", "on Tuesday") can match by keyword."""
    return " ".join([*tags, moment.strftime("%Y-%m-%d %B %Y %A")])
