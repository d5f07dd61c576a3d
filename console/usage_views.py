"""The console's Usage page (docs/usage.md, "In the console"): what model calls cost, per
day by provider and by agent, in tables by provider, operation and agent; the month
against its budget, which admins set here."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from console.access import operator_required
from console.charts import budget_meter, usage_chart
from console.forms import BudgetForm, UsageRangeForm
from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import Role
from memoryhub.usage import metering, selectors, services

TEMPLATE = "console/usage.html"
MEASURES = {"cost": "Cost", "calls": "Calls"}


def _today() -> date:
    # Usage is counted in UTC days, and budgets in UTC months (memoryhub.usage.metering).
    return datetime.now(UTC).date()


def _decimal_text(value: Decimal | None) -> str:
    # 50.000000 as typed (50), not as stored; format(…, "f") keeps 5E+1 from showing.
    return "" if value is None else format(value.normalize(), "f")


def _budget_context(request: HttpRequest, form: BudgetForm | None = None) -> dict[str, Any]:
    """The month against its budget, always this month whatever days the report shows."""
    workspace_id = request.membership.workspace_id
    stored = selectors.budget_of(workspace_id=workspace_id)
    budget = selectors.month_against(workspace_id=workspace_id, budget=stored)
    can_edit = request.membership.allows(Role.ADMIN)
    if form is None and can_edit:
        form = BudgetForm(initial={"monthly_limit": _decimal_text(budget.monthly_limit), "warn_at": _decimal_text(budget.warn_at)})
    return {
        "budget": budget,
        "budget_record": stored,  # who changed it last, and when
        "meter": budget_meter(budget),
        "can_edit_budget": can_edit,
        "budget_form": form,
    }


def _report_context(request: HttpRequest) -> dict[str, Any]:
    today = _today()
    form = UsageRangeForm(request.GET or None, today=today, initial={"from": today.replace(day=1), "to": today})
    start, end, error = today.replace(day=1), today, ""
    if form.is_bound:
        if form.is_valid():
            start, end = form.cleaned_data["from"], form.cleaned_data["to"]
        else:
            error = "Check the days: " + " ".join(" ".join(errors) for errors in form.errors.values()) + " This month is shown."
    metering.flush()  # what this process counted and has not written yet, as GET /usage does
    usage = selectors.usage_breakdown(workspace_id=request.membership.workspace_id, start=start, end=end)
    # Costs when anything cost something; with only free models (the built-in one), calls.
    measure = request.GET.get("measure", "")
    if measure not in MEASURES:
        measure = "cost" if usage.total.cost else "calls"
    days = {"from": start.isoformat(), "to": end.isoformat()}
    first = today.replace(day=1)
    last_month_end = first - timedelta(days=1)
    return {
        "range_form": form,
        "range_error": error,
        "usage": usage,
        "measure": measure,
        "measures": [(key, label, "?" + urlencode({**days, "measure": key})) for key, label in MEASURES.items()],
        "presets": [
            ("This month", "?", start == first and end == today),
            ("Last month", "?" + urlencode({"from": last_month_end.replace(day=1).isoformat(), "to": last_month_end.isoformat()}),
             start == last_month_end.replace(day=1) and end == last_month_end),
        ],
        "without_agent": any(not line.key for line in usage.by_agent),
        "tables": [("By provider", "provider", usage.by_provider), ("By operation", "operation", usage.by_operation), ("By agent", "agent", usage.by_agent)],
        "charts": {by: usage_chart(usage, by=by, measure=measure) for by in ("provider", "agent")} if usage.total.calls else {},
    }


@require_GET
@operator_required()
def usage(request: HttpRequest) -> HttpResponse:
    """Every operator reads it; a change of days or of measure swaps the report alone."""
    if request.htmx:
        return render(request, f"{TEMPLATE}#report", _report_context(request))
    return render(request, TEMPLATE, {**_report_context(request), **_budget_context(request)})


@require_POST
@operator_required(Role.ADMIN)
def budget_update(request: HttpRequest) -> HttpResponse:
    """Sets or lifts the budget (audited as budget_changed); a plain form and a redirect, so
    that the page comes back whole, with the banner the new budget calls for."""
    form = BudgetForm(request.POST)
    if form.is_valid():
        try:
            services.budget_set(
                membership=request.membership, monthly_limit=form.cleaned_data["monthly_limit"], warn_at=form.cleaned_data["warn_at"],
            )
        except ApplicationError as refused:
            form.add_error(None, refused.message)
    if not form.is_valid():
        context = {**_report_context(request), **_budget_context(request, form)}
        return render(request, TEMPLATE, context, status=422)
    messages.success(request, "Budget saved: it applies to the next priced call.")
    return HttpResponseRedirect(reverse("console:usage") + "#budget")
