"""The Overview's charts and the Usage page's, drawn as SVG on the server. This module
lays out the shapes (in each chart's own viewBox units) and the table of the same
numbers; the partials in console/charts.html only draw them. No JavaScript, and no inline styles (the CSP allows
style sheets from 'self' only): colours and sizes are SVG presentation attributes.

Text that agents chose (event kinds, tool names) goes into the shapes as plain strings,
escaped by the template like any other value."""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from django.template.defaultfilters import filesizeformat
from django.utils import timezone

from memoryhub.insights.selectors import STALE_AGES, Activity, MemoryBreakdown, Overview, PendingAges, Removals, TableUse, ToolStats
from memoryhub.usage.selectors import Line, MonthBudget, UsageBreakdown

WIDE = 960  # viewBox width of a chart across the page
NARROW = 480  # of a chart in half of it

# One colour per event kind, the same on every page load and in every workspace, so an
# operator learns them (Tableau 20, readable on white). Kinds the hub does not record
# itself get one of the extra colours by a stable hash of their name.
KIND_COLORS = {
    "message": "#4e79a7",
    "tool_call": "#f28e2b",
    "memory": "#59a14f",
    "checkpoint": "#76b7b2",
    "approval": "#e15759",
    "run": "#edc948",
    "plan": "#b07aa1",
    "summary": "#ff9da7",
    "episode": "#9c755f",
    "branch": "#a0cbe8",
    "edit": "#8cd17d",
    "resume": "#499894",
    "fork": "#d4a6c8",
    "purge": "#79706e",
    "retention": "#bab0ac",
}
EXTRA_COLORS = ("#ffbe7d", "#86bcb6", "#f1ce63", "#d37295", "#fabfd2", "#b6992d", "#9d7660", "#d7b5a6")
BAR_COLOR = "#4e79a7"
OK_COLOR = "#4e79a7"
ERROR_COLOR = "#e15759"
PURGE_COLOR = "#b07aa1"
RETENTION_COLOR = "#f28e2b"
TOP_TOOLS = 10
LABEL_CHARS = 22  # what fits the label column of a bar chart at its font size


def kind_color(kind: str) -> str:
    return KIND_COLORS.get(kind) or EXTRA_COLORS[zlib.crc32(kind.encode()) % len(EXTRA_COLORS)]


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    width: float
    height: float
    fill: str
    title: str  # shown on hover


@dataclass(frozen=True)
class Text:
    x: float
    y: float
    text: str
    anchor: str = "start"
    css: str = "label"  # label, axis or value (charts.css)


@dataclass(frozen=True)
class Rule:
    x1: float
    y1: float
    x2: float
    y2: float


@dataclass(frozen=True)
class Swatch:
    name: str
    fill: str
    value: str = ""


@dataclass(frozen=True)
class Column:
    label: str
    numeric: bool = True


@dataclass(frozen=True)
class Table:
    """The chart's numbers for reading and for screen readers: the first cell of each row
    is its header."""

    columns: list[Column]
    rows: list[list[object]]

    @property
    def body(self) -> list[list[tuple[object, bool]]]:
        """Each cell with whether it is a number (right-aligned)."""
        return [list(zip(row, (column.numeric for column in self.columns), strict=True)) for row in self.rows]


@dataclass
class Chart:
    slug: str
    title: str
    caption: str
    summary: str  # the SVG's aria-label: what a reader would take from the picture
    width: int
    height: int
    table: Table
    rects: list[Rect] = field(default_factory=list)
    texts: list[Text] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    legend: list[Swatch] = field(default_factory=list)


@dataclass(frozen=True)
class Series:
    name: str
    fill: str
    values: list[float]  # counts, or amounts of money (stacked_columns' `whole=False`)
    fills: list[str] | None = None  # a colour per bar, to set some apart

    def fill_at(self, i: int) -> str:
        return self.fills[i] if self.fills else self.fill


@dataclass(frozen=True)
class Segment:
    value: float
    fill: str
    title: str


@dataclass(frozen=True)
class BarRow:
    label: str
    segments: list[Segment]
    value_text: str


# --- Layouts ---------------------------------------------------------------------------------


