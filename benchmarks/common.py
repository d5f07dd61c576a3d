"""What the benchmarks share: the machine they ran on, percentiles, throw-away
workspaces, synthetic text and the bulk load of synthetic memory entries."""

from __future__ import annotations

import os
import platform
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
from django.db import connection
from psycopg.types.json import Jsonb
from django.utils import timezone

from memoryhub.core import services as core_services
from memoryhub.core.models import Workspace

Options = Mapping[str, Any]
Log = Callable[[str], None]

WORDS = (
    "alpha budget client deploy engine forecast garden harbor invoice journey kernel ledger meeting network "
    "orbit pipeline quarter report server ticket update vendor window yearly zone lunch travel doctor coffee "
    "recipe concert project launch review design contract policy holiday birthday flight hotel museum river"
).split()

BENCH_TAGS = [f"t{i}" for i in range(10)]


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {_postgres_version()}"


def _postgres_version() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT split_part(version(), ' on ', 1), (SELECT extversion FROM pg_extension WHERE extname = 'vector')")
        version, vector = cursor.fetchone()
    return f"{version} + pgvector {vector}"


def against(met: bool, goal: str) -> str:
    """A report line's verdict, "(goal …: met)" or "(goal …: MISSED)": BENCHMARKS.md
    (benchmarks/report.py) quotes every line that says MISSED."""
    return f"(goal {goal}: {'met' if met else 'MISSED'})"


def percentile(values: list[float], p: float) -> float:
    return float(np.percentile(np.array(values), p)) if values else float("nan")


def bench_workspace(*, prefix: str) -> Workspace:
    return core_services.workspace_get_or_create(slug=f"{prefix}-{uuid.uuid4().hex[:8]}")


def delete_workspace(workspace: Workspace) -> None:
    from memoryhub.core.erasure import purging

    with purging():
        workspace.delete()


def delete_loaded_workspace(workspace: Workspace) -> None:
    """A workspace of `load_rows`'s size gone: its entries in one statement, far faster
    than the ORM's cascade for a million rows, then the rest."""
    with connection.cursor() as cursor:
        # What refers to entries first: the database checks the references at commit.
        cursor.execute("DELETE FROM memory_memoryduplicate WHERE workspace_id = %s", [workspace.pk])
        cursor.execute("DELETE FROM memory_memoryentry WHERE workspace_id = %s", [workspace.pk])
    delete_workspace(workspace)


def synthetic_sentences(count: int, *, seed: int = 7) -> list[str]:
    rng = np.random.default_rng(seed)
    sentences = []
    for i in range(count):
        words = rng.choice(WORDS, size=int(rng.integers(8, 24)))
        sentences.append(f"Note {i}: " + " ".join(words) + ".")
    return sentences


def zipf_users(rng: np.random.Generator, *, size: int, users: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, users + 1)
    return rng.choice(users, size=size, p=weights / weights.sum())


def copy_entries(*, workspace: Workspace, store: Any, agent: Any, model_id: str, rows: Iterable[tuple[str, str, str, Any]]) -> None:
    """COPY indexed memory entries, (user_id, content, tag, vector) each, in one
    transaction: the benchmarks' way to fill a hub fast, bypassing the API's write path
    (which `bench memory-ingest` measures)."""
    from pgvector.psycopg import register_vector

    raw = connection.connection
    register_vector(raw)
    now = timezone.now()
    with raw.cursor() as cur, cur.copy(f"COPY memory_memoryentry ({COPY_COLUMNS}) FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.set_types(["uuid", "int8", "varchar", "timestamptz", "timestamptz", "int8", "int8", "varchar", "varchar", "text",
                        "varchar[]", "jsonb", "jsonb", "int4", "vector", "varchar", "int4", "text", "bool"])
        for user_id, content, tag, vector in rows:
            copy.write_row((
                uuid.uuid4(), workspace.pk, user_id, now, now, store.pk, agent.pk, "agent", "note", content, [tag], Jsonb({}), Jsonb({}), 1,
                np.asarray(vector, dtype=np.float32), model_id, len(vector), tag, True,
            ))
    raw.commit()


COPY_COLUMNS = (
    "id, workspace_id, user_id, created_at, updated_at, store_id, agent_id, scope, memory_type, content, tags, "
    "metadata, data, version, embedding, embedding_model, embedding_dim, search_extra, vector_indexed"
)


