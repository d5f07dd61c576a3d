"""Which memory entries a caller may see: the one rule, in its two forms.

`visible_entries` is the rule as a queryset, what every read path starts from.
`current_visible_sql` is the same rule, for an agent, among current entries, as a SQL
condition, for the statements written by hand where the ORM's would be slower
(duplicates' lookups, memoryhub/memory/duplicates.py). Both are here, beside each other,
and tests/test_memory_visibility.py holds them equal over every scope, owner, store,
review state, expiry and supersession: change one, change both."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Q, QuerySet

from memoryhub.core.models import Agent, Store
from memoryhub.core.selectors import Principal
from memoryhub.memory.models import MemoryEntry, Review, Scope


def visible_entries(principal: Principal) -> QuerySet[MemoryEntry]:
    """What the caller may see: agents their own agent-scoped entries, shared entries of
    their stores and global ones, none quarantined; operators the whole workspace. Never
    expired ones.

    Vectors and tsvectors are never loaded: nothing shown needs them, and parsing 384
    floats per row was a third of a search's time."""
    entries = MemoryEntry.objects.filter(workspace=principal.workspace).live().defer("embedding", "search_vector")
    if principal.is_agent:
        # Quarantined entries wait for a person: no agent sees them, anywhere.
        entries = entries.exclude(review=Review.QUARANTINED).filter(
            Q(scope=Scope.AGENT, agent=principal.agent)
            | Q(scope=Scope.SHARED, store__in=[s.pk for s in principal.stores])
            | Q(scope=Scope.GLOBAL)
        )
    return entries


def current_visible_sql(alias: str) -> str:
    """`visible_entries(agent).current()` as a condition on the entry `alias`, with the
    named parameters %(workspace)s, %(agent)s (the agent's id) and %(stores)s (its stores'
    ids): of the workspace, current (not superseded, merged), live (not expired), not
    quarantined, and the agent's own, of its stores, or global by its scope."""
    return (
        f"{alias}.workspace_id = %(workspace)s AND {alias}.invalidated_at IS NULL "
        f"AND ({alias}.expires_at IS NULL OR {alias}.expires_at > now()) AND {alias}.review <> '{Review.QUARANTINED}' "
        f"AND CASE {alias}.scope WHEN '{Scope.AGENT}' THEN {alias}.agent_id = %(agent)s "
        f"WHEN '{Scope.SHARED}' THEN {alias}.store_id = ANY(%(stores)s) ELSE {alias}.scope = '{Scope.GLOBAL}' END"
    )


def current_visible_params(*, agent: Agent, stores: Iterable[Store]) -> dict[str, Any]:
    """The parameters `current_visible_sql` names, for `agent` attached to `stores`."""
    return {"workspace": agent.workspace_id, "agent": agent.pk, "stores": [store.pk for store in stores]}