def _ticks(peak: float, *, whole: bool = True) -> list[int] | list[float]:
    """0 and a few round steps (1, 2, 2.5 or 5 × 10^k) up to at least `peak`; steps of a
    whole number unless `whole` is false (costs: a month of embeddings can cost cents)."""
    if peak <= 0:
        return [0, 1]
    raw = peak / 5
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    if whole:
        whole_step = max(1, int(step))
        return list(range(0, math.ceil(peak / whole_step) * whole_step + 1, whole_step))
    # Rounded: 3 × 0.01 is 0.030000000000000002 in floats.
    return [round(i * step, 12) for i in range(math.ceil(round(peak / step, 9)) + 1)]


def _compact(n: float) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M".replace(".0M", "M")
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return f"{n:g}"


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def stacked_columns(
    *, slug: str, title: str, caption: str, summary: str, width: int, height: int, categories: list[str], ticks: list[str],
    series: list[Series], unit: str, table: Table, legend: bool = True, whole: bool = True, fmt: Callable[[float], str] | None = None,
    axis_fmt: Callable[[float], str] | None = None,
) -> Chart:
    """Vertical bars, one per category, each a stack of the series (the first at the
    bottom). `ticks` labels the categories under the axis ("" for none). Values are counts,
    or with `whole=False` amounts that `fmt` writes out in the bars' titles and the legend,
    and `axis_fmt` on the axis."""
    left, right, top, bottom = 44, 8, 12, 28
    plot_w, plot_h = width - left - right, height - top - bottom
    totals = [sum(s.values[i] for s in series) for i in range(len(categories))]
    scale = _ticks(max(totals, default=0), whole=whole)
    peak = scale[-1]
    shown: Callable[[float], str] = fmt or str
    chart = Chart(slug=slug, title=title, caption=caption, summary=summary, width=width, height=height, table=table)
    for value in scale:
        y = round(top + plot_h - value / peak * plot_h, 1)
        chart.rules.append(Rule(x1=left, y1=y, x2=width - right, y2=y))
        chart.texts.append(Text(x=left - 6, y=y + 4, text=(axis_fmt or _compact)(value), anchor="end", css="axis"))
    slot = plot_w / max(len(categories), 1)
    bar_w = max(round(slot * 0.74, 1), 1)
    for i, category in enumerate(categories):
        x = round(left + i * slot + (slot - bar_w) / 2, 1)
        y = top + plot_h
        for s in series:
            if not s.values[i]:
                continue
            h = s.values[i] / peak * plot_h
            y -= h
            what = f" {s.name}" if len(series) > 1 else ""
            chart.rects.append(
                Rect(
                    x=x, y=round(y, 1), width=bar_w, height=round(h, 1), fill=s.fill_at(i),
                    title=f"{category}: {shown(s.values[i])}{what} of {shown(totals[i])} {unit}",
                )
            )
        if ticks[i]:
            chart.texts.append(Text(x=round(x + bar_w / 2, 1), y=height - 8, text=ticks[i], anchor="middle", css="axis"))
    if legend:
        chart.legend = [Swatch(name=s.name, fill=s.fill, value=shown(sum(s.values))) for s in series]
    return chart


def horizontal_bars(
    *, slug: str, title: str, caption: str, summary: str, rows: list[BarRow], table: Table, legend: list[Swatch] | None = None,
    width: int = NARROW,
) -> Chart:
    """One bar per row, its label on the left and its value after it; a bar may be split
    into segments (calls that worked and that failed)."""
    label_w, value_w, row_h, bar_h, pad = 150, 120, 26, 16, 4
    area = width - label_w - value_w
    peak = max((sum(seg.value for seg in row.segments) for row in rows), default=0) or 1
    chart = Chart(
        slug=slug, title=title, caption=caption, summary=summary, width=width, height=pad * 2 + row_h * max(len(rows), 1),
        table=table, legend=legend or [],
    )
    for i, row in enumerate(rows):
        y = pad + i * row_h + (row_h - bar_h) / 2
        chart.texts.append(Text(x=label_w - 8, y=round(y + bar_h - 4, 1), text=_short(row.label), anchor="end"))
        x = float(label_w)
        for seg in row.segments:
            if seg.value <= 0:
                continue
            w = max(seg.value / peak * area, 1)
            chart.rects.append(Rect(x=round(x, 1), y=round(y, 1), width=round(w, 1), height=bar_h, fill=seg.fill, title=seg.title))
            x += w
        chart.texts.append(Text(x=round(x + 6, 1), y=round(y + bar_h - 4, 1), text=row.value_text, css="value"))
    return chart


