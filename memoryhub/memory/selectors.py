"""Reads and search of long-term memory. Every filter goes into SQL."""

from __future__ import annotations

import base64
import json
import logging
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Count, F, Func, IntegerField, Q, QuerySet, Subquery, Sum, TextField, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, Lower
from django.utils import timezone

from memoryhub.core.errors import ApplicationError, NotFound
from memoryhub.core.models import Workspace
from memoryhub.core.selectors import Principal
from memoryhub.memory.duplicates import current_pairs
from memoryhub.memory.embeddings import get_provider
from memoryhub.memory.models import MemoryEntry, MemoryRevision, MemoryType, PredicateKind, PredicateRule, Review, Scope
from memoryhub.memory.visibility import visible_entries
from memoryhub.memory.typed_data import FACT_KEY_DIGEST_PREFIX, FACT_KEY_SEPARATOR, fact_folded

logger = logging.getLogger(__name__)


def entry_get(*, principal: Principal, entry_id: str, include_invalidated: bool = True) -> MemoryEntry:
    try:
        pk = uuid.UUID(str(entry_id))
    except ValueError:
        raise NotFound("No such memory entry.", code="MEMORY_NOT_FOUND") from None
    entries = visible_entries(principal)
    if not include_invalidated:
        entries = entries.current()
    entry = entries.select_related("agent", "store").filter(pk=pk).first()
    if entry is None:
        raise NotFound("No such memory entry.", code="MEMORY_NOT_FOUND")
    return entry


@dataclass
class MemoryFilters:
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    scope: str | None = None
    user_id: str | None = None
    memory_type: str | None = None
    store: str | None = None
    agent: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    include_invalidated: bool = False
    as_of: datetime | None = None


def filtered_entries(*, principal: Principal, filters: MemoryFilters) -> QuerySet[MemoryEntry]:
    entries = visible_entries(principal)
    if filters.as_of is not None:
        entries = entries.valid_at(filters.as_of)
    elif not filters.include_invalidated:
        entries = entries.current()
    lookups = {lookup: getattr(filters, name) for name, lookup in FILTER_LOOKUPS.items() if getattr(filters, name)}
    return entries.filter(**lookups)


# Filters that only ever narrow the set the others select, left out to route a search
# (`_is_large`).
NARROWING_ONLY: dict[str, Any] = {"tags": [], "metadata": {}, "memory_type": None, "created_after": None, "created_before": None}


# MemoryFilters field -> ORM lookup (empty values filter nothing).
FILTER_LOOKUPS = {
    "tags": "tags__contains",  # all of them
    "metadata": "metadata__contains",
    "scope": "scope",
    "user_id": "user_id",
    "memory_type": "memory_type",
    "store": "store__name",
    "agent": "agent__name",
    "created_after": "created_at__gte",
    "created_before": "created_at__lt",
}


# --- Listing with a cursor -----------------------------------------------------------------


