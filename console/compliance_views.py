"""The console's Compliance page: erase one end user (preview, confirm by typing the
user_id again, progress), receipts, the block list, retention policies, the audit log."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memoryhub.compliance import selectors
from memoryhub.compliance.models import PurgeRequest
from memoryhub.compliance.services import purge_request
from console.access import operator_required
from console.jobs import job_poll, job_progress
from console.portability_views import export_rows
from memoryhub.portability.models import ExportScope
from memoryhub.portability.services import export_request
from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import USER_ID_MAX_LENGTH, Role
from memoryhub.representations.audit import audit_entry_json
from memoryhub.serving.http_errors import error_page
from memoryhub.privacy.models import RETENTION_RULES, RetentionKind
from memoryhub.privacy.selectors import blocked_user_of, blocked_users_of, retention_defaults, retention_policies
from memoryhub.privacy.services import block_lift, retention_policy_set

TEMPLATE = "console/compliance.html"


class UserIdForm(forms.Form):
    user_id = forms.CharField(max_length=USER_ID_MAX_LENGTH, strip=False, label="End user's user_id")

    def clean_user_id(self) -> str:
        value = self.cleaned_data["user_id"]
        if not value.strip():
            raise forms.ValidationError("Enter the user_id exactly as your agents send it.")
        return value


class PurgeConfirmForm(UserIdForm):
    confirm_user_id = forms.CharField(max_length=USER_ID_MAX_LENGTH, strip=False, label="Type the user_id again to confirm")
    block_new_writes = forms.BooleanField(required=False, label="Refuse new records about this user afterwards")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if "user_id" in data and data.get("confirm_user_id") != data["user_id"]:
            self.add_error("confirm_user_id", "This does not match the user_id above: nothing was erased.")
        return data


def _progress_context(purge: PurgeRequest) -> dict[str, Any]:
    names = selectors.kind_names()
    return {
        "purge": purge,
        **job_progress(purge),
        "deleted": [(names.get(label, label), n) for label, n in purge.counts.items() if n],
    }


def _page_context(request: HttpRequest, **extra: Any) -> dict[str, Any]:
    workspace = request.membership.workspace
    policies = retention_policies(workspace_id=workspace.pk)
    defaults = retention_defaults()
    daily = selectors.retention_daily(workspace=workspace)
    peak = max((n for _, n in daily), default=0) or 1
    context = {
        "lookup_form": UserIdForm(),
        "purges": selectors.purges_of(workspace=workspace)[:50],
        "blocked": blocked_users_of(workspace=workspace)[:200],
        "policies": [
            (kind, label, RETENTION_RULES[kind][0], policies[kind], defaults[kind], RETENTION_RULES[kind][2])
            for kind, label in RetentionKind.choices
        ],
        "runs": selectors.retention_runs_of(workspace=workspace)[:20],
        "daily": [(day, n, round(100 * n / peak)) for day, n in daily],
        "audit": selectors.audit_entries_of(workspace=workspace)[:50],
        "can_lift": request.membership.allows(Role.ADMIN),
        **_access_request_context(request),
    }
    return {**context, **extra}


# Its own prefix: the erase form above has a user_id field too, and ids must be unique.
def _user_export_form(data: Any = None) -> UserIdForm:
    return UserIdForm(data, prefix="export")


def _access_request_context(request: HttpRequest, form: UserIdForm | None = None) -> dict[str, Any]:
    return {
        "user_export_form": form or _user_export_form(),
        "user_export_rows": export_rows(request.membership, [ExportScope.USER]),
        "ttl_hours": settings.MEMORYHUB_EXPORT_TTL_HOURS,
    }


@require_GET
@operator_required(Role.COMPLIANCE)
def compliance(request: HttpRequest) -> HttpResponse:
    extra: dict[str, Any] = {}
    if (shown := request.GET.get("purge", "")).isdigit():
        if (purge := selectors.purge_of(workspace=request.membership.workspace, purge_id=int(shown))) is not None:
            extra = _progress_context(purge)
    return render(request, TEMPLATE, _page_context(request, **extra))


def _erase_response(request: HttpRequest, context: dict[str, Any], status: int = 200) -> HttpResponse:
    if request.htmx:
        return render(request, f"{TEMPLATE}#erase", context, status=status)
    return render(request, TEMPLATE, _page_context(request, **context), status=status)


@require_POST
@operator_required(Role.COMPLIANCE)
def purge_preview(request: HttpRequest) -> HttpResponse:
    """Step 1: what a purge would delete (a dry run, kept as such in the audit log)."""
    form = UserIdForm(request.POST)
    if not form.is_valid():
        return _erase_response(request, {"lookup_form": form}, status=422)
    user_id = form.cleaned_data["user_id"]
    dry = purge_request(membership=request.membership, user_id=user_id, dry_run=True)
    names = selectors.kind_names()
    context = {
        "lookup_form": form,
        "preview": [(names.get(label, label), n) for label, n in dry.counts.items()],
        "preview_total": sum(dry.counts.values()),
        "confirm_form": PurgeConfirmForm(initial={"user_id": user_id}),
    }
    return _erase_response(request, context)


@require_POST
@operator_required(Role.COMPLIANCE)
def purge_start(request: HttpRequest) -> HttpResponse:
    """Step 2: the operator typed the user_id again; the purge runs in the background."""
    form = PurgeConfirmForm(request.POST)
    if not form.is_valid():
        context = {"lookup_form": UserIdForm(initial={"user_id": request.POST.get("user_id", "")}), "confirm_form": form}
        return _erase_response(request, context, status=422)
    purge = purge_request(
        membership=request.membership, user_id=form.cleaned_data["user_id"], dry_run=False,
        block_new_writes=form.cleaned_data["block_new_writes"],
    )
    if request.htmx:
        return render(request, f"{TEMPLATE}#erase", {"lookup_form": UserIdForm(), **_progress_context(purge)})
    return _show_progress(purge)


def _progress_page(purge: PurgeRequest) -> str:
    return f"{reverse('console:compliance')}?purge={purge.pk}"


def _show_progress(purge: PurgeRequest) -> HttpResponse:
    return HttpResponseRedirect(_progress_page(purge))


@require_GET
@operator_required(Role.COMPLIANCE)
def purge_progress(request: HttpRequest, purge_id: int) -> HttpResponse:
    purge = selectors.purge_of(workspace=request.membership.workspace, purge_id=purge_id)
    if purge is None:
        return error_page(request, 404, "No such purge in this workspace.")
    return job_poll(request, fragment=f"{TEMPLATE}#purge-progress", context=_progress_context(purge), page=_progress_page(purge))


@require_GET
@operator_required(Role.COMPLIANCE)
def purge_receipt(request: HttpRequest, purge_id: int) -> HttpResponse:
    purge = selectors.purge_of(workspace=request.membership.workspace, purge_id=purge_id)
    if purge is None or not purge.receipt:
        return error_page(request, 404, "No receipt: no such purge in this workspace, or it has not finished.")
    response = HttpResponse(json.dumps(purge.receipt, indent=2), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="purge-{purge.pk}-receipt.json"'
    return response


@require_POST
@operator_required(Role.COMPLIANCE)
def user_export_start(request: HttpRequest) -> HttpResponse:
    """An access request: everything the hub holds about one end user, as an archive to
    download (docs/portability.md); the row polls its progress."""
    form = _user_export_form(request.POST)
    if not form.is_valid():
        return _access_request_response(request, _access_request_context(request, form), status=422)
    export_request(membership=request.membership, scope=ExportScope.USER, user_id=form.cleaned_data["user_id"])
    if request.htmx:
        return _access_request_response(request, _access_request_context(request))
    messages.success(request, "Export started: it is listed under “Export an end user's data” with its progress, then its download.")
    return HttpResponseRedirect(reverse("console:compliance") + "#access-request")


def _access_request_response(request: HttpRequest, context: dict[str, Any], status: int = 200) -> HttpResponse:
    if request.htmx:
        return render(request, f"{TEMPLATE}#access-request", context, status=status)
    return render(request, TEMPLATE, _page_context(request, **context), status=status)


@require_POST
@operator_required(Role.ADMIN)
def block_remove(request: HttpRequest, block_id: int) -> HttpResponse:
    block = blocked_user_of(workspace=request.membership.workspace, block_id=block_id)
    if block is None:
        return error_page(request, 404, "No such block in this workspace.")
    block_lift(membership=request.membership, user_hash_value=block.user_hash)
    if request.htmx:
        return HttpResponse("")  # the row disappears
    messages.success(request, "Block lifted: the hub accepts records about this user again.")
    return HttpResponseRedirect(reverse("console:compliance") + "#blocked")


@require_POST
@operator_required(Role.COMPLIANCE)
def retention_update(request: HttpRequest) -> HttpResponse:
    problems = []
    for kind, label in RetentionKind.choices:
        raw = request.POST.get(kind, "").strip()
        try:
            value = int(raw) if raw else None
        except ValueError:
            problems.append(f"{label}: “{raw[:20]}” is not a whole number.")
            continue
        try:
            retention_policy_set(membership=request.membership, kind=kind, value=value)
        except ApplicationError as refused:
            problems.append(f"{label}: {refused.message}")
    for problem in problems:
        messages.error(request, problem)
    if not problems:
        messages.success(request, "Retention policies saved; the retention job applies them on its next run.")
    return HttpResponseRedirect(reverse("console:compliance") + "#retention")


@require_GET
@operator_required(Role.COMPLIANCE)
def audit_export(request: HttpRequest) -> HttpResponse:
    """The whole audit log of the workspace as JSON Lines, oldest first, for auditors."""
    entries = selectors.audit_entries_of(workspace=request.membership.workspace, oldest_first=True)

    lines = (json.dumps(audit_entry_json(entry)) + "\n" for entry in entries.iterator(chunk_size=1000))
    response = HttpResponse("".join(lines), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="audit-{request.membership.workspace.slug}.jsonl"'
    return response
