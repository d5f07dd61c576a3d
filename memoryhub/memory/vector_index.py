"""HNSW indexes per embedding dimension.

The embedding column is an untyped `vector`, so the index is built on a cast to the
dimension in use, partial on that dimension; queries use the same cast so the planner
can match it. A new model with a new dimension gets its own index after `migrate`.

The index is also partial on `vector_indexed`: new rows stay out of it (and are searched
exactly) until `index_pending_vectors` moves them in, in the background, in batches.

End users with many entries get indexes of their own besides, HNSW and GIN (partial on
their workspace and user_id too): searched through the shared index, a filter that keeps one
row in a hundred makes the scan visit a hundred rows for each it returns, and searched
exactly, the user's rows are each a heap page of their own (docs/memory.md, "Search and scores").
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from psycopg import sql

from memoryhub.privacy.fence import PURGE_IN_PROGRESS_SQLSTATE

TABLE = "memory_memoryentry"


def vector_connection() -> Any:
    """The transaction's own psycopg connection, with pgvector's types registered: for
    statements that send many vectors in binary (COPY, `%b`), where text would cost more
    than the statement."""
    from pgvector.psycopg import register_vector

    connection.ensure_connection()
    raw = connection.connection
    if not getattr(raw, "_memoryhub_vector_registered", False):
        register_vector(raw)
        raw._memoryhub_vector_registered = True
    return raw


def index_name(dim: int) -> str:
    return f"memory_hnsw_{dim}"


def _hnsw_definition(dim: int) -> str:
    """What follows `ON table` in the CREATE INDEX of an HNSW index for `dim`: the shared
    index and the users' own ones are built alike, partial on the same conditions."""
    return (
        f"USING hnsw ((embedding::vector({int(dim)})) vector_cosine_ops) "
        f"WITH (m = 16, ef_construction = 64) WHERE embedding_dim = {int(dim)} AND vector_indexed"
    )


def ensure_vector_index(dim: int) -> bool:
    """Create the HNSW index for `dim` if missing; True if it was created."""
    name = index_name(dim)
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [name])
        if cursor.fetchone():
            return False
        cursor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {TABLE} {_hnsw_definition(dim)}")
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


# One refresh of the users' own indexes at a time (across processes): two would build
# the same index twice.
USER_INDEXES_LOCK_KEY = 0x6D656D75  # "memu"

# A user's own indexes come in pairs: an HNSW index for the semantic leg and a GIN index
# over (tags, words) for the keyword leg, where the shared (user_id, tags) index reads
# the whole posting lists of the user and the tag (7 of a 15 ms keyword leg for a user
# of 133,000 entries) to find the few hundred that hold the words.
OWN_INDEX_PATTERN = r"^memory_(hnsw|words)_[0-9]+_u[0-9a-f]+$"


def user_index_name(*, workspace_id: int, user_id: str, dim: int) -> str:
    """The name of a user's own HNSW index, which names the pair: their user_id stays out
    of it (index names show up in plans, logs and monitoring), it is in the indexes'
    predicates only."""
    digest = hashlib.sha256(f"{workspace_id}\0{user_id}".encode()).hexdigest()[:24]
    return f"{index_name(dim)}_u{digest}"


def words_index_name(name: str) -> str:
    """The keyword index paired with the user's own HNSW index `name`."""
    return name.replace("memory_hnsw_", "memory_words_", 1)


