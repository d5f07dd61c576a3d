"""Loading records into a workspace: an archive's, or a foreign export's turned into the
archive's shape (memoryhub.portability.foreign). docs/portability.md, "Imports".

Every record goes into the import's store and agent; references inside the archive
follow it (a message its session, a step its plan, a memory's source its episode, a
revision its memory). Rows are written a chunk at a time through a staging table:
`INSERT … SELECT … ON CONFLICT DO NOTHING RETURNING` says which were created, so one
statement both writes a chunk and settles what was there already:

- a memory's new id is derived from the workspace, the archive's origin and its old id
  (uuid5), so the same memory imported twice meets itself;
- a session keeps its session_id: one that exists is skipped with everything in it
  (messages, plans, calls, checkpoints…), so a second import adds nothing to it;
- records with no natural key (timeline events, a session-less episode or rule) are
  skipped when an identical one (same time and text) is there.

Items about a purged (blocked) user are refused, never written; redaction settings apply
to memories' and messages' text (a vector of unredacted text is dropped and computed
again from the redacted text).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import decimal
import ipaddress
import json
import math
import uuid
import zlib
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import orjson
from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone
from pgvector.django import VectorField
import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from memoryhub.checkpoints.models import Checkpoint, state_stored
from memoryhub.conversations.messages import MessageInput, MessageKeeping, message_checked
from memoryhub.conversations.models import Message, Session
from memoryhub.conversations.sessions import session_checked, state_kept
from memoryhub.core import tasking
from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import Agent, Store, Workspace
from memoryhub.episodes.models import Episode
from memoryhub.memory.embeddings import get_provider
from memoryhub.memory.models import MemoryEntry, MemoryType, Review, Scope, SourceKind
from memoryhub.memory.services import MemoryInput, search_extra_text
from memoryhub.memory.services.rows import WriteRules, entry_checked, held_back, kept_data
from memoryhub.memory.typed_data import fact_key
from memoryhub.memory.vector_index import vector_connection
from memoryhub.portability.archive import KINDS, Kind, vector_of
from memoryhub.privacy.models import BlockedUser
from memoryhub.privacy.redaction import pseudonym_key, redact_text
from memoryhub.privacy.services import user_hash
from memoryhub.tools.models import ToolResult, output_stored

CHUNK = 2000
# The thread that COPYs chunks while imports build the next ones. One, shared by the
# process's imports (rare, admins' work): a second import's chunks wait their turn, and an
# import's end closes that thread's connection, which the next chunk opens again.
WRITERS = 1
# The order records are loaded in: what others refer to first.
ORDER = (
    "graph_rules", "sessions", "messages", "plans", "plan_steps", "tool_calls", "episodes", "memories",
    "memory_revisions", "checkpoints", "approval_rules", "approvals", "timeline",
)
KIND_NAMED: dict[str, Kind] = {kind.name: kind for kind in KINDS}


@dataclass
class Tally:
    """What an import did, kind by kind, and why it refused what it refused."""

    kinds: dict[str, Counter[str]] = field(default_factory=dict)
    refusals: Counter[tuple[str, str]] = field(default_factory=Counter)

    def add(self, kind: str, outcome: str, n: int = 1) -> None:
        if n:
            self.kinds.setdefault(kind, Counter())[outcome] += n

    def refuse(self, kind: str, reason: str) -> None:
        self.add(kind, "refused")
        self.refusals[(kind, reason)] += 1

    def counts(self) -> dict[str, Any]:
        totals = Counter[str]()
        for counted in self.kinds.values():
            totals.update(counted)
        return {
            **{outcome: totals[outcome] for outcome in ("created", "skipped", "refused")},
            "kinds": {kind: {outcome: c[outcome] for outcome in ("created", "skipped", "refused")} for kind, c in self.kinds.items()},
        }

    def refusal_list(self) -> list[dict[str, Any]]:
        return [{"kind": kind, "reason": reason, "count": n} for (kind, reason), n in sorted(self.refusals.items())]


def _parse_time(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


# A line's JSON, parsed, takes about this much memory a value (an object, a string, a
# number: from under 30 bytes to a few hundred). Past MAX_RECORD_VALUES a line is refused
# unparsed: a 16 MB line of tiny objects took 290 MB to parse (`bench portability`).
MAX_RECORD_VALUES = 1_000_000
UNPARSED_REASONS = ("invalid_record", "too_many_values")


@dataclass(frozen=True)
class Unparsed:
    """A line the reader did not parse, and why (one of UNPARSED_REASONS)."""

    reason: str


def record_parsed(line: bytes) -> Any:
    """A line's record, or Unparsed: a line that is not JSON (or not UTF-8), or one of more
    values than MAX_RECORD_VALUES. The count is an upper bound read without parsing (every
    comma, bracket and brace, those inside strings too), so that no line's parse holds
    more than a few hundred megabytes whatever the limits on its bytes allow."""
    if len(line) > MAX_RECORD_VALUES and line.count(b",") + line.count(b"[") + line.count(b"{") >= MAX_RECORD_VALUES:
        return Unparsed("too_many_values")
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return Unparsed("invalid_record")


def _storable_json(value: Any) -> bool:
    """JSON jsonb can hold: no NUL in any string (PostgreSQL refuses \\u0000), numbers finite."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return False
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


