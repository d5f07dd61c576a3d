"""API keys (agents' and operators' own) and the workspace's redaction settings, shown on the same page."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from console.access import operator_required
from console.forms import AgentKeyForm, OperatorKeyForm
from memoryhub.core import services
from memoryhub.core.models import Role
from memoryhub.core.selectors import (
    agent_key_of,
    agents_with_keys,
    operator_actor,
    operator_key_of,
    operator_keys,
)


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
