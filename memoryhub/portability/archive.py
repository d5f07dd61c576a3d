"""The archive: a zip of `manifest.json` and one `<kind>.jsonl` per kind (docs/portability.md).

Each line is one record, with the fields its kind declares below (`Kind.fields`): the
archive's format, version VERSION of the manifest, declared once here and nowhere else,
so that a column added to or renamed in a model changes no file an archive holds
(tests/test_archive_format.py holds the declarations against the models and a golden
archive). References to another record by what names it for a client (an agent or store
by name, a session by its `session_id`, another record by its id), times in ISO 8601,
outputs and states as the JSON they are, vectors only when asked for. Streamed: rows are read in chunks and the zip is written out in parts of
PART_BYTES as it grows, so a workspace of any size is exported in bounded memory.
"""

from __future__ import annotations

import base64
import decimal
import hashlib
import io
import json
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
import psycopg
from django.db import models
from django.utils.crypto import constant_time_compare, salted_hmac

from memoryhub.approvals.models import Approval, ApprovalRule
from memoryhub.checkpoints.models import Checkpoint, state_read
from memoryhub.conversations.models import Message, Session
from memoryhub.core.models import Agent, Store, Workspace
from memoryhub.episodes.models import Episode
from memoryhub.memory.models import MemoryEntry, MemoryRevision, PredicateRule
from memoryhub.memory.vector_index import vector_connection
from memoryhub.plans.models import Plan, PlanStep
from memoryhub.timeline.models import Event
from memoryhub.tools.models import ToolCall, output_read

FORMAT = "memoryhub-archive"
VERSION = 1
# What the manifest's seal is made with, beside the hub's SECRET_KEY.
SEAL_SALT = "memoryhub.portability.archive-seal"
PART_BYTES = 1 << 20
CHUNK_ROWS = 2000
# Deflate's fastest level: vectors hardly compress, and level 6 spent 6× the time of 1 on
# them (most of an export's) for an archive 10% smaller.
COMPRESS_LEVEL = 1
OPTIONS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_SERIALIZE_NUMPY
# Columns that are the hub's own bookkeeping, rebuilt from the rest on import: in no archive.
INTERNAL = {"search_vector", "search_extra", "content_fingerprint", "vector_indexed", "workspace", "last_seq",
            "checkpoint_version", "last_summary_index"}
# Fields every record of a user's data starts with.
OWNED = ("id", "user_id", "created_at", "updated_at")


@dataclass(frozen=True)
class Kind:
    """One file of the archive: which rows, for a scope."""

    name: str
    model: type[models.Model]
    # The rows in scope: (queryset of the workspace, the export's scope, user_id, session) -> rows.
    scoped: Callable[[models.QuerySet, str, str, Session | None], models.QuerySet]
    # The record's fields, in order: each the model's field of that name (a reference to an
    # agent or store by its name, to a session by its session_id), or one of `extra`.
    fields: tuple[str, ...]
    # Fields read from elsewhere than the model's own column: (name in the archive, lookup).
    extra: tuple[tuple[str, str], ...] = ()
    # Fields an importer needs in every record (what names it, what it belongs to).
    required: tuple[str, ...] = ()
    # Stored forms made readable (a person, another program): name in the archive -> how.
    readable: tuple[tuple[str, Callable[[Any], Any]], ...] = ()




def _by_user_or_session(session_field: str | None) -> Callable[[models.QuerySet, str, str, Session | None], models.QuerySet]:
    def scoped(rows: models.QuerySet, scope: str, user_id: str, session: Session | None) -> models.QuerySet:
        if scope == "user":
            return rows.filter(user_id=user_id)
        if scope == "session":
            return rows.filter(**{session_field: session}) if session_field else rows.none()
        return rows
    return scoped


def _memories(rows: models.QuerySet, scope: str, user_id: str, session: Session | None) -> models.QuerySet:
    if scope == "session":  # what the session taught: the memories it is the source of
        return rows.filter(user_id=session.user_id, source_session_id=session.session_id)
    return _by_user_or_session(None)(rows, scope, user_id, session)


