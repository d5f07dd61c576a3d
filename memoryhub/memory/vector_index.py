"""HNSW indexes per embedding dimension.

The embedding column is an untyped `vector`, so the index is built on a cast to the
dimension in use, partial on that dimension; queries use the same cast so the planner
can match it. A new model with a new dimension gets its own index after `migrate`.
"""

from __future__ import annotations

from typing import Any

from django.db import connection

TABLE = "memory_memoryentry"


def index_name(dim: int) -> str:
    return f"memory_embedding_hnsw_{dim}"


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
            f"WITH (m = 16, ef_construction = 64) WHERE embedding_dim = {int(dim)}"
        )
    return True


def ensure_vector_index_after_migrate(**kwargs: Any) -> None:
    from memoryhub.memory.embeddings import get_provider

    if kwargs.get("plan") is not None and TABLE in connection.introspection.table_names():
        ensure_vector_index(get_provider().dimensions)