# --- The Overview's charts -------------------------------------------------------------------


def _bucket_name(start: datetime, step: timedelta) -> str:
    local, end = timezone.localtime(start), timezone.localtime(start + step)
    return f"{local:%a} {local.day} {local:%b %H:%M}–{end:%H:%M}"


def _bucket_tick(start: datetime, step: timedelta) -> str:
    local = timezone.localtime(start)
    if local.hour == 0:
        return f"{local:%a} {local.day}"
    if step < timedelta(hours=6) and local.hour % 3 == 0:
        return f"{local:%H:%M}"
    return ""


def activity_chart(activity: Activity) -> Chart:
    window = activity.window
    per = "hour" if window.step == timedelta(hours=1) else f"{int(window.step.total_seconds() // 3600)} hours"
    names = [_bucket_name(start, window.step) for start in window.starts]
    series = [Series(name=kind, fill=kind_color(kind), values=[activity.counts.get((start, kind), 0) for start in window.starts]) for kind in activity.kinds]
    totals = activity.kind_totals()
    per_bucket = [sum(s.values[i] for s in series) for i in range(len(names))]
    busiest = max(range(len(names)), key=lambda i: per_bucket[i])
    kinds = ", ".join(f"{kind} {totals[kind]}" for kind in activity.kinds[:4])
    more = f" and {len(activity.kinds) - 4} more kinds" if len(activity.kinds) > 4 else ""
    table = Table(
        columns=[Column("Period", numeric=False), *(Column(kind) for kind in activity.kinds), Column("All")],
        rows=[[name, *(s.values[i] for s in series), per_bucket[i]] for i, name in enumerate(names)],
    )
    return stacked_columns(
        slug="activity", title=f"Events per {per}, by kind",
        caption=f"{activity.total} events in the {window.label} ({timezone.get_current_timezone_name()}); the newest bar is still filling.",
        summary=f"Stacked bars of events per {per} in the {window.label}: {activity.total} in all; {kinds}{more}. "
        f"Busiest: {names[busiest]} with {per_bucket[busiest]}.",
        width=WIDE, height=240, categories=names, ticks=[_bucket_tick(start, window.step) for start in window.starts],
        series=series, unit="events", table=table,
    )


def memory_charts(memory: MemoryBreakdown, *, window_label: str) -> tuple[Chart, Chart]:
    charts = []
    for slug, title, counts, new in (
        ("memory-type", "Memories by type", memory.by_type, memory.new_by_type),
        ("memory-scope", "Memories by scope", memory.by_scope, memory.new_by_scope),
    ):
        rows = [
            BarRow(label=name, segments=[Segment(value=n, fill=BAR_COLOR, title=f"{name}: {n} memories, {new[name]} new")],
                   value_text=f"{n}" + (f" (+{new[name]})" if new[name] else ""))
            for name, n in counts.items()
        ]
        described = ", ".join(f"{name} {n}" for name, n in counts.items() if n)
        charts.append(horizontal_bars(
            slug=slug, title=title, caption=f"{memory.total} memories readers can find now; (+n): new in the {window_label}.",
            summary=f"Bars of memories by {slug.split('-')[1]}: {described or 'none'}.", rows=rows,
            table=Table(
                columns=[Column(slug.split("-")[1].capitalize(), numeric=False), Column("Memories"), Column(f"New in the {window_label}")],
                rows=[[name, n, new[name]] for name, n in counts.items()],
            ),
        ))
    return charts[0], charts[1]


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f} ms"


def _percent(value: float) -> str:
    return f"{value * 100:.1f} %"


