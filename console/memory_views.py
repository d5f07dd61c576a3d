"""The console's Memory pages: search, entry detail with its source, revisions and fact
history, delete; the review queue and review actions."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from console.access import operator_required
from console.diffs import word_diff
from memoryhub.core.errors import ApplicationError, NotFound
from memoryhub.core.models import Role, Workspace
from memoryhub.core.selectors import agent_names, principal_for_membership, store_names
from memoryhub.memory import duplicates, search, selectors, services
from memoryhub.memory.embeddings import EmbeddingError
from memoryhub.usage.metering import BudgetExceeded
from memoryhub.memory.models import MemoryType, Scope
from memoryhub.serving.http_errors import error_page


class MemorySearchForm(forms.Form):
    query = forms.CharField(required=False, max_length=4000, widget=forms.TextInput(attrs={"placeholder": "Ask in plain words, or leave empty to list", "type": "search"}))
    mode = forms.ChoiceField(choices=[(m, m) for m in search.MODES], initial="hybrid", required=False)
    agent = forms.ChoiceField(required=False)
    store = forms.ChoiceField(required=False)
    scope = forms.ChoiceField(choices=[("", "any scope"), *Scope.choices], required=False)
    memory_type = forms.ChoiceField(choices=[("", "any type"), *MemoryType.choices], required=False, label="Type")
    user_id = forms.CharField(required=False, max_length=255, label="User id")
    tags = forms.CharField(required=False, max_length=1000, help_text="comma-separated, all must match")
    start = forms.DateTimeField(required=False, label="From", widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))
    end = forms.DateTimeField(required=False, label="Until", widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))
    include_invalidated = forms.BooleanField(required=False, label="Include superseded facts")
    follow_names = forms.ChoiceField(
        choices=[("results", "among the results"), ("all", "through every entry"), ("off", "not at all")], required=False,
        initial="results", label="Follow names",
        help_text="entries naming someone the two best results name score 0.03 more",
    )
    keep_repeats = forms.BooleanField(required=False, label="Keep repeats in place")

    def __init__(self, *args: object, workspace: Workspace, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["agent"].choices = [("", "any agent"), *((a, a) for a in agent_names(workspace=workspace))]
        self.fields["store"].choices = [("", "any store"), *((s, s) for s in store_names(workspace=workspace))]

    def search_request(self) -> search.SearchRequest:
        data = self.cleaned_data
        return search.SearchRequest(
            filters=selectors.MemoryFilters(
                tags=[t.strip() for t in data["tags"].split(",") if t.strip()],
                scope=data["scope"] or None,
                user_id=data["user_id"] or None,
                memory_type=data["memory_type"] or None,
                store=data["store"] or None,
                agent=data["agent"] or None,
                created_after=data["start"],
                created_before=data["end"],
                include_invalidated=data["include_invalidated"],
            ),
            query=data["query"] or None,
            mode=data["mode"] or "hybrid",
            max_results=50,
            repeats="keep" if data["keep_repeats"] else "demote",
            follow_names=data["follow_names"] or "results",
        )


@require_GET
@operator_required()
def memory_search(request: HttpRequest) -> HttpResponse:
    membership = request.membership
    form = MemorySearchForm(request.GET or None, workspace=membership.workspace)
    hits: list[search.SearchHit] = []
    error = None
    if form.is_bound and form.is_valid():
        try:
            hits = search.memory_search(principal=principal_for_membership(membership), request=form.search_request())
        except (EmbeddingError, BudgetExceeded) as exc:
            error = exc.message
    elif not form.is_bound:
        hits = search.memory_search(
            principal=principal_for_membership(membership),
            request=search.SearchRequest(filters=selectors.MemoryFilters(), max_results=50),
        )
    membership = request.membership
    may_delete = membership.allows(Role.ADMIN) or membership.allows(Role.COMPLIANCE)
    bulk_actions = [
        (action, BULK_LABELS[action]) for action in services.BULK_ACTIONS
        if (may_delete if action == "delete" else membership.allows(Role.APPROVER))
    ]
    context = {
        "form": form, "hits": hits, "searched": bool(request.GET.get("query")), "error": error,
        "can_bulk": bool(bulk_actions and hits), "bulk_actions": bulk_actions,
    }
    template = "console/memory.html#results" if request.htmx else "console/memory.html"
    return render(request, template, context)


@require_GET
@operator_required()
def memory_detail(request: HttpRequest, entry_id: str) -> HttpResponse:
    principal = principal_for_membership(request.membership)
    try:
        entry = selectors.entry_get(principal=principal, entry_id=entry_id)
    except NotFound:
        return error_page(request, 404, "No such memory entry in this workspace.")
    revisions = selectors.memory_revisions(entry=entry)
    # Newest first: each revision beside what it changed of the one before it.
    changes = [
        {"revision": revision, "content": word_diff(older.content, revision.content) if older else None,
         "tags_added": [t for t in revision.tags if older and t not in older.tags],
         "tags_removed": [t for t in (older.tags if older else []) if t not in revision.tags]}
        for revision, older in zip(revisions, [*revisions[1:], None], strict=True)
    ]
    context = {
        "entry": entry,
        "history": selectors.fact_history(principal=principal, entry=entry),
        "revisions": changes,
        "can_edit": request.membership.allows(Role.APPROVER) and entry.invalidated_at is None,
        "can_review": request.membership.allows(Role.APPROVER), "actions": services.REVIEW_ACTIONS,
        "can_delete": request.membership.allows(Role.ADMIN) or request.membership.allows(Role.COMPLIANCE),
    }
    return render(request, "console/memory_detail.html", context)


@require_POST
@operator_required()
def memory_delete(request: HttpRequest, entry_id: str) -> HttpResponse:
    membership = request.membership
    if not (membership.allows(Role.ADMIN) or membership.allows(Role.COMPLIANCE)):
        return error_page(request, 403, "Deleting memories needs the admin or compliance role.")
    principal = principal_for_membership(membership)
    try:
        entry = selectors.entry_get(principal=principal, entry_id=entry_id)
    except NotFound:
        return error_page(request, 404, "No such memory entry in this workspace.")
    services.memory_delete(principal=principal, entry=entry)
    messages.success(request, "Memory entry deleted.")
    if request.htmx:
        return HttpResponseClientRedirect(reverse("console:memory"))
    return redirect("console:memory")


BULK_LABELS = {"quarantine": "Quarantine", "verify": "Verify", "tag": "Add the tag", "delete": "Delete"}  # services.BULK_ACTIONS
REVIEW_TABS = {"flagged": "Flagged", "quarantined": "Quarantined", "unreviewed": "Not reviewed", "duplicates": "Duplicates"}


@require_GET
@operator_required()
def review_queue(request: HttpRequest) -> HttpResponse:
    """What waits for a person: flagged and quarantined memories, oldest first, and
    groups of duplicates side by side."""
    membership = request.membership
    reason = request.GET.get("reason") if request.GET.get("reason") in REVIEW_TABS else "flagged"
    entries, next_cursor = [], None
    if reason != "duplicates":
        try:
            entries, next_cursor = selectors.review_queue(
                principal=principal_for_membership(membership), review=reason, cursor=request.GET.get("cursor") or None, limit=50,
            )
        except ApplicationError as wrong:
            return error_page(request, 400, wrong.message)
    counts = {**selectors.review_counts(workspace_id=membership.workspace_id),
              "duplicates": duplicates.duplicate_group_count(workspace_id=membership.workspace_id)}
    context = {
        "entries": entries, "next_cursor": next_cursor, "reason": reason, "reason_label": REVIEW_TABS[reason],
        "tabs": [(key, label, counts.get(key)) for key, label in REVIEW_TABS.items()],
        "can_review": membership.allows(Role.APPROVER), "actions": services.REVIEW_ACTIONS,
        "groups": duplicates.duplicate_groups(workspace_id=membership.workspace_id) if reason == "duplicates" else [],
    }
    return render(request, "console/review.html#queue" if request.htmx else "console/review.html", context)


@require_POST
@operator_required(Role.APPROVER)
def memory_review(request: HttpRequest, entry_id: str) -> HttpResponse:
    """An approver's verify / flag / quarantine / release, from the queue or the entry's page."""
    principal = principal_for_membership(request.membership)
    action = request.POST.get("action", "")
    try:
        entry = selectors.entry_get(principal=principal, entry_id=entry_id)
        services.memory_review(principal=principal, entry=entry, action=action, reason=request.POST.get("reason", "")[:2000])
    except NotFound:
        return error_page(request, 404, "No such memory entry in this workspace.")
    except ApplicationError as wrong:
        return error_page(request, 400, wrong.message)
    messages.success(request, f"Memory entry: {action} done.")
    return _go(request, _next_or(request, reverse("console:memory-detail", args=[entry.pk])))


def _next_or(request: HttpRequest, default: str) -> str:
    """The form's `next`, when it is a page of this site (never a redirect elsewhere)."""
    back = request.POST.get("next") or ""
    safe = url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=request.is_secure())
    return back if safe else default


