"""Hot-path statements prepared on the server.

Django's PostgreSQL backend binds parameters on the client (psycopg's ClientCursor), so
PostgreSQL parses and plans every statement anew. For the few statements run on every
save or resume that planning is a fifth of their time (a checkpoint save: 0.3 of 1.5
ms); `prepared_cursor()` runs them with server-side binding, prepared once per pooled
connection, and keeps Django's translation of database errors.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

import psycopg
from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import Model

M = TypeVar("M", bound=Model)

NEVER_BY_ITSELF = 2**31 - 1


@contextmanager
def prepared_cursor() -> Iterator[psycopg.Cursor]:
    """A server-side-binding cursor on Django's connection (its transaction, if one is
    open); pass `prepare=True` to `execute` for statements worth keeping prepared."""
    connection.ensure_connection()
    raw = connection.connection
    if raw.prepare_threshold is None:
        # Django turns preparing off (None), which ignores even prepare=True. Its own
        # client-binding cursors never prepare, so a threshold no statement reaches
        # leaves them as they were and lets ours prepare when asked.
        raw.prepare_threshold = NEVER_BY_ITSELF
    cursor_class = _LoggedCursor if connection.queries_logged else psycopg.Cursor
    with connection.wrap_database_errors, cursor_class(raw) as cursor:
        yield cursor


class _LoggedCursor(psycopg.Cursor):
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
