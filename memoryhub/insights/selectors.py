"""What the Overview page shows of one workspace. Each read aggregates in SQL (GROUP BY,
FILTER, date_bin) and brings back a row per bucket, kind or tool, never per record: the
page costs the same number of queries with ten events as with ten million. (Their time
still grows with the rows in the window: the timeline has no index on (workspace, at).)"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

from django.db import connection
from django.db.models import Aggregate, Count, DateTimeField, F, FloatField, Func, IntegerField, Q, Sum, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from memoryhub.approvals.models import Approval, ApprovalStatus, unexpired
from memoryhub.core.jobs import JobStatus
from memoryhub.compliance.models import PurgeRequest, RetentionRun
from memoryhub.compliance.selectors import kind_names
from memoryhub.core.models import Workspace
from memoryhub.core.registry import user_models
from memoryhub.memory.models import MemoryEntry, MemoryType, Scope
from memoryhub.privacy.models import RetentionKind
from memoryhub.timeline.models import Event
from memoryhub.tools.models import ToolCall, ToolCallStatus

# --- Time windows ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Range:
    label: str
    step: timedelta
    buckets: int


# Seven days of hours would be 168 bars: too thin to read or to hover, so the week is
# shown in quarters of a day.
RANGES: dict[str, Range] = {
    "24h": Range(label="last 24 hours", step=timedelta(hours=1), buckets=24),
    "7d": Range(label="last 7 days", step=timedelta(hours=6), buckets=28),
}
DEFAULT_RANGE = "24h"


@dataclass(frozen=True)
class Window:
    """The buckets of a range, the newest one holding now (still filling)."""

    key: str
    label: str
    step: timedelta
    starts: tuple[datetime, ...]

    @property
    def start(self) -> datetime:
        return self.starts[0]

    @property
    def end(self) -> datetime:
        return self.starts[-1] + self.step


def window_of(*, key: str | None, now: datetime | None = None) -> Window:
    """The window of a range key; an unknown key gets the default rather than an error,
    since it comes from a link someone may have edited."""
    key = key if key in RANGES else DEFAULT_RANGE
    spec = RANGES[key]
    local = timezone.localtime(now or timezone.now()).replace(minute=0, second=0, microsecond=0)
    step_hours = int(spec.step.total_seconds() // 3600)
    # Buckets begin at a whole hour (and a quarter of the local day for 6 h), so that the
    # labels read 00:00, 06:00…; the arithmetic is done in UTC, so that a DST change does
    # not make a bucket 5 or 7 hours long.
    newest = (local - timedelta(hours=local.hour % step_hours)).astimezone(dt_timezone.utc)
    starts = tuple(newest - spec.step * i for i in range(spec.buckets - 1, -1, -1))
    return Window(key=key, label=spec.label, step=spec.step, starts=starts)


class DateBin(Func):
    """PostgreSQL's date_bin: the start of the `step`-long bucket (counted from `origin`)
    that holds the timestamp."""

    function = "date_bin"
    output_field = DateTimeField()

    def __init__(self, expression: F, *, step: timedelta, origin: datetime) -> None:
        super().__init__(Value(step), expression, Value(origin))


class Percentile(Aggregate):
    function = "percentile_cont"
    template = "%(function)s(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()

    def __init__(self, expression: str, *, fraction: float, **extra: object) -> None:
        super().__init__(expression, fraction=float(fraction), **extra)


# --- Activity --------------------------------------------------------------------------------


@dataclass
class Activity:
    window: Window
    kinds: list[str]  # most frequent first
    counts: dict[tuple[datetime, str], int]  # (bucket start, kind) → events; absent: none

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def kind_totals(self) -> dict[str, int]:
        totals = dict.fromkeys(self.kinds, 0)
        for (_, kind), n in self.counts.items():
            totals[kind] += n
        return totals


def workspace_activity(*, workspace: Workspace, window: Window) -> Activity:
    """Events per bucket and kind. Empty buckets are not rows: the window's own list of
    bucket starts is the grid they are read against."""
    rows = (
        Event.objects.filter(workspace=workspace, at__gte=window.start, at__lt=window.end)
        .annotate(bucket=DateBin(F("at"), step=window.step, origin=window.start))
        .values_list("bucket", "kind")
        .annotate(n=Count("id"))
        .order_by()
    )
    counts = {(bucket, kind): n for bucket, kind, n in rows}
    totals: dict[str, int] = {}
    for (_, kind), n in counts.items():
        totals[kind] = totals.get(kind, 0) + n
    kinds = sorted(totals, key=lambda kind: (-totals[kind], kind))
    return Activity(window=window, kinds=kinds, counts=counts)


# --- Memory ----------------------------------------------------------------------------------


@dataclass
class MemoryBreakdown:
    by_type: dict[str, int]  # every type, in the model's order
    by_scope: dict[str, int]
    new_by_type: dict[str, int]  # created in the window
    new_by_scope: dict[str, int]
    content_bytes: int  # content and embedding as stored (compressed, TOASTed)

    @property
    def total(self) -> int:
        return sum(self.by_type.values())


def memory_breakdown(*, workspace: Workspace, since: datetime) -> MemoryBreakdown:
    """The memories readers can find (not expired, not superseded) by type and scope."""
    column_size = Func(F("content"), function="pg_column_size", output_field=IntegerField()) + Coalesce(
        Func(F("embedding"), function="pg_column_size", output_field=IntegerField()), 0
    )
    rows = (
        MemoryEntry.objects.live().current().filter(workspace=workspace)
        .values_list("memory_type", "scope")
        .annotate(n=Count("id"), new=Count("id", filter=Q(created_at__gte=since)), size=Sum(column_size))
        .order_by()
    )
    breakdown = MemoryBreakdown(
        by_type=dict.fromkeys(MemoryType.values, 0), by_scope=dict.fromkeys(Scope.values, 0),
        new_by_type=dict.fromkeys(MemoryType.values, 0), new_by_scope=dict.fromkeys(Scope.values, 0), content_bytes=0,
    )
    for memory_type, scope, n, new, size in rows:
        breakdown.by_type[memory_type] = breakdown.by_type.get(memory_type, 0) + n
        breakdown.by_scope[scope] = breakdown.by_scope.get(scope, 0) + n
        breakdown.new_by_type[memory_type] = breakdown.new_by_type.get(memory_type, 0) + new
        breakdown.new_by_scope[scope] = breakdown.new_by_scope.get(scope, 0) + new
        breakdown.content_bytes += size or 0
    return breakdown


# --- Tools -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolStats:
    tool: str
    calls: int
    errors: int
    p50_ms: float | None
    p95_ms: float | None
    cost: float | None

    @property
    def error_rate(self) -> float:
        return self.errors / self.calls if self.calls else 0.0


def tool_usage(*, workspace: Workspace, window: Window) -> list[ToolStats]:
    """Every tool called in the window, most called first. One row per tool name, so
    the rows grow with the tools an agent uses, never with its calls."""
    rows = (
        ToolCall.objects.filter(workspace=workspace, created_at__gte=window.start, created_at__lt=window.end)
        .values_list("tool")
        .annotate(
            calls=Count("id"), errors=Count("id", filter=Q(status=ToolCallStatus.ERROR)),
            p50=Percentile("duration_ms", fraction=0.5), p95=Percentile("duration_ms", fraction=0.95), cost=Sum("cost"),
        )
        .order_by("-calls", "tool")
    )
    return [ToolStats(tool=tool, calls=calls, errors=errors, p50_ms=p50, p95_ms=p95, cost=cost) for tool, calls, errors, p50, p95, cost in rows]


# --- Approvals -------------------------------------------------------------------------------

# Upper edges of the age buckets of waiting requests; the last bucket is open-ended.
AGE_EDGES: tuple[tuple[str, timedelta], ...] = (
    ("< 1 min", timedelta(minutes=1)),
    ("1–5 min", timedelta(minutes=5)),
    ("5–15 min", timedelta(minutes=15)),
    ("15–60 min", timedelta(hours=1)),
    ("1–4 h", timedelta(hours=4)),
    ("4–24 h", timedelta(days=1)),
)
OPEN_AGE = "≥ 1 day"
# Requests waiting longer than a shift are likely forgotten: the page sets them apart.
STALE_AGES = ("4–24 h", OPEN_AGE)
OLDEST_SHOWN = 5


@dataclass
class PendingAges:
    buckets: dict[str, int]  # age bucket label → requests, youngest first
    oldest: list[dict[str, object]] = field(default_factory=list)  # id, tool, created_at, session_name

    @property
    def total(self) -> int:
        return sum(self.buckets.values())


def pending_approval_ages(*, workspace: Workspace, now: datetime | None = None) -> PendingAges:
    """Requests waiting for a human now (not the window's: a request waits until it is
    decided), counted by age, and the oldest few."""
    now = now or timezone.now()
    pending = Approval.objects.filter(unexpired(), workspace=workspace, status=ApprovalStatus.PENDING)
    filters, lower = {}, None
    for label, edge in AGE_EDGES:
        younger = Q(created_at__gt=now - edge)
        filters[label] = younger if lower is None else younger & Q(created_at__lte=now - lower)
        lower = edge
    filters[OPEN_AGE] = Q(created_at__lte=now - lower)
    buckets = pending.aggregate(**{f"b{i}": Count("id", filter=q) for i, q in enumerate(filters.values())})
    oldest = list(pending.order_by("created_at", "id").values("id", "tool", "created_at", session_name=F("session__session_id"))[:OLDEST_SHOWN])
    return PendingAges(buckets={label: buckets[f"b{i}"] for i, label in enumerate(filters)}, oldest=oldest)


# --- Removals --------------------------------------------------------------------------------


@dataclass
class Removals:
    purges: dict[str, int]  # status → purges requested in the window
    retention_runs: int
    # What → (rows removed by purges, by retention), in the window.
    removed: dict[str, tuple[int, int]]

    @property
    def purged_rows(self) -> int:
        return sum(p for p, _ in self.removed.values())

    @property
    def retained_rows(self) -> int:
        return sum(r for _, r in self.removed.values())


def removals(*, workspace: Workspace, window: Window) -> Removals:
    """Purges (dry runs aside) and retention passes of the window, and the rows they
    removed per kind. Their counts are JSON objects ({kind: rows}), summed in SQL."""
    status = PurgeRequest.objects.filter(workspace=workspace, dry_run=False, created_at__gte=window.start).aggregate(
        **{s: Count("id", filter=Q(status=s)) for s in JobStatus.values}
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT 'purge', c.key, sum(c.value::numeric)::bigint
              FROM {PurgeRequest._meta.db_table} p, jsonb_each(p.counts) c
             WHERE p.workspace_id = %(ws)s AND NOT p.dry_run AND p.status = %(done)s AND p.finished_at >= %(start)s
               AND jsonb_typeof(c.value) = 'number'
             GROUP BY c.key
            UNION ALL
            SELECT 'retention', c.key, sum(c.value::numeric)::bigint
              FROM {RetentionRun._meta.db_table} r, jsonb_each(r.counts) c
             WHERE r.workspace_id = %(ws)s AND r.started_at >= %(start)s AND jsonb_typeof(c.value) = 'number'
             GROUP BY c.key
            UNION ALL
            SELECT 'runs', '', count(*) FROM {RetentionRun._meta.db_table} r
             WHERE r.workspace_id = %(ws)s AND r.started_at >= %(start)s
            """,
            {"ws": workspace.pk, "done": JobStatus.DONE, "start": window.start},
        )
        rows = cursor.fetchall()
    # Purges count rows per model ("memory.MemoryEntry"), retention per policy kind.
    names = kind_names() | {kind.value: kind.label for kind in RetentionKind} | {"memories_expired": "Expired memories"}
    removed: dict[str, tuple[int, int]] = {}
    runs = 0
    for source, key, n in rows:
        if source == "runs":
            runs = n
            continue
        name = names.get(key, key.replace("_", " ").capitalize())
        purged, retained = removed.get(name, (0, 0))
        removed[name] = (purged + n, retained) if source == "purge" else (purged, retained + n)
    ordered = dict(sorted(removed.items(), key=lambda item: (-sum(item[1]), item[0])))
    return Removals(purges=status, retention_runs=runs, removed=ordered)


