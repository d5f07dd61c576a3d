"""People's judgement of entries: review actions, the workspace's review settings, merging
duplicates or dismissing them, one action over many entries."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from memoryhub.core.audit import audit_record
from memoryhub.core.errors import ApplicationError, Conflict, Forbidden
from memoryhub.core.models import Membership, Role, Workspace
from memoryhub.core.selectors import Principal, operator_actor
from memoryhub.notifications.services import notification_queue, public_url
from memoryhub.memory.models import Change, MemoryDuplicate, MemoryEntry, Review, SourceKind
from memoryhub.memory.selectors import entry_get
from memoryhub.memory.services.changes import ensure_owner_or, memory_delete, memory_event, memory_update, revision_next
from memoryhub.memory.services.inputs import MemoryChanges, search_extra_text


def review_settings_set(*, membership: Membership, quarantine_sources: list[str]) -> list[str]:
    """Which sources' new memories start quarantined (admins; audited)."""
    if not membership.allows(Role.ADMIN):
        raise Forbidden("Review settings need the admin role.")
    unknown = sorted(set(quarantine_sources) - set(SourceKind.values))
    if unknown:
        raise ApplicationError(f"Unknown source kinds: {', '.join(unknown)}.", code="VALIDATION_ERROR", details={"kinds": SourceKind.values})
    workspace, after = membership.workspace, sorted(set(quarantine_sources))
    before = sorted(workspace.quarantine_sources)
    if before != after:
        with transaction.atomic():
            Workspace.objects.filter(pk=workspace.pk).update(quarantine_sources=after)
            audit_record(action="review_settings_changed", actor=operator_actor(membership.user), workspace=workspace,
                         details={"quarantine_sources": {"from": before, "to": after}})
        workspace.quarantine_sources = after
    return after


# What each review action makes of an entry's review, and who may take it.
REVIEW_ACTIONS = {"verify": Review.VERIFIED, "flag": Review.FLAGGED, "quarantine": Review.QUARANTINED, "release": Review.UNREVIEWED}
# The actions that ask for a person's attention, announced to webhooks.
REVIEW_EVENTS = {"flag": "memory.flagged", "quarantine": "memory.quarantined"}


def memory_review(*, principal: Principal, entry: MemoryEntry, action: str, reason: str = "") -> MemoryEntry:
    """A person's (or an agent's) judgement of an entry, as its next revision: agents may
    only flag what they see; approvers and admins verify, flag, quarantine and release.
    Quarantined entries are invisible to agents until verified or released."""
    if action not in REVIEW_ACTIONS:
        raise ApplicationError(f"Unknown review action {action!r}.", code="VALIDATION_ERROR", details={"actions": list(REVIEW_ACTIONS)})
    if principal.is_agent and action != "flag":
        raise Forbidden("Agents may only flag a memory; a person verifies, quarantines and releases.", code="FORBIDDEN")
    if principal.is_operator and not principal.allows(Role.APPROVER):
        raise Forbidden("Reviewing memories needs the approver or admin role.", code="FORBIDDEN")
    with transaction.atomic():
        revision_next(entry=entry, actor=principal.actor, change=Change.REVIEW, reason=reason or action, updates={"review": REVIEW_ACTIONS[action]})
        memory_event(principal=principal, entry=entry, action=action, details={"reason": reason} if reason else None, audit_agents=True)
        if action in REVIEW_EVENTS:
            notification_queue(
                workspace=principal.workspace, event=REVIEW_EVENTS[action], title=f"Memory {entry.pk} {action}ged by {principal.actor}"
                if action == "flag" else f"Memory {entry.pk} quarantined by {principal.actor}",
                data={"memory_id": str(entry.pk), "memory_type": entry.memory_type, "by": principal.actor, "url": public_url(f"/memory/{entry.pk}/")},
                content={"content": entry.content, "reason": reason}, user_id=entry.user_id,
            )
    entry.refresh_from_db()
    return entry


MAX_MERGED = 100


def ensure_may_merge(*, principal: Principal, entry: MemoryEntry) -> None:
    ensure_owner_or(principal=principal, entry=entry, roles=(Role.APPROVER,), needs="Merging memories needs the approver or admin role.")