def tools_chart(tools: list[ToolStats], *, window_label: str) -> Chart:
    top = tools[:TOP_TOOLS]
    calls, errors = sum(t.calls for t in tools), sum(t.errors for t in tools)
    rows = [
        BarRow(
            label=t.tool,
            segments=[
                Segment(value=t.calls - t.errors, fill=OK_COLOR, title=f"{t.tool}: {t.calls - t.errors} of {t.calls} calls worked"),
                Segment(value=t.errors, fill=ERROR_COLOR, title=f"{t.tool}: {t.errors} of {t.calls} calls failed ({_percent(t.error_rate)})"),
            ],
            value_text=f"{t.calls}" + (f" · {_percent(t.error_rate)} err" if t.errors else ""),
        )
        for t in top
    ]
    worst = max(top, key=lambda t: (t.error_rate, t.calls), default=None)
    worst_text = f" Highest error rate: {worst.tool}, {_percent(worst.error_rate)}." if worst and worst.errors else ""
    more = f"; the table lists all {len(tools)}" if len(tools) > TOP_TOOLS else ""
    return horizontal_bars(
        slug="tools", title=f"Top tools by calls (of {len(tools)})",
        caption=f"{calls} calls in the {window_label}, {errors} failed ({_percent(errors / calls if calls else 0)}){more}.",
        summary="Bars of calls per tool, failed calls in red: " + ", ".join(f"{t.tool} {t.calls} calls, {t.errors} failed" for t in top[:5])
        + "." + worst_text,
        rows=rows, width=NARROW,
        legend=[Swatch(name="worked", fill=OK_COLOR, value=str(calls - errors)), Swatch(name="failed", fill=ERROR_COLOR, value=str(errors))],
        table=Table(
            columns=[Column("Tool", numeric=False), Column("Calls"), Column("Errors"), Column("Error rate"), Column("p50"), Column("p95"), Column("Cost")],
            rows=[
                [t.tool, t.calls, t.errors, _percent(t.error_rate), _ms(t.p50_ms), _ms(t.p95_ms), "—" if t.cost is None else f"{t.cost:.4f}"]
                for t in tools
            ],
        ),
    )


def waited(since: datetime, now: datetime | None = None) -> str:
    """How long ago, in the two largest units: 45 s, 12 min, 3 h 5 min, 2 d 4 h."""
    seconds = max(int(((now or timezone.now()) - since).total_seconds()), 0)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{minutes} min" if minutes else f"{seconds} s"


def approvals_chart(pending: PendingAges) -> Chart:
    labels = list(pending.buckets)
    values = list(pending.buckets.values())
    fills = [ERROR_COLOR if label in STALE_AGES else BAR_COLOR for label in labels]
    oldest = f"; the oldest has waited {waited(pending.oldest[0]['created_at'])}" if pending.oldest else ""
    described = ", ".join(f"{label}: {n}" for label, n in pending.buckets.items() if n)
    return stacked_columns(
        slug="approvals", title="Waiting for a decision, by age",
        caption=f"{pending.total} request{'s' if pending.total != 1 else ''} wait now{oldest}. Red: 4 hours or more.",
        summary=f"Bars of pending approval requests by how long they have waited: {described or 'none'}.",
        width=NARROW, height=190, categories=labels, ticks=labels,
        series=[Series(name="requests", fill=BAR_COLOR, values=values, fills=fills)],
        unit="requests waiting", legend=False,
        table=Table(columns=[Column("Waiting", numeric=False), Column("Requests")], rows=[[label, n] for label, n in pending.buckets.items()]),
    )