def _revisions(rows: models.QuerySet, scope: str, user_id: str, session: Session | None) -> models.QuerySet:
    if scope == "session":
        return rows.filter(entry__user_id=session.user_id, entry__source_session_id=session.session_id)
    return _by_user_or_session(None)(rows, scope, user_id, session)


def _sessions(rows: models.QuerySet, scope: str, user_id: str, session: Session | None) -> models.QuerySet:
    if scope == "session":
        return rows.filter(pk=session.pk)
    return _by_user_or_session(None)(rows, scope, user_id, session)


def _workspace_only(rows: models.QuerySet, scope: str, user_id: str, session: Session | None) -> models.QuerySet:
    # The workspace's rules are configuration, about no end user: in a workspace's archive only.
    return rows if scope == "workspace" else rows.none()


def _timeline(rows: models.QuerySet, scope: str, user_id: str, session: Session | None) -> models.QuerySet:
    if scope == "user":
        return rows.filter(user_id=user_id)
    if scope == "session":
        return rows.filter(user_id=session.user_id, session_id=session.session_id)
    return rows


KINDS: tuple[Kind, ...] = (
    Kind("memories", MemoryEntry, _memories, fields=(
        "user_id", "created_at", "updated_at", "id", "store", "agent", "key", "namespace", "ttl_seconds", "scope", "memory_type",
        "content", "tags", "metadata", "data", "version", "expires_at", "source_kind", "source_session_id", "source_seq",
        "source_call_id", "source_episode_id", "source_import_id", "change", "changed_by", "change_reason", "review", "fact_key",
        "invalidated_at", "superseded_by", "embedding", "embedding_model", "embedding_dim",
    ), required=("id",)),
    Kind("memory_revisions", MemoryRevision, _revisions, fields=(
        *OWNED, "entry", "revision", "content", "tags", "metadata", "data", "change", "changed_by", "changed_at", "reason",
    ), required=("entry",)),
    Kind("sessions", Session, _sessions, fields=(
        *OWNED, "session_id", "agent", "metadata", "state", "parent", "parent_seq", "label", "summary_policy", "meta_compaction_threshold",
        "suspended_at", "suspended_by",
    ), required=("session_id",)),
    Kind("messages", Message, _by_user_or_session("session"), fields=(
        *OWNED, "session", "seq", "role", "content", "tool_calls", "tool_call_id", "pinned", "revision", "item",
    )),
    Kind("plans", Plan, _by_user_or_session("session"), fields=(*OWNED, "session", "version", "goal", "is_current"), required=("id",)),
    Kind("plan_steps", PlanStep, _by_user_or_session("plan__session"), fields=(
        *OWNED, "plan", "step_id", "position", "description", "status", "depends_on", "parent", "summary",
    ), required=("plan",)),
    # A tool call with its (redacted) output, as stored; a checkpoint's state as the JSON it is.
    Kind("tool_calls", ToolCall, _by_user_or_session("session"), fields=(
        *OWNED, "session", "agent", "call_id", "tool", "args", "result_summary", "status", "step_id", "duration_ms", "cost",
        "result_bytes", "redactions", "output",
    ), extra=(("output", "result__data"),), readable=(("output", output_read),)),
    Kind("episodes", Episode, _by_user_or_session("session"), fields=(
        *OWNED, "agent", "session", "task", "outcome", "narrative", "tools_used", "elapsed_ms", "cost", "metadata", "memory",
    ), required=("id",)),
    Kind("checkpoints", Checkpoint, _by_user_or_session("session"), fields=(
        *OWNED, "session", "version", "label", "current_step", "state", "state_bytes", "stored_bytes", "message_seq", "summary",
        "plan", "last_call_id", "tool_calls", "bundle",
    ), readable=(("state", state_read),)),
    Kind("approvals", Approval, _by_user_or_session("session"), fields=(
        *OWNED, "session", "agent", "tool", "args", "allowed_decisions", "context", "response_schema", "status", "expires_at",
        "decision", "decided_args", "reason", "decided_by", "decided_at", "decided_from", "rule", "required_approvals", "escalate_at",
        "escalated_at",
    )),
    Kind("approval_rules", ApprovalRule, _by_user_or_session("session"), fields=(
        *OWNED, "scope", "agent", "session", "tool", "args_hash", "args", "decision", "reason", "created_by",
    ), required=("id",)),
    Kind("graph_rules", PredicateRule, _workspace_only, fields=("id", "predicate", "kind", "inverse", "created_at")),
    Kind("timeline", Event, _timeline, fields=("id", "user_id", "session_id", "kind", "at", "actor", "summary", "ref")),
)