def user_vector_indexes_refresh(*, min_rows: int | None = None) -> dict[str, int]:
    """Give every end user with at least `min_rows` entries (MEMORYHUB_USER_INDEX_MIN_ROWS;
    0: nobody), the largest MEMORYHUB_USER_INDEX_MAX_USERS of them, indexes of their own,
    and drop those of users now under half of it, purged, or whose build did not finish. Returns how many pairs were built and dropped.

    Built with CREATE INDEX CONCURRENTLY, so writes go on; a whole build is several times
    faster than inserting the same rows one by one (133,000 rows in 21–28 s here, the
    keyword index in 1 s). Rows written later join them as they join the shared ones."""
    from memoryhub.memory.embeddings import get_provider
    from memoryhub.memory.models import UserVectorIndex

    min_rows = settings.MEMORYHUB_USER_INDEX_MIN_ROWS if min_rows is None else min_rows
    dim = get_provider().dimensions
    done = {"built": 0, "dropped": 0}
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [USER_INDEXES_LOCK_KEY])
        if not cursor.fetchone()[0]:
            return done
        try:
            recorded = set(UserVectorIndex.objects.filter(dim=dim).values_list("name", flat=True))
            wanted: dict[str, tuple[int, str, int]] = {}
            if min_rows > 0:
                # Kept down to half the size that earns one, so a user hovering around it
                # is not built and dropped in turn.
                cursor.execute(
                    f"SELECT workspace_id, user_id, count(*) FROM {TABLE} GROUP BY 1, 2 HAVING count(*) >= %s",
                    [max(1, min_rows // 2)],
                )
                # The largest users first, up to MEMORYHUB_USER_INDEX_MAX_USERS: every index
                # on the table is weighed when any statement on it is planned (27 pairs
                # took planning 0.25 -> 0.65 ms a search).
                for workspace_id, user_id, rows in sorted(cursor.fetchall(), key=lambda row: -row[2]):
                    name = user_index_name(workspace_id=workspace_id, user_id=user_id, dim=dim)
                    if (rows >= min_rows or name in recorded) and len(wanted) < settings.MEMORYHUB_USER_INDEX_MAX_USERS:
                        wanted[name] = (workspace_id, user_id, rows)
            catalog = {name: whole for name, whole in _own_pairs(cursor).items() if name.startswith(f"{index_name(dim)}_u")}
            whole = {name for name, is_whole in catalog.items() if is_whole}
            unfinished = catalog.keys() - whole  # a build cut short leaves an invalid index behind
            for name in (whole - wanted.keys()) | unfinished | (recorded - wanted.keys()):
                _user_indexes_drop(cursor, name=name)
                done["dropped"] += 1
            for name, (workspace_id, user_id, rows) in wanted.items():
                if name in whole and name in recorded:
                    continue
                if name not in whole:
                    _user_indexes_build(cursor, name=name, workspace_id=workspace_id, user_id=user_id, dim=dim)
                    done["built"] += 1
                if _user_entries(cursor, workspace_id=workspace_id, user_id=user_id) < max(1, min_rows // 2):
                    _user_indexes_drop(cursor, name=name)  # erased while the indexes were built
                    done["dropped"] += 1
                    continue
                try:
                    UserVectorIndex.objects.update_or_create(
                        name=name, defaults={"workspace_id": workspace_id, "user_id": user_id, "dim": dim, "entries": rows}
                    )
                except DatabaseError as exc:
                    if getattr(exc.__cause__, "sqlstate", None) != PURGE_IN_PROGRESS_SQLSTATE:
                        raise
                    _user_indexes_drop(cursor, name=name)  # the user is being erased
                    done["dropped"] += 1
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [USER_INDEXES_LOCK_KEY])
    return done


def user_vector_indexes_prune() -> int:
    """Drop the users' own indexes that no record vouches for: a purge deletes the record
    with every other row about the user, and this takes the indexes, whose predicates
    name them, out of the catalog. Returns how many pairs."""
    from memoryhub.memory.models import UserVectorIndex

    dropped = 0
    with connection.cursor() as cursor:
        # Waits for a refresh under way: it builds indexes before it records them.
        cursor.execute("SELECT pg_advisory_lock(%s)", [USER_INDEXES_LOCK_KEY])
        try:
            recorded = set(UserVectorIndex.objects.values_list("name", flat=True))
            for name in _own_pairs(cursor).keys() - recorded:
                _user_indexes_drop(cursor, name=name)
                dropped += 1
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [USER_INDEXES_LOCK_KEY])
    return dropped


def _own_pairs(cursor: Any) -> dict[str, bool]:
    """Users' own indexes in the catalog, by the name of the pair: whether both are there
    and valid."""
    cursor.execute(
        "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname ~ %s",
        [OWN_INDEX_PATTERN],
    )
    pairs: dict[str, list[bool]] = {}
    for relname, valid in cursor.fetchall():
        pairs.setdefault(relname.replace("memory_words_", "memory_hnsw_", 1), []).append(valid)
    return {name: len(valid) == 2 and all(valid) for name, valid in pairs.items()}


def _user_entries(cursor: Any, *, workspace_id: int, user_id: str) -> int:
    cursor.execute(f"SELECT count(*) FROM {TABLE} WHERE workspace_id = %s AND user_id = %s", [workspace_id, user_id])
    return cursor.fetchone()[0]


def _user_indexes_build(cursor: Any, *, name: str, workspace_id: int, user_id: str, dim: int) -> None:
    """The keyword index's predicate is the user alone: the keyword leg asks nothing of
    vectors, and a predicate its query does not imply would keep the planner off it."""
    from memoryhub.memory.models import GIN_PENDING_LIST_KB

    user = sql.SQL("workspace_id = {workspace} AND user_id = {user}").format(
        workspace=sql.Literal(int(workspace_id)), user=sql.Literal(user_id)
    )
    statements = [
        sql.SQL("CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} {definition} AND {user}").format(
            name=sql.Identifier(name), table=sql.Identifier(TABLE), definition=sql.SQL(_hnsw_definition(dim)), user=user
        ),
        sql.SQL(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} USING gin (tags, search_vector) "
            "WITH (gin_pending_list_limit = {pending}) WHERE {user}"
        ).format(name=sql.Identifier(words_index_name(name)), table=sql.Identifier(TABLE), pending=sql.Literal(GIN_PENDING_LIST_KB), user=user),
    ]
    for statement in statements:
        cursor.execute(statement.as_string(cursor.connection))


def _user_indexes_drop(cursor: Any, *, name: str) -> None:
    """The record first: a search routed by it would otherwise look for indexes that are
    going. Then the indexes, their predicates naming the user."""
    from memoryhub.memory.models import UserVectorIndex

    UserVectorIndex.objects.filter(name=name).delete()
    for index in (name, words_index_name(name)):
        cursor.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {name}").format(name=sql.Identifier(index)).as_string(cursor.connection))
