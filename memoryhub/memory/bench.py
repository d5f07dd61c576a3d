"""Benchmarks of long-term memory (`manage.py bench memory-…`).

Numbers go to stdout as a table and, with --json, as one JSON object, so that the
README's figures can be reproduced and compared across machines.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from memoryhub.core import services as core_services
from memoryhub.core.models import Role, Workspace
from memoryhub.core.selectors import principal_for_membership

DEFAULT_DATASET = Path(__file__).resolve().parent / "bench_data" / "locomo_mini.json"


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {_postgres_version()}"


def _postgres_version() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT split_part(version(), ' on ', 1), (SELECT extversion FROM pg_extension WHERE extname = 'vector')")
        version, vector = cursor.fetchone()
    return f"{version} + pgvector {vector}"


def _delete_workspace(workspace: Workspace) -> None:
    from memoryhub.timeline.services import purging

    with purging():
        workspace.delete()


def percentile(values: list[float], p: float) -> float:
    return float(np.percentile(np.array(values), p)) if values else float("nan")


def _bench_workspace(prefix: str) -> Workspace:
    return core_services.workspace_get_or_create(slug=f"{prefix}-{uuid.uuid4().hex[:8]}")


# --- Ingest ---------------------------------------------------------------------------------


WORDS = (
    "alpha budget client deploy engine forecast garden harbor invoice journey kernel ledger meeting network "
    "orbit pipeline quarter report server ticket update vendor window yearly zone lunch travel doctor coffee "
    "recipe concert project launch review design contract policy holiday birthday flight hotel museum river"
).split()


def synthetic_sentences(count: int, seed: int = 7) -> list[str]:
    rng = np.random.default_rng(seed)
    sentences = []
    for i in range(count):
        words = rng.choice(WORDS, size=int(rng.integers(8, 24)))
        sentences.append(f"Note {i}: " + " ".join(words) + ".")
    return sentences


@dataclass
class IngestResult:
    mode: str
    items: int
    batch: int
    workers: int
    seconds: float
    items_per_second: float
    raw_model_per_second: float | None = None


def _vacuum() -> None:
    # Deleted rows stay in the HNSW graph until vacuumed and slow every insert that has
    # to walk past them; each run starts from a clean index and leaves one behind.
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memory_memoryentry")


def bench_ingest(*, items: int, batch: int, mode: str, workers: int, log: Callable[[str], None]) -> IngestResult:
    """POST /api/v1/memories/batch over real HTTP to a uvicorn hub on this database,
    one client per hub worker process, each sending its share of the batches."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from memoryhub.core.hub_process import current_database_url, start_hub
    from memoryhub.memory.embeddings import get_provider

    provider = get_provider()
    workspace = _bench_workspace("bench-ingest")
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    _, key = core_services.agent_key_issue(agent=agent)
    texts = synthetic_sentences(items)
    vectors = None
    raw_rate = None
    if mode == "client":
        rng = np.random.default_rng(1)
        array = rng.normal(size=(items, provider.dimensions)).astype(np.float32)
        vectors = (array / np.linalg.norm(array, axis=1, keepdims=True)).round(6).tolist()
    else:
        started = time.perf_counter()
        provider.embed(texts[: min(items, 2000)])
        raw_rate = min(items, 2000) / (time.perf_counter() - started)
        log(f"  raw model speed (in this process): {raw_rate:.0f} texts/s")
    _vacuum()
    hub = start_hub(database_url=current_database_url(), workers=workers)
    headers = {"Authorization": f"Bearer {key}"}
    bodies = []
    for start in range(0, items, batch):
        chunk = []
        for i in range(start, min(start + batch, items)):
            item: dict[str, Any] = {"content": texts[i], "user_id": f"user-{i % 50}", "tags": ["bench"]}
            if vectors is not None:
                item["embedding"] = vectors[i]
            chunk.append(item)
        bodies.append(json.dumps({"items": chunk}).encode())
    done = 0

    def send(client: httpx.Client, body: bytes) -> None:
        nonlocal done
        client.post("/api/v1/memories/batch", content=body, headers={"Content-Type": "application/json"}).raise_for_status()
        done += body.count(b'"content"')

    try:
        clients = [httpx.Client(base_url=hub.url, headers=headers, timeout=300) for _ in range(workers)]
        for client in clients:  # loads the model (and opens a DB connection) in each worker
            send(client, json.dumps({"items": [{"content": "warm-up", "user_id": "bench"}]}).encode())
        done = 0
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for n, _ in enumerate(pool.map(lambda pair: send(*pair), [(clients[i % workers], b) for i, b in enumerate(bodies)])):
                if (n + 1) % 10 == 0:
                    log(f"  {done}/{items} ({done / (time.perf_counter() - started):.0f}/s)")
        seconds = time.perf_counter() - started
        for client in clients:
            client.close()
    finally:
        hub.stop()
        _delete_workspace(workspace)
        _vacuum()
    return IngestResult(
        mode=mode, items=items, batch=batch, workers=workers, seconds=seconds, items_per_second=items / seconds, raw_model_per_second=raw_rate
    )