def kind_rows(kind: Kind, *, workspace: Workspace, scope: str, user_id: str, session: Session | None) -> models.QuerySet:
    rows = kind.model._default_manager.filter(workspace=workspace)
    return kind.scoped(rows, scope, user_id, session).order_by("pk")


def _columns(kind: Kind, *, with_vectors: bool) -> list[tuple[str, str]]:
    """(name in the archive, lookup) of each field a kind's record declares: a reference by
    what names it for a client (agents and stores by name, sessions by their session_id,
    anything else by its id)."""
    columns = []
    extra = dict(kind.extra)
    for name in kind.fields:
        if name == "embedding" and not with_vectors:
            continue
        if name in extra:
            columns.append((name, extra[name]))
            continue
        field = kind.model._meta.get_field(name)
        if field.is_relation and field.related_model in (Agent, Store):
            columns.append((field.name, f"{field.name}__name"))
        elif field.is_relation and field.related_model is Session:
            columns.append((field.name, f"{field.name}__session_id"))
        else:
            columns.append((field.name, field.attname))
    return columns


def _default(value: Any) -> Any:
    """What orjson does not write by itself: binary state, decimals, vectors."""
    if isinstance(value, bytes | memoryview):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if hasattr(value, "tolist"):  # a pgvector value
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} into an archive")


class _Parts(io.RawIOBase):
    """A write-only stream that hands its bytes on in parts of PART_BYTES, hashing them."""

    def __init__(self, save: Callable[[int, bytes], None]) -> None:
        super().__init__()
        self._save, self._buffer, self._seq = save, bytearray(), 0
        self.size = 0
        self.digest = hashlib.sha256()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self._buffer += chunk
        self.size += len(chunk)
        self.digest.update(chunk)
        while len(self._buffer) >= PART_BYTES:
            self._emit(bytes(self._buffer[:PART_BYTES]))
            del self._buffer[:PART_BYTES]
        return len(chunk)

    def tell(self) -> int:
        return self.size

    def _emit(self, data: bytes) -> None:
        self._save(self._seq, data)
        self._seq += 1

    def finish(self) -> None:
        if self._buffer:
            self._emit(bytes(self._buffer))
            self._buffer.clear()


@dataclass
class Written:
    counts: dict[str, int]
    files: dict[str, str]
    user_ids: set[str]
    bytes: int
    sha256: str


def manifest_seal(manifest: dict[str, Any], *, workspace_id: int) -> str:
    """What this hub signs a manifest with for the workspace it exported (every file's
    checksum is in the manifest, so the seal covers the records too): an archive that
    carries it for the importing workspace is that workspace's own, to restore; one an
    admin wrote or changed by hand can say what it likes, it cannot say this."""
    body = json.dumps({k: v for k, v in manifest.items() if k != "seal"}, sort_keys=True, ensure_ascii=False)
    return salted_hmac(SEAL_SALT, f"{workspace_id}:{body}", algorithm="sha256").hexdigest()


def manifest_sealed_for(manifest: dict[str, Any], *, workspace_id: int) -> bool:
    seal = manifest.get("seal")
    return isinstance(seal, str) and constant_time_compare(seal, manifest_seal(manifest, workspace_id=workspace_id))


