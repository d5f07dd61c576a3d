"""The console's Approvals pages: the inbox of pending requests (polled every 2 s, each
decided on its card), the history of decided requests, the remembered rules, and the
sessions a `suspend` answer paused."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memoryhub.approvals import selectors, services
from memoryhub.approvals.models import Approval, ApprovalStatus, Decision, RuleScope
from console.access import SESSION_WORKSPACE_KEY, operator_required
from console.paging import filter_state
from memoryhub.conversations.sessions import session_of, session_reactivate, suspended_sessions
from memoryhub.core.errors import ApplicationError, Conflict, NotFound
from memoryhub.core.models import Role
from memoryhub.core.selectors import Principal, agent_names, memberships_for_user, principal_for_membership
from memoryhub.serving.http_errors import error_page
from memoryhub.timeline.selectors import feed_position

INBOX = "console/approvals.html"
HISTORY = "console/approval_history.html"
RULES = "console/approval_rules.html"
# Cards on the inbox at once, oldest first; the rest follow as these are decided.
INBOX_SIZE = 100
PAGE_SIZE = 50
MAX_ARGS_CHARS = 256 * 1024  # as the API's MAX_ARGS_BYTES, give or take multi-byte characters
DECIDED_STATUSES = [status for status in ApprovalStatus.values if status != ApprovalStatus.PENDING]
REMEMBER_CHOICES = [("none", "don't remember"), ("exact", "these exact arguments"), ("tool", "any arguments of this tool")]


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")  # Python's json takes NaN and Infinity; JSON does not


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(choices=Decision.choices)
    args = forms.CharField(required=False, strip=False, max_length=MAX_ARGS_CHARS)
    reason = forms.CharField(required=False, max_length=4000)
    remember = forms.ChoiceField(choices=REMEMBER_CHOICES, required=False)
    remember_scope = forms.ChoiceField(choices=RuleScope.choices, required=False)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        data["remember"] = data.get("remember") or "none"
        data["remember_scope"] = data.get("remember_scope") or RuleScope.WORKSPACE
        if data.get("decision") != Decision.EDIT:
            data["args"] = None  # only an edit sends arguments; the others keep the agent's
        elif "args" in data:
            try:
                data["args"] = json.loads(data["args"], parse_constant=_refuse_constant)
            except ValueError as exc:
                self.add_error("args", f"The edited arguments are not valid JSON: {exc}.")
        return data


class HistoryFilterForm(forms.Form):
    status = forms.ChoiceField(choices=[("", "any outcome"), *((s, s) for s in DECIDED_STATUSES)], required=False)
    tool = forms.CharField(required=False, max_length=200)
    agent = forms.ChoiceField(required=False)
    session_id = forms.CharField(required=False, max_length=255, label="Session id")
    cursor = forms.CharField(required=False, max_length=200)

    def __init__(self, *args: Any, agents: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["agent"].choices = [("", "any agent"), *((a, a) for a in agents)]


def _can_decide(request: HttpRequest) -> bool:
    return request.membership.allows(Role.APPROVER)


def _shown_ids(request: HttpRequest) -> set[int]:
    """The pending cards the polling page shows (`shown` values), bounded and checked."""
    values = request.GET.getlist("shown")[: INBOX_SIZE * 2]
    return {int(v) for v in values if v.isascii() and v.isdigit() and len(v) < 19}


def _inbox_context(request: HttpRequest, principal: Principal | None = None) -> dict[str, Any]:
    pending = selectors.pending_approvals(principal=principal or principal_for_membership(request.membership))
    oldest = list(pending[:INBOX_SIZE])
    return {
        "pending": oldest,
        "pending_count": len(oldest) if len(oldest) < INBOX_SIZE else pending.count(),
        "suspended": suspended_sessions(workspace=request.membership.workspace)[:INBOX_SIZE],
        "can_decide": _can_decide(request),
    }


@require_GET
@operator_required()
def inbox(request: HttpRequest) -> HttpResponse:
    context = _inbox_context(request)
    context["feed_after"] = feed_position(workspace_id=request.membership.workspace_id)  # the feed starts where the page does
    return render(request, INBOX, context)


@require_GET
@login_required
def approval_page(request: HttpRequest, approval_id: int) -> HttpResponse:
    """The page an email's link opens: one request, decided by a POST from its card (mail
    scanners follow links, so a link decides nothing). A request of another of the
    operator's workspaces switches the console to that workspace first."""
    memberships = memberships_for_user(request.user)
    workspace_id = selectors.approval_workspace_id(approval_id=approval_id, workspace_ids=[m.workspace_id for m in memberships])
    if workspace_id is not None:
        request.session[SESSION_WORKSPACE_KEY] = workspace_id
    return _approval_card_page(request, approval_id)


@operator_required()
def _approval_card_page(request: HttpRequest, approval_id: int) -> HttpResponse:
    try:
        approval = selectors.approval_get(principal=principal_for_membership(request.membership), approval_id=approval_id)
    except NotFound:
        return error_page(request, 404, "No such request in your workspaces.")
    return render(request, "console/approval.html", {"approval": approval, "can_decide": _can_decide(request)})


@require_GET
@operator_required()
def inbox_poll(request: HttpRequest) -> HttpResponse:
    """What changed since the page's last look: cards for new requests (appended), and
    the cards it shows of requests decided or expired meanwhile, out of band (the page
    keeps those its operator is working on: approvals.js)."""
    if not request.htmx:
        return HttpResponseRedirect(reverse("console:approvals"))
    principal = principal_for_membership(request.membership)
    context = _inbox_context(request, principal)
    shown = _shown_ids(request)
    still_pending = {approval.pk for approval in context["pending"]}
    context["new"] = [approval for approval in context["pending"] if approval.pk not in shown]
    context["gone"] = selectors.approvals_among(principal=principal, ids=shown - still_pending)
    return render(request, f"{INBOX}#poll", context)