def _go(request: HttpRequest, target: str) -> HttpResponse:
    """After a POST: htmx follows HX-Redirect, a plain form a 302."""
    return HttpResponseClientRedirect(target) if request.htmx else redirect(target)


def _back_to_duplicates(request: HttpRequest) -> HttpResponse:
    return _go(request, reverse("console:review") + "?reason=duplicates")


@require_POST
@operator_required(Role.APPROVER)
def memory_merge(request: HttpRequest, entry_id: str) -> HttpResponse:
    """Keep this entry of a duplicate group; the others (`others`) are merged into it."""
    principal = principal_for_membership(request.membership)
    try:
        entry = selectors.entry_get(principal=principal, entry_id=entry_id, include_invalidated=False)
        services.memory_merge(principal=principal, entry=entry, others=request.POST.getlist("others"), reason=request.POST.get("reason", "")[:2000])
    except NotFound:
        return error_page(request, 404, "No such memory entry in this workspace.")
    except ApplicationError as wrong:
        return error_page(request, 400, wrong.message)
    messages.success(request, "Merged: one memory kept, the others superseded by it.")
    return _back_to_duplicates(request)


@require_POST
@operator_required(Role.APPROVER)
def duplicates_dismiss(request: HttpRequest, entry_id: str) -> HttpResponse:
    """"Not duplicates": the group around this entry leaves the queue, every entry kept."""
    principal = principal_for_membership(request.membership)
    try:
        entry = selectors.entry_get(principal=principal, entry_id=entry_id)
    except NotFound:
        return error_page(request, 404, "No such memory entry in this workspace.")
    services.duplicates_dismiss(principal=principal, entry=entry)
    messages.success(request, "Kept apart: not duplicates.")
    return _back_to_duplicates(request)