def load_rows(
    *, workspace: Workspace, rows: int, users: int, dim: int, model_id: str, log: Log, then: Callable[[], None] | None = None,
    vector_index: bool = True,
) -> tuple[float, float]:
    """COPY `rows` synthetic entries (clustered vectors, pseudo-text), call `then` (to load
    more before the indexes exist, the fast way), then build the indexes (the HNSW one
    unless told not to: it is most of the time, and searches forced exact need none)."""
    from memoryhub.memory.vector_index import index_name

    store = core_services.store_get_or_create(workspace=workspace, name="default")
    agent = core_services.agent_get_or_create(workspace=workspace, name="bench", stores=[store])
    rng = np.random.default_rng(42)
    centers = rng.normal(size=(1000, dim)).astype(np.float32)
    vocabulary = np.array([f"w{i}" for i in range(5000)])
    with connection.cursor() as cursor:
        # Building after loading is much faster than maintaining HNSW and GIN per row.
        cursor.execute(f"DROP INDEX IF EXISTS {index_name(dim)}")
        cursor.execute("DROP INDEX IF EXISTS memory_search_gin")
    started = time.perf_counter()
    chunk = 20_000
    for offset in range(0, rows, chunk):
        n = min(chunk, rows - offset)
        vectors = centers[rng.integers(0, 1000, size=n)] + 0.35 * rng.normal(size=(n, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        user_ids = zipf_users(rng, size=n, users=users)
        words = vocabulary[rng.integers(0, len(vocabulary), size=(n, 12))]
        tags = rng.integers(0, len(BENCH_TAGS), size=n)
        copy_entries(
            workspace=workspace, store=store, agent=agent, model_id=model_id,
            rows=((f"user-{user_ids[i]}", " ".join(words[i]), BENCH_TAGS[tags[i]], vectors[i]) for i in range(n)),
        )
        log(f"  loaded {offset + n}/{rows} ({(offset + n) / (time.perf_counter() - started):.0f} rows/s)")
    if then is not None:
        then()
    load_seconds = time.perf_counter() - started
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '2GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        if vector_index:
            log("  building the HNSW index…")
            from memoryhub.memory.vector_index import ensure_vector_index

            ensure_vector_index(dim)
        log("  building the full-text GIN index…")
        cursor.execute("CREATE INDEX IF NOT EXISTS memory_search_gin ON memory_memoryentry USING gin (search_vector)")
        cursor.execute("ANALYZE memory_memoryentry")
    return load_seconds, time.perf_counter() - started


def slow_indexes_dropped(dim: int) -> list[str]:
    """Drop the HNSW index of `dim` and the full-text index, which slow a bulk load most
    (HNSW: 1-2 ms a row), returning their definitions for `indexes_rebuilt`."""
    from memoryhub.memory.vector_index import index_name

    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(%s)", [[index_name(dim), "memory_search_gin"]])
        definitions = dict(cursor.fetchall())
        for name in definitions:
            cursor.execute(f"DROP INDEX {name}")
    return list(definitions.values())


def indexes_rebuilt(definitions: list[str], log: Log) -> None:
    """Build again what `slow_indexes_dropped` dropped (those still missing)."""
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '2GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        for definition in definitions:
            log(f"  building {definition.split(' ON ')[0].removeprefix('CREATE INDEX ')}…")
            cursor.execute(definition.replace("CREATE INDEX", "CREATE INDEX IF NOT EXISTS", 1))
        cursor.execute("RESET maintenance_work_mem")
        cursor.execute("RESET max_parallel_maintenance_workers")


def wait_for_indexer(workspace_id: int, *, poll: float = 0.01) -> None:
    """Until the workspace's vectors are all in the HNSW index: the hub's indexer (on this
    process's task threads) or this thread, whichever takes the lock."""
    from memoryhub.memory.models import MemoryEntry
    from memoryhub.memory.vector_index import index_pending_vectors

    deadline = time.monotonic() + 600
    while MemoryEntry.objects.filter(workspace_id=workspace_id, vector_indexed=False).exists():
        if time.monotonic() > deadline:
            raise RuntimeError("The vector indexer did not catch up in 10 minutes.")
        if not index_pending_vectors():
            time.sleep(poll)  # the background indexer holds the lock: let it finish