_INTEGER_BOUNDS = {
    models.SmallIntegerField: 2**15, models.PositiveSmallIntegerField: 2**15, models.IntegerField: 2**31,
    models.PositiveIntegerField: 2**31, models.BigIntegerField: 2**63, models.PositiveBigIntegerField: 2**63,
    models.BigAutoField: 2**63, models.AutoField: 2**31,
}


def _parses(parse: Callable[[Any], Any], value: Any) -> bool:
    try:
        parse(value)
    except (ValueError, TypeError, binascii.Error):
        return False
    return True


def _base64(value: str) -> bool:
    return _parses(lambda text: base64.b64decode(text, validate=True), value)


def _vector(value: Any) -> bool:
    """A vector as an archive writes it (base64 of float32 values) or a JSON array of numbers."""
    if isinstance(value, list):
        return all(_number(x) for x in value)
    return isinstance(value, str) and len(value) % 4 == 0 and _base64(value)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _checker(field_: models.Field) -> Callable[[Any], bool]:
    """Whether an archive's JSON value (not None: `_readable`) can be the column `field_`:
    the type the column takes, within its bounds (a string within max_length, an integer
    within the column's size, a time in ISO 8601, an id of the right form). Made once a
    column: an import asks it of every field of every record."""
    if field_.is_relation:  # an agent or store by name, a session by session_id, a record by id
        return lambda v: isinstance(v, str | int) and not isinstance(v, bool) and len(str(v)) <= 255
    if isinstance(field_, models.JSONField):
        return _storable_json
    if isinstance(field_, models.GenericIPAddressField):
        return lambda v: isinstance(v, str) and _parses(ipaddress.ip_address, v)
    if isinstance(field_, VectorField):
        return _vector
    if isinstance(field_, models.BooleanField):
        return lambda v: isinstance(v, bool)
    if isinstance(field_, models.DateTimeField):
        return lambda v: isinstance(v, str) and _parses(datetime.fromisoformat, v)
    if isinstance(field_, models.UUIDField):
        return lambda v: isinstance(v, str) and _parses(uuid.UUID, v)
    if isinstance(field_, models.FloatField | models.DecimalField):
        return lambda v: _number(v) and abs(v) < 1e15
    bound = _INTEGER_BOUNDS.get(type(field_))
    if bound is not None:
        return lambda v: isinstance(v, int) and not isinstance(v, bool) and -bound <= v < bound
    if isinstance(field_, ArrayField):
        item = _checker(field_.base_field)
        return lambda v: isinstance(v, list) and all(x is not None and item(x) for x in v)
    if isinstance(field_, models.BinaryField):
        return lambda v: isinstance(v, str) and _base64(v)
    if field_.choices:
        allowed = frozenset(choice for choice, _ in field_.flatchoices)
        return lambda v: isinstance(v, str | int) and not isinstance(v, bool) and v in allowed
    if isinstance(field_, models.CharField | models.TextField):
        longest = field_.max_length
        # NUL is the one character PostgreSQL's text cannot hold.
        return lambda v: isinstance(v, str) and "\x00" not in v and (longest is None or len(v) <= longest)
    return lambda v: isinstance(v, str | int | float | bool)


def _readable(field_: models.Field, check: Callable[[Any], bool], value: Any) -> bool:
    """A record with a value its column cannot take is refused, not written, so that no
    crafted type reaches a statement or a conversion."""
    if value is None:
        return field_.null or field_.has_default() or field_.primary_key
    return check(value)


def _converter(field_: models.Field) -> Callable[[Any], Any]:
    """An archive's JSON value of `field_` as the database column takes it."""
    if isinstance(field_, VectorField):
        return lambda v: None if v is None else vector_of(v)
    if isinstance(field_, models.DateTimeField):
        return _parse_time
    if isinstance(field_, models.BinaryField):
        return lambda v: None if v is None else base64.b64decode(v)
    if isinstance(field_, models.UUIDField):
        return lambda v: None if v is None else uuid.UUID(str(v))
    if isinstance(field_, models.GenericIPAddressField):
        return lambda v: None if not v else ipaddress.ip_address(v)
    if isinstance(field_, models.DecimalField):
        return lambda v: None if v is None else decimal.Decimal(str(v))
    if isinstance(field_, models.JSONField):
        return lambda v: Jsonb(v)
    return lambda v: v