def removals_chart(removals: Removals, *, window_label: str) -> Chart:
    # Bars for the kinds that lost rows only (the table lists every kind): twenty rows,
    # most of them zero, drew the chart so tall that it shrank to unreadable labels.
    rows = [
        BarRow(
            label=name,
            segments=[
                Segment(value=purged, fill=PURGE_COLOR, title=f"{name}: {purged} removed by purges"),
                Segment(value=retained, fill=RETENTION_COLOR, title=f"{name}: {retained} removed by retention"),
            ],
            value_text=f"{purged + retained}",
        )
        for name, (purged, retained) in removals.removed.items()
        if purged + retained
    ]
    return horizontal_bars(
        slug="removals", title="Rows removed, by what",
        caption=f"In the {window_label}: {removals.purged_rows} rows by purges, {removals.retained_rows} by retention.",
        summary="Bars of rows removed per kind, purges and retention: "
        + ", ".join(f"{name} {p} purged, {r} by retention" for name, (p, r) in removals.removed.items()) + ".",
        rows=rows,
        legend=[
            Swatch(name="purges", fill=PURGE_COLOR, value=str(removals.purged_rows)),
            Swatch(name="retention", fill=RETENTION_COLOR, value=str(removals.retained_rows)),
        ],
        table=Table(
            columns=[Column("What", numeric=False), Column("By purges"), Column("By retention"), Column("All")],
            rows=[[name, p, r, p + r] for name, (p, r) in removals.removed.items()],
        ),
    )


def storage_chart(storage: list[TableUse]) -> Chart:
    used = [use for use in storage if use.rows]
    total = sum(use.estimated_bytes for use in storage)
    return horizontal_bars(
        slug="storage", title="Storage, estimated",
        caption=f"About {filesizeformat(total)} on disk for this workspace: its rows times each table's average row size, indexes included.",
        summary="Bars of the estimated disk use per kind of record: "
        + ", ".join(f"{use.name} {filesizeformat(use.estimated_bytes)}" for use in used[:6]) + ".",
        rows=[
            BarRow(label=use.name, segments=[Segment(value=use.estimated_bytes, fill=BAR_COLOR, title=f"{use.name}: {use.rows} rows, about {filesizeformat(use.estimated_bytes)}")],
                   value_text=filesizeformat(use.estimated_bytes))
            for use in used
        ],
        table=Table(
            columns=[Column("What", numeric=False), Column("Table", numeric=False), Column("Rows"), Column("Estimated size")],
            rows=[[use.name, use.table, use.rows, filesizeformat(use.estimated_bytes)] for use in storage],
        ),
    )


def overview_charts(overview: Overview) -> dict[str, Chart]:
    label = overview.window.label
    memory_type, memory_scope = memory_charts(overview.memory, window_label=label)
    return {
        "activity": activity_chart(overview.activity),
        "memory_type": memory_type,
        "memory_scope": memory_scope,
        "tools": tools_chart(overview.tools, window_label=label),
        "approvals": approvals_chart(overview.approvals),
        "removals": removals_chart(overview.removals, window_label=label),
        "storage": storage_chart(overview.storage),
    }


# --- The Usage page's charts -----------------------------------------------------------------

SERIES_COLORS = tuple(KIND_COLORS.values())[:10]  # Tableau 10, in order: a provider or agent a colour
OTHERS_COLOR = "#bab0ac"
WARN_COLOR = "#f28e2b"
TOP_SERIES = 8  # more stacked colours than this are not told apart
NO_AGENT = "no agent"  # calls an operator made (a search in the console), and the hub's own
METER_WIDTH = 1000
METER_MARK = 6


def money(value: Decimal | float | None) -> str:
    """A cost as the console writes it: cents from one unit up, four decimals under it (a
    month of embeddings with a cheap model costs a fraction of a cent). Prices have no
    currency in MEMORYHUB_PRICES; the console writes dollars, as the providers bill."""
    if value is None:
        return "—"
    amount = value if isinstance(value, Decimal) else Decimal(str(value))
    if amount == 0:
        return "$0.00"
    if abs(amount) >= 1:
        return f"${amount:,.2f}"
    if abs(amount) < Decimal("0.0001"):
        return "< $0.0001"
    return f"${amount:.4f}"


def _money_axis(value: float) -> str:
    # The axis' 44 units: "$0.025", "$2.5", "$40", "$1.5k".
    if value == 0:
        return "$0"
    if value >= 10:
        return f"${_compact(value)}"
    return "$" + f"{value:.6f}".rstrip("0").rstrip(".")


def agent_label(key: str) -> str:
    return key or NO_AGENT


