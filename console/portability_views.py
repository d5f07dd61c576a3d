"""The console's Export & import page (docs/portability.md, "In the console"): the
workspace's exports with their progress and downloads, and imports, each a dry run
first, then the real one."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from console.access import operator_required
from console.jobs import job_poll, job_progress
from console.forms import IMPORT_FORMAT_NAMES, ExportForm, ImportForm
from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import Membership, Role
from memoryhub.core.selectors import agent_names, store_names
from memoryhub.portability import imports, selectors, services
from memoryhub.core.jobs import JobStatus
from memoryhub.portability.models import Export, ExportScope, Import, ImportFormat
from memoryhub.serving.http_errors import error_page

TEMPLATE = "console/portability.html"
EXPORTS_SHOWN = 50
IMPORTS_SHOWN = 20


def readable_scopes(membership: Membership) -> list[str]:
    """The export scopes this operator may read: admins all, compliance operators users'."""
    return [scope for scope in ExportScope.values if membership.allows(selectors.export_scope_role(scope))]


def export_row(export: Export) -> dict[str, Any]:
    """What a row of the exports table shows (the list's, and its poll's)."""
    kinds = [(kind.replace("_", " "), n) for kind, n in export.counts.items() if n]
    return {
        "export": export, **job_progress(export),
        "records": sum(n for _, n in kinds), "kinds": kinds,
    }


def export_rows(membership: Membership, scopes: list[str] | None = None) -> list[dict[str, Any]]:
    scopes = readable_scopes(membership) if scopes is None else scopes
    return [export_row(export) for export in selectors.exports_of(workspace=membership.workspace, scopes=scopes)[:EXPORTS_SHOWN]]


def _job_context(job: Import) -> dict[str, Any]:
    """An import (or its dry run) as the page shows it: progress, then what it did per kind."""
    counts = job.counts or {}
    outcome = ("created", "skipped", "refused")
    return {
        "job": job, "job_format": IMPORT_FORMAT_NAMES.get(job.format, job.format), **job_progress(job), "done": job.status == JobStatus.DONE,
        "job_kinds": [(kind.replace("_", " "), *(n.get(key, 0) for key in outcome)) for kind, n in counts.get("kinds", {}).items()],
        "job_totals": tuple(counts.get(key, 0) for key in outcome),
        "applied": selectors.import_applied_from(trial=job) if job.dry_run else None,
    }


def _import_form(membership: Membership, data: Any = None, files: Any = None) -> ImportForm:
    workspace = membership.workspace
    return ImportForm(
        data, files, formats=ImportFormat.values, stores=store_names(workspace=workspace), agents=agent_names(workspace=workspace),
        initial={"store": "default"},
    )


def _page_context(request: HttpRequest, **extra: Any) -> dict[str, Any]:
    membership = request.membership
    scopes = readable_scopes(membership)
    # Imports write into the workspace: admins' work, and so is reading what they did.
    can_import = membership.allows(Role.ADMIN)
    context = {
        "export_rows": export_rows(membership, scopes),
        "reads_exports": bool(scopes),
        "can_export": membership.allows(selectors.export_scope_role(ExportScope.WORKSPACE)),
        "can_export_users": membership.allows(selectors.export_scope_role(ExportScope.USER)),
        "export_form": ExportForm(initial={"scope": ExportScope.WORKSPACE}),
        "ttl_hours": settings.MEMORYHUB_EXPORT_TTL_HOURS,
        "can_import": can_import,
        "import_form": _import_form(membership) if can_import else None,
        "import_rows": [
            (job, IMPORT_FORMAT_NAMES.get(job.format, job.format)) for job in selectors.imports_of(workspace=membership.workspace)[:IMPORTS_SHOWN]
        ] if can_import else [],
        "max_upload": settings.MEMORYHUB_MAX_BODY_BYTES,
    }
    return {**context, **extra}


@require_GET
@operator_required()
def portability(request: HttpRequest) -> HttpResponse:
    """The page; `?import=<id>` shows that import (a dry run's result, with its Import button)."""
    extra: dict[str, Any] = {}
    shown = request.GET.get("import", "")
    # Digits of a bigint only: anything else shows no import rather than an error.
    if request.membership.allows(Role.ADMIN) and shown.isascii() and shown.isdigit() and len(shown) <= 18:
        if (job := selectors.import_of(workspace=request.membership.workspace, import_id=int(shown))) is not None:
            extra = _job_context(job)
    return render(request, TEMPLATE, _page_context(request, **extra))


def _readable_export(request: HttpRequest, export_id: str) -> Export | HttpResponse:
    """The export, or the page that says why not: 404 outside the workspace (or expired),
    403 for a scope the operator's role may not read."""
    export = selectors.export_of(workspace=request.membership.workspace, export_id=export_id)
    if export is None:
        return error_page(request, 404, "No such export in this workspace: it may have expired.")
    if not request.membership.allows(selectors.export_scope_role(export.scope)):
        raise PermissionDenied(f"A {export.scope} export needs the {selectors.export_scope_role(export.scope)} role.")
    return export