# --- Storage ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableUse:
    name: str  # what an operator calls the rows
    table: str
    rows: int  # this workspace's
    estimated_bytes: int  # this workspace's share of the table and its indexes


def storage_use(*, workspace: Workspace) -> list[TableUse]:
    """What this workspace takes of each table holding agent memory, estimated as its
    rows times the table's average row size on disk, indexes and TOAST included. A
    table's whole size would tell a workspace how much the others store.

    The planner's row estimate (pg_class.reltuples) stands for the table's total; a
    table never analysed has none (-1), and only then are its rows counted."""
    models = [m for m in user_models() if any(f.name == "workspace" for f in m._meta.concrete_fields)]
    if not models:
        return []
    quote = connection.ops.quote_name
    parts = []
    params: list[object] = []
    for model in models:
        table = quote(model._meta.db_table)
        parts.append(
            f"""SELECT %s, pg_total_relation_size('{table}'::regclass),
                       (SELECT count(*) FROM {table} WHERE workspace_id = %s),
                       (SELECT CASE WHEN reltuples < 0 THEN (SELECT count(*) FROM {table}) ELSE reltuples::bigint END
                          FROM pg_class WHERE oid = '{table}'::regclass)"""
        )
        params += [model._meta.label, workspace.pk]
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        rows = cursor.fetchall()
    names = kind_names()
    by_label = {m._meta.label: m for m in models}
    uses = [
        TableUse(
            name=names.get(label, label), table=by_label[label]._meta.db_table, rows=mine,
            # Right after a bulk load the estimate can lag behind: never fewer rows than ours.
            estimated_bytes=int(size * mine / max(total, mine)) if mine else 0,
        )
        for label, size, mine, total in rows
    ]
    return sorted(uses, key=lambda use: (-use.estimated_bytes, -use.rows, use.name))


# --- All of it -------------------------------------------------------------------------------


@dataclass
class Overview:
    window: Window
    activity: Activity
    memory: MemoryBreakdown
    tools: list[ToolStats]
    approvals: PendingAges
    removals: Removals
    storage: list[TableUse]

    @property
    def tool_calls(self) -> int:
        return sum(t.calls for t in self.tools)

    @property
    def tool_errors(self) -> int:
        return sum(t.errors for t in self.tools)

    @property
    def stored_rows(self) -> int:
        return sum(use.rows for use in self.storage)


def workspace_overview(*, workspace: Workspace, window: Window) -> Overview:
    """Everything the Overview page shows: nine queries, whatever the data."""
    return Overview(
        window=window,
        activity=workspace_activity(workspace=workspace, window=window),
        memory=memory_breakdown(workspace=workspace, since=window.start),
        tools=tool_usage(workspace=workspace, window=window),
        approvals=pending_approval_ages(workspace=workspace),
        removals=removals(workspace=workspace, window=window),
        storage=storage_use(workspace=workspace),
    )
