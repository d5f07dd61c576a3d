"""The console's Sessions pages: a list, and one session's conversation."""

from __future__ import annotations

import difflib
import json

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memoryhub.checkpoints.models import Checkpoint
from memoryhub.checkpoints.selectors import checkpoint_state
from memoryhub.console.access import operator_required
from memoryhub.conversations.messages import messages_in_order
from memoryhub.conversations.models import MessageRevision, Session
from memoryhub.conversations.sessions import session_summary
from memoryhub.core.errors import ApplicationError
from memoryhub.http_errors import error_page
from memoryhub.plans.selectors import plan_snapshot
from memoryhub.timeline.models import Event
from memoryhub.tools.models import ToolCall
from memoryhub.tools.selectors import tool_calls_by_step, tool_output

PAGE_SIZE = 50
MAX_SHOWN_OUTPUT = 200_000  # characters of a tool output shown in the page


@require_GET
@operator_required()
def session_list(request: HttpRequest) -> HttpResponse:
    sessions = Session.objects.filter(workspace=request.membership.workspace).select_related("agent").order_by("-created_at")
    query = request.GET.get("q", "").strip()
    if query:
        sessions = sessions.filter(session_id__icontains=query) | sessions.filter(user_id=query)
    return render(request, "console/sessions.html", {"sessions": sessions[:PAGE_SIZE], "q": query})


def _session(request: HttpRequest, session_id: str) -> QuerySet[Session]:
    """The session of this id in the operator's workspace (empty elsewhere: a 404)."""
    return Session.objects.filter(workspace=request.membership.workspace, session_id=session_id)


def family_tree(session: Session) -> list[dict[str, object]]:
    """The branches and forks around `session`: from its oldest ancestor down, as
    nested nodes, one query per generation."""
    root = session
    seen = {root.pk}
    while root.parent_id and root.parent_id not in seen:
        root = Session.objects.get(pk=root.parent_id)
        seen.add(root.pk)
    nodes = {root.pk: {"session": root, "children": []}}
    generation = [root.pk]
    while generation:
        children = list(Session.objects.filter(parent_id__in=generation).order_by("created_at"))
        generation = []
        for child in children:
            if child.pk in nodes:
                continue
            nodes[child.pk] = {"session": child, "children": []}
            nodes[child.parent_id]["children"].append(nodes[child.pk])
            generation.append(child.pk)
    return [nodes[root.pk]] if len(nodes) > 1 else []


@require_GET
@operator_required()
def session_detail(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _session(request, session_id).select_related("agent", "parent").first()
    if session is None:
        return error_page(request, 404, "No such session in this workspace.")
    messages = list(messages_in_order(session=session))
    revisions = MessageRevision.objects.filter(message__session=session).select_related("message").order_by("message__seq", "revision")
    context = {
        "session": session,
        "messages": messages,
        "counts": session_summary(session),
        "summaries": session.summaries.order_by("from_seq"),
        "chain": session.chain.order_by("index"),
        "checkpoints": session.checkpoints.order_by("-version").defer("state", "plan")[:100],
        "plan": plan_snapshot(session=session, tool_calls=tool_calls_by_step(session=session)),
        "tool_calls": session.tool_calls.order_by("created_at")[:200],
        "revisions": revisions,
        "branches": session.branches.order_by("created_at"),
        "tree": family_tree(session),
        "events": Event.objects.filter(workspace=session.workspace, session_id=session.session_id).order_by("-id")[:100],
    }
    return render(request, "console/session.html", context)


def _checkpoint_text(checkpoint: Checkpoint) -> str:
    return json.dumps(checkpoint_state(checkpoint), indent=2, sort_keys=True, ensure_ascii=False)


@require_GET
@operator_required()
def checkpoint_detail(request: HttpRequest, session_id: str, version: int) -> HttpResponse:
    session = _session(request, session_id).first()
    checkpoint = session.checkpoints.filter(version=version).first() if session else None
    if checkpoint is None:
        return error_page(request, 404, "No such checkpoint in this workspace.")
    return render(request, "console/checkpoint.html", {"session": session, "checkpoint": checkpoint, "state": _checkpoint_text(checkpoint)})


@require_GET
@operator_required()
def checkpoint_diff(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _session(request, session_id).first()
    try:
        a, b = int(request.GET.get("a", "")), int(request.GET.get("b", ""))
    except ValueError:
        return error_page(request, 400, "Choose two versions to compare.")
    old = session.checkpoints.filter(version=a).first() if session else None
    new = session.checkpoints.filter(version=b).first() if session else None
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
    call = ToolCall.objects.filter(workspace=request.membership.workspace, session__session_id=session_id, call_id=call_id).first()
    if call is None:
        return error_page(request, 404, "No such tool call in this workspace.")
    try:
        output = tool_output(call)
    except ApplicationError as gone:
        output = gone.message
    return render(request, "console/session.html#tool-output", {"output": output[:MAX_SHOWN_OUTPUT], "cut": max(0, len(output) - MAX_SHOWN_OUTPUT)})