# --- Search at scale ------------------------------------------------------------------------

BENCH_TAGS = [f"t{i}" for i in range(10)]


@dataclass
class SearchScaleResult:
    rows: int
    users: int
    load_seconds: float | None
    index_seconds: float | None
    latency_ms: dict[str, dict[str, float]] = field(default_factory=dict)
    recall_at_10: float = 0.0
    recall_by_filter: dict[str, float] = field(default_factory=dict)
    recall_queries: int = 0
    routes: dict[str, int] = field(default_factory=dict)


def _zipf_users(rng: np.random.Generator, size: int, users: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, users + 1)
    return rng.choice(users, size=size, p=weights / weights.sum())


def _load_rows(workspace: Workspace, rows: int, users: int, dim: int, model_id: str, log: Callable[[str], None]) -> tuple[float, float]:
    """COPY `rows` synthetic entries (clustered vectors, pseudo-text), then build the indexes."""
    from pgvector.psycopg import register_vector

    from memoryhub.memory.vector_index import index_name

    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    rng = np.random.default_rng(42)
    centers = rng.normal(size=(1000, dim)).astype(np.float32)
    vocabulary = np.array([f"w{i}" for i in range(5000)])
    now = timezone.now()
    with connection.cursor() as cursor:
        # Building after loading is much faster than maintaining HNSW and GIN per row.
        cursor.execute(f"DROP INDEX IF EXISTS {index_name(dim)}")
        cursor.execute("DROP INDEX IF EXISTS memory_search_gin")
    raw = connection.connection
    register_vector(raw)
    columns = (
        "id, workspace_id, user_id, created_at, updated_at, store_id, agent_id, scope, memory_type, content, tags, "
        "metadata, data, version, embedding, embedding_model, embedding_dim, search_extra, vector_indexed"
    )
    started = time.perf_counter()
    chunk = 20_000
    for offset in range(0, rows, chunk):
        n = min(chunk, rows - offset)
        vectors = centers[rng.integers(0, 1000, size=n)] + 0.35 * rng.normal(size=(n, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        user_ids = _zipf_users(rng, n, users)
        words = vocabulary[rng.integers(0, len(vocabulary), size=(n, 12))]
        tags = rng.integers(0, len(BENCH_TAGS), size=n)
        with raw.cursor() as cur, cur.copy(f"COPY memory_memoryentry ({columns}) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["uuid", "int8", "varchar", "timestamptz", "timestamptz", "int8", "int8", "varchar", "varchar", "text",
                            "varchar[]", "jsonb", "jsonb", "int4", "vector", "varchar", "int4", "text", "bool"])
            for i in range(n):
                copy.write_row((
                    uuid.uuid4(), workspace.pk, f"user-{user_ids[i]}", now, now, store.pk, agent.pk, "agent", "note",
                    " ".join(words[i]), [BENCH_TAGS[tags[i]]], "{}", "{}", 1, vectors[i], model_id, dim, BENCH_TAGS[tags[i]], True,
                ))
        raw.commit()
        log(f"  loaded {offset + n}/{rows} ({(offset + n) / (time.perf_counter() - started):.0f} rows/s)")
    load_seconds = time.perf_counter() - started
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '2GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        log("  building the HNSW index…")
        from memoryhub.memory.vector_index import ensure_vector_index

        ensure_vector_index(dim)
        log("  building the full-text GIN index…")
        cursor.execute("CREATE INDEX IF NOT EXISTS memory_search_gin ON memory_memoryentry USING gin (search_vector)")
        cursor.execute("ANALYZE memory_memoryentry")
    return load_seconds, time.perf_counter() - started


def bench_search(*, rows: int, users: int, queries: int, log: Callable[[str], None]) -> SearchScaleResult:
    from django.conf import settings

    from memoryhub.memory import selectors
    from memoryhub.memory.embeddings import get_provider

    provider = get_provider()
    slug = f"bench-search-{rows}"
    workspace = Workspace.objects.filter(slug=slug).first()
    load_seconds = index_seconds = None
    if workspace is None or not workspace.memberships.exists():
        if workspace is not None:
            _delete_workspace(workspace)
        workspace = core_services.workspace_get_or_create(slug=slug)
        membership = core_services.operator_get_or_create(username="bench", workspace=workspace, role=Role.ADMIN)
        load_seconds, index_seconds = _load_rows(workspace, rows, users, provider.dimensions, provider.model_id, log)
    else:
        log(f"  reusing the {rows} rows already loaded in workspace {slug}")
    membership = workspace.memberships.select_related("workspace").first()
    principal = principal_for_membership(membership)
    rng = np.random.default_rng(7)
    centers = np.random.default_rng(42).normal(size=(1000, provider.dimensions)).astype(np.float32)
    result = SearchScaleResult(rows=rows, users=users, load_seconds=load_seconds, index_seconds=index_seconds)

    def query_vector() -> list[float]:
        v = centers[rng.integers(0, 1000)] + 0.35 * rng.normal(size=provider.dimensions).astype(np.float32)
        return (v / np.linalg.norm(v)).tolist()

    # Measured warm, as a running hub is: the table and its indexes read into
    # shared_buffers first (the benchmark database is the benchmark's own).
    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        cursor.execute(
            "SELECT sum(pg_prewarm(c.oid::regclass)) FROM pg_class c WHERE c.relname = 'memory_memoryentry' "
            "OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'memory_memoryentry'::regclass)"
        )
        log(f"  prewarmed {cursor.fetchone()[0]} blocks")
    user_draws = _zipf_users(rng, queries, users)
    threshold = settings.MEMORYHUB_EXACT_SEARCH_MAX_ROWS
    for mode in ("semantic", "keyword", "hybrid"):
        timings = []
        for q in range(queries):
            request = selectors.SearchRequest(
                filters=selectors.MemoryFilters(tags=[BENCH_TAGS[q % len(BENCH_TAGS)]], user_id=f"user-{user_draws[q]}"),
                query=" ".join(f"w{i}" for i in rng.integers(0, 5000, size=4)) if mode != "semantic" else None,
                query_embedding=query_vector() if mode != "keyword" else None,
                mode=mode,
                max_results=10,
            )
            started = time.perf_counter()
            selectors.memory_search(principal=principal, request=request)
            timings.append((time.perf_counter() - started) * 1000)
        result.latency_ms[mode] = {"p50": percentile(timings, 50), "p95": percentile(timings, 95), "max": max(timings)}
        log(f"  {mode:8s} p50 {result.latency_ms[mode]['p50']:.1f} ms, p95 {result.latency_ms[mode]['p95']:.1f} ms")

    # Recall of the approximate (HNSW + iterative scan) path against exact search, with
    # no filter and with a tag filter (10% of rows), both forced onto the HNSW path.
    from django.test.utils import override_settings

    overlaps: dict[str, list[float]] = {"unfiltered": [], "tag": []}
    for q in range(min(queries, 100)):
        vector = query_vector()
        for name, filters in (("unfiltered", selectors.MemoryFilters()), ("tag", selectors.MemoryFilters(tags=[BENCH_TAGS[q % 10]]))):
            request = selectors.SearchRequest(filters=filters, query_embedding=vector, mode="semantic", max_results=10)
            with override_settings(MEMORYHUB_EXACT_SEARCH_MAX_ROWS=0):
                approximate = [h.entry.pk for h in selectors.memory_search(principal=principal, request=request)]
            with override_settings(MEMORYHUB_EXACT_SEARCH_MAX_ROWS=rows + 1):
                exact = [h.entry.pk for h in selectors.memory_search(principal=principal, request=request)]
            overlaps[name].append(len(set(approximate) & set(exact)) / max(len(exact), 1))
    result.recall_at_10 = statistics.mean(overlaps["unfiltered"] + overlaps["tag"])
    result.recall_by_filter = {name: statistics.mean(values) for name, values in overlaps.items()}
    result.recall_queries = len(overlaps["unfiltered"])
    tagged = rows // len(BENCH_TAGS)
    result.routes = {"exact_threshold_rows": threshold, "rows_per_tag": tagged}
    log(f"  recall@10 of HNSW vs exact over {result.recall_queries} queries: {result.recall_by_filter}")
    return result


# --- Retrieval quality on a LoCoMo-layout dataset ---------------------------------------------


@dataclass
class QualityResult:
    dataset: str
    samples: int
    turns: int
    questions: int
    recall: dict[str, dict[int, float]] = field(default_factory=dict)
    seconds: float = 0.0


def locomo_turns(sample: dict[str, Any]) -> Iterator[tuple[str, str, str, str]]:
    """(dia_id, speaker, text, session date) of every turn of one sample."""
    conversation = sample["conversation"]
    n = 1
    while f"session_{n}" in conversation:
        date = conversation.get(f"session_{n}_date_time", "")
        for turn in conversation[f"session_{n}"]:
            yield turn["dia_id"], turn["speaker"], turn["text"], date
        n += 1


# What the retrieval benchmark compares: the three API modes, plus the alternatives the
# defaults were chosen against (AND keyword matching, other fusion weights, RRF).
QUALITY_VARIANTS: dict[str, dict[str, Any]] = {
    "keyword": {"mode": "keyword"},
    "keyword-AND": {"mode": "keyword", "keyword_match": "all"},
    "semantic": {"mode": "semantic"},
    "hybrid": {"mode": "hybrid"},
    "hybrid-w0.4": {"mode": "hybrid", "semantic_weight": 0.4},
    "hybrid-w0.5": {"mode": "hybrid", "semantic_weight": 0.5},
    "hybrid-w0.7": {"mode": "hybrid", "semantic_weight": 0.7},
    "hybrid-w0.8": {"mode": "hybrid", "semantic_weight": 0.8},
    "hybrid-rrf60": {"mode": "hybrid", "fusion": "rrf"},
}


def bench_quality(
    *, dataset: Path, ks: tuple[int, ...] = (1, 5, 10), with_dates: bool = True, variants: dict[str, dict[str, Any]] | None = None,
    log: Callable[[str], None],
) -> QualityResult:
    """Store every turn as an entry (one user per sample), ask every question, and
    measure recall@k of the evidence turns for each variant."""
    from memoryhub.memory import selectors, services

    variants = variants or QUALITY_VARIANTS
    samples = json.loads(Path(dataset).read_text())
    started = time.perf_counter()
    workspace = _bench_workspace("bench-quality")
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    membership = core_services.operator_get_or_create(username="bench", workspace=workspace, role=Role.ADMIN)
    principal = principal_for_membership(membership)
    hits: dict[str, dict[int, list[float]]] = {name: {k: [] for k in ks} for name in variants}
    turns = questions = 0
    try:
        for sample in samples:
            user_id = f"sample-{sample['sample_id']}"
            items = []
            for dia_id, speaker, text, date in locomo_turns(sample):
                # The session's date goes into the stored text, so "when did…" questions can match it.
                content = f"[{date}] {speaker}: {text}" if with_dates else f"{speaker}: {text}"
                items.append(services.MemoryInput(content=content, user_id=user_id, metadata={"dia_id": dia_id}))
            with transaction.atomic():
                services.memory_write(agent=agent, items=items)
            turns += len(items)
            for qa in sample["qa"]:
                evidence = set(qa.get("evidence") or [])
                if not evidence:
                    continue
                questions += 1
                for name, knobs in variants.items():
                    request = selectors.SearchRequest(
                        filters=selectors.MemoryFilters(user_id=user_id), query=qa["question"], max_results=max(ks), **knobs
                    )
                    found = [h.entry.metadata.get("dia_id") for h in selectors.memory_search(principal=principal, request=request)]
                    for k in ks:
                        hits[name][k].append(len(evidence & set(found[:k])) / len(evidence))
            log(f"  {sample['sample_id']}: {len(items)} turns, {len(sample['qa'])} questions")
    finally:
        _delete_workspace(workspace)
    result = QualityResult(dataset=str(dataset), samples=len(samples), turns=turns, questions=questions, seconds=time.perf_counter() - started)
    result.recall = {name: {k: statistics.mean(v) if v else 0.0 for k, v in by_k.items()} for name, by_k in hits.items()}
    return result


# --- Conversations ----------------------------------------------------------------------------


@dataclass
class ConversationResult:
    messages: int
    append_ms: dict[str, float] = field(default_factory=dict)
    context_ms: dict[str, dict[str, float]] = field(default_factory=dict)


def bench_conversation(*, sizes: list[int], repeats: int, log: Callable[[str], None]) -> list[ConversationResult]:
    """Append and context latency at the service layer, for sessions of each size."""
    from memoryhub.conversations import services as conversation_services
    from memoryhub.conversations.models import Message, Session

    workspace = _bench_workspace("bench-conversation")
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    results = []
    try:
        for size in sizes:
            session, _ = conversation_services.session_create(agent=agent, session_id=f"bench-{size}", user_id="bench")
            texts = synthetic_sentences(min(size, 5000))
            rows = [
                Message(workspace=workspace, user_id="bench", session=session, seq=i + 1, role="user" if i % 2 == 0 else "assistant",
                        content=texts[i % len(texts)], pinned=(i % 500 == 0))
                for i in range(size)
            ]
            Message.objects.bulk_create(rows, batch_size=5000)
            Session.objects.filter(pk=session.pk).update(last_seq=size)
            session.refresh_from_db()
            with connection.cursor() as cursor:  # what autovacuum does soon after a bulk load
                cursor.execute("ANALYZE conversations_message")
            result = ConversationResult(messages=size)
            timings = []
            for i in range(repeats):
                started = time.perf_counter()
                conversation_services.message_append(
                    session=session, messages=[conversation_services.MessageInput(role="user", content=f"append {i}")], actor="bench"
                )
                timings.append((time.perf_counter() - started) * 1000)
            result.append_ms = {"p50": percentile(timings, 50), "p95": percentile(timings, 95)}
            for strategy in ("window", "truncate", "summarize"):
                timings = []
                for _ in range(repeats):
                    started = time.perf_counter()
                    conversation_services.context_build(session=session, strategy=strategy, max_messages=50, max_tokens=None, pin_first=2)
                    timings.append((time.perf_counter() - started) * 1000)
                result.context_ms[strategy] = {"p50": percentile(timings, 50), "p95": percentile(timings, 95)}
            log(f"  {size} messages: append p50 {result.append_ms['p50']:.1f} ms; "
                + "; ".join(f"{s} p50 {v['p50']:.1f} / p95 {v['p95']:.1f} ms" for s, v in result.context_ms.items()))
            results.append(result)
    finally:
        _delete_workspace(workspace)
    return results


# --- Checkpoints --------------------------------------------------------------------------------


def _state_of_size(size: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    words = rng.choice(WORDS, size=max(1, size // 7))
    text = " ".join(words)[: max(1, size - 40)]
    return {"step": seed, "scratchpad": text}


def bench_checkpoint(*, sizes: list[int], repeats: int, log: Callable[[str], None]) -> dict[str, Any]:
    """Save + load latency per state size: our service layer, our HTTP API, and
    LangGraph's PostgresSaver on the same PostgreSQL (if installed)."""
    import httpx

    from memoryhub.conversations import services as conversation_services
    from memoryhub.conversations.selectors import checkpoint_load
    from memoryhub.core.hub_process import current_database_url, start_hub

    workspace = _bench_workspace("bench-checkpoint")
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    _, key = core_services.agent_key_issue(agent=agent)
    results: dict[str, Any] = {}
    hub = start_hub(database_url=current_database_url())
    try:
        for size in sizes:
            states = [_state_of_size(size, i) for i in range(repeats)]
            row: dict[str, Any] = {}
            session, _ = conversation_services.session_create(agent=agent, session_id=f"svc-{size}", user_id="bench")
            timings = []
            for version, state in enumerate(states):
                started = time.perf_counter()
                conversation_services.checkpoint_save(session=session, expected_version=version, state=state, actor="bench")
                conversation_services.checkpoint_state(checkpoint_load(session=session))
                timings.append((time.perf_counter() - started) * 1000)
            row["service"] = {"p50": percentile(timings, 50), "p95": percentile(timings, 95)}
            with httpx.Client(base_url=hub.url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
                client.post("/api/v1/sessions", json={"session_id": f"http-{size}", "user_id": "bench"}).raise_for_status()
                url = f"/api/v1/sessions/http-{size}/checkpoints"
                timings = []
                for version, state in enumerate(states):
                    started = time.perf_counter()
                    client.post(url, json={"expected_version": version, "state": state}).raise_for_status()
                    client.get(f"{url}/latest").raise_for_status()
                    timings.append((time.perf_counter() - started) * 1000)
            row["http"] = {"p50": percentile(timings, 50), "p95": percentile(timings, 95)}
            langgraph = _langgraph_timings(states)
            if langgraph is not None:
                row["langgraph"] = langgraph
                row["service_vs_langgraph_p50"] = row["service"]["p50"] / langgraph["p50"]
            results[str(size)] = row
            log(f"  {size} B: " + "; ".join(f"{k} p50 {v['p50']:.1f} / p95 {v['p95']:.1f} ms" for k, v in row.items() if isinstance(v, dict)))
    finally:
        hub.stop()
        _delete_workspace(workspace)
    return results


def _langgraph_timings(states: list[dict[str, Any]]) -> dict[str, float] | None:
    """put + get_tuple with LangGraph's PostgresSaver, the same data, same server."""
    try:
        from langgraph.checkpoint.base import empty_checkpoint
        from langgraph.checkpoint.postgres import PostgresSaver
    except ImportError:
        return None
    from memoryhub.core.hub_process import current_database_url

    url = current_database_url().replace("%2F", "/")
    host = url.split("@", 1)[1].split(":", 1)[0]
    dbname = connection.settings_dict["NAME"]
    params = connection.get_connection_params()
    conninfo = f"host={host} port={params.get('port') or 5432} dbname={dbname} user={params.get('user') or 'postgres'}"
    if params.get("password"):
        conninfo += f" password={params['password']}"
    timings = []
    with PostgresSaver.from_conn_string(conninfo) as saver:
        saver.setup()
        thread = f"bench-{uuid.uuid4().hex[:8]}"
        config: dict[str, Any] = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        for i, state in enumerate(states):
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = {"state": state}
            checkpoint["channel_versions"] = {"state": i + 1}
            started = time.perf_counter()
            config = saver.put(config, checkpoint, {"source": "loop", "step": i}, {"state": i + 1})
            saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
            timings.append((time.perf_counter() - started) * 1000)
    return {"p50": percentile(timings, 50), "p95": percentile(timings, 95)}


# --- Working state: tool calls, redaction, plan render ----------------------------------------


def bench_working_state(*, repeats: int, log: Callable[[str], None]) -> dict[str, Any]:
    from django.conf import settings

    from memoryhub.conversations import services as conversation_services
    from memoryhub.plans import selectors as plan_selectors
    from memoryhub.plans import services as plan_services
    from memoryhub.plans.tool_calls import ToolCallInput, tool_call_record
    from memoryhub.redaction import redact_text, workspace_key

    workspace = _bench_workspace("bench-working")
    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    results: dict[str, Any] = {}
    try:
        session, _ = conversation_services.session_create(agent=agent, session_id="bench", user_id="bench")
        # A 10 KB tool output that reads like one: log lines with a few emails, IPs and a key.
        line = "2026-11-29 12:00:01 INFO request from 10.1.2.3 user=ann@example.com took 12 ms status=200 path=/api/items\n"
        output = (line * (10_240 // len(line) + 1))[:10_240] + "\nAuthorization: Bearer abcdefghijklmnopqrstuvwx"
        timings = []
        for i in range(repeats):
            started = time.perf_counter()
            tool_call_record(session=session, item=ToolCallInput(tool="http.get", args={"url": "https://example.org/items", "i": i}, result=output), actor="bench")
            timings.append((time.perf_counter() - started) * 1000)
        results["tool_call_append_ms"] = {"p50": percentile(timings, 50), "p95": percentile(timings, 95)}
        key = workspace_key(settings.SECRET_KEY, workspace.pk)
        corpus = (output + "\n") * 100  # ~1 MB
        started = time.perf_counter()
        rounds = 3
        for _ in range(rounds):
            redact_text(corpus, key=key)
        results["redaction_mb_per_s"] = rounds * len(corpus.encode()) / (time.perf_counter() - started) / 1e6
        steps = [plan_services.StepInput(step_id=f"s{i}", description=f"Step {i}: " + "do a thing " * 8, depends_on=[f"s{i-1}"] if i else []) for i in range(200)]
        plan = plan_services.plan_replace(session=session, goal="A long job", steps=steps, actor="bench")
        timings = []
        for i in range(repeats):
            started = time.perf_counter()
            plan_selectors.plan_render(plan=plan, current=f"s{i % 200}")
            timings.append((time.perf_counter() - started) * 1000)
        results["plan_render_200_steps_ms"] = {"p50": percentile(timings, 50), "p95": percentile(timings, 95)}
        log(f"  {results}")
    finally:
        _delete_workspace(workspace)
    return results