def _card_response(request: HttpRequest, approval: Approval, *, status: int = 200, message: str = "", **card: Any) -> HttpResponse:
    """The card in its new state for htmx; without JavaScript, the inbox with a message."""
    if request.htmx:
        context = {"approval": approval, "can_decide": _can_decide(request), **card}
        if approval.status == ApprovalStatus.SUSPENDED and status == 200:
            context["suspended"] = suspended_sessions(workspace=request.membership.workspace)[:INBOX_SIZE]
        return render(request, f"{INBOX}#answer", context, status=status)
    if status == 200:
        messages.success(request, message)
        return HttpResponseRedirect(reverse("console:approvals"))
    messages.error(request, message)
    return render(request, INBOX, _inbox_context(request), status=status)


@require_POST
@operator_required()  # viewers are refused by the service, on the card (the page offers them no buttons)
def decide(request: HttpRequest, approval_id: int) -> HttpResponse:
    try:
        approval = selectors.approval_get(principal=principal_for_membership(request.membership), approval_id=approval_id)
    except NotFound:
        return error_page(request, 404, "No such request in this workspace.")
    form = DecisionForm(request.POST)
    # What the operator typed comes back on a refused card, to be corrected, not retyped.
    kept = {"decision": request.POST.get("decision", ""), "args": request.POST.get("args"), "reason": request.POST.get("reason", "")}
    if not form.is_valid():
        problem = " ".join(error for errors in form.errors.values() for error in errors)
        return _card_response(request, approval, status=400, message=problem, error=problem, kept=kept)
    data = form.cleaned_data
    try:
        decided = services.approval_decide(
            membership=request.membership, approval=approval, decision=data["decision"], args=data["args"], reason=data["reason"],
            remember=data["remember"], remember_scope=data["remember_scope"], address=request.META.get("REMOTE_ADDR"),
        )
    except Conflict as late:
        # Decided by someone else, or expired: the service has re-read the request.
        return _card_response(request, approval, status=409, message=late.message, late=True)
    except ApplicationError as refused:  # not allowed, not an object, against the schema, not an approver
        return _card_response(request, approval, status=refused.status_code, message=refused.message, error=refused.message, kept=kept)
    if decided.status == ApprovalStatus.PENDING:  # one approval of several
        given = decided.votes.count()
        return _card_response(request, decided, message=f"{decided.tool}: your approval counts, {given} of {decided.required_approvals}.")
    return _card_response(request, decided, message=f"{decided.tool}: {decided.status}.")


@require_POST
@operator_required(Role.APPROVER)
def reactivate(request: HttpRequest, session_id: str) -> HttpResponse:
    """From the inbox's Suspended sessions (htmx) or the session page's banner (a form)."""
    session = session_of(workspace=request.membership.workspace, session_id=session_id)
    if session is None:
        return error_page(request, 404, "No such session in this workspace.")
    try:
        session_reactivate(membership=request.membership, session=session, address=request.META.get("REMOTE_ADDR"))
        note, status = f"Session {session_id} reactivated: its agent may go on.", 200
    except Conflict:
        note, status = f"Session {session_id} is not suspended (any more): someone reactivated it.", 409
    if request.htmx:
        context = {"suspended": suspended_sessions(workspace=request.membership.workspace)[:INBOX_SIZE], "can_decide": True, "note": note}
        return render(request, f"{INBOX}#suspended", context, status=status)
    (messages.success if status == 200 else messages.error)(request, note)
    if request.POST.get("on") == "session":
        return HttpResponseRedirect(reverse("console:session", args=[session_id]))
    return HttpResponseRedirect(reverse("console:approvals"))


@require_GET
@operator_required()
def history(request: HttpRequest) -> HttpResponse:
    """Decided requests, newest request first, page by page with the API's cursors."""
    membership = request.membership
    form = HistoryFilterForm(request.GET, agents=agent_names(workspace=membership.workspace))
    page, error = None, ""
    if form.is_valid():
        data = form.cleaned_data
        try:
            page = selectors.decided_approvals_page(
                principal=principal_for_membership(membership), status=data["status"] or None, tool=data["tool"].strip(),
                agent=data["agent"], session_id=data["session_id"].strip(), cursor=data["cursor"] or None, limit=PAGE_SIZE,
            )
        except ApplicationError as bad_cursor:
            error = bad_cursor.message
    else:
        error = "Some filters are not valid: " + " ".join(e for errors in form.errors.values() for e in errors)
    context = {"form": form, "page": page, "error": error, "next_cursor": page.next if page else None, **filter_state(request)}
    return render(request, f"{HISTORY}#results" if request.htmx else HISTORY, context)


@require_GET
@operator_required()
def rules(request: HttpRequest) -> HttpResponse:
    cursor = request.GET.get("cursor") or None
    try:
        page = selectors.rules_page(principal=principal_for_membership(request.membership), cursor=cursor, limit=PAGE_SIZE)
    except ApplicationError as bad_cursor:
        return error_page(request, 400, bad_cursor.message)
    return render(request, RULES, {"page": page, "first_page": cursor is None, "can_revoke": _can_decide(request)})


@require_POST
@operator_required(Role.APPROVER)
def rule_revoke(request: HttpRequest, rule_id: int) -> HttpResponse:
    try:
        services.approval_rule_revoke(membership=request.membership, rule_id=rule_id)
    except NotFound:
        return error_page(request, 404, "No such remembered decision in this workspace.")
    if request.htmx:
        return HttpResponse("")  # the row disappears
    messages.success(request, "Remembered decision revoked: matching requests go to a human again.")
    return HttpResponseRedirect(reverse("console:approval-rules"))
