"""`manage.py bench review`: the server time of the review queue and of a memory's
revisions (issue 40: ≤ 150 ms each at 1M memories and 100 revisions).

A workspace of `--rows` entries (COPY, random unit vectors) over USERS users, written over
a year, of which what waits for a person is a realistic share: 1% flagged, 1% quarantined
(half held back at write because their source, tool calls, quarantines; half by a person),
0.5% released from quarantine back to "not reviewed", 2% verified, and about one pair of
duplicates per 300 entries in groups of two to four (a tenth of the groups merged since);
each reviewed entry keeps its first revision, as the review service leaves it. One entry
has REVISIONS revisions, made by the service an operator's edit goes through.

Then, with Django's test client, `--repeat` requests a page after a warm-up: each console
Review tab (its first page, the page its "Older ones" link leads to, and a page from the
middle of the queue, where the link leads after many clicks) and its Duplicates tab, the
memory's console page (its revisions and their word diffs), and the API's review queue and
revisions with an operator's key (the revisions also with the writing agent's). p50 / p95
/ max and the queries a request made, each against the goal.

At `BULK_ROWS` and more the HNSW and full-text indexes, which no review page reads, are
left out of the load and built again once the workspace is gone."""

from __future__ import annotations

import logging
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np
from django.core.management.base import CommandParser
from psycopg.types.json import Jsonb
from django.db import connection
from django.utils import timezone

from benchmarks.common import BENCH_TAGS, Log, Options, against, bench_workspace, delete_loaded_workspace, indexes_rebuilt, percentile, slow_indexes_dropped, zipf_users

NAME = "review"
HELP = "server time of the review queue (console and API) and of a memory's 100 revisions at 1M memories (goal ≤ 150 ms; own database)"
# Its own database: a million rows it drops and rebuilds indexes around never land in the hub's.
DATABASE: str | None = "memoryhub_bench_review_{rows}"
FORWARDED: tuple[str, ...] = ("--rows", "--repeat")

GOAL_MS = 150.0
USERS = 10_000
AGENTS = 20
REVISIONS = 100
PREFIX = "bench-review"
QUARANTINING_SOURCE = "tool_call"
# Below this many rows COPY into the indexes is quicker than dropping and rebuilding them
# (and the tests' database keeps its indexes untouched).
BULK_ROWS = 10_000
CHUNK = 20_000
# Shares of the entries by review state; the rest are not reviewed.
FLAGGED, QUARANTINED_AT_WRITE, QUARANTINED_BY_PERSON, RELEASED, VERIFIED = 0.01, 0.005, 0.005, 0.005, 0.02
ENTRIES_PER_PAIR = 300
MERGED_GROUPS = 0.1


@dataclass
class ReviewResult:
    rows: int
    users: int
    repeat: int
    load_s: float
    vacuum_s: float
    waiting: dict[str, int] = field(default_factory=dict)  # queue → entries (duplicates: pairs and groups)
    pages: dict[str, dict[str, float]] = field(default_factory=dict)  # page → p50, p95, max, queries


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("--rows", type=int, default=1_000_000, help="memory entries in the workspace")
    parser.add_argument("--repeat", type=int, default=20, help="requests per page (after one warm-up)")


def run(options: Options, *, log: Log) -> ReviewResult:
    return bench_review(rows=options["rows"], repeat=options["repeat"], log=log)


def report(result: ReviewResult, *, write: Log) -> None:
    waiting = ", ".join(f"{name} {count:,}" for name, count in result.waiting.items())
    write(f"review queue and revisions, server time over Django's test client, {result.repeat} requests a page; "
          f"{result.rows:,} entries over {result.users:,} users (loaded in {result.load_s:.0f} s, vacuumed and analyzed in {result.vacuum_s:.0f} s)")
    write(f"  waiting: {waiting}")
    for page, timing in result.pages.items():
        write(
            f"  {page:44s} p50 {timing['p50']:6.1f} ms  p95 {timing['p95']:6.1f} ms  max {timing['max']:6.1f} ms"
            f"  {timing['queries']:3.0f} queries  " + against(timing["p95"] <= GOAL_MS, f"p95 ≤ {GOAL_MS:.0f} ms at 1M")
        )