def _stored_state(state: Any) -> dict[str, Any]:
    """A checkpoint's state as the table keeps it (zlib-compressed JSON, its sizes), from the
    archive's JSON; archives made before 2026-12-07 wrote the compressed bytes in base64.
    Columns by attname, to give `Table.row` as they are (not an archive's form to convert)."""
    raw = None
    if isinstance(state, str):
        with contextlib.suppress(ValueError, zlib.error):  # otherwise, a state that is a string
            raw = zlib.decompress(base64.b64decode(state, validate=True))
    if raw is None:
        if state is None:
            return {"state": None}
        raw = orjson.dumps(state)
    compressed = state_stored(raw)
    return {"state": compressed, "state_bytes": len(raw), "stored_bytes": len(compressed)}


class Table:
    """One kind's table, written through a staging table of the same columns. A record is
    read for the fields its kind declares (archive.KINDS) and no others: a column of the
    hub's own bookkeeping (`vector_indexed`, `content_fingerprint`…) is rebuilt, never
    taken from an archive."""

    def __init__(self, kind: Kind) -> None:
        self.model = model = kind.model
        self.fields = [f for f in model._meta.concrete_fields if not f.generated]
        self.columns = [f.column for f in self.fields]
        self.plain = {f.name: (f.attname, _converter(f)) for f in self.fields if not f.is_relation and f.name in kind.fields}
        by_name = {f.name: f for f in self.fields}
        # A field the archive holds in another form than its column (a state as JSON) is
        # converted by its kind's loading, not checked against the column.
        converted = {name for name, _ in kind.readable}
        self.declared = [(name, by_name[name], _checker(by_name[name])) for name in kind.fields if name in by_name and name not in converted]
        # What a record must have: what its kind requires to name it or what it belongs to,
        # and every column it declares that has neither a default nor room for null.
        self.required = list(dict.fromkeys([*kind.required, *(
            name for name, f, _ in self.declared
            if not (f.null or f.has_default() or f.is_relation or f.primary_key or getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False))
        )]))
        self.defaults = {f.attname: f for f in self.fields if f.has_default() or f.null}
        # Stamped by the ORM on save, never written by it here: the record's own time stands in.
        self.stamped = [f.attname for f in self.fields if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)]
        self.stage = f"import_stage_{model._meta.db_table}"
        self.types: list[str] = []
        self.met_conflicts = False

    def problem(self, record: Any) -> str | None:
        """The first declared field of `record` whose value the column cannot take, or that
        its kind requires and it lacks (`record` when it is not an object, or a line left
        unparsed: `Unparsed`): why it is refused."""
        if isinstance(record, Unparsed):
            return record.reason
        if not isinstance(record, dict):
            return "record"
        for name in self.required:
            if record.get(name) is None:
                return name
        # An id names the record within the archive (a copy gives it a new one): any short
        # string or integer.
        if "id" in record and (not isinstance(record["id"], str | int) or isinstance(record["id"], bool) or len(str(record["id"])) > 255):
            return "id"
        for name, field_, check in self.declared:
            if name != "id" and name in record and not _readable(field_, check, record[name]):
                # The API's own word for text PostgreSQL cannot store (INVALID_TEXT).
                return "text" if isinstance(record[name], str) and "\x00" in record[name] else name
        return None

    def prepare(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT attname, atttypid::regtype::text FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
                [self.model._meta.db_table],
            )
            types = dict(cursor.fetchall())
            self.types = [types[column] for column in self.columns]
            cursor.execute(
                f"CREATE TEMP TABLE IF NOT EXISTS {self.stage} AS SELECT {', '.join(self.columns)} FROM {self.model._meta.db_table} WITH NO DATA"
            )

    def row(self, record: dict[str, Any], **given: Any) -> dict[str, Any]:
        """A row of the table from an archive record's plain fields, `given` on top (ids,
        references), the model's defaults for the rest."""
        row = {attname: convert(record[name]) for name, (attname, convert) in self.plain.items() if name in record and attname not in given}
        row.update(given)
        for attname in self.stamped:
            row.setdefault(attname, row.get("created_at") or timezone.now())
        for attname, f in self.defaults.items():
            if attname not in row:
                default = f.get_default()
                row[attname] = Jsonb(default) if isinstance(f, models.JSONField) else default
        return row

    def insert(
        self, rows: list[dict[str, Any]], *, same_as: tuple[str, ...] = (), exists: tuple[tuple[str, type[models.Model]], ...] = (),
    ) -> set[Any]:
        """Writes the rows that conflict with none there (a unique constraint, or an existing
        row equal on `same_as`) and whose `exists` references are there; the created pks."""
        if not rows:
            return set()
        raw = vector_connection()
        table = sql.Identifier(self.model._meta.db_table)
        stage = sql.Identifier(self.stage)
        columns = sql.SQL(", ").join(map(sql.Identifier, self.columns))
        if self.straight(same_as=same_as, exists=exists):
            created = self.copied(rows)
            if created is not None:
                return created
            self.met_conflicts = True
        with raw.cursor() as cursor:
            cursor.execute(sql.SQL("TRUNCATE {}").format(stage))
            self._copy(cursor, stage, columns, rows)
            conditions = [
                sql.SQL("NOT EXISTS (SELECT 1 FROM {} AS t WHERE {})").format(
                    table, sql.SQL(" AND ").join(
                        sql.SQL("t.{0} IS NOT DISTINCT FROM s.{0}").format(sql.Identifier(c)) for c in ("workspace_id", *same_as)
                    ),
                ),
            ] if same_as else []
            # What a row refers to is there, and in the importing workspace: an archive naming
            # another workspace's row (its id kept by a restore) refers to nothing.
            conditions += [
                sql.SQL("EXISTS (SELECT 1 FROM {} AS r WHERE r.{} = s.{} AND r.workspace_id = s.workspace_id)").format(
                    sql.Identifier(target._meta.db_table), sql.Identifier(target._meta.pk.column), sql.Identifier(column),
                )
                for column, target in exists
            ]
            where = sql.SQL(" WHERE ") + sql.SQL(" AND ").join(conditions) if conditions else sql.SQL("")
            cursor.execute(
                sql.SQL("INSERT INTO {table} ({columns}) SELECT {columns} FROM {stage} AS s{where} ON CONFLICT DO NOTHING RETURNING {pk}").format(
                    table=table, columns=columns, stage=stage, where=where, pk=sql.Identifier(self.model._meta.pk.column),
                )
            )
            return {pk for (pk,) in cursor.fetchall()}

    def straight(self, *, same_as: tuple[str, ...] = (), exists: tuple[tuple[str, type[models.Model]], ...] = ()) -> bool:
        """Whether rows go straight into the table. Into an empty workspace nothing
        conflicts: half the writing. The first conflict (a second import) sends this
        table's chunks through the staging table from then on."""
        return not same_as and not exists and not self.met_conflicts

    def copied(self, rows: list[dict[str, Any]]) -> set[Any] | None:
        """The rows COPYed straight into the table in a transaction of their own, on this
        thread's connection: their pks, or None (nothing written) when one conflicts."""
        try:
            with transaction.atomic(), vector_connection().cursor() as cursor:
                self._copy(cursor, sql.Identifier(self.model._meta.db_table), sql.SQL(", ").join(map(sql.Identifier, self.columns)), rows)
        except (IntegrityError, psycopg.IntegrityError):  # the raw connection's own errors are psycopg's
            return None
        return {row[self.model._meta.pk.attname] for row in rows}

    def _copy(self, cursor: Any, into: sql.Composable, columns: sql.Composable, rows: list[dict[str, Any]]) -> None:
        with cursor.copy(sql.SQL("COPY {} ({}) FROM STDIN WITH (FORMAT BINARY)").format(into, columns)) as copy:
            copy.set_types(self.types)
            for row in rows:
                copy.write_row([row[f.attname] for f in self.fields])

    def numbered(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rows, each given a new id of the table's (`new_ids`)."""
        for row, pk in zip(rows, self.new_ids(len(rows)) if rows else [], strict=True):
            row["id"] = pk
        return rows

    def new_ids(self, n: int) -> list[int]:
        """Ids from the table's own sequence, known before the rows are written (so that
        what refers to them can be written in the same pass)."""
        with connection.cursor() as cursor:
            cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)", [self.model._meta.db_table, n])
            return [pk for (pk,) in cursor.fetchall()]


