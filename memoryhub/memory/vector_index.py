"""HNSW indexes per embedding dimension.

The embedding column is an untyped `vector`, so the index is built on a cast to the
dimension in use, partial on that dimension; queries use the same cast so the planner
can match it. A new model with a new dimension gets its own index after `migrate`.

The index is also partial on `vector_indexed`: new rows stay out of it (and are searched
exactly) until `index_pending_vectors` moves them in, in the background, in batches.
"""

from __future__ import annotations

from typing import Any

from django.db import connection

TABLE = "memory_memoryentry"


def index_name(dim: int) -> str:
    return f"memory_hnsw_{dim}"


def ensure_vector_index(dim: int) -> bool:
    """Create the HNSW index for `dim` if missing; True if it was created."""
    name = index_name(dim)
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [name])
        if cursor.fetchone():
            return False
        cursor.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON {TABLE} "
            f"USING hnsw ((embedding::vector({int(dim)})) vector_cosine_ops) "
            f"WITH (m = 16, ef_construction = 64) WHERE embedding_dim = {int(dim)} AND vector_indexed"
        )
    return True


def ensure_vector_index_after_migrate(**kwargs: Any) -> None:
    from memoryhub.memory.embeddings import get_provider

    if kwargs.get("plan") is not None and TABLE in connection.introspection.table_names():
        ensure_vector_index(get_provider().dimensions)


# One indexer at a time (across processes): it is CPU-heavy, and a second one would
# only compete with the first for the same rows and with the requests for the CPU.
INDEXER_LOCK_KEY = 0x6D656D68  # "memh"


def index_pending_vectors(*, batch_size: int = 1000, max_batches: int | None = None) -> int:
    """Move unindexed rows into the HNSW index; returns how many. 0 at once if another
    indexer holds the lock (it will take these rows too: it loops until none are left)."""
    done = 0
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [INDEXER_LOCK_KEY])
        if not cursor.fetchone()[0]:
            return 0
        try:
            batches = 0
            while max_batches is None or batches < max_batches:
                cursor.execute(
                    f"UPDATE {TABLE} SET vector_indexed = true WHERE id IN ("
                    f"  SELECT id FROM {TABLE} WHERE NOT vector_indexed AND embedding_dim IS NOT NULL"
                    f"  ORDER BY created_at LIMIT %s FOR UPDATE SKIP LOCKED)",
                    [batch_size],
                )
                if cursor.rowcount == 0:
                    break
                done += cursor.rowcount
                batches += 1
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [INDEXER_LOCK_KEY])
    return done