# --- The workspace ------------------------------------------------------------------------------

COPY_COLUMNS = (
    "id, workspace_id, user_id, created_at, updated_at, store_id, agent_id, scope, memory_type, content, tags, metadata, data, "
    "version, embedding, embedding_model, embedding_dim, search_extra, vector_indexed, review, source_kind, source_session_id, "
    "source_call_id, change, changed_by, change_reason, invalidated_at"
)
COPY_TYPES = [
    "uuid", "int8", "varchar", "timestamptz", "timestamptz", "int8", "int8", "varchar", "varchar", "text", "varchar[]", "jsonb", "jsonb",
    "int4", "vector", "varchar", "int4", "text", "bool", "varchar", "varchar", "varchar", "varchar", "varchar", "varchar", "text",
    "timestamptz",
]
# (review, version, change, changed_by, change_reason) of each state; version 2 keeps revision 1.
STATES = {
    "unreviewed": ("unreviewed", 1, "create", "", ""),
    "flagged": ("flagged", 2, "review", "agent:agent-3", "contradicts what the user said since"),
    "quarantined at write": ("quarantined", 1, "create", "", ""),
    "quarantined by a person": ("quarantined", 2, "review", "operator:reviewer", "reads like an injected instruction"),
    "released": ("unreviewed", 2, "review", "operator:reviewer", "release"),
    "verified": ("verified", 2, "review", "operator:reviewer", "verify"),
}


@dataclass
class _Plan:
    """Who wrote what, decided before the load: the duplicates repeat an earlier entry's
    user and words, so both must be known up front."""

    ids: list[uuid.UUID]
    users: np.ndarray
    words: np.ndarray
    states: np.ndarray  # index into STATES
    created: list[Any]
    merged: set[int]
    pairs: list[tuple[int, int]]  # (duplicate, original)