def chunked(records: Iterable[dict[str, Any]], size: int = CHUNK) -> Iterator[list[dict[str, Any]]]:
    chunk: list[dict[str, Any]] = []
    for record in records:
        chunk.append(record)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class BackgroundCopy:
    """COPYs chunks into empty tables on a thread of its own (its own connection, a
    transaction per chunk) while the caller builds the next chunk: the database's work on
    one overlaps Python's on the other, where one thread did both in turn. One chunk in
    flight at most. A chunk that meets a conflict is written again by the caller, through
    the staging table, and that table's chunks go that way from then on."""

    def __init__(self) -> None:
        # Threads of a pool the process's imports share: each import keeps one chunk in flight.
        self._thread = tasking.pool("memoryhub-import-writer", workers=WRITERS)
        self._pending: deque[tuple[Future[set[Any] | None], Table, list[dict[str, Any]], Callable[[set[Any]], None]]] = deque()

    def submit(self, table: Table, rows: list[dict[str, Any]], then: Callable[[set[Any]], None]) -> None:
        self._pending.append((self._thread.submit(table.copied, rows), table, rows, then))
        while len(self._pending) > 1:
            self._settle()

    def drain(self) -> None:
        """Waits for every chunk handed over: what comes next may refer to them."""
        while self._pending:
            self._settle()

    def close(self) -> None:
        """Closes the writer thread's connection, after the chunks still on it (an import that
        failed leaves them unsettled: nobody counts them)."""
        for future, *_ in self._pending:
            future.exception()  # waited for, not raised
        self._thread.submit(lambda: connection.close()).result()  # the thread's own connection (looked up there)

    def _settle(self) -> None:
        future, table, rows, then = self._pending.popleft()
        created = future.result()
        if created is None:
            table.met_conflicts = True
            with transaction.atomic():
                created = table.insert(rows)
        then(created)


