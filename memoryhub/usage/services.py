"""Writes of usage: the sums a process counted, and budgets."""

from __future__ import annotations

from decimal import Decimal

from django.db import connection, transaction
from django.utils import timezone

from memoryhub.core.audit import audit_record
from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import Membership
from memoryhub.core.selectors import operator_actor
from memoryhub.usage.ledger import Key, Sums, forget_budget
from memoryhub.usage.models import Budget
from memoryhub.usage.selectors import month_spent

SUMS = ("calls", "items", "input_tokens", "output_tokens", "duration_ms", "cost")
ADDED = ", ".join(f"{name} = t.{name} + EXCLUDED.{name}" for name in SUMS)


def usage_write(sums: dict[Key, Sums]) -> None:
    """Adds the sums to their minutes and their days, in one transaction. Keys of a
    workspace or agent deleted since are dropped (or lose their agent)."""
    keys = list(sums)
    columns = [
        [k.workspace_id for k in keys], [k.agent_id for k in keys], [k.user_id for k in keys], [k.provider for k in keys],
        [k.operation for k in keys], [k.minute for k in keys],
        *[[getattr(sums[k], name) for k in keys] for name in SUMS],
    ]
    values = """
        SELECT v.workspace_id, a.id AS agent_id, v.user_id, v.provider, v.operation, v.minute, v.calls, v.items, v.input_tokens,
               v.output_tokens, v.duration_ms, v.cost
        FROM unnest(%s::bigint[], %s::bigint[], %s::text[], %s::text[], %s::text[], %s::timestamptz[], %s::bigint[], %s::bigint[],
                    %s::bigint[], %s::bigint[], %s::bigint[], %s::numeric[])
             AS v(workspace_id, agent_id, user_id, provider, operation, minute, calls, items, input_tokens, output_tokens, duration_ms, cost)
        JOIN core_workspace AS w ON w.id = v.workspace_id
        LEFT JOIN core_agent AS a ON a.id = v.agent_id
    """
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"""INSERT INTO usage_usagerecord AS t (workspace_id, agent_id, user_id, provider, operation, minute, {", ".join(SUMS)})
                {values}
                ON CONFLICT (workspace_id, agent_id, user_id, provider, operation, minute) DO UPDATE SET {ADDED}""",
            columns,
        )
        cursor.execute(
            f"""INSERT INTO usage_usagedaily AS t (workspace_id, day, agent_id, provider, operation, {", ".join(SUMS)})
                SELECT workspace_id, (minute AT TIME ZONE 'UTC')::date, agent_id, provider, operation,
                       sum(calls), sum(items), sum(input_tokens), sum(output_tokens), sum(duration_ms), sum(cost)
                FROM ({values}) AS m
                GROUP BY 1, 2, 3, 4, 5
                ON CONFLICT (workspace_id, day, agent_id, provider, operation) DO UPDATE SET {ADDED}""",
            columns,
        )


def budget_set(*, membership: Membership, monthly_limit: Decimal | None, warn_at: Decimal | None) -> Budget:
    """The workspace's monthly limit (None lifts it) and the cost at which the month's
    warning is given; audited. A warning already given this month is given again if the
    new threshold is above what is spent."""
    if monthly_limit is not None and monthly_limit < 0 or warn_at is not None and warn_at < 0:
        raise ApplicationError("A budget is not negative.", code="VALIDATION_ERROR")
    workspace = membership.workspace
    with transaction.atomic():
        budget, _ = Budget.objects.select_for_update().get_or_create(workspace=workspace)
        before = {"monthly_limit": _number(budget.monthly_limit), "warn_at": _number(budget.warn_at)}
        spent = month_spent(workspace.pk)
        budget.monthly_limit, budget.warn_at = monthly_limit, warn_at
        if warn_at is None or warn_at > spent:
            budget.warned_month = ""
        budget.updated_at, budget.updated_by = timezone.now(), membership.user
        budget.save()
        audit_record(
            actor=operator_actor(membership.user), action="budget_changed", workspace=workspace, target=str(workspace.pk),
            details={"before": before, "after": {"monthly_limit": _number(monthly_limit), "warn_at": _number(warn_at)}},
        )
    forget_budget(workspace.pk)
    return budget


def _number(value: Decimal | None) -> float | None:
    return None if value is None else float(value)
