"""Routing a search's semantic leg: exact ranking for a small filtered set, HNSW for a
large one, decided from the planner's statistics and estimates, which are kept for
MEMORYHUB_SEARCH_ESTIMATE_SECONDS (`forget()` drops them)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

from django.conf import settings
from django.db import connection

from memoryhub.core.selectors import Principal
from memoryhub.memory.models import MemoryEntry, UserVectorIndex
from memoryhub.memory.selectors import NARROWING_ONLY, MemoryFilters, filtered_entries

# Routing estimates: {estimate key: (estimate, taken at)}.
_estimates: dict[tuple[Any, ...], tuple[int, float]] = {}

_ESTIMATES_KEPT = 10_000


def is_large(*, principal: Principal, filters: MemoryFilters, model_id: str, dim: int) -> bool:
    """Whether the search's filtered set is too many rows to search exactly.

    The same search without the filters that only narrow it is asked first: an agent asks
    about one user with tags that change from turn to turn, and a user small enough is
    then routed without planning each new set of tags."""
    limit = settings.MEMORYHUB_EXACT_SEARCH_MAX_ROWS
    wider = replace(filters, **NARROWING_ONLY)
    bound = user_rows_bound(filters.user_id) if filters.user_id is not None else None
    if bound is not None and bound <= limit and (
        wider != filters or bound <= settings.MEMORYHUB_USER_INDEX_EXACT_MAX_ROWS
        or (principal.workspace.pk, filters.user_id, dim) not in _users_with_own_index()
    ):
        # Whatever else the search filters on, the planner's estimate of its set is at
        # most this: the same decision the estimates below would make, without their plan.
        return False
    if wider != filters and estimated_rows(principal=principal, filters=wider, model_id=model_id, dim=dim) <= limit:
        return False
    rows = estimated_rows(principal=principal, filters=filters, model_id=model_id, dim=dim)
    if rows > limit:
        return True
    # A user with an index of their own: a few thousand of their rows, one heap page each,
    # take longer to rank exactly than their own graph takes to walk (docs/memory.md, "Search
    # and scores"). Asked only of sets this large, so most searches never ask it.
    return (
        filters.user_id is not None and rows > settings.MEMORYHUB_USER_INDEX_EXACT_MAX_ROWS
        and (principal.workspace.pk, filters.user_id, dim) in _users_with_own_index()
    )


class _Kept[T]:
    """A value read from the database again once MEMORYHUB_SEARCH_ESTIMATE_SECONDS have
    passed since it was last read (every time at 0): what routing knows of the table,
    kept as its estimates are."""

    def __init__(self, read: Callable[[], T]) -> None:
        self._read = read
        self._value: T | None = None
        self._taken: float | None = None

    def get(self) -> T:
        now = time.monotonic()
        if self._taken is None or now - self._taken >= settings.MEMORYHUB_SEARCH_ESTIMATE_SECONDS:
            self._value, self._taken = self._read(), now
        return cast(T, self._value)

    def forget(self) -> None:
        self._taken = None


def _users_with_own_index() -> frozenset[tuple[int, str, int]]:
    """(workspace, user_id, dim) of every user with an index of their own; a handful of
    rows. A stale answer routes a search to the other, equally correct, route for those
    seconds."""
    return _own_indexes.get()


_own_indexes = _Kept(lambda: frozenset(UserVectorIndex.objects.values_list("workspace_id", "user_id", "dim")))


def user_rows_bound(user_id: str) -> int | None:
    """At most how many rows the planner estimates any search filtered on `user_id` to
    match (None: no statistics to tell). The planner multiplies the selectivity of each
    condition of a search (no extended statistics on this table), so its estimate of a
    set filtered on the user and anything else is at most the user's selectivity times
    the table's rows; both worked out here as it works them out (eqsel, estimate_rel_size).

    Most searches are for users well under MEMORYHUB_EXACT_SEARCH_MAX_ROWS, and a user
    the hub had not been asked about in MEMORYHUB_SEARCH_ESTIMATE_SECONDS cost a search
    an EXPLAIN to route: 1.8 ms, a fifth of the searches at 100,000 entries."""
    if settings.MEMORYHUB_SEARCH_ESTIMATE_SECONDS <= 0:
        return None  # the planner is asked every time
    stats = _user_stats.get()
    if stats is None:
        return None
    frequencies, other_frequency, rows = stats
    return max(1, round(frequencies.get(user_id, other_frequency) * rows))  # rounded as the planner rounds (clamp_row_est)


def _user_column_stats() -> tuple[dict[str, float], float, float] | None:
    table = MemoryEntry._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.most_common_vals::text::text[], s.most_common_freqs, s.n_distinct, s.null_frac, "
            "c.reltuples, c.relpages, pg_relation_size(c.oid) / current_setting('block_size')::int "
            "FROM pg_class c LEFT JOIN pg_stats s ON s.schemaname = current_schema() AND s.tablename = c.relname "
            "AND s.attname = 'user_id' AND NOT s.inherited "
            "WHERE c.oid = to_regclass(%s)",
            [table],
        )
        found = cursor.fetchone()
    if found is None:
        return None
    values, frequencies, distinct, null_fraction, reltuples, relpages, pages = found
    if distinct is None or reltuples is None or reltuples < 0 or relpages <= 0:
        return None  # never analysed: the planner guesses from the table's width
    # The rows the planner counts: the density ANALYZE saw, over the pages there are now.
    rows = reltuples / relpages * pages
    values, frequencies = values or [], frequencies or []
    # A user outside the most common values: the rest of the rows shared evenly among the
    # rest of the distinct values, and never more than the least common listed value.
    other = min(max(1.0 - sum(frequencies) - null_fraction, 0.0), 1.0)
    distinct = distinct if distinct >= 0 else -distinct * rows
    if distinct - len(values) > 1:
        other /= distinct - len(values)
    if frequencies:
        other = min(other, frequencies[-1])
    return dict(zip(values, frequencies, strict=True)), other, rows


# The planner's statistics of the user_id column: (MCV frequencies by user, the others'
# frequency each, live rows), or None where the table has none yet.
_user_stats = _Kept(_user_column_stats)


def estimated_rows(*, principal: Principal, filters: MemoryFilters, model_id: str, dim: int) -> int:
    """The planner's estimate of how many rows of the caller's with this model's vectors
    match `filters`: costs a plan, not a scan.

    Counting the rows exactly (even with a LIMIT) meant fetching every row of a heavy
    user from the heap to check its other filters: most of a search's time at 1M rows.

    An agent asks about the same user with the same filters turn after turn, so the
    estimate is kept for MEMORYHUB_SEARCH_ESTIMATE_SECONDS: planning it was a round trip
    and a plan of its own on every search (docs/memory.md, "Search and scores"). A stale estimate
    only routes a search to the other, equally correct, leg for those seconds.
    """
    ttl = settings.MEMORYHUB_SEARCH_ESTIMATE_SECONDS
    # Who sees what (docs/memory.md, "Who sees what") and what they ask for; not the SQL, which would
    # have to be built first, as it was: that cost as much as the estimate saved.
    seen = (principal.agent.pk, tuple(sorted(s.pk for s in principal.stores))) if principal.is_agent else None
    key = (principal.workspace.pk, seen, repr(filters), model_id, dim)
    now = time.monotonic()
    cached = _estimates.get(key)
    if cached is not None and now - cached[1] < ttl:
        return cached[0]
    rows = filtered_entries(principal=principal, filters=filters).filter(embedding_model=model_id, embedding_dim=dim)
    plan = json.loads(rows.values("pk").explain(format="json"))
    estimate = int(plan[0]["Plan"]["Plan Rows"])
    if ttl > 0:
        if len(_estimates) >= _ESTIMATES_KEPT:
            _estimates.clear()  # cheaper than an LRU, and refilled by the next searches
        _estimates[key] = (estimate, now)
    return estimate


def forget() -> None:
    """Drop what routing keeps of the table (statistics, estimates, users' own indexes):
    the next search reads it afresh, as after MEMORYHUB_SEARCH_ESTIMATE_SECONDS. For
    whoever changed the table in bulk and wants the next search routed by the change."""
    _estimates.clear()
    _user_stats.forget()
    _own_indexes.forget()
