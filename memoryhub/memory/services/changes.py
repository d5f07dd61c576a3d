"""Changing and deleting entries: who may, each change as the entry's next revision, on
the timeline and (an operator's) in the audit log."""

from __future__ import annotations

import functools
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from memoryhub.core.audit import audit_record
from memoryhub.core.errors import ApplicationError, Conflict, Forbidden, NotFound
from memoryhub.core.models import Role
from memoryhub.core.selectors import Principal
from memoryhub.memory.models import Change, MemoryEntry, MemoryRevision
from memoryhub.memory.selectors import multi_predicates
from memoryhub.memory.services.inputs import MemoryChanges, search_extra_text
from memoryhub.memory.services.rows import expiry_of, index_soon, kept_data, kept_text, vectors_of
from memoryhub.memory.typed_data import fact_key, validate_data
from memoryhub.privacy.selectors import working_memory_ttl
from memoryhub.timeline.services import event_record


def ensure_may_change(*, principal: Principal, entry: MemoryEntry) -> None:
    """Writes follow ownership, not visibility: a shared or global entry is readable by
    other agents, changed only by the agent that wrote it, or by an operator who may
    (approver or admin: an operator's edit is a reviewed correction)."""
    ensure_owner_or(principal=principal, entry=entry, roles=(Role.APPROVER,), needs="Changing memories needs the approver or admin role.")


def _ensure_may_delete(*, principal: Principal, entry: MemoryEntry) -> None:
    """The agent that wrote it, or an operator who erases (admin, compliance)."""
    ensure_owner_or(
        principal=principal, entry=entry, roles=(Role.ADMIN, Role.COMPLIANCE), needs="Deleting memories needs the admin or compliance role.",
    )


def ensure_owner_or(*, principal: Principal, entry: MemoryEntry, roles: tuple[str, ...], needs: str) -> None:
    if principal.is_agent:
        if principal.agent.pk != entry.agent_id:
            raise Forbidden("Only the agent that wrote this entry may change or delete it.", code="NOT_OWNER")
    elif not any(principal.allows(role) for role in roles):  # admins allow every role
        raise Forbidden(needs, code="NOT_OWNER")


def memory_event(
    *, principal: Principal, entry: MemoryEntry, action: str, details: dict[str, Any] | None = None, audit_agents: bool = False,
) -> None:
    """Every change and deletion of a memory is on the timeline, and in the audit log
    when an operator made it (or an agent, for review actions), under the real actor."""
    event_record(
        workspace=entry.workspace, kind="memory", summary=f"Memory {entry.pk} {action} by {principal.actor}.", actor=principal.actor,
        user_id=entry.user_id, ref={"type": "memory", "id": str(entry.pk), "action": action},
    )
    if principal.is_operator or audit_agents:
        audit_record(action=f"memory_{action}", actor=principal.actor, workspace=entry.workspace, target=f"memory:{entry.pk}", details=details)


def revision_next(
    *, entry: MemoryEntry, actor: str, change: str, reason: str, updates: dict[str, Any], expected_version: int | None = None,
) -> None:
    """Make `updates` the entry's next revision, in the caller's transaction: the row is
    locked, its current revision kept, then replaced; with `expected_version`, refused
    (409) if someone wrote since."""
    current = MemoryEntry.objects.select_for_update().filter(pk=entry.pk).first()
    if current is None or (expected_version is not None and current.version != expected_version):
        raise Conflict(
            "This entry changed since you read it.", code="VERSION_CONFLICT", details={"current_version": current.version if current else None},
        )
    revision_keep(current)
    MemoryEntry.objects.filter(pk=entry.pk).update(
        **updates, version=F("version") + 1, updated_at=timezone.now(), change=change, changed_by=actor, change_reason=reason,
    )


