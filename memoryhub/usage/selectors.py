"""Reads of usage: reports grouped one way, a month's spending."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models import Sum
from django.db.models.functions import Coalesce

from memoryhub.usage.ledger import pending_cost, this_month
from memoryhub.usage.models import Budget, UsageDaily

GROUPS = ("provider", "operation", "agent", "day")
SUMS = ("calls", "items", "input_tokens", "output_tokens", "cost")


@dataclass(frozen=True)
class Line:
    key: str
    calls: int
    items: int
    input_tokens: int
    output_tokens: int
    cost: Decimal


def usage_report(*, workspace_id: int, start: date, end: date, group_by: str, agent_id: int | None = None) -> tuple[list[Line], Line]:
    """The days from `start` to `end` (inclusive, UTC) grouped by `group_by`, and their
    totals; only `agent_id`'s calls when given. Read from the daily totals: a month of
    any number of calls is a few hundred rows."""
    rows = UsageDaily.objects.filter(workspace_id=workspace_id, day__gte=start, day__lte=end)
    if agent_id is not None:
        rows = rows.filter(agent_id=agent_id)
    field = {"agent": "agent__name", "day": "day"}.get(group_by, group_by)
    sums = {name: Coalesce(Sum(name), 0) if name != "cost" else Coalesce(Sum(name), Decimal(0)) for name in SUMS}
    lines = [
        Line(key=_key(group_by, row[field]), **{name: row[name] for name in SUMS})
        for row in rows.values(field).annotate(**sums).order_by(field)
    ]
    total = rows.aggregate(**sums)
    return lines, Line(key="", **total)


def _key(group_by: str, value: object) -> str:
    if group_by == "day":
        return value.isoformat()  # type: ignore[attr-defined]
    if group_by == "agent":
        return value or ""  # operators' and the hub's own calls have no agent
    return str(value)


def month_spent_stored(*, workspace_id: int, month: str) -> Decimal:
    """The cost of the month ("2026-12") written so far."""
    year, number = map(int, month.split("-"))
    first = date(year, number, 1)
    following = date(year + number // 12, number % 12 + 1, 1)
    total = UsageDaily.objects.filter(workspace_id=workspace_id, day__gte=first, day__lt=following).aggregate(cost=Sum("cost"))["cost"]
    return total or Decimal(0)


def budget_of(*, workspace_id: int) -> Budget | None:
    return Budget.objects.filter(workspace_id=workspace_id).first()


# -- the console's Usage page and its banner (docs/console.md, "Usage") --------------------


@dataclass(frozen=True)
class UsageBreakdown:
    """Usage of days from `start` to `end` every way the console's Usage page shows it: the
    totals, a line per provider, operation and agent (most costly first, then most calls),
    and each day's line per provider and per agent."""

    start: date
    end: date
    total: Line
    by_provider: list[Line]
    by_operation: list[Line]
    by_agent: list[Line]
    per_day: dict[str, dict[tuple[date, str], Line]]  # "provider" or "agent" → (day, key) → line


def _plus(line: Line | None, key: str, row: dict[str, object]) -> Line:
    values = {name: row[name] for name in SUMS}
    if line is None:
        return Line(key=key, **values)  # type: ignore[arg-type]
    return Line(key=key, **{name: getattr(line, name) + values[name] for name in SUMS})  # type: ignore[operator]


def usage_breakdown(*, workspace_id: int, start: date, end: date) -> UsageBreakdown:
    """One query for the whole page: the days' rows grouped by day, provider, operation and
    agent (a month is a few hundred of them whatever the number of calls), summed here every
    way the page needs rather than asked again per table and per chart."""
    rows = (
        UsageDaily.objects.filter(workspace_id=workspace_id, day__gte=start, day__lte=end)
        .values("day", "provider", "operation", "agent__name")
        .annotate(**{name: Sum(name) for name in SUMS})
        .order_by()
    )
    total: Line | None = None
    groups: dict[str, dict[str, Line]] = {"provider": {}, "operation": {}, "agent": {}}
    per_day: dict[str, dict[tuple[date, str], Line]] = {"provider": {}, "agent": {}}
    for row in rows:
        keys = {"provider": row["provider"], "operation": row["operation"], "agent": _key("agent", row["agent__name"])}
        total = _plus(total, "", row)
        for group, key in keys.items():
            groups[group][key] = _plus(groups[group].get(key), key, row)
        for group, days in per_day.items():
            days[(row["day"], keys[group])] = _plus(days.get((row["day"], keys[group])), keys[group], row)

    def ranked(lines: dict[str, Line]) -> list[Line]:
        return sorted(lines.values(), key=lambda line: (-line.cost, -line.calls, line.key))

    return UsageBreakdown(
        start=start, end=end, total=total or Line(key="", calls=0, items=0, input_tokens=0, output_tokens=0, cost=Decimal(0)),
        by_provider=ranked(groups["provider"]), by_operation=ranked(groups["operation"]), by_agent=ranked(groups["agent"]),
        per_day=per_day,
    )


def usage_totals(*, workspace_id: int, start: date, end: date) -> Line:
    """The days' totals alone (the console's overview line): one aggregate."""
    sums = {name: Coalesce(Sum(name), 0) if name != "cost" else Coalesce(Sum(name), Decimal(0)) for name in SUMS}
    return Line(key="", **UsageDaily.objects.filter(workspace_id=workspace_id, day__gte=start, day__lte=end).aggregate(**sums))


@dataclass(frozen=True)
class MonthBudget:
    """This month's spending against the workspace's budget."""

    month: str
    spent: Decimal
    monthly_limit: Decimal | None
    warn_at: Decimal | None

    @property
    def limit_spent(self) -> bool:
        return self.monthly_limit is not None and self.spent >= self.monthly_limit

    @property
    def warning_reached(self) -> bool:
        return self.warn_at is not None and self.spent >= self.warn_at


def month_budget(*, workspace_id: int) -> MonthBudget | None:
    """The month against the budget, or None when the workspace has no limit and no warning.
    Read on every console page (its banner): one query where there is no budget, and the
    month's spending (written, and what this process has not written yet) only where there is."""
    budget = budget_of(workspace_id=workspace_id)
    if budget is None or budget.monthly_limit is None and budget.warn_at is None:
        return None
    return month_against(workspace_id=workspace_id, budget=budget)


def month_spent(workspace_id: int) -> Decimal:
    """This calendar month's cost (UTC): what is written, and what this process has not yet."""
    return month_spent_stored(workspace_id=workspace_id, month=this_month()) + pending_cost(workspace_id)


def month_against(*, workspace_id: int, budget: Budget | None) -> MonthBudget:
    """This month's spending beside the workspace's budget record (None: no limit, no warning)."""
    return MonthBudget(
        month=this_month(), spent=month_spent(workspace_id),
        monthly_limit=budget.monthly_limit if budget else None, warn_at=budget.warn_at if budget else None,
    )
