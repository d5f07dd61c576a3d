"""Usage and cost: what model calls cost, grouped one way; the workspace's monthly budget."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from memoryhub.core.errors import ApplicationError
from memoryhub.core.selectors import Principal
from memoryhub.usage import metering, selectors, services


def _sums(line: selectors.Line) -> dict[str, Any]:
    return {"calls": line.calls, "items": line.items, "input_tokens": line.input_tokens, "output_tokens": line.output_tokens,
            "cost": float(line.cost)}


def usage_answer(*, principal: Principal, start: date | None, end: date | None, group_by: str) -> dict[str, Any]:
    """From `start` (the 1st of this month) to `end` (today), UTC days, grouped by `group_by`:
    an agent's own calls, or the workspace's for operators."""
    today = datetime.now(UTC).date()
    start, end = start or today.replace(day=1), end or today
    if start > end:
        raise ApplicationError("`from` is after `to`.", code="VALIDATION_ERROR")
    metering.flush()  # what this process counted and has not written yet
    lines, total = selectors.usage_report(
        workspace_id=principal.workspace.pk, start=start, end=end, group_by=group_by,
        agent_id=principal.agent.pk if principal.is_agent else None,
    )
    return {
        "results": [{"key": line.key, **_sums(line)} for line in lines], "totals": _sums(total),
        "from": start.isoformat(), "to": end.isoformat(), "group_by": group_by,
    }


def budget_answer(*, principal: Principal) -> dict[str, Any]:
    """The workspace's monthly budget beside this month's spending."""
    workspace_id = principal.workspace.pk
    month = selectors.month_against(workspace_id=workspace_id, budget=selectors.budget_of(workspace_id=workspace_id))
    return {
        "monthly_limit": None if month.monthly_limit is None else float(month.monthly_limit),
        "warn_at": None if month.warn_at is None else float(month.warn_at), "month": month.month, "spent": float(month.spent),
    }


def budget_set_answer(*, principal: Principal, monthly_limit: Decimal | None, warn_at: Decimal | None) -> dict[str, Any]:
    services.budget_set(membership=principal.membership, monthly_limit=monthly_limit, warn_at=warn_at)
    return budget_answer(principal=principal)