def revision_keep(entry: MemoryEntry) -> None:
    """Keep the entry's current revision before it is replaced (the caller holds the
    row's lock). A second keeper of the same revision hits the unique constraint."""
    MemoryRevision.objects.create(
        workspace_id=entry.workspace_id, user_id=entry.user_id, entry=entry, revision=entry.version, content=entry.content,
        tags=entry.tags, metadata=entry.metadata, data=entry.data, change=entry.change, changed_by=entry.changed_by,
        changed_at=entry.updated_at, reason=entry.change_reason,
    )


def memory_update(
    *, principal: Principal, entry: MemoryEntry, changes: MemoryChanges, expected_version: int | None, reason: str = "",
    change: str | None = None,
) -> MemoryEntry:
    """Apply `changes` as the entry's next revision (an agent's update, an operator's
    edit); with `expected_version`, refuse (409) if someone wrote since."""
    ensure_may_change(principal=principal, entry=entry)
    if principal.is_operator and not reason.strip():
        raise ApplicationError("An operator's change needs a reason.", code="VALIDATION_ERROR", details={"reason": ["Required of operators."]})
    change = change or (Change.UPDATE if principal.is_agent else Change.OPERATOR_EDIT)
    now = timezone.now()
    updates: dict[str, Any] = {}
    if changes.content is not None:
        # Every path that stores text redacts first (before the text is embedded).
        updates["content"] = kept_text(entry.workspace)(changes.content)
    if changes.tags is not None:
        updates["tags"] = changes.tags
        updates["search_extra"] = search_extra_text(changes.tags, entry.created_at)
    if changes.metadata is not None:
        updates["metadata"] = changes.metadata
    if changes.data is not None:
        updates["data"] = kept_data(entry.memory_type, validate_data(entry.memory_type, changes.data), kept_text(entry.workspace))
        updates["fact_key"] = fact_key(entry.memory_type, updates["data"], multi=multi_predicates(workspace_id=entry.workspace_id))
    if changes.ttl_seconds is not None or changes.expires_at is not None:
        working_ttl = functools.partial(working_memory_ttl, workspace_id=entry.workspace_id)
        updates["expires_at"] = expiry_of(entry.memory_type, changes.ttl_seconds, changes.expires_at, now, working_ttl)
    if changes.content is not None or changes.embedding is not None:
        content = updates.get("content", entry.content)
        vectors, model_id, dimensions = vectors_of([content], [changes.embedding])
        updates.update(embedding=vectors[0], embedding_model=model_id, embedding_dim=dimensions, vector_indexed=False)
    if not updates:
        return entry
    try:
        with transaction.atomic():
            revision_next(entry=entry, actor=principal.actor, change=change, reason=reason, updates=updates, expected_version=expected_version)
            memory_event(principal=principal, entry=entry, action="changed", details={"change": change, "reason": reason} if reason else None)
    except IntegrityError:
        raise Conflict("Another current fact has this subject and predicate.", code="FACT_CONFLICT") from None
    if "embedding" in updates:
        index_soon()
    entry.refresh_from_db()
    return entry


def memory_revert(*, principal: Principal, entry: MemoryEntry, revision: int, reason: str = "") -> MemoryEntry:
    """A new revision equal to an earlier one's content, tags, metadata and data."""
    ensure_may_change(principal=principal, entry=entry)
    if revision == entry.version:
        earlier: Any = entry
    else:
        earlier = MemoryRevision.objects.filter(entry=entry, revision=revision).first()
        if earlier is None:
            raise NotFound(f"This entry has no revision {revision}.", code="REVISION_NOT_FOUND")
    changes = MemoryChanges(content=earlier.content, tags=list(earlier.tags), metadata=dict(earlier.metadata), data=dict(earlier.data) or None)
    return memory_update(
        principal=principal, entry=entry, changes=changes, expected_version=None, change=Change.REVERT,
        reason=reason or f"reverted to revision {revision}",
    )


def memory_delete(*, principal: Principal, entry: MemoryEntry) -> None:
    _ensure_may_delete(principal=principal, entry=entry)
    with transaction.atomic():
        memory_event(principal=principal, entry=entry, action="deleted")
        entry.delete()