def usage_chart(usage: UsageBreakdown, *, by: str, measure: str) -> Chart:
    """Cost (or calls) per day from the first day to the last, stacked by provider or by
    agent: the eight most costly each a colour, the rest as one."""
    lines = usage.by_provider if by == "provider" else usage.by_agent
    per_day = usage.per_day[by]
    days = [usage.start + timedelta(days=i) for i in range((usage.end - usage.start).days + 1)]
    cost = measure == "cost"

    def amount(line: Line | None) -> float:
        if line is None:
            return 0
        return float(line.cost) if cost else line.calls

    shown, rest = (lines, []) if len(lines) <= TOP_SERIES + 1 else (lines[:TOP_SERIES], lines[TOP_SERIES:])
    series = [
        Series(name=agent_label(line.key) if by == "agent" else line.key, fill=SERIES_COLORS[i % len(SERIES_COLORS)],
               values=[amount(per_day.get((day, line.key))) for day in days])
        for i, line in enumerate(shown)
    ]
    if rest:
        series.append(Series(
            name=f"{len(rest)} more {by}s", fill=OTHERS_COLOR, values=[sum(amount(per_day.get((day, line.key))) for line in rest) for day in days],
        ))
    written: Callable[[float], str] = money if cost else _count
    per = [sum(s.values[i] for s in series) for i in range(len(days))]
    names = [f"{day:%a} {day.day} {day:%b} {day.year}" for day in days]
    every = max(1, math.ceil(len(days) / 12))  # a dozen labels fit under the axis
    what = "Cost" if cost else "Calls"
    busiest = max(range(len(days)), key=lambda i: per[i])
    described = ", ".join(f"{s.name} {written(sum(s.values))}" for s in series[:4])
    more = f" and {len(series) - 4} more" if len(series) > 4 else ""
    return stacked_columns(
        slug=f"usage-{by}", title=f"{what} per day, by {by}",
        caption=f"{written(sum(per))} from {usage.start.day} {usage.start:%b %Y} to {usage.end.day} {usage.end:%b %Y} (days in UTC).",
        summary=f"Stacked bars of {what.lower()} per day by {by}: {described or 'none'}{more}. "
        f"Most: {names[busiest]} with {written(per[busiest])}.",
        width=WIDE, height=220, categories=names, ticks=[f"{day.day} {day:%b}" if i % every == 0 else "" for i, day in enumerate(days)],
        series=series, unit="spent" if cost else "calls", whole=not cost, fmt=written, axis_fmt=_money_axis if cost else None,
        table=Table(
            columns=[Column("Day", numeric=False), *(Column(s.name) for s in series), Column("All")],
            rows=[[name, *(written(s.values[i]) for s in series), written(per[i])] for i, name in enumerate(names)],
        ),
    )


def _count(value: float) -> str:
    return str(int(value))


@dataclass(frozen=True)
class BudgetMeter:
    """The month against its limit, drawn as a bar (templates/console/usage.html) in a
    viewBox METER_WIDTH wide that stretches to its card; the text beside it says the same."""

    spent_width: float
    warn_x: float | None
    fill: str
    percent: int
    summary: str
    height: int = 20
    width: int = METER_WIDTH
    mark: int = METER_MARK


def budget_meter(budget: MonthBudget) -> BudgetMeter | None:
    """None without a limit to measure against (none, or 0: every priced call refused)."""
    limit = budget.monthly_limit
    if limit is None or limit <= 0:
        return None
    share = float(budget.spent / limit)
    warn_x = None
    if budget.warn_at is not None:
        warn_x = round(min(max(float(budget.warn_at / limit) * METER_WIDTH - METER_MARK / 2, 0), METER_WIDTH - METER_MARK), 1)
    fill = ERROR_COLOR if budget.limit_spent else WARN_COLOR if budget.warning_reached else BAR_COLOR
    percent = round(share * 100)
    warning = f", the warning at {money(budget.warn_at)}" if budget.warn_at is not None else ""
    return BudgetMeter(
        spent_width=round(min(share, 1) * METER_WIDTH, 1), warn_x=warn_x, fill=fill, percent=percent,
        summary=f"{money(budget.spent)} spent of the {money(limit)} monthly limit ({percent} %){warning}.",
    )