class MemoryEditForm(forms.Form):
    content = forms.CharField(max_length=settings.MEMORYHUB_MAX_CONTENT_CHARS, strip=False)
    tags = forms.CharField(required=False, max_length=64 * 101, help_text="Comma-separated")
    reason = forms.CharField(max_length=2000)
    version = forms.IntegerField(min_value=1)


def _back_to_entry(request: HttpRequest, entry_id: object) -> HttpResponse:
    return _go(request, reverse("console:memory-detail", args=[entry_id]))


@require_POST
@operator_required(Role.APPROVER)
def memory_edit(request: HttpRequest, entry_id: str) -> HttpResponse:
    """An operator's correction, with a reason: the entry's next revision (refused if
    someone changed it since the page was drawn)."""
    principal = principal_for_membership(request.membership)
    form = MemoryEditForm(request.POST)
    if not form.is_valid():
        return error_page(request, 400, "An edit needs the content, a reason and the revision it changes: " + form.errors.as_text())
    tags = list(dict.fromkeys(t.strip() for t in form.cleaned_data["tags"].split(",") if t.strip()))
    try:
        entry = selectors.entry_get(principal=principal, entry_id=entry_id, include_invalidated=False)
        services.memory_update(
            principal=principal, entry=entry, changes=services.MemoryChanges(content=form.cleaned_data["content"], tags=tags),
            expected_version=form.cleaned_data["version"], reason=form.cleaned_data["reason"],
        )
    except ApplicationError as wrong:  # not found, changed since, a bad value: each its own status
        return error_page(request, wrong.status_code, wrong.message)
    messages.success(request, "Memory entry changed: a new revision.")
    return _back_to_entry(request, entry.pk)


@require_POST
@operator_required(Role.APPROVER)
def memory_revert(request: HttpRequest, entry_id: str) -> HttpResponse:
    """An earlier revision made current again, as a new one."""
    principal = principal_for_membership(request.membership)
    try:
        revision = int(request.POST.get("revision", ""))
    except ValueError:
        return error_page(request, 400, "Choose a revision to go back to.")
    try:
        entry = selectors.entry_get(principal=principal, entry_id=entry_id, include_invalidated=False)
        services.memory_revert(principal=principal, entry=entry, revision=revision, reason=request.POST.get("reason", "")[:2000])
    except ApplicationError as wrong:
        return error_page(request, wrong.status_code, wrong.message)
    messages.success(request, f"Back to revision {revision}, as a new revision.")
    return _back_to_entry(request, entry.pk)


@require_POST
@operator_required()
def memory_bulk(request: HttpRequest) -> HttpResponse:
    """An action over the memories selected among a search's results: first a page that
    says how many and which, then, confirmed, the action on all of them or none."""
    membership = request.membership
    action, tag, reason = request.POST.get("action", ""), request.POST.get("tag", "")[:100], request.POST.get("reason", "")[:2000]
    allowed = membership.allows(Role.ADMIN) or membership.allows(Role.COMPLIANCE) if action == "delete" else membership.allows(Role.APPROVER)
    if not allowed:
        return error_page(request, 403, "Deleting needs the admin or compliance role; the other actions the approver or admin role.")
    principal = principal_for_membership(membership)
    ids = list(dict.fromkeys(request.POST.getlist("ids")))[: services.MAX_BULK + 1]
    try:
        entries = [selectors.entry_get(principal=principal, entry_id=entry_id) for entry_id in ids]
        if request.POST.get("confirmed") != "yes":
            if action not in services.BULK_ACTIONS or not entries:
                raise ApplicationError("Select memories and an action.")
            return render(request, "console/memory_bulk.html", {
                "entries": entries, "action": action, "tag": tag, "reason": reason, "next": _next_or(request, reverse("console:memory")),
            })
        done = services.memories_bulk_apply(principal=principal, entries=entries, action=action, tag=tag, reason=reason)
    except ApplicationError as wrong:  # an entry not found (404), a bad action or tag (400)
        return error_page(request, wrong.status_code, wrong.message)
    messages.success(request, f"{action.capitalize()}: {done} memor{'y' if done == 1 else 'ies'}.")
    return _go(request, _next_or(request, reverse("console:memory")))