def _export_page(export: Export) -> str:
    return f"{reverse('console:portability')}#export-{export.pk}"


def _page_with_export(export: Export) -> HttpResponse:
    return HttpResponseRedirect(_export_page(export))


@require_POST
@operator_required(Role.ADMIN)  # both scopes of this form are the admins' (selectors.export_scope_role)
def export_start(request: HttpRequest) -> HttpResponse:
    """A workspace's export (this page) or a session's (its page's button); the job runs in
    the background and its row polls its progress."""
    form = ExportForm(request.POST)
    if not form.is_valid():
        problem = " ".join(" ".join(errors) for errors in form.errors.values())
        return _exports_response(request, {"export_error": problem}, status=422)
    try:
        export = services.export_request(
            membership=request.membership, scope=form.cleaned_data["scope"], session_id=form.cleaned_data["session_id"],
            with_vectors=form.cleaned_data["with_vectors"],
        )
    except ApplicationError as refused:
        return _exports_response(request, {"export_error": refused.message}, status=422)
    if request.htmx:
        return _exports_response(request, {})
    return _page_with_export(export)


def _exports_response(request: HttpRequest, extra: dict[str, Any], status: int = 200) -> HttpResponse:
    if request.htmx:
        return render(request, f"{TEMPLATE}#exports", _page_context(request, **extra), status=status)
    return render(request, TEMPLATE, _page_context(request, **extra), status=status)


@require_GET
@operator_required()
def export_progress(request: HttpRequest, export_id: str) -> HttpResponse:
    export = _readable_export(request, export_id)
    if isinstance(export, HttpResponse):
        return export
    return job_poll(request, fragment=f"{TEMPLATE}#export-row", context={"row": export_row(export)}, page=_export_page(export))


@require_GET
@operator_required()
def export_download(request: HttpRequest, export_id: str) -> HttpResponse:
    """The archive, streamed part by part from the database (one part in memory at a time)."""
    export = _readable_export(request, export_id)
    if isinstance(export, HttpResponse):
        return export
    if export.status != JobStatus.DONE:
        return error_page(request, 409, "This export is not finished yet: its row on the Export & import page shows its progress.")
    response = StreamingHttpResponse(services.export_download(export=export), content_type="application/zip")
    response["Content-Length"] = str(export.bytes)
    response["Content-Disposition"] = f'attachment; filename="memoryhub-{export.scope}-{export.pk}.zip"'
    return response


def _import_response(request: HttpRequest, context: dict[str, Any], status: int = 200) -> HttpResponse:
    if request.htmx:
        return render(request, f"{TEMPLATE}#import", _page_context(request, **context), status=status)
    return render(request, TEMPLATE, _page_context(request, **context), status=status)


def _import_page(job: Import) -> str:
    return f"{reverse('console:portability')}?import={job.pk}#import"


def _page_with_import(job: Import) -> HttpResponse:
    return HttpResponseRedirect(_import_page(job))


@require_POST
@operator_required(Role.ADMIN)
def import_start(request: HttpRequest) -> HttpResponse:
    """Always a dry run first: the operator sees what the file would create, skip and
    refuse before anything is written, then imports it for real."""
    form = _import_form(request.membership, request.POST, request.FILES)
    if not form.is_valid():
        return _import_response(request, {"import_form": form}, status=422)
    data, upload = form.cleaned_data, form.cleaned_data["file"]
    try:
        trial = imports.import_request(
            membership=request.membership, upload=upload, filename=upload.name, format=data["format"], store=data["store"],
            agent=data["agent"], user_id=data["user_id"], dry_run=True,
        )
    except ApplicationError as refused:
        form.add_error(None, refused.message)
        return _import_response(request, {"import_form": form}, status=422)
    if request.htmx:
        return _import_response(request, _job_context(trial))
    return _page_with_import(trial)


@require_GET
@operator_required(Role.ADMIN)
def import_progress(request: HttpRequest, import_id: int) -> HttpResponse:
    job = selectors.import_of(workspace=request.membership.workspace, import_id=import_id)
    if job is None:
        return error_page(request, 404, "No such import in this workspace.")
    return job_poll(request, fragment=f"{TEMPLATE}#import-job", context=_job_context(job), page=_import_page(job))


@require_POST
@operator_required(Role.ADMIN)
def import_apply(request: HttpRequest, import_id: int) -> HttpResponse:
    """The real import of a finished dry run's upload: a new import, with its own progress."""
    trial = selectors.import_of(workspace=request.membership.workspace, import_id=import_id)
    if trial is None:
        return error_page(request, 404, "No such import in this workspace.")
    try:
        job = imports.import_apply(membership=request.membership, trial=trial)
    except ApplicationError as refused:
        if request.htmx:
            return render(request, f"{TEMPLATE}#import-job", {**_job_context(trial), "apply_error": refused.message}, status=422)
        messages.error(request, refused.message)
        return _page_with_import(trial)
    if request.htmx:
        return render(request, f"{TEMPLATE}#import-job", _job_context(job))
    return _page_with_import(job)