def memory_merge(*, principal: Principal, entry: MemoryEntry, others: list[str], reason: str = "") -> MemoryEntry:
    """Keep `entry`: each of `others` is superseded by it (gone from search, lists and graph
    queries, kept as history), and it gains their tags in a `merge` revision. Approvers
    and admins merge what they see; an agent only entries that are all its own."""
    ids = list(dict.fromkeys(str(other) for other in others))
    if not ids or len(ids) > MAX_MERGED or str(entry.pk) in ids:
        raise ApplicationError(
            f"Name 1 to {MAX_MERGED} other entries to merge into this one (not itself).", code="VALIDATION_ERROR",
            details={"others": [f"1 to {MAX_MERGED} ids other than the kept entry's."]},
        )
    merged = [entry_get(principal=principal, entry_id=other, include_invalidated=False) for other in ids]
    for one in (entry, *merged):
        ensure_may_merge(principal=principal, entry=one)
    if strangers := [str(one.pk) for one in merged if one.user_id != entry.user_id]:
        # A purge of one user must not leave another's memory pointing at what it erased.
        raise ApplicationError(
            "Only entries about the same user merge.", code="VALIDATION_ERROR", details={"others": [f"Not about this user: {', '.join(strangers)}"]},
        )
    tags = list(dict.fromkeys([*entry.tags, *(tag for one in merged for tag in one.tags)]))
    with transaction.atomic():
        superseded = MemoryEntry.objects.filter(pk__in=[one.pk for one in merged], invalidated_at__isnull=True).update(
            superseded_by=entry, invalidated_at=timezone.now(),
        )
        if superseded != len(merged):
            raise Conflict("One of the entries changed since you read it.", code="VERSION_CONFLICT")
        revision_next(
            entry=entry, actor=principal.actor, change=Change.MERGE, reason=reason or f"merged {len(merged)} duplicate(s)",
            updates={"tags": tags, "search_extra": search_extra_text(tags, entry.created_at)},
        )
        memory_event(principal=principal, entry=entry, action="merged", details={"others": ids, "reason": reason})
    entry.refresh_from_db()
    return entry


def duplicates_dismiss(*, principal: Principal, entry: MemoryEntry) -> int:
    """A person's "these are not duplicates": the entries written like `entry` leave the
    review queue, all staying as they are (approvers and admins; audited). How many
    pairs were dismissed."""
    if not principal.allows(Role.APPROVER):
        raise Forbidden("Reviewing memories needs the approver or admin role.", code="FORBIDDEN")
    with transaction.atomic():
        dismissed, _ = MemoryDuplicate.objects.filter(workspace=principal.workspace, duplicate_of=entry).delete()
        memory_event(principal=principal, entry=entry, action="duplicates_dismissed", details={"pairs": dismissed})
    return dismissed


BULK_ACTIONS = ("quarantine", "verify", "tag", "delete")


MAX_BULK = 200


def memories_bulk_apply(*, principal: Principal, entries: list[MemoryEntry], action: str, tag: str = "", reason: str = "") -> int:
    """One operator action over many entries (a search's results), all or none: a review
    action or a tag added is each entry's next revision; deletion needs the admin or
    compliance role. How many entries it changed."""
    if action not in BULK_ACTIONS:
        raise ApplicationError(f"Unknown action {action!r}.", code="VALIDATION_ERROR", details={"actions": list(BULK_ACTIONS)})
    if not entries or len(entries) > MAX_BULK:
        raise ApplicationError(f"Select 1 to {MAX_BULK} memories.", code="VALIDATION_ERROR")
    tag = tag.strip()
    if action == "tag" and not 0 < len(tag) <= 100:
        raise ApplicationError("Name the tag to add (up to 100 characters).", code="VALIDATION_ERROR")
    with transaction.atomic():
        for entry in entries:
            if action == "delete":
                memory_delete(principal=principal, entry=entry)
            elif action == "tag":
                if tag not in entry.tags:
                    memory_update(principal=principal, entry=entry, changes=MemoryChanges(tags=[*entry.tags, tag]), expected_version=None,
                                  reason=reason or f"tagged {tag}")
            else:
                memory_review(principal=principal, entry=entry, action=action, reason=reason)
    return len(entries)
