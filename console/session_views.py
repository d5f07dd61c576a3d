"""The console's Sessions pages: the list, and one session told as one timeline, with its
conversation, plan, checkpoints, summaries and family a tab away."""

from __future__ import annotations

import difflib
import json

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memoryhub.checkpoints.models import Checkpoint
from memoryhub.checkpoints.selectors import checkpoint_load, checkpoint_state, checkpoints_of
from console.access import operator_required
from console.forms import SessionFilterForm
from console.paging import filter_state
from console.selectors import SESSION_ORDER_NAMES, SESSION_STATUSES, SessionFilters, session_listed, sessions_page
from memoryhub.insights.timeline import timeline_rows
from memoryhub.conversations.messages import message_revisions_of, messages_in_order
from memoryhub.conversations.sessions import branches_of, session_family_tree, session_of, session_summary
from memoryhub.conversations.summaries import chain_of, summaries_of
from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import Role
from memoryhub.core.selectors import agent_names, store_names
from memoryhub.memory.selectors import memories_learnt_in
from memoryhub.serving.http_errors import error_page
from memoryhub.plans.selectors import plan_snapshot
from memoryhub.portability.models import ExportScope
from memoryhub.portability.selectors import export_scope_role
from memoryhub.timeline.selectors import timeline_window
from memoryhub.tools.selectors import tool_call_of, tool_calls_by_step, tool_calls_of, tool_output


# The kinds an operator filters a session's timeline by, in the order offered.
SESSION_KINDS = {
    "message": "Messages",
    "edit": "Edits",
    "plan": "Plan",
    "tool_call": "Tool calls",
    "checkpoint": "Checkpoints",
    "resume": "Resumes",
    "approval": "Approvals",
    "branch": "Branches",
    "fork": "Forks",
    "summary": "Summaries",
    "episode": "Episodes",
    "run": "Session",
}

PAGE_SIZE = 50
TIMELINE_PAGE = 100
CONVERSATION_PAGE = 100
MAX_SHOWN_OUTPUT = 200_000  # characters of a tool output shown in the page
SECTIONS = {
    "timeline": "Timeline", "conversation": "Conversation", "plan": "Plan & tool calls", "checkpoints": "Checkpoints",
    "summaries": "Summaries", "family": "Branches & edits",
}


@require_GET
@operator_required()
def session_list(request: HttpRequest) -> HttpResponse:
    workspace = request.membership.workspace
    form = SessionFilterForm(
        request.GET, agents=agent_names(workspace=workspace), stores=store_names(workspace=workspace), statuses=SESSION_STATUSES,
        orders=SESSION_ORDER_NAMES,
    )
    page, error = None, ""
    if form.is_valid():
        data = {name: value for name, value in form.cleaned_data.items() if value}
        try:
            page = sessions_page(workspace=workspace, filters=SessionFilters(**data), cursor=request.GET.get("cursor") or None, limit=PAGE_SIZE)
        except ApplicationError as wrong:
            error = wrong.message
    else:
        error = "Check the filters: " + "; ".join(f"{form.fields[name].label or name}: {' '.join(errors)}" for name, errors in form.errors.items())
    context = {"form": form, "page": page, "error": error, **filter_state(request, not_filters=("order",))}
    return render(request, "console/sessions.html#results" if request.htmx else "console/sessions.html", context)


def _session_context(request: HttpRequest, session_id: str, section: str) -> dict[str, object] | None:
    listed = session_listed(workspace=request.membership.workspace, session_id=session_id)
    if listed is None:
        return None
    return {
        "session": listed, "section": section, "sections": SECTIONS, "can_reactivate": request.membership.allows(Role.APPROVER),
        "can_export": request.membership.allows(export_scope_role(ExportScope.SESSION)),
    }


def _event_id(raw: str | None) -> int | None:
    """A position given in the query string; anything else is no position (the default page)."""
    return int(raw) if raw and raw.isascii() and raw.isdigit() and len(raw) <= 19 and int(raw) < 2**63 else None


@require_GET
@operator_required()
def session_detail(request: HttpRequest, session_id: str) -> HttpResponse:
    """The session as one timeline: every kind of event in the order it happened, a page
    at a time (the newest page by default, live)."""
    context = _session_context(request, session_id, "timeline")
    if context is None:
        return error_page(request, 404, "No such session in this workspace.")
    session = context["session"]
    kinds = [kind for kind in request.GET.getlist("kind") if kind in SESSION_KINDS]
    before, after = _event_id(request.GET.get("before")), _event_id(request.GET.get("after"))
    window = timeline_window(
        workspace_id=session.workspace_id, session_id=session.session_id, kinds=kinds, before=before, after=after, limit=TIMELINE_PAGE
    )
    kind_query = "".join(f"&kind={kind}" for kind in kinds)
    context |= {
        "rows": timeline_rows(workspace_id=session.workspace_id, events=window.events), "window": window,
        "kinds": SESSION_KINDS, "chosen_kinds": kinds, "kind_query": kind_query, "live": not window.later,
        "last_id": window.events[-1].id if window.events else (after or 0),
    }
    return render(request, "console/session.html", context)