def _encode_cursor(entry: MemoryEntry) -> str:
    raw = json.dumps([entry.created_at.isoformat(), str(entry.pk)]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        created, pk = json.loads(raw)
        return datetime.fromisoformat(created), uuid.UUID(pk)
    except (ValueError, TypeError):
        raise ApplicationError("The cursor is not one this API gave out.", code="INVALID_CURSOR") from None


def entry_list(*, principal: Principal, filters: MemoryFilters, cursor: str | None, limit: int) -> tuple[list[MemoryEntry], str | None]:
    """Newest first; `next` is the cursor of the following page, or None."""
    entries = filtered_entries(principal=principal, filters=filters).select_related("agent", "store")
    return _keyset_page(entries, cursor=cursor, limit=limit, newest_first=True)


def _keyset_page(
    entries: QuerySet[MemoryEntry], *, cursor: str | None, limit: int, newest_first: bool,
) -> tuple[list[MemoryEntry], str | None]:
    """A page of `entries` by (created_at, id), after `cursor`, and the next page's cursor."""
    if cursor:
        created, pk = _decode_cursor(cursor)
        after = "lt" if newest_first else "gt"
        # The bound on created_at alone says the same as the OR beside it, but PostgreSQL
        # can start the index range there: with the OR only, the scan read every entry
        # before the cursor and dropped it (620 ms halfway down a queue of 960,000, 0.1
        # ms with the bound; `bench review`).
        entries = entries.filter(
            Q(**{f"created_at__{after}e": created}),
            Q(**{f"created_at__{after}": created}) | Q(created_at=created, **{f"pk__{after}": pk}),
        )
    order = ("-created_at", "-pk") if newest_first else ("created_at", "pk")
    page = list(entries.order_by(*order)[: limit + 1])
    next_cursor = _encode_cursor(page[limit - 1]) if len(page) > limit else None
    return page[:limit], next_cursor


def review_queue(*, principal: Principal, review: str, cursor: str | None, limit: int) -> tuple[list[MemoryEntry], str | None]:
    """The workspace's entries in one review state, oldest first (they have waited
    longest); operators only. One index range (workspace, review, created_at, id)."""
    entries = visible_entries(principal).filter(review=review).select_related("agent", "store")
    return _keyset_page(entries, cursor=cursor, limit=limit, newest_first=False)


# --- Search ------------------------------------------------------------------------------------


# --- Stats -------------------------------------------------------------------------------------


def memory_stats(*, principal: Principal, user_id: str | None) -> dict[str, Any]:
    entries = visible_entries(principal)
    if user_id:
        entries = entries.filter(user_id=user_id)
    by_type = dict(entries.current().values_list("memory_type").annotate(n=Count("pk")).order_by())
    by_scope = dict(entries.current().values_list("scope").annotate(n=Count("pk")).order_by())
    storage = entries.aggregate(
        bytes=Sum(
            Func(F("content"), function="pg_column_size", output_field=IntegerField())
            + Func(F("embedding"), function="pg_column_size", output_field=IntegerField())
        )
    )["bytes"]
    provider = get_provider()
    return {
        "memories": {
            "total": sum(by_type.values()),
            "by_type": {t: by_type.get(t, 0) for t in MemoryType.values},
            "by_scope": {s: by_scope.get(s, 0) for s in Scope.values},
            "invalidated_facts": entries.filter(invalidated_at__isnull=False).count(),
            "expiring": entries.current().filter(expires_at__isnull=False).count(),
        },
        "storage_bytes": int(storage or 0),
        "embedding_model": {"model": provider.model_id, "dimensions": provider.dimensions},
        "as_of": timezone.now(),
    }


def facts_about(*, principal: Principal, subject: str, user_id: str | None, include_invalidated: bool, limit: int) -> list[MemoryEntry]:
    """The facts about `subject` (case and spacing folded, as facts are compared), newest
    first; superseded versions only with `include_invalidated`.

    Most facts are found by their key's prefix (the folded subject). A fact whose subject
    and predicate together are too long for the key column is keyed by a digest, and its
    subject is compared in its data instead (lower-cased in SQL: a subject that differs
    only by a case fold Python knows and PostgreSQL's lower() does not is not found)."""
    digested_subject = Func(
        Func(KT("data__subject"), function="btrim", output_field=TextField()), Value(r"\s+"), Value(" "), Value("g"),
        function="regexp_replace", output_field=TextField(),
    )
    facts = filtered_entries(
        principal=principal, filters=MemoryFilters(memory_type=MemoryType.FACTUAL, user_id=user_id, include_invalidated=include_invalidated),
    )
    matching = facts.alias(digested_subject=Lower(digested_subject)).filter(
        Q(fact_key__startswith=fact_folded(subject) + FACT_KEY_SEPARATOR)
        | Q(fact_key__startswith=FACT_KEY_DIGEST_PREFIX, digested_subject=" ".join(subject.lower().split()))
    )
    return list(matching.select_related("agent", "store").order_by("-created_at", "-pk")[:limit])


def fact_history(*, principal: Principal, entry: MemoryEntry) -> list[MemoryEntry]:
    """Every version of the fact `entry` holds (same agent, store, user, subject and
    predicate), oldest first; [] for entries that are not facts."""
    if entry.fact_key is None:
        return []
    return list(
        visible_entries(principal)
        .filter(agent_id=entry.agent_id, store_id=entry.store_id, user_id=entry.user_id, fact_key=entry.fact_key)
        .order_by("created_at")
    )


@dataclass(frozen=True)
class Revision:
    """One revision of a memory: the current one (from the entry) or a kept one."""

    revision: int
    content: str
    tags: list[str]
    metadata: dict[str, Any]
    data: dict[str, Any]
    change: str
    changed_by: str
    changed_at: datetime
    reason: str


def memory_revisions(*, entry: MemoryEntry) -> list[Revision]:
    """Every revision of `entry`, newest first (the caller has checked it may see it)."""
    current = Revision(
        revision=entry.version, content=entry.content, tags=entry.tags, metadata=entry.metadata, data=entry.data, change=entry.change,
        changed_by=entry.changed_by, changed_at=entry.updated_at, reason=entry.change_reason,
    )
    kept = [
        Revision(revision=r.revision, content=r.content, tags=r.tags, metadata=r.metadata, data=r.data, change=r.change,
                 changed_by=r.changed_by, changed_at=r.changed_at, reason=r.reason)
        for r in MemoryRevision.objects.filter(entry=entry).order_by("-revision")
    ]
    return [current, *kept]


def memories_learnt_in(*, workspace_id: int, session_id: str) -> dict[tuple[str, Any], list[MemoryEntry]]:
    """The memories that name a message or a tool call of this session as their source,
    by ("message", seq) and ("tool_call", call_id): what the console shows beside them."""
    learnt: dict[tuple[str, Any], list[MemoryEntry]] = {}
    rows = MemoryEntry.objects.filter(workspace_id=workspace_id, source_session_id=session_id).only(
        "id", "content", "source_kind", "source_seq", "source_call_id",
    ).order_by("created_at")[:1000]
    for entry in rows:
        place = entry.source_seq if entry.source_kind == "message" else entry.source_call_id
        learnt.setdefault((entry.source_kind, place), []).append(entry)
    return learnt


def review_waiting(*, workspace_id: int) -> int:
    """Flagged and quarantined live entries, and groups of duplicates: the console's
    sidebar count, in one statement (every page that draws the sidebar pays it)."""
    entries = _held_for_review(workspace_id).order_by().values("workspace_id").annotate(n=Count("pk")).values("n")
    groups = current_pairs(workspace_id=workspace_id).order_by().values("workspace_id").annotate(n=Count("duplicate_of", distinct=True)).values("n")
    total = Workspace.objects.filter(pk=workspace_id).annotate(
        waiting=Coalesce(Subquery(entries), 0) + Coalesce(Subquery(groups), 0),
    ).values_list("waiting", flat=True).first()
    return total or 0


def _held_for_review(workspace_id: int) -> QuerySet[MemoryEntry]:
    return MemoryEntry.objects.filter(workspace_id=workspace_id, review__in=[Review.FLAGGED, Review.QUARANTINED]).live()


def review_counts(*, workspace_id: int) -> dict[str, int]:
    """How many of the workspace's live entries are flagged and quarantined (the Review
    page's tabs): one index range each."""
    counted = dict(_held_for_review(workspace_id).values_list("review").annotate(n=Count("pk")).values_list("review", "n"))
    return {review: counted.get(review, 0) for review in (Review.FLAGGED, Review.QUARANTINED)}


def multi_predicates(*, workspace_id: int) -> frozenset[str]:
    """The workspace's predicates whose objects stand side by side (PredicateKind.MULTI)."""
    return frozenset(PredicateRule.objects.filter(workspace_id=workspace_id, kind=PredicateKind.MULTI).values_list("predicate", flat=True))
