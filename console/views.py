from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from console.access import SESSION_WORKSPACE_KEY, operator_required
from console.charts import overview_charts
from console.demo import demo_login
from console.forms import AgentKeyForm, OperatorKeyForm, WorkspaceSwitchForm
from memoryhub.core import services
from memoryhub.core.health import run_checks
from memoryhub.core.models import Role
from memoryhub.core.selectors import (
    agent_key_of,
    agents_with_keys,
    memberships_for_user,
    operator_actor,
    operator_key_of,
    operator_keys,
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


def _keys_context(request: HttpRequest, **extra: object) -> dict[str, object]:
    membership = request.membership
    return {
        "agents": agents_with_keys(workspace=membership.workspace),
        "operator_keys": operator_keys(membership=membership),
        "agent_form": extra.pop("agent_form", None) or AgentKeyForm(),
        "operator_form": extra.pop("operator_form", None) or OperatorKeyForm(),
        "can_manage_agents": membership.allows(Role.ADMIN),
        **extra,
    }


def _expiry(days: int | None) -> timezone.datetime | None:
    return timezone.now() + timedelta(days=days) if days else None


@never_cache  # a new key is shown once: no cache, proxy or back button keeps it
@require_GET
@operator_required()
def keys(request: HttpRequest) -> HttpResponse:
    return render(request, "console/keys.html", _keys_context(request))


@never_cache  # a new key is shown once: no cache, proxy or back button keeps it
@require_POST
@operator_required(Role.ADMIN)
def agent_key_create(request: HttpRequest) -> HttpResponse:
    form = AgentKeyForm(request.POST)
    if not form.is_valid():
        return render(request, "console/keys.html#agent-keys", _keys_context(request, agent_form=form), status=422 if request.htmx else 200)
    key, plaintext = services.agent_key_provision(
        workspace=request.membership.workspace, store=form.cleaned_data["store"], agent=form.cleaned_data["agent"],
        label=form.cleaned_data["label"], expires_at=_expiry(form.cleaned_data["expires_in_days"]), actor=operator_actor(request.user),
    )
    context = _keys_context(request, new_key=plaintext, new_key_owner=f"agent {key.agent.name}")
    template = "console/keys.html#agent-keys" if request.htmx else "console/keys.html"
    return render(request, template, context)


@require_POST
@operator_required(Role.ADMIN)
def agent_key_revoke(request: HttpRequest, key_id: int) -> HttpResponse:
    key = agent_key_of(workspace=request.membership.workspace, key_id=key_id)
    if key is None:
        raise Http404("No AgentKey matches the given query.")
    services.api_key_revoke(key=key, actor=operator_actor(request.user))
    if request.htmx:
        return render(request, "console/keys.html#agent-key-row", {"key": key, "can_manage_agents": True})
    messages.success(request, f"Key mha_{key.prefix}… revoked.")
    return HttpResponseRedirect(reverse("console:keys"))


@never_cache  # a new key is shown once: no cache, proxy or back button keeps it
@require_POST
@operator_required(Role.ADMIN)  # an operator key carries its owner's role: admins mint them
def operator_key_create(request: HttpRequest) -> HttpResponse:
    form = OperatorKeyForm(request.POST)
    if not form.is_valid():
        return render(request, "console/keys.html#operator-keys", _keys_context(request, operator_form=form), status=422 if request.htmx else 200)
    _, plaintext = services.operator_key_issue(
        membership=request.membership, label=form.cleaned_data["label"], expires_at=_expiry(form.cleaned_data["expires_in_days"]),
        actor=operator_actor(request.user),
    )
    context = _keys_context(request, new_operator_key=plaintext)
    template = "console/keys.html#operator-keys" if request.htmx else "console/keys.html"
    return render(request, template, context)


@require_POST
@operator_required()
def operator_key_revoke(request: HttpRequest, key_id: int) -> HttpResponse:
    # Operators revoke their own keys only; another operator's key answers 404.
    key = operator_key_of(membership=request.membership, key_id=key_id)
    if key is None:
        raise Http404("No OperatorKey matches the given query.")
    services.api_key_revoke(key=key, actor=operator_actor(request.user))
    if request.htmx:
        return render(request, "console/keys.html#operator-key-row", {"key": key})
    messages.success(request, f"Key mho_{key.prefix}… revoked.")
    return HttpResponseRedirect(reverse("console:keys"))


@require_POST
@operator_required(Role.ADMIN)
def redaction_settings(request: HttpRequest) -> HttpResponse:
    services.workspace_redaction_set(
        membership=request.membership, redact_messages=request.POST.get("redact_messages") == "on",
        redact_memories=request.POST.get("redact_memories") == "on",
    )
    messages.success(request, "Redaction settings saved: they apply to what is written from now on.")
    return HttpResponseRedirect(reverse("console:keys"))