@require_GET
@operator_required()
def session_section(request: HttpRequest, session_id: str, section: str) -> HttpResponse:
    context = _session_context(request, session_id, section)
    if context is None:
        return error_page(request, 404, "No such session in this workspace.")
    session = context["session"]
    if section == "conversation":
        start = _event_id(request.GET.get("from")) or 1
        # Not "messages": that name is the flash messages' in base.html.
        shown = list(messages_in_order(session=session, from_seq=start)[: CONVERSATION_PAGE + 1])
        learnt = memories_learnt_in(workspace_id=session.workspace_id, session_id=session.session_id)
        for message in shown:
            message.learnt = learnt.get(("message", message.seq), [])
        context |= {
            "conversation": shown[:CONVERSATION_PAGE], "counts": session_summary(session),
            "next_seq": shown[-1].seq if len(shown) > CONVERSATION_PAGE else None,
            "previous_seq": max(1, start - CONVERSATION_PAGE) if start > 1 else None,
        }
    elif section == "plan":
        calls = list(tool_calls_of(session=session)[:200])
        learnt = memories_learnt_in(workspace_id=session.workspace_id, session_id=session.session_id)
        for call in calls:
            call.learnt = learnt.get(("tool_call", call.call_id), [])
        context |= {"plan": plan_snapshot(session=session, tool_calls=tool_calls_by_step(session=session)), "tool_calls": calls}
    elif section == "checkpoints":
        context["checkpoints"] = checkpoints_of(session=session)[:100]
    elif section == "summaries":
        context |= {"summaries": summaries_of(session=session), "chain": chain_of(session=session)}
    else:
        context |= {
            "revisions": message_revisions_of(session=session)[:200], "branches": branches_of(session=session),
            "tree": session_family_tree(session=session),
        }
    return render(request, "console/session.html", context)


def _checkpoint_text(checkpoint: Checkpoint) -> str:
    return json.dumps(checkpoint_state(checkpoint), indent=2, sort_keys=True, ensure_ascii=False)


@require_GET
@operator_required()
def checkpoint_detail(request: HttpRequest, session_id: str, version: int) -> HttpResponse:
    session = session_of(workspace=request.membership.workspace, session_id=session_id)
    checkpoint = checkpoint_load(session=session, version=version) if session else None
    if checkpoint is None:
        return error_page(request, 404, "No such checkpoint in this workspace.")
    return render(request, "console/checkpoint.html", {"session": session, "checkpoint": checkpoint, "state": _checkpoint_text(checkpoint)})


@require_GET
@operator_required()
def checkpoint_diff(request: HttpRequest, session_id: str) -> HttpResponse:
    session = session_of(workspace=request.membership.workspace, session_id=session_id)
    try:
        a, b = int(request.GET.get("a", "")), int(request.GET.get("b", ""))
    except ValueError:
        return error_page(request, 400, "Choose two versions to compare.")
    old = checkpoint_load(session=session, version=a) if session else None
    new = checkpoint_load(session=session, version=b) if session else None
    if old is None or new is None:
        return error_page(request, 404, "No such checkpoint in this workspace.")
    lines = difflib.unified_diff(
        _checkpoint_text(old).splitlines(), _checkpoint_text(new).splitlines(), fromfile=f"v{a}", tofile=f"v{b}", lineterm="", n=3
    )
    diff = [{"text": line, "kind": "add" if line.startswith("+") else "del" if line.startswith("-") else "hunk" if line.startswith("@@") else ""} for line in lines]
    return render(request, "console/checkpoint_diff.html", {"session": session, "old": old, "new": new, "diff": diff})


@require_GET
@operator_required()
def tool_result(request: HttpRequest, session_id: str, call_id: str) -> HttpResponse:
    """A tool call's redacted raw output, loaded when the operator expands the call."""
    call = tool_call_of(workspace=request.membership.workspace, session_id=session_id, call_id=call_id)
    if call is None:
        return error_page(request, 404, "No such tool call in this workspace.")
    try:
        output = tool_output(call)
    except ApplicationError as gone:
        output = gone.message
    return render(request, "console/session.html#tool-output", {"output": output[:MAX_SHOWN_OUTPUT], "cut": max(0, len(output) - MAX_SHOWN_OUTPUT)})
