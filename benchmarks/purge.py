"""`manage.py bench purge`: erase users with ~10,000 records of every kind each from a
hub of ~1,000,000 rows, while another connection keeps searching.

The hub is a workspace of synthetic memory entries (loaded once by COPY, reused by
later runs); the users to erase are new on every run and are written through the real
services, so their rows, timeline events, fence triggers and index entries are those of
production. Each purge runs in this thread exactly as the background job runs it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from typing import Any

import numpy as np
from django.conf import settings
from django.core.management.base import CommandParser
from django.db import connection, connections, transaction
from django.db.models import Model, QuerySet

from benchmarks.common import BENCH_TAGS, WORDS, Log, Options, delete_loaded_workspace, load_rows, machine, percentile, wait_for_indexer, zipf_users
from memoryhub.core.jobs import JobStatus
from memoryhub.compliance.models import PurgeRequest
from memoryhub.compliance.services import purge_counts, purge_run
from memoryhub.core import services as core_services
from memoryhub.core.models import Agent, Membership, Role, Workspace
from memoryhub.core.registry import user_field, user_models
from memoryhub.core.selectors import principal_for_membership
from memoryhub.privacy.services import user_hash

NAME = "purge"
HELP = "erase one user's records of every kind from a large hub, with searches running (own database)"
DATABASE: str | None = "memoryhub_bench_purge"
FORWARDED: tuple[str, ...] = ("--hub-rows", "--records")

HUB_SLUG = "bench-purge"
HUB_USERS = 1000
VICTIM_PREFIX = "victim-"
BASELINE_SECONDS = 10.0
PAUSE_SECONDS = 3.0  # between rounds, for the searches to settle
ROUNDS = 3  # users erased one after another, for more than one sample of everything
GOAL_SECONDS = 5.0

# What one session of the erased user holds (see _seed_session). With 12 sessions and
# the memories that fill up the rest, 10,000 records split roughly as: memories 29%,
# messages 19%, tool calls and their raw outputs 12%, checkpoints 3%, plan steps 2%,
# revisions, summaries, plans, episodes ~1% each, and the timeline events all of these
# write (one per message, tool call, checkpoint, edit…) 32%.
SESSIONS_PER_10K = 12
CHUNKS = 4  # appends of 10 exchanges (user, assistant with a tool call, tool result, assistant)
EXCHANGES_PER_CHUNK = 10
EDITS = 10
CHECKPOINTS = 25
STEPS = 15
STEPS_RUN = 5  # pending → running → done
TOOL_CALLS = 50
EPISODES = 5
BRANCH_UPTO = 40
MESSAGES = CHUNKS * EXCHANGES_PER_CHUNK * 4
ROWS_PER_SESSION = (
    2  # the session and its event
    + 2 * MESSAGES  # messages and their events
    + 2 * EDITS  # revisions and their events
    + 2 * CHUNKS  # chain links and their events
    + 1  # a stored range summary (context with strategy=summarize)
    + 2 * CHECKPOINTS
    + 2 + STEPS + 2 * STEPS_RUN  # plan, its event, its steps, the transitions' events
    + 3 * TOOL_CALLS  # call, raw output, event
    + 3 * EPISODES  # episode, its episodic memory, event
)
BRANCH_ROWS = 1 + BRANCH_UPTO + 2
MEMORY_BATCH = 500
ACTOR = "agent:bench"


def add_arguments(parser: CommandParser) -> None:
    parser.add_argument("--hub-rows", type=int, default=1_000_000, help="synthetic memory entries of other users in the hub")
    parser.add_argument("--records", type=int, default=10_000, help="records of the user to erase, over every kind")


def run(options: Options, *, log: Log) -> dict[str, Any]:
    return bench_purge(hub_rows=options["hub_rows"], user_records=options["records"], log=log)


def report(result: dict[str, Any], *, write: Log) -> None:
    loaded = (
        f", loaded by COPY in {result['hub_load_seconds']:.0f} s, indexes built in {result['hub_index_seconds']:.0f} s"
        if result["hub_load_seconds"] else ""
    )
    write(f"hub: {result['hub_rows']:,} rows about other users{loaded} (shared_buffers {result['shared_buffers']})")
    records = ", ".join(f"{n:,}" for n in result["user_records"])
    write(
        f"{result['rounds']} users erased one after another, {records} records each "
        f"(seeded through the services, {result['seed_seconds']:.0f} s each):"
    )
    write("  " + ", ".join(f"{label} {n:,}" for label, n in sorted(result["user_counts"].items(), key=lambda kv: -kv[1])))
    purge = result["purge_seconds"]
    write(
        f"purge, VACUUM excluded: median {purge['median']:.2f} s, max {purge['max']:.2f} s "
        f"({', '.join(f'{s:.2f}' for s in purge['all'])}; batches of {result['batch_rows']}); "
        f"goal <= {result['goal_seconds']:.0f} s: {'met' if result['goal_met'] else 'MISSED'}"
    )
    write(
        f"storage clean-up (VACUUM with INDEX_CLEANUP ON of the touched tables, in the background, one pass serving every "
        f"purge finished before it began): {', '.join(f'{v:.1f} s' for v in result['vacuum_seconds'])}; "
        f"from the first purge's end to the last clean-up {result['cleanup_window_seconds']:.1f} s"
    )
    write(
        f"  receipts' verification {'passed' if result['verification_passed'] else 'FAILED'}, "
        f"other users' rows {'unchanged' if result['hub_unchanged'] else 'CHANGED'}"
    )
    for phase, numbers in result["search_ms"].items():
        write(
            f"search {phase:20s} p50 {numbers['p50']:7.1f} ms  p95 {numbers['p95']:7.1f} ms  max {numbers['max']:7.1f} ms  "
            f"({numbers['count']} hybrid searches, tag + user_id filter, one connection)"
        )
    write(f"load average (1 min) before / after: {' / '.join(f'{x:.2f}' for x in result['load_average_1min'])}")


def _text(rng: np.random.Generator, low: int = 8, high: int = 24) -> str:
    return " ".join(rng.choice(WORDS, size=int(rng.integers(low, high)))).capitalize() + "."


# --- The hub ----------------------------------------------------------------------------------


def _count_rows(workspace_id: int) -> dict[str, int]:
    """Rows about end users per model (not workspace-level events such as a purge's)."""
    return {m._meta.label: user_rows_of_any(m, workspace_id=workspace_id).count() for m in user_models()}


def _purge_queued(*, workspace: Workspace, membership: Membership, user_id: str) -> PurgeRequest:
    """A purge request as the API would make it, left for this thread to run rather
    than the task pool."""
    return PurgeRequest.objects.create(
        workspace=workspace, requested_by=membership.user, user_hash=user_hash(workspace_id=workspace.pk, user_id=user_id),
        pending_user_id=user_id,
    )


def _purge_now(*, workspace: Workspace, membership: Membership, user_id: str) -> PurgeRequest:
    return purge_run(purge_id=_purge_queued(workspace=workspace, membership=membership, user_id=user_id).pk)


def _leftover_victims(workspace_id: int) -> set[str]:
    found: set[str] = set()
    for model in user_models():
        if user_field(model) == "user_id":  # the bench sends no Idempotency-Keys: no stored answers name a victim
            rows = model.objects.filter(workspace_id=workspace_id, user_id__startswith=VICTIM_PREFIX)
            found.update(rows.values_list("user_id", flat=True).distinct())
    return found


def user_rows_of_any(model: type[Model], *, workspace_id: int) -> QuerySet:
    """Rows about any end user (not workspace-level events such as a purge's)."""
    rows = model.objects.filter(workspace_id=workspace_id)
    return rows.exclude(user_ids=[]) if user_field(model) == "user_ids" else rows.exclude(user_id="")


def _hub(*, rows: int, dim: int, model_id: str, log: Log) -> tuple[Workspace, Membership, float | None, float | None]:
    """The workspace `bench-purge` with `rows` synthetic entries: reused if a previous run
    loaded exactly that many (the membership is made last, so it marks a finished load)."""
    workspace = Workspace.objects.filter(slug=HUB_SLUG).first()
    membership = workspace.memberships.select_related("workspace", "user").first() if workspace else None
    if workspace is not None and membership is not None:
        for victim in sorted(_leftover_victims(workspace.pk)):  # a run that stopped before its purge
            log(f"  purging {victim}, left by an interrupted run")
            _purge_now(workspace=workspace, membership=membership, user_id=victim)
        loaded = Agent.objects.get(workspace=workspace, name="bench").memories.count()
        if loaded == rows:
            log(f"  reusing the {rows} rows already loaded in workspace {HUB_SLUG}")
            return workspace, membership, None, None
        log(f"  workspace {HUB_SLUG} holds {loaded} rows, not {rows}: loading again")
    if workspace is not None:
        delete_loaded_workspace(workspace)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM memory_memoryentry")
    workspace = core_services.workspace_get_or_create(slug=HUB_SLUG)
    load_seconds, index_seconds = load_rows(workspace=workspace, rows=rows, users=HUB_USERS, dim=dim, model_id=model_id, log=log)
    with connection.cursor() as cursor:  # what autovacuum does to a live hub's table long before any purge
        cursor.execute("VACUUM memory_memoryentry")
    membership = core_services.operator_get_or_create(username="bench", workspace=workspace, role=Role.ADMIN)
    membership = Membership.objects.select_related("workspace", "user").get(pk=membership.pk)
    return workspace, membership, load_seconds, index_seconds


# --- The user to erase --------------------------------------------------------------------------


def _vectors(rng: np.random.Generator, centers: np.ndarray, n: int) -> list[list[float]]:
    array = centers[rng.integers(0, len(centers), size=n)] + 0.35 * rng.normal(size=(n, centers.shape[1])).astype(np.float32)
    array /= np.linalg.norm(array, axis=1, keepdims=True)
    return array.tolist()


def _seed_memories(*, agent: Agent, user_id: str, count: int, rng: np.random.Generator, centers: np.ndarray) -> None:
    """Notes and semantic entries through COPY, one in twenty a fact (some superseding an
    earlier one), one in twenty keyed, with the agent's own vectors."""
    from memoryhub.memory.services import MemoryInput, memory_write

    for start in range(0, count, MEMORY_BATCH):
        n = min(MEMORY_BATCH, count - start)
        vectors = _vectors(rng, centers, n)
        items = []
        for offset in range(n):
            i = start + offset
            tags = [BENCH_TAGS[int(rng.integers(0, len(BENCH_TAGS)))]]
            item = MemoryInput(content=_text(rng), user_id=user_id, tags=tags, embedding=vectors[offset], metadata={"source": "bench"})
            if i % 20 == 0:
                item.memory_type = "factual"
                item.data = {"subject": "user", "predicate": f"prefers-{(i // 20) % 40}", "object": str(rng.choice(WORDS))}
            elif i % 20 == 1:
                item.key = f"{user_id}-k{i}"
            elif i % 5 == 2:
                item.memory_type = "semantic"
                item.data = {"concept": str(rng.choice(WORDS)), "category": "bench"}
                item.scope = "shared"
            items.append(item)
        with transaction.atomic():
            memory_write(agent=agent, items=items, on_duplicate=None)  # generated: nothing to compare


def _tool_output(rng: np.random.Generator, user_id: str, i: int) -> str:
    lines = [
        f"2026-11-29 12:{i % 60:02d}:{int(rng.integers(0, 60)):02d} INFO request from 10.1.{i % 250}.{int(rng.integers(1, 250))} "
        f"user={user_id}@example.com took {int(rng.integers(1, 900))} ms status=200 path=/api/{rng.choice(WORDS)}"
        for _ in range(int(rng.integers(5, 25)))
    ]
    return "\n".join(lines)


def _seed_session(*, agent: Agent, user_id: str, index: int, rng: np.random.Generator) -> Any:
    """One session with everything an agent leaves in it; returns the session."""
    from memoryhub.checkpoints.services import checkpoint_save
    from memoryhub.conversations.context import context_build
    from memoryhub.conversations.messages import MessageInput, message_append, message_edit
    from memoryhub.conversations.sessions import session_create
    from memoryhub.conversations.summaries import session_summarise
    from memoryhub.episodes.models import EpisodeOutcome
    from memoryhub.episodes.services import EpisodeInput, episode_record
    from memoryhub.plans import services as plans
    from memoryhub.tools.services import ToolCallInput, tool_call_record

    # The first session compacts its summary chain into a long-term memory.
    session, _ = session_create(
        agent=agent, session_id=f"{user_id}-s{index}", user_id=user_id, metadata={"channel": "bench", "n": index},
        meta_compaction_threshold=2 if index == 0 else 10,
    )
    steps = [
        plans.StepInput(step_id=f"s{j}", description=f"Step {j}: {_text(rng, 6, 14)}", depends_on=[f"s{j - 1}"] if j else [])
        for j in range(STEPS)
    ]
    plans.plan_replace(session=session, goal=f"Help with {_text(rng, 4, 8)}", steps=steps, actor=ACTOR)
    version = 0
    calls = 0
    for chunk in range(CHUNKS):
        messages = []
        for k in range(EXCHANGES_PER_CHUNK):
            call_id = f"call-{chunk}-{k}"
            messages += [
                MessageInput(role="user", content=_text(rng), pinned=chunk == 0 and k == 0),
                MessageInput(role="assistant", tool_calls=[
                    {"id": call_id, "type": "function", "function": {"name": "lookup", "arguments": f'{{"q": "{rng.choice(WORDS)}"}}'}}
                ]),
                MessageInput(role="tool", content=_text(rng, 20, 60), tool_call_id=call_id),
                MessageInput(role="assistant", content=_text(rng, 12, 40)),
            ]
        message_append(session=session, messages=messages, actor=ACTOR)
        for _ in range(TOOL_CALLS * (chunk + 1) // CHUNKS - calls):
            tool_call_record(
                session=session, actor=ACTOR,
                item=ToolCallInput(
                    tool=str(rng.choice(["http.get", "sql.query", "search"])), args={"q": _text(rng, 3, 6), "user": user_id},
                    result=_tool_output(rng, user_id, calls), step_id=f"s{min(calls // 4, STEPS - 1)}", duration_ms=int(rng.integers(5, 900)),
                ),
            )
            calls += 1
        for step in range(chunk * STEPS_RUN // CHUNKS, (chunk + 1) * STEPS_RUN // CHUNKS):
            plans.step_transition(session=session, step_id=f"s{step}", status="running", summary=None, actor=ACTOR)
            plans.step_transition(session=session, step_id=f"s{step}", status="done", summary=_text(rng, 4, 10), actor=ACTOR)
        for _ in range(CHECKPOINTS * (chunk + 1) // CHUNKS - version):
            state = {"step": version, "scratchpad": _text(rng, 60, 140), "notes": [_text(rng) for _ in range(3)], "user": user_id}
            checkpoint_save(session=session, expected_version=version, state=state, current_step=f"s{version % STEPS}", actor=ACTOR)
            version += 1
        session.refresh_from_db()
        session_summarise(session=session, actor=ACTOR)
        session.refresh_from_db()
    for k in range(EDITS):
        message_edit(session=session, seq=1 + 4 * k, content=_text(rng), actor=ACTOR)
    context_build(session=session, strategy="summarize", max_messages=50, max_tokens=None, pin_first=2)
    for k in range(EPISODES):
        episode_record(
            agent=agent, session=session,
            item=EpisodeInput(
                user_id=user_id, task=f"Task {k}: {_text(rng, 4, 8)}", outcome=str(rng.choice(EpisodeOutcome.values)),
                narrative=f"{_text(rng)} {_text(rng)} {_text(rng)}", session_id=session.session_id,
                tools_used={"http.get": int(rng.integers(1, 5)), "search": int(rng.integers(0, 3))},
            ),
        )
    return session


def _seed_victim(*, agent: Agent, user_id: str, records: int, dim: int, log: Log) -> None:
    from memoryhub.conversations.sessions import session_branch

    rng = np.random.default_rng(99)
    centers = np.random.default_rng(42).normal(size=(1000, dim)).astype(np.float32)  # the hub's clusters
    sessions = max(1, round(records * SESSIONS_PER_10K / 10_000))
    memories = max(0, records - sessions * ROWS_PER_SESSION - BRANCH_ROWS)
    log(f"  seeding {user_id}: {memories} memories, {sessions} sessions (~{ROWS_PER_SESSION} records each), 1 branch")
    _seed_memories(agent=agent, user_id=user_id, count=memories, rng=rng, centers=centers)
    first = None
    for index in range(sessions):
        session = _seed_session(agent=agent, user_id=user_id, index=index, rng=rng)
        first = first or session
        log(f"    session {index + 1}/{sessions}")
    session_branch(session=first, new_session_id=f"{user_id}-branch", upto_seq=BRANCH_UPTO, label="bench", actor=ACTOR)
    wait_for_indexer(agent.workspace_id)  # the victim's rows are old in the scenario: in the HNSW index, like the hub's
    with connection.cursor() as cursor:  # what autovacuum would have done by the time the user asks
        for model in user_models():
            if model._meta.db_table != "memory_memoryentry":
                cursor.execute(f'ANALYZE "{model._meta.db_table}"')


# --- Concurrent search --------------------------------------------------------------------------


class SearchLoad(threading.Thread):
    """Hybrid searches, one after another, for the hub's users (Zipf) with a tag filter,
    on the thread's own connection; each sample is (wall-clock start, milliseconds). A
    search counts for every phase it overlaps: one that began before a purge and ended
    inside it was slowed by it."""

    def __init__(self, *, membership: Membership, dim: int) -> None:
        super().__init__(name="bench-purge-search", daemon=True)
        self.membership = membership
        self.dim = dim
        self.samples: list[tuple[float, float]] = []
        self.stopping = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        from memoryhub.memory import search, selectors

        try:
            principal = principal_for_membership(self.membership)
            rng = np.random.default_rng(11)
            centers = np.random.default_rng(42).normal(size=(1000, self.dim)).astype(np.float32)
            q = 0
            while not self.stopping.is_set():
                vector = centers[rng.integers(0, 1000)] + 0.35 * rng.normal(size=self.dim).astype(np.float32)
                request = search.SearchRequest(
                    filters=selectors.MemoryFilters(tags=[BENCH_TAGS[q % len(BENCH_TAGS)]], user_id=f"user-{zipf_users(rng, size=1, users=HUB_USERS)[0]}"),
                    query=" ".join(f"w{i}" for i in rng.integers(0, 5000, size=4)),
                    query_embedding=(vector / np.linalg.norm(vector)).tolist(),
                    mode="hybrid",
                    max_results=10,
                )
                wall, started = time.time(), time.perf_counter()
                search.memory_search(principal=principal, request=request)
                self.samples.append((wall, (time.perf_counter() - started) * 1000))
                q += 1
        except BaseException as exc:  # reported by the main thread
            self.error = exc
        finally:
            connections.close_all()

    def during(self, windows: list[tuple[float, float]], *, unless: list[tuple[float, float]] | None = None) -> dict[str, float]:
        """Latency of the searches that ran, even in part, inside any of `windows` (and
        in none of `unless`)."""

        def overlaps(at: float, ms: float, spans: list[tuple[float, float]]) -> bool:
            return any(at < end and at + ms / 1000 > start for start, end in spans)

        timings = [ms for at, ms in self.samples if overlaps(at, ms, windows) and not overlaps(at, ms, unless or [])]
        return {
            "count": len(timings), "p50": percentile(timings, 50), "p95": percentile(timings, 95),
            "max": max(timings) if timings else float("nan"),
        }


# --- The benchmark --------------------------------------------------------------------------------


def bench_purge(*, hub_rows: int, user_records: int, log: Log) -> dict[str, Any]:
    """ROUNDS users of `user_records` records each, erased one after another while one
    connection keeps searching; the purge time of each round, the searches' latency
    before, during the purges (deletion only) and during their VACUUMs."""
    from memoryhub.memory.embeddings import get_provider

    provider = get_provider()
    logging.getLogger("celery.app.trace").setLevel(logging.WARNING)  # a line per background indexer run
    workspace, membership, load_seconds, index_seconds = _hub(rows=hub_rows, dim=provider.dimensions, model_id=provider.model_id, log=log)
    agent = Agent.objects.select_related("workspace").get(workspace=workspace, name="bench")
    hub_counts = {label: n for label, n in _count_rows(workspace.pk).items() if n}
    log(f"  hub: {sum(hub_counts.values())} rows ({hub_counts})")

    victims = [f"{VICTIM_PREFIX}{uuid.uuid4().hex[:12]}" for _ in range(ROUNDS)]
    started = time.perf_counter()
    for victim in victims:
        _seed_victim(agent=agent, user_id=victim, records=user_records, dim=provider.dimensions, log=log)
    seed_seconds = (time.perf_counter() - started) / ROUNDS
    victim_counts = [purge_counts(workspace_id=workspace.pk, user_id=victim) for victim in victims]
    for victim, counts in zip(victims, victim_counts, strict=True):
        total = sum(counts.values())
        log(f"  {victim}: {total} records: {counts}")
        if abs(total - user_records) > 0.1 * user_records:
            log(f"  warning: {total} records, more than 10% away from the {user_records} asked for")

    with connection.cursor() as cursor:  # warm, as a running hub is (see bench memory-search)
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        cursor.execute(
            "SELECT sum(pg_prewarm(c.oid::regclass)) FROM pg_class c WHERE c.relname = 'memory_memoryentry' "
            "OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'memory_memoryentry'::regclass)"
        )
        log(f"  prewarmed {cursor.fetchone()[0]} blocks")
        cursor.execute("SHOW shared_buffers")
        shared_buffers = cursor.fetchone()[0]

    load = SearchLoad(membership=membership, dim=provider.dimensions)
    rounds: list[dict[str, Any]] = []
    deleting: list[tuple[float, float]] = []
    vacuuming: list[tuple[float, float]] = []
    load_average = [os.getloadavg()[0]]
    load.start()
    try:
        log(f"  searching alone for {BASELINE_SECONDS:.0f} s…")
        baseline = (time.time(), time.time() + BASELINE_SECONDS)
        time.sleep(BASELINE_SECONDS)
        for victim in victims:
            purge = _purge_queued(workspace=workspace, membership=membership, user_id=victim)
            begun = time.time()
            purge = purge_run(purge_id=purge.pk)
            assert purge.started_at and purge.finished_at
            deleting.append((begun, purge.finished_at.timestamp()))
            wall = (purge.finished_at - purge.started_at).total_seconds()
            left = {label: n for label, n in purge_counts(workspace_id=workspace.pk, user_id=victim).items() if n}
            rounds.append({
                "purge_id": purge.pk, "status": purge.status, "deleted": sum(purge.counts.values()),
                "verification_passed": bool(purge.receipt.get("verification", {}).get("passed")) and purge.status == JobStatus.DONE and not left,
                "seconds": wall,
            })
            log(f"  purge #{purge.pk}: {rounds[-1]['deleted']} rows in {wall:.2f} s")
            time.sleep(PAUSE_SECONDS)
        # Each purge queues the storage clean-up (VACUUM with INDEX_CLEANUP ON, so the
        # erased vectors leave HNSW), which runs in the background as in a live hub and
        # serves every purge finished before its pass began.
        log("  waiting for the storage clean-up (VACUUM with index clean-up)…")
        ids = [r["purge_id"] for r in rounds]
        while PurgeRequest.objects.filter(pk__in=ids, storage_cleaned_at__isnull=True).exists():
            time.sleep(0.5)
        cleaned = list(PurgeRequest.objects.filter(pk__in=ids).values_list("vacuum_seconds", "storage_cleaned_at"))
        last_cleaned = max(at for _, at in cleaned).timestamp()
        cleanup = (deleting[0][1], last_cleaned)
        vacuuming.append(cleanup)
        for round_, (vacuum_seconds, _) in zip(rounds, cleaned, strict=True):
            round_["vacuum_seconds"] = vacuum_seconds
        time.sleep(PAUSE_SECONDS)
        load_average.append(os.getloadavg()[0])
    finally:
        load.stopping.set()
        load.join()
    if load.error is not None:
        raise RuntimeError(f"The concurrent searches failed: {load.error!r}") from load.error

    hub_after = {label: n for label, n in _count_rows(workspace.pk).items() if n}
    seconds = [r["seconds"] for r in rounds]
    return {
        "hub_rows": sum(hub_counts.values()),
        "hub_counts": hub_counts,
        "hub_unchanged": hub_after == hub_counts,
        "hub_load_seconds": load_seconds,
        "hub_index_seconds": index_seconds,
        "shared_buffers": shared_buffers,
        "rounds": len(rounds),
        "user_records": [sum(c.values()) for c in victim_counts],
        "user_counts": victim_counts[0],
        "seed_seconds": seed_seconds,
        "batch_rows": settings.MEMORYHUB_PURGE_BATCH_ROWS,
        "purge_seconds": {"median": float(np.median(seconds)), "max": max(seconds), "all": seconds},
        "vacuum_seconds": sorted({r["vacuum_seconds"] for r in rounds}),
        "goal_seconds": GOAL_SECONDS,
        "goal_met": max(seconds) <= GOAL_SECONDS,
        "verification_passed": all(r["verification_passed"] for r in rounds),
        "per_round": rounds,
        "search_ms": {
            "baseline": load.during([baseline], unless=deleting + vacuuming),
            "during_purge": load.during(deleting),
            "during_cleanup": load.during([cleanup], unless=deleting),
        },
        "cleanup_window_seconds": cleanup[1] - cleanup[0],
        "load_average_1min": load_average,
        "machine": machine(),
    }
