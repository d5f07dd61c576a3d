"""Hot-path statements prepared on the server: the hub's one policy for them.

Django's PostgreSQL backend binds parameters on the client (psycopg's ClientCursor), so
PostgreSQL parses and plans every statement anew. For the few statements run on every
save or resume that planning is a fifth of their time (a checkpoint save: 0.3 of 1.5
ms), and most of a graph walk's (5-10 ms against 0.3-5 executing at 100,000 facts);
`prepared_cursor()` runs them with server-side binding, prepared once per pooled
connection when asked (`prepare=True`), and keeps Django's translation of database
errors and its query log.

One switch, MEMORYHUB_PREPARED_STATEMENTS (on by default), turns preparing off for all of
them: a transaction-mode pooler between the hub and PostgreSQL that cannot keep prepared
statements (PgBouncer before 1.21) needs it off. They are still bound on the server then,
as unnamed statements, which every pooler passes.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection
from psycopg.pq import TransactionStatus
from django.db.models import Model

M = TypeVar("M", bound=Model)

NEVER_BY_ITSELF = 2**31 - 1


@contextmanager
def prepared_cursor(*, generic_plan: bool = False) -> Iterator[psycopg.Cursor]:
    """A server-side-binding cursor on Django's connection (its transaction, if one is
    open); pass `prepare=True` to `execute` for statements worth keeping prepared.

    `generic_plan`: prepared statements are planned once, with one plan for every value.
    Left to choose, PostgreSQL kept planning each run of the graph's statements anew (its
    custom plans looked no dearer), which is the cost preparing them is meant to save;
    where every value is looked up through the same indexes, one plan serves them all."""
    connection.ensure_connection()
    raw = connection.connection
    if raw.prepare_threshold is None:
        # Django turns preparing off (None), which ignores even prepare=True. Its own
        # client-binding cursors never prepare, so a threshold no statement reaches
        # leaves them as they were and lets ours prepare when asked.
        raw.prepare_threshold = NEVER_BY_ITSELF
    cursor_class = _LoggedCursor if connection.queries_logged else _Cursor
    with connection.wrap_database_errors, cursor_class(raw) as cursor:
        cursor.generic_plan = generic_plan
        yield cursor


class _Cursor(psycopg.Cursor):
    generic_plan = False

    def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None, **kwargs: Any) -> Any:
        prepare = bool(prepare) and settings.MEMORYHUB_PREPARED_STATEMENTS
        if not (prepare and self.generic_plan):
            return super().execute(query, params, prepare=prepare, **kwargs)
        self.connection.execute("SET plan_cache_mode = force_generic_plan")
        try:
            return super().execute(query, params, prepare=True, **kwargs)
        finally:
            # The rows are in hand: the setting is put back at once. A failed statement inside
            # a transaction (a timeout) leaves it aborted; its rollback takes the SET back, and
            # a RESET now would hide the real error.
            if self.connection.info.transaction_status != TransactionStatus.INERROR:
                self.connection.execute("RESET plan_cache_mode")


class _LoggedCursor(_Cursor):
    """Records its statements where Django's debug cursor would (DEBUG, or a test's
    assertNumQueries / CaptureQueriesContext), so they are counted like the ORM's."""

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        started = time.monotonic()
        try:
            return super().execute(query, params, **kwargs)
        finally:
            connection.queries_log.append({"sql": str(query), "time": f"{time.monotonic() - started:.3f}"})


class RowReader(Generic[M]):
    """Builds instances of a model from its columns in a row, as the ORM would: each
    field's own conversion applied (JSON arrives as text: Django's connection loads jsonb
    that way), the fields left out deferred. Select lists come from `_meta`, so models
    and SQL cannot drift apart."""

    def __init__(self, model: type[M], alias: str, *, leave_out: Iterable[str] = ()) -> None:
        omitted = set(leave_out)
        fields = [f for f in model._meta.concrete_fields if f.attname not in omitted]
        self.model = model
        self.columns = ", ".join(f'{alias}."{f.column}"' for f in fields)
        self.width = len(fields)
        self._attnames = [f.attname for f in fields]
        # Looked up once: per row and field they cost more than building the instance.
        self._converters = [(i, converter) for i, f in enumerate(fields) for converter in f.get_db_converters(connection)]

    def index(self, attname: str) -> int:
        """Where the field `attname` is in the rows this reader reads."""
        return self._attnames.index(attname)

    def read(self, row: Sequence[Any], start: int = 0) -> M:
        """The instance from `row[start:start + width]`."""
        values = list(row[start : start + self.width])
        for i, converter in self._converters:
            values[i] = converter(values[i], None, connection)
        return self.model.from_db(DEFAULT_DB_ALIAS, self._attnames, values)
