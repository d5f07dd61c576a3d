"""The console's Sessions pages: a list, and one session's conversation."""

from __future__ import annotations

import difflib
import json

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memoryhub.checkpoints.models import Checkpoint
from memoryhub.checkpoints.selectors import checkpoint_load, checkpoint_state, checkpoints_of
from memoryhub.console.access import operator_required
from memoryhub.conversations.messages import message_revisions_of, messages_in_order
from memoryhub.conversations.sessions import branches_of, session_family_tree, session_of, session_summary, sessions_of
from memoryhub.conversations.summaries import chain_of, summaries_of
from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import Role
from memoryhub.http_errors import error_page
from memoryhub.plans.selectors import plan_snapshot
from memoryhub.timeline.selectors import newest_events
from memoryhub.tools.selectors import tool_call_of, tool_calls_by_step, tool_calls_of, tool_output

PAGE_SIZE = 50
MAX_SHOWN_OUTPUT = 200_000  # characters of a tool output shown in the page


@require_GET
@operator_required()
def session_list(request: HttpRequest) -> HttpResponse:
    query = request.GET.get("q", "").strip()
    sessions = sessions_of(workspace=request.membership.workspace, search=query)
    return render(request, "console/sessions.html", {"sessions": sessions[:PAGE_SIZE], "q": query})


@require_GET
@operator_required()
def session_detail(request: HttpRequest, session_id: str) -> HttpResponse:
    session = session_of(workspace=request.membership.workspace, session_id=session_id)
    if session is None:
        return error_page(request, 404, "No such session in this workspace.")
    context = {
        "session": session,
        # Not "messages": that name is the flash messages' in base.html.
        "conversation": list(messages_in_order(session=session)),
        "counts": session_summary(session),
        "summaries": summaries_of(session=session),
        "chain": chain_of(session=session),
        "checkpoints": checkpoints_of(session=session)[:100],
        "plan": plan_snapshot(session=session, tool_calls=tool_calls_by_step(session=session)),
        "tool_calls": tool_calls_of(session=session)[:200],
        "revisions": message_revisions_of(session=session),
        "branches": branches_of(session=session),
        "tree": session_family_tree(session=session),
        "events": newest_events(workspace_id=session.workspace_id, session_id=session.session_id, limit=100),
        "can_reactivate": request.membership.allows(Role.APPROVER),
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
