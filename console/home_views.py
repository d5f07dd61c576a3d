"""The console's front door: logging in, the Overview, switching workspace."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.contrib.auth import views as auth_views
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from console.access import SESSION_WORKSPACE_KEY, operator_required
from console.charts import overview_charts
from console.demo import demo_login
from console.forms import WorkspaceSwitchForm
from memoryhub.core.health import run_checks
from memoryhub.core.models import Role
from memoryhub.core.selectors import (
    agents_with_keys,
    memberships_for_user,
    workspace_counts,
)
from memoryhub.insights.selectors import RANGES, window_of, workspace_overview
from memoryhub.usage.selectors import usage_totals


class LoginView(auth_views.LoginView):
    """Django's login page, which names the demo account while it has its documented password."""

    redirect_authenticated_user = True

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs), "demo_login": demo_login()}


@require_GET
@operator_required()
def home(request: HttpRequest) -> HttpResponse:
    workspace = request.membership.workspace
    healthy, checks = run_checks()
    agents = agents_with_keys(workspace=workspace)
    counts = workspace_counts(workspace=workspace)
    window = window_of(key=request.GET.get("range"))
    overview = workspace_overview(workspace=workspace, window=window)
    context = {
        "healthy": healthy,
        "checks": checks,
        "agent_count": len(agents),
        "store_count": counts["stores"],
        "active_key_count": counts["active_agent_keys"],
        "window": window,
        "ranges": RANGES,
        "overview": overview,
        "charts": overview_charts(overview),
        "can_purge": request.membership.allows(Role.COMPLIANCE),
        **_month_usage(workspace.pk),
    }
    return render(request, "console/home.html", context)


def _month_usage(workspace_id: int) -> dict[str, Any]:
    """The overview's line for the month's model usage (the Usage page has the rest; the
    budget is the context processor's `month_budget`, which the banner reads too). What is
    written, at most MEMORYHUB_USAGE_FLUSH_SECONDS old: not flushed here, so that the overview
    runs the same queries whatever was counted (the Usage page flushes first)."""
    today = datetime.now(UTC).date()  # months of usage are UTC months
    return {"month_usage": usage_totals(workspace_id=workspace_id, start=today.replace(day=1), end=today)}


@require_POST
@operator_required()
def switch_workspace(request: HttpRequest) -> HttpResponse:
    form = WorkspaceSwitchForm(request.POST)
    if form.is_valid():
        allowed = {m.workspace_id for m in memberships_for_user(request.user)}
        if form.cleaned_data["workspace"] not in allowed:
            raise PermissionDenied("You are not a member of that workspace.")
        request.session[SESSION_WORKSPACE_KEY] = form.cleaned_data["workspace"]
    return redirect("console:home")