class Loader:
    """Loads one archive's (or foreign file's) records into a workspace's store and agent,
    kind by kind in ORDER; holds what later kinds need of earlier ones (new ids)."""

    def __init__(
        self, *, workspace: Workspace, store: Store, agent: Agent, import_id: int, origin: str, restore: bool = False,
        embed: bool = True, writer: BackgroundCopy | None = None, index_soon: bool = True,
    ) -> None:
        self.workspace, self.store, self.agent, self.import_id = workspace, store, agent, import_id
        # Memory ids are derived from it: the same memory of the same origin lands on the same id.
        # An archive of this very workspace (a restore) keeps its ids: what is still there
        # is met and skipped, what was deleted comes back as it was.
        self.namespace = None if restore else uuid.uuid5(uuid.NAMESPACE_URL, f"memoryhub-import:{workspace.pk}:{origin}")
        self.embed = embed
        self.writer = writer
        self.loading = ""  # the kind loaded last
        self.index_soon = index_soon
        self.tally = Tally()
        self.tables: dict[str, Table] = {}
        self.checked_users: dict[str, bool] = {}
        self.blocked = set(BlockedUser.objects.filter(workspace=workspace).values_list("user_hash", flat=True))
        # Memories are written as memory_write writes them: kept as the workspace keeps text,
        # a fact's names too, keyed by the workspace's rules, held back by their source.
        self.writes = WriteRules.of(workspace)
        self.keep_memory = self.writes.kept
        self.keep_message = MessageKeeping.of(workspace)
        self.keep_state = state_kept(workspace)
        self.sessions: dict[str, int] = {}  # archive session_id -> new pk, for sessions this import created
        self.skipped_sessions: set[str] = set()
        self.plans: dict[int, int] = {}
        self.episodes: dict[int, int] = {}
        self.rules: dict[int, int] = {}
        self.superseded: list[tuple[uuid.UUID, uuid.UUID]] = []
        self.episode_memories: list[tuple[int, uuid.UUID]] = []
        self.created_sessions: list[int] = []
        self.parents: list[tuple[int, str]] = []
        self.wrote_memories = False

    # -- helpers -------------------------------------------------------------------------

    def table(self, kind: str) -> Table:
        if kind not in self.tables:
            self.tables[kind] = Table(KIND_NAMED[kind])
            self.tables[kind].prepare()
        return self.tables[kind]

    def is_blocked(self, user_id: str) -> bool:
        if not self.blocked:
            return False
        if user_id not in self.checked_users:  # the hash is keyed: worked out once per user, not per record
            self.checked_users[user_id] = user_hash(workspace_id=self.workspace.pk, user_id=user_id) in self.blocked
        return self.checked_users[user_id]

    def memory_id(self, old: Any) -> uuid.UUID:
        return uuid.UUID(str(old)) if self.namespace is None else uuid.uuid5(self.namespace, str(old))

    def _session_of(self, kind: str, record: dict[str, Any], name: str = "session") -> tuple[bool, int | None]:
        """(go on, the new session pk) for a record's session reference: a skipped
        session's records are skipped, an unknown one's refused."""
        session_id = record.get(name)
        if session_id is None:
            return True, None
        if session_id in self.sessions:
            return True, self.sessions[session_id]
        if session_id in self.skipped_sessions:
            self.tally.add(kind, "skipped")
        else:
            self.tally.refuse(kind, "unknown_session")
        return False, None

    def _admitted(self, kind: str, record: dict[str, Any]) -> bool:
        user_id = record.get("user_id")
        if user_id and self.is_blocked(user_id):
            self.tally.refuse(kind, "blocked")
            return False
        return True

    def _insert(self, kind: str, rows: list[dict[str, Any]], then: Callable[[set[Any]], None] = lambda created: None) -> None:
        """The kind's rows written, on the writer's thread where they go straight into the
        table (the bulk of an import: memories, messages); counted, and `then` told which
        were created, once they are."""
        table = self.table(kind)

        def written(created: set[Any]) -> None:
            self._written(kind, rows, created)
            then(created)

        if self.writer is not None and table.straight():
            self.writer.submit(table, rows, written)
        else:
            written(table.insert(rows))

    def _written(self, kind: str, rows: list[dict[str, Any]], created: set[Any]) -> None:
        self.tally.add(kind, "created", len(created))
        self.tally.add(kind, "skipped", len(rows) - len(created))

    # -- kinds ---------------------------------------------------------------------------

    def load(self, kind: str, chunk: list[dict[str, Any]]) -> None:
        if self.writer is not None and kind != self.loading:
            self.writer.drain()  # this kind may refer to the last one's rows
        self.loading = kind
        # One gate for every kind: a record whose fields are not of the types they declare is
        # refused here, whatever its kind's loading does with it next.
        table = self.table(kind)
        readable = []
        for record in chunk:
            if (problem := table.problem(record)) is None:
                readable.append(record)
            else:
                self.tally.refuse(kind, problem if problem in UNPARSED_REASONS else f"invalid_{problem}")
        getattr(self, f"_load_{kind}")(readable)

    def _load_graph_rules(self, chunk: list[dict[str, Any]]) -> None:
        table = self.table("graph_rules")
        rows = [table.row(r, id=pk, workspace_id=self.workspace.pk) for r, pk in zip(chunk, table.new_ids(len(chunk)), strict=True)]
        self._written("graph_rules", rows, table.insert(rows))

    def _load_sessions(self, chunk: list[dict[str, Any]]) -> None:
        table = self.table("sessions")
        admitted = [r for r in chunk if self._admitted("sessions", r) and self._session_checked(r)]
        ids = table.new_ids(len(admitted))
        rows = []
        for record, pk in zip(admitted, ids, strict=True):
            kept = {**record, "state": self.keep_state(record.get("state") or {})}
            rows.append(table.row(kept, id=pk, workspace_id=self.workspace.pk, agent_id=self.agent.pk, parent_id=None, last_seq=0))
        created = table.insert(rows)
        for record, row in zip(admitted, rows, strict=True):
            if row["id"] in created:
                self.sessions[record["session_id"]] = row["id"]
                self.created_sessions.append(row["id"])
                if record.get("parent"):  # linked at the end: a parent may come later in the archive
                    self.parents.append((row["id"], record["parent"]))
            else:
                self.skipped_sessions.add(record["session_id"])
        self._written("sessions", rows, created)

    def _session_checked(self, record: dict[str, Any]) -> bool:
        """Held to what every session's metadata and state are; refused if not."""
        try:
            session_checked(metadata=record.get("metadata", {}), state=record.get("state", {}))
        except ApplicationError as refused:
            self.tally.refuse("sessions", refused.code.lower())
            return False
        return True

    def _session_rows(
        self, kind: str, chunk: list[dict[str, Any]], build: Callable[[dict[str, Any], int | None], dict[str, Any] | None],
        *, session_required: bool = True, **insert: Any,
    ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """The chunk's records built into rows (`_attached`) and written; (record, row) of
        those created."""
        table = self.table(kind)
        pairs = self._attached(kind, chunk, build, session_required=session_required)
        table.numbered([row for _, row in pairs])
        created = table.insert([row for _, row in pairs], **insert)
        self._written(kind, [row for _, row in pairs], created)
        return [(record, row) for record, row in pairs if row["id"] in created]

    def _attached(
        self, kind: str, chunk: list[dict[str, Any]], build: Callable[[dict[str, Any], int | None], dict[str, Any] | None],
        *, session_required: bool = True,
    ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """The chunk's records admitted and attached to their new sessions, built into rows:
        (record, row); the others counted as skipped or refused."""
        pairs = []
        for record in chunk:
            if not self._admitted(kind, record):
                continue
            go_on, session = self._session_of(kind, record)
            if not go_on or (session_required and session is None):
                if go_on:
                    self.tally.refuse(kind, "unknown_session")
                continue
            row = build(record, session)
            if row is not None:
                pairs.append((record, row))
        return pairs

    def _load_messages(self, chunk: list[dict[str, Any]]) -> None:
        table = self.table("messages")
        checked = [(record, message) for record in chunk if (message := self._message_checked(record)) is not None]
        keep, inputs = self.keep_message, {id(record): message for record, message in checked}
        pairs = self._attached("messages", [record for record, _ in checked], lambda r, session: table.row(
            {**r, "content": keep.text(r.get("content") or ""), "tool_calls": keep.calls(r.get("tool_calls")), "item": keep.item(inputs[id(r)].item)},
            workspace_id=self.workspace.pk, session_id=session,
        ))
        self._insert("messages", table.numbered([row for _, row in pairs]))

    def _message_checked(self, record: dict[str, Any]) -> MessageInput | None:
        """Held to what every message is (role, length, text, its framework item: archived
        as the JSON text it is kept as), as written; None if refused."""
        item = record.get("item")
        try:
            if item is not None:
                try:
                    item = json.loads(item) if isinstance(item, str) else None
                except ValueError:
                    item = None
                if not isinstance(item, dict):
                    raise ApplicationError("item must be the JSON text of an object.", code="INVALID_ITEM")
            message = MessageInput(role=record.get("role") or "", content=record.get("content") or "", item=item)
            message_checked(message)
        except ApplicationError as refused:
            self.tally.refuse("messages", refused.code.lower())
            return None
        return message

    def _load_plans(self, chunk: list[dict[str, Any]]) -> None:
        table = self.table("plans")
        for record, row in self._session_rows("plans", chunk, lambda r, session: table.row(r, workspace_id=self.workspace.pk, session_id=session)):
            self.plans[record["id"]] = row["id"]

    def _load_plan_steps(self, chunk: list[dict[str, Any]]) -> None:
        table = self.table("plan_steps")
        pairs = []
        for record in chunk:
            if not self._admitted("plan_steps", record):
                continue
            if record.get("plan") not in self.plans:
                self.tally.add("plan_steps", "skipped")  # its plan was there already, or not in the archive
                continue
            pairs.append(table.row(record, workspace_id=self.workspace.pk, plan_id=self.plans[record["plan"]]))
        table.numbered(pairs)
        self._written("plan_steps", pairs, table.insert(pairs))

    def _load_tool_calls(self, chunk: list[dict[str, Any]]) -> None:
        table = self.table("tool_calls")

        def build(record: dict[str, Any], session: int | None) -> dict[str, Any] | None:
            output = record.get("output")
            # Held to the limit a tool call's result over the API is (413 there).
            if isinstance(output, str) and len(output.encode("utf-8", "surrogatepass")) > settings.MEMORYHUB_MAX_TOOL_RESULT_BYTES:
                self.tally.refuse("tool_calls", "output_too_large")
                return None
            return table.row(record, workspace_id=self.workspace.pk, session_id=session, agent_id=self.agent.pk)

        created = self._session_rows("tool_calls", chunk, build)
        # Each call's output beside it, redacted as tool outputs always are (a file may say anything).
        key = pseudonym_key(self.workspace.pk)
        ToolResult.objects.bulk_create([
            ToolResult(
                workspace_id=self.workspace.pk, user_id=row["user_id"], call_id=row["id"],
                data=output_stored(redact_text(record["output"], key=key).text),
            )
            for record, row in created if isinstance(record.get("output"), str)
        ])

    def _load_episodes(self, chunk: list[dict[str, Any]]) -> None:
        table = self.table("episodes")
        written = self._session_rows(
            "episodes", chunk, lambda r, session: table.row(
                r, workspace_id=self.workspace.pk, session_id=session, agent_id=self.agent.pk, memory_id=None,
            ),
            session_required=False, same_as=("user_id", "created_at", "task"),
        )
        for record, row in written:
            self.episodes[record["id"]] = row["id"]
            if record.get("memory"):
                self.episode_memories.append((row["id"], self.memory_id(record["memory"])))

    def _load_memories(self, chunk: list[dict[str, Any]]) -> None:
        table = self.table("memories")
        rows, to_embed = [], []
        for record in chunk:
            if not self._admitted("memories", record):
                continue
            # Held to what every memory is (length, user_id, tags, attached JSON, text), as written.
            try:
                entry_checked(MemoryInput(
                    content=record.get("content"), user_id=record.get("user_id"), scope=record.get("scope") or Scope.AGENT,
                    memory_type=record.get("memory_type") or MemoryType.NOTE, tags=record.get("tags") or [],
                    metadata=record.get("metadata") or {}, data=record.get("data"),
                ))
            except ApplicationError as refused:
                self.tally.refuse("memories", refused.code.lower())
                continue
            content = self.keep_memory(record.get("content") or "")
            data = record.get("data") or {}
            key = record.get("fact_key")
            if record.get("memory_type") == MemoryType.FACTUAL:
                kept = kept_data(MemoryType.FACTUAL, data, self.keep_memory)
                if kept != data and key is not None:
                    key = fact_key(MemoryType.FACTUAL, kept, multi=self.writes.multi())
                data = kept
            vector = record.get("embedding") if content == record.get("content") else None
            created_at = _parse_time(record.get("created_at")) or timezone.now()
            new_id = self.memory_id(record["id"])
            row = table.row(
                {**record, "content": content, "data": data, "embedding": vector, "fact_key": key},
                id=new_id, workspace_id=self.workspace.pk, agent_id=self.agent.pk, store_id=self.store.pk, superseded_by_id=None,
                search_extra=search_extra_text(record.get("tags") or [], created_at), vector_indexed=False,
                source_kind=record.get("source_kind") or SourceKind.IMPORT, source_import_id=self.import_id,
                source_episode_id=self.episodes.get(record.get("source_episode_id")),
            )
            # Held back as an import, or by the source the record itself names (a tool call's).
            if held_back(rules=self.writes, source_kinds=(SourceKind.IMPORT, row["source_kind"])):
                row["review"] = Review.QUARANTINED
            if record.get("superseded_by"):
                self.superseded.append((new_id, self.memory_id(record["superseded_by"])))
            if vector is None:
                to_embed.append(row)
            rows.append(row)
        if to_embed and self.embed:
            provider = get_provider()
            for row, vector in zip(to_embed, provider.embed([row["content"] for row in to_embed]), strict=True):
                row.update(embedding=np.asarray(vector, dtype=np.float32), embedding_model=provider.model_id, embedding_dim=provider.dimensions)
        for row in to_embed if not self.embed else ():
            row.update(embedding_model="", embedding_dim=None)
        self._insert("memories", rows, then=self._memories_written)

    def _memories_written(self, created: set[Any]) -> None:
        self.wrote_memories = self.wrote_memories or bool(created)

    def _load_memory_revisions(self, chunk: list[dict[str, Any]]) -> None:
        table = self.table("memory_revisions")
        rows = [
            table.row({**r, "content": self.keep_memory(r.get("content") or "")}, workspace_id=self.workspace.pk, entry_id=self.memory_id(r["entry"]))
            for r in chunk if self._admitted("memory_revisions", r)
        ]
        table.numbered(rows)
        self._written("memory_revisions", rows, table.insert(rows, exists=(("entry_id", MemoryEntry),)))

    def _load_checkpoints(self, chunk: list[dict[str, Any]]) -> None:
        table = self.table("checkpoints")

        def build(record: dict[str, Any], session: int | None) -> dict[str, Any] | None:
            stored = _stored_state(record.get("state"))
            # Held to the limit a save over the API is (413 there).
            if (stored.get("state_bytes") or 0) > settings.MEMORYHUB_MAX_CHECKPOINT_BYTES:
                self.tally.refuse("checkpoints", "state_too_large")
                return None
            return table.row(record, workspace_id=self.workspace.pk, session_id=session, **stored)

        self._session_rows("checkpoints", chunk, build)

    def _load_approval_rules(self, chunk: list[dict[str, Any]]) -> None:
        table = self.table("approval_rules")
        written = self._session_rows(
            "approval_rules", chunk, lambda r, session: table.row(
                r, workspace_id=self.workspace.pk, session_id=session, agent_id=self.agent.pk if r.get("agent") else None,
            ),
            session_required=False, same_as=("user_id", "created_at", "tool", "args_hash"),
        )
        for record, row in written:
            self.rules[record["id"]] = row["id"]

    def _load_approvals(self, chunk: list[dict[str, Any]]) -> None:
        table = self.table("approvals")
        self._session_rows("approvals", chunk, lambda r, session: table.row(
            r, workspace_id=self.workspace.pk, session_id=session, agent_id=self.agent.pk, rule_id=self.rules.get(r.get("rule")),
        ))

    def _load_timeline(self, chunk: list[dict[str, Any]]) -> None:
        table = self.table("timeline")
        rows = []
        for record in chunk:
            if not self._admitted("timeline", record):
                continue
            if record.get("session_id") and record["session_id"] not in self.sessions:
                self._session_of("timeline", {"session": record["session_id"]})
                continue
            rows.append(table.row(record, workspace_id=self.workspace.pk))
        table.numbered(rows)
        self._written("timeline", rows, table.insert(rows, same_as=("at", "kind", "summary", "user_id", "session_id")))

    # -- after every kind ----------------------------------------------------------------

    def finish(self) -> None:
        """What could only be written once everything was there: links between memories and
        to episodes, sessions' counters."""
        if self.writer is not None:
            self.writer.drain()
        with transaction.atomic(), connection.cursor() as cursor:
            # Links are made between rows of the importing workspace only, whatever ids the archive names.
            for pairs, statement in (
                (self.superseded, f"UPDATE {MemoryEntry._meta.db_table} AS m SET superseded_by_id = v.target FROM unnest(%s::uuid[], %s::uuid[]) AS v(id, target) "
                                  f"WHERE m.id = v.id AND m.workspace_id = %s "
                                  f"AND EXISTS (SELECT 1 FROM {MemoryEntry._meta.db_table} WHERE id = v.target AND workspace_id = %s)"),
                (self.episode_memories, f"UPDATE {Episode._meta.db_table} AS e SET memory_id = v.target FROM unnest(%s::bigint[], %s::uuid[]) AS v(id, target) "
                                        f"WHERE e.id = v.id AND e.workspace_id = %s "
                                        f"AND EXISTS (SELECT 1 FROM {MemoryEntry._meta.db_table} WHERE id = v.target AND workspace_id = %s)"),
            ):
                if pairs:
                    cursor.execute(statement, [[a for a, _ in pairs], [b for _, b in pairs], self.workspace.pk, self.workspace.pk])
            if self.parents:
                cursor.execute(
                    f"UPDATE {Session._meta.db_table} AS c SET parent_id = p.id FROM unnest(%s::bigint[], %s::text[]) AS v(id, parent) "
                    f"JOIN {Session._meta.db_table} AS p ON p.workspace_id = %s AND p.session_id = v.parent WHERE c.id = v.id",
                    [[a for a, _ in self.parents], [b for _, b in self.parents], self.workspace.pk],
                )
            if self.created_sessions:
                # Appends go on after the last imported seq; checkpoints after the last version.
                cursor.execute(
                    f"UPDATE {Session._meta.db_table} AS s SET last_seq = COALESCE((SELECT max(seq) FROM {Message._meta.db_table} WHERE session_id = s.id), 0), "
                    f"checkpoint_version = COALESCE((SELECT max(version) FROM {Checkpoint._meta.db_table} WHERE session_id = s.id), 0) "
                    "WHERE s.id = ANY(%s)",
                    [self.created_sessions],
                )
        if self.wrote_memories and self.index_soon:
            transaction.on_commit(lambda: tasking.enqueue("memoryhub.memory.tasks.index_vectors"))