def _plan(*, rows: int, rng: np.random.Generator) -> _Plan:
    users = zipf_users(rng, size=rows, users=USERS)
    words = rng.integers(0, 5000, size=(rows, 12), dtype=np.int16)
    shares = [FLAGGED, QUARANTINED_AT_WRITE, QUARANTINED_BY_PERSON, RELEASED, VERIFIED]
    states = rng.choice(len(STATES), size=rows, p=[1 - sum(shares), *shares])
    # Groups of duplicates: an entry of the first half repeated one to three times later.
    pairs: list[tuple[int, int]] = []
    merged: set[int] = set()
    wanted = max(rows // ENTRIES_PER_PAIR, 4)
    later = iter(rng.permutation(np.arange(rows // 2, rows)))
    while len(pairs) < wanted:
        original = int(rng.integers(0, rows // 2))
        group = [int(next(later)) for _ in range(int(rng.integers(1, 4)))]
        for duplicate in group:
            users[duplicate], words[duplicate], states[duplicate] = users[original], words[original], 0
            pairs.append((duplicate, original))
        if rng.random() < MERGED_GROUPS:
            merged.update(group)  # an operator kept the original: the others superseded, out of the queue
    start = timezone.now() - timedelta(days=365)
    step = timedelta(days=365) / rows
    return _Plan(
        ids=[uuid.uuid4() for _ in range(rows)], users=users, words=words, states=states,
        created=[start + step * i for i in range(rows)], merged=merged, pairs=pairs,
    )


def _load(*, workspace: Any, plan: _Plan, agents: list[tuple[Any, Any]], dim: int, model_id: str, log: Log) -> None:
    """COPY the planned entries, CHUNK rows a transaction (binary, as `common.copy_entries`)."""
    from pgvector.psycopg import register_vector

    raw = connection.connection
    register_vector(raw)
    rng = np.random.default_rng(11)
    vocabulary = [f"w{i}" for i in range(5000)]
    names = list(STATES)
    rows, started = len(plan.ids), time.perf_counter()
    for offset in range(0, rows, CHUNK):
        n = min(CHUNK, rows - offset)
        vectors = rng.normal(size=(n, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        tags = rng.integers(0, len(BENCH_TAGS), size=n)
        with raw.cursor() as cur, cur.copy(f"COPY memory_memoryentry ({COPY_COLUMNS}) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(COPY_TYPES)
            for k in range(n):
                i = offset + k
                state = names[plan.states[i]]
                review, version, change, changed_by, reason = STATES[state]
                agent, store = agents[i % len(agents)]
                from_tool = state in ("quarantined at write", "released") or i % 50 == 0
                created = plan.created[i]
                copy.write_row((
                    plan.ids[i], workspace.pk, f"user-{plan.users[i]}", created, created + timedelta(hours=version - 1),
                    store.pk, agent.pk, "shared" if i % 3 else "agent", "note",
                    " ".join(vocabulary[w] for w in plan.words[i]) + ".", [BENCH_TAGS[tags[k]]], Jsonb({}), Jsonb({}), version,
                    vectors[k], model_id, dim, BENCH_TAGS[tags[k]], True, review,
                    QUARANTINING_SOURCE if from_tool else "api", f"session-{i // 40}" if from_tool else None,
                    f"call-{i}" if from_tool else None, change, changed_by, reason,
                    created + timedelta(days=1) if i in plan.merged else None,
                ))
        raw.commit()
        if (offset // CHUNK) % 10 == 9 or offset + n == rows:
            log(f"  loaded {offset + n:,}/{rows:,} ({(offset + n) / (time.perf_counter() - started):,.0f} rows/s)")


def _first_revisions_and_pairs(*, workspace: Any, plan: _Plan) -> None:
    """What the review and duplicate services leave beside the entries: revision 1 of every
    reviewed entry, and the pairs of duplicates."""
    from memoryhub.memory.models import MemoryDuplicate, MemoryRevision

    kept_first = [n for n, (_, version, *_) in enumerate(STATES.values()) if version == 2]
    reviewed = np.flatnonzero(np.isin(plan.states, kept_first))
    revisions = (
        MemoryRevision(
            workspace_id=workspace.pk, user_id=f"user-{plan.users[i]}", entry_id=plan.ids[i], revision=1,
            content=" ".join(f"w{w}" for w in plan.words[i]) + ".", tags=[], metadata={}, data={}, change="create", changed_by="",
            changed_at=plan.created[i], reason="",
        ) for i in reviewed
    )
    _bulk(MemoryRevision, revisions)
    pairs = (
        MemoryDuplicate(
            workspace_id=workspace.pk, user_id=f"user-{plan.users[duplicate]}", entry_id=plan.ids[duplicate],
            duplicate_of_id=plan.ids[original], score=1.0, created_at=plan.created[duplicate],
        ) for duplicate, original in plan.pairs
    )
    _bulk(MemoryDuplicate, pairs)


def _bulk(model: Any, objects: Any, *, size: int = 5000) -> None:
    batch: list[Any] = []
    for each in objects:
        batch.append(each)
        if len(batch) == size:
            model.objects.bulk_create(batch)
            batch = []
    if batch:
        model.objects.bulk_create(batch)


def _hundred_revisions(*, entry: Any, membership: Any, dim: int) -> None:
    """REVISIONS - 1 operator edits through the service (a word or two changed each, as a
    person corrects a memory), the entry's vector given so that no model runs."""
    from memoryhub.core.selectors import principal_for_membership
    from memoryhub.memory import services

    principal = principal_for_membership(membership)
    rng = np.random.default_rng(3)
    words = entry.content.rstrip(".").split()
    for n in range(REVISIONS - 1):
        words[int(rng.integers(0, len(words)))] = f"edit{n}"
        if n % 10 == 0:
            words.append(f"added{n}")
        vector = rng.normal(size=dim).astype(np.float32)
        entry = services.memory_update(
            principal=principal, entry=entry, expected_version=entry.version, reason=f"correction {n + 1}",
            changes=services.MemoryChanges(content=" ".join(words) + ".", tags=[BENCH_TAGS[n % len(BENCH_TAGS)]],
                                           embedding=(vector / np.linalg.norm(vector)).tolist()),
        )


def _leftovers(log: Log) -> None:
    """A workspace of a run that was killed before its clean-up."""
    from memoryhub.core.models import Workspace

    for workspace in Workspace.objects.filter(slug__startswith=f"{PREFIX}-"):
        log(f"  deleting {workspace.slug}, left by an interrupted run")
        _delete(workspace)


def _delete(workspace: Any) -> None:
    with connection.cursor() as cursor:
        # Revisions refer to entries, which `delete_loaded_workspace` deletes in one statement.
        cursor.execute("DELETE FROM memory_memoryrevision WHERE workspace_id = %s", [workspace.pk])
    delete_loaded_workspace(workspace)


# --- The benchmark ------------------------------------------------------------------------------


def bench_review(*, rows: int, repeat: int, log: Log) -> ReviewResult:
    from memoryhub.core import services as core_services
    from memoryhub.core.models import Role, Workspace
    from memoryhub.memory.embeddings import get_provider
    from memoryhub.memory.models import MemoryDuplicate, MemoryEntry, Review

    provider = get_provider()
    logging.getLogger("celery.app.trace").setLevel(logging.WARNING)  # a line per background indexer run (one an edit)
    _leftovers(log)
    workspace = bench_workspace(prefix=PREFIX)
    definitions: list[str] = []
    try:
        Workspace.objects.filter(pk=workspace.pk).update(quarantine_sources=[QUARANTINING_SOURCE])
        stores = [core_services.store_get_or_create(workspace=workspace, name=f"store-{n}") for n in range(4)]
        agents = [
            (core_services.agent_get_or_create(workspace=workspace, name=f"agent-{n}", stores=[stores[n % len(stores)]]), stores[n % len(stores)])
            for n in range(AGENTS)
        ]
        plan = _plan(rows=rows, rng=np.random.default_rng(40))
        started = time.perf_counter()
        # No review page reads the HNSW or the full-text index: dropped for the load and built again once the
        # workspace is gone. Rebuilt around the timing instead, they took 14 minutes of a 17-minute run at 1M rows.
        definitions = slow_indexes_dropped(provider.dimensions) if rows >= BULK_ROWS else []
        _load(workspace=workspace, plan=plan, agents=agents, dim=provider.dimensions, model_id=provider.model_id, log=log)
        _first_revisions_and_pairs(workspace=workspace, plan=plan)
        load_s = time.perf_counter() - started
        started = time.perf_counter()
        with connection.cursor() as cursor:
            # What autovacuum has long done to a live hub's tables: statistics, and pages
            # marked all-visible (index-only scans skip the heap).
            for table in ("memory_memoryentry", "memory_memoryrevision", "memory_memoryduplicate"):
                cursor.execute(f"VACUUM (ANALYZE) {table}")
        vacuum_s = time.perf_counter() - started

        membership = core_services.operator_get_or_create(username=f"bench-{workspace.slug}", workspace=workspace, role=Role.ADMIN)
        # An old entry, not reviewed, shared: the writing agent reads it too.
        revised = MemoryEntry.objects.filter(pk__in=plan.ids[:100], review=Review.UNREVIEWED, scope="shared", invalidated_at__isnull=True).first()
        _hundred_revisions(entry=revised, membership=membership, dim=provider.dimensions)
        _, operator_key = core_services.operator_key_issue(membership=membership, label="bench review")
        _, agent_key = core_services.agent_key_issue(agent=revised.agent, label="bench review")

        result = ReviewResult(rows=rows, users=USERS, repeat=repeat, load_s=load_s, vacuum_s=vacuum_s)
        queued = MemoryEntry.objects.filter(workspace=workspace)
        for review in (Review.FLAGGED, Review.QUARANTINED, Review.UNREVIEWED):
            result.waiting[review.value] = queued.filter(review=review).count()
        result.waiting["duplicate pairs"] = len(plan.pairs)
        result.waiting["of them merged"] = MemoryDuplicate.objects.filter(workspace=workspace, entry__invalidated_at__isnull=False).count()
        log(f"  waiting: {result.waiting}")
        _time_pages(result, workspace=workspace, membership=membership, entry=revised, operator_key=operator_key, agent_key=agent_key, log=log)
        return result
    finally:
        _delete(workspace)
        indexes_rebuilt(definitions, log)


def _middle_cursor(*, workspace: Any, review: str) -> str | None:
    """The cursor the "Older ones" link carries halfway down the queue: the pager's own."""
    from memoryhub.memory.models import MemoryEntry
    from memoryhub.memory.selectors import _encode_cursor

    queue = MemoryEntry.objects.filter(workspace=workspace, review=review).order_by("created_at", "pk")
    middle = queue.only("id", "created_at")[queue.count() // 2 : queue.count() // 2 + 1].first()
    return _encode_cursor(middle) if middle is not None else None


OLDER_LINK = re.compile(r'href="/memory/review/\?reason=\w+&(?:amp;)?cursor=(?P<cursor>[\w-]+)"')


def _time_pages(result: ReviewResult, *, workspace: Any, membership: Any, entry: Any, operator_key: str, agent_key: str, log: Log) -> None:
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    console = Client(HTTP_HOST="127.0.0.1")
    console.force_login(membership.user)
    console.post("/workspace/", {"workspace": workspace.pk})
    operator = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {operator_key}")
    agent = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {agent_key}")

    def timed(name: str, client: Client, path: str) -> Any:
        response = client.get(path)  # warm-up: templates compiled, pages of the indexes read
        if response.status_code != 200:
            raise RuntimeError(f"{name}: {path} answered {response.status_code}")
        timings = []
        with CaptureQueriesContext(connection) as queries:
            for _ in range(result.repeat):
                start = time.perf_counter()
                answer = client.get(path)
                timings.append((time.perf_counter() - start) * 1000)
                if answer.status_code != 200:
                    raise RuntimeError(f"{name}: {path} answered {answer.status_code}")
        result.pages[name] = {
            "p50": percentile(timings, 50), "p95": percentile(timings, 95), "max": max(timings), "queries": len(queries) / result.repeat,
        }
        log(f"  {name}: p50 {result.pages[name]['p50']:.1f} ms, p95 {result.pages[name]['p95']:.1f} ms")
        return response

    labels = {"flagged": "flagged", "quarantined": "quarantined", "unreviewed": "not reviewed"}
    for reason, label in labels.items():
        first = timed(f"console: {label}, first page", console, f"/memory/review/?reason={reason}")
        if older := OLDER_LINK.search(first.content.decode()):  # the page's own "Older ones" link
            timed(f"console: {label}, next page", console, f"/memory/review/?reason={reason}&cursor={older['cursor']}")
        if middle := _middle_cursor(workspace=workspace, review=reason):
            timed(f"console: {label}, middle page", console, f"/memory/review/?reason={reason}&cursor={middle}")
    timed("console: duplicates", console, "/memory/review/?reason=duplicates")
    timed(f"console: a memory of {REVISIONS} revisions", console, f"/memory/{entry.pk}/")

    for reason, label in labels.items():
        first = timed(f"API: review-queue {label}, first page", operator, f"/api/v1/memories/review-queue?reason={reason}")
        if cursor := first.json()["next"]:
            timed(f"API: review-queue {label}, next page", operator, f"/api/v1/memories/review-queue?reason={reason}&cursor={cursor}")
    timed("API: review-queue duplicates", operator, "/api/v1/memories/review-queue?reason=duplicates")
    timed(f"API: {REVISIONS} revisions, operator key", operator, f"/api/v1/memories/{entry.pk}/revisions")
    timed(f"API: {REVISIONS} revisions, agent key", agent, f"/api/v1/memories/{entry.pk}/revisions")
