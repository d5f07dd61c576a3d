"""Database backend for the embedded server: PostgreSQL's, plus "start it on first use".

Starting the server lazily, when Django first opens a connection, means importing the
settings has no side effects, and commands that never touch the database (`check`,
`collectstatic`) don't start it.
"""

from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.backends.postgresql import base

from memoryhub.platform import embedded_pg


# The models' own rows, the same after any flush: kept by one, so that the post_migrate
# handlers that make them find them there instead of writing them all again. A flush
# after every transactional test spent most of its time there.
KEPT_BY_FLUSH = frozenset({"django_content_type", "auth_permission"})


class DatabaseOperations(base.DatabaseOperations):
    def sql_flush(self, style: Any, tables: list[str], *, reset_sequences: bool = False, allow_cascade: bool = False) -> list[str]:
        kept = [table for table in tables if table not in KEPT_BY_FLUSH]
        if reset_sequences or not kept:
            return super().sql_flush(style, kept, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        # DELETE rather than TRUNCATE: a TRUNCATE gives every table and index new files, which
        # for a hundred small tables cost more than emptying them; with triggers (the foreign
        # keys' and the audit log's append-only guard) off for the statement's transaction.
        return [
            "SET LOCAL session_replication_role = replica;",
            *(f"DELETE FROM {self.quote_name(table)};" for table in kept),
        ]


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations

    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        params["host"] = embedded_pg.ensure_running(Path(settings.MEMORYHUB_DATA_DIR))
        params.setdefault("user", "postgres")
        return params
