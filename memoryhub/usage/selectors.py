"""Reads of usage: reports grouped one way, a month's spending."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db.models import Sum
from django.db.models.functions import Coalesce

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