def archive_write(
    *, save_part: Callable[[int, bytes], None], manifest: dict[str, Any], kinds: Iterable[tuple[Kind, models.QuerySet]],
    with_vectors: bool, on_rows: Callable[[int], None], sealed_for: int,
) -> Written:
    """Writes the zip through `save_part`: each kind's rows as JSON lines, then the
    manifest with the counts, each file's sha256 and the seal of the workspace `sealed_for`
    (`manifest_seal`). `on_rows` hears of each chunk written."""
    parts = _Parts(save_part)
    counts: dict[str, int] = {}
    files: dict[str, str] = {}
    users: set[str] = set()
    with zipfile.ZipFile(parts, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL) as archive:
        for kind, rows in kinds:
            name = f"{kind.name}.jsonl"
            digest, count = hashlib.sha256(), 0
            columns = _columns(kind, with_vectors=with_vectors)
            names = [column for column, _ in columns]
            user = names.index("user_id") if "user_id" in names else None
            with archive.open(name, "w", force_zip64=True) as out:
                for chunk in _chunks(rows, [lookup for _, lookup in columns], vectors=names.index("embedding") if "embedding" in names else None):
                    lines = []
                    for values in chunk:
                        if user is not None and values[user]:
                            users.add(values[user])
                        record = dict(zip(names, values, strict=True))
                        for column, readable in kind.readable:
                            record[column] = readable(record[column])
                        lines.append(orjson.dumps(record, default=_default, option=OPTIONS))
                    data = b"".join(lines)
                    digest.update(data)
                    out.write(data)
                    count += len(chunk)
                    on_rows(len(chunk))
            counts[kind.name], files[name] = count, digest.hexdigest()
        body = {**manifest, "format": FORMAT, "version": VERSION, "counts": counts, "files": files}
        body["seal"] = manifest_seal(body, workspace_id=sealed_for)
        archive.writestr("manifest.json", json.dumps(body, indent=2, ensure_ascii=False))
    parts.finish()
    return Written(counts=counts, files=files, user_ids=users, bytes=parts.size, sha256=parts.digest.hexdigest())


def _chunks(rows: models.QuerySet, lookups: list[str], *, vectors: int | None = None) -> Iterator[list[tuple[Any, ...]]]:
    """The rows' values in chunks of CHUNK_ROWS by primary key (keyset), each a short
    query: a server-side cursor would hold a transaction open for the whole export. As
    tuples, not model instances: building those was most of an export's time. The
    column at `vectors` (the embedding) is read apart, in binary (`_vectors_of`)."""
    after = None
    read = [lookup for index, lookup in enumerate(lookups) if index != vectors]
    while True:
        page = rows.filter(pk__gt=after) if after is not None else rows
        chunk = list(page.values_list("pk", *read)[:CHUNK_ROWS])
        if not chunk:
            return
        if vectors is None:
            yield [values[1:] for values in chunk]
        else:
            by_pk = _vectors_of(rows.model, [values[0] for values in chunk])
            yield [(*values[1:vectors + 1], by_pk.get(values[0]), *values[vectors + 1:]) for values in chunk]
        after = chunk[-1][0]


def _vectors_of(model: type[models.Model], pks: list[Any]) -> dict[Any, str | None]:
    """Embeddings as the archive writes them (`vector_text`), sent by PostgreSQL in binary:
    read as text, parsing them took twice as long as everything else of a row."""
    # A cursor binding on the server (Django's binds on the client, which cannot ask for binary).
    with psycopg.Cursor(vector_connection()) as cursor:
        cursor.execute(f"SELECT id, embedding FROM {model._meta.db_table} WHERE id = ANY(%s)", [pks], binary=True)
        return {pk: None if vector is None else vector_text(vector.to_numpy()) for pk, vector in cursor.fetchall()}


def vector_text(vector: np.ndarray) -> str:
    """A vector in the archive: base64 of its little-endian float32 values. As a JSON array
    of numbers (which imports read too) it was twice the bytes, and parsing its 384
    numbers was most of an import's reading."""
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def vector_of(value: str | list[float]) -> np.ndarray:
    """An archive's vector, in either form, as float32."""
    if isinstance(value, str):
        return np.frombuffer(base64.b64decode(value, validate=True), dtype="<f4").astype(np.float32, copy=False)
    return np.asarray(value, dtype=np.float32)
