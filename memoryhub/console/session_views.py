"""The console's Sessions pages: a list, and one session's conversation."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memoryhub.console.access import operator_required
from memoryhub.conversations.models import MessageRevision, Session
from memoryhub.conversations.selectors import messages_in_order, session_summary
from memoryhub.timeline.models import Event

PAGE_SIZE = 50


@require_GET
@operator_required()
def session_list(request: HttpRequest) -> HttpResponse:
    sessions = Session.objects.filter(workspace=request.membership.workspace).select_related("agent").order_by("-created_at")
    query = request.GET.get("q", "").strip()
    if query:
        sessions = sessions.filter(session_id__icontains=query) | sessions.filter(user_id=query)
    return render(request, "console/sessions.html", {"sessions": sessions[:PAGE_SIZE], "q": query})


@require_GET
@operator_required()
def session_detail(request: HttpRequest, session_id: str) -> HttpResponse:
    session = Session.objects.filter(workspace=request.membership.workspace, session_id=session_id).select_related("agent", "parent").first()
    if session is None:
        return render(request, "console/error.html", {"status": 404, "message": "No such session in this workspace."}, status=404)
    messages = list(messages_in_order(session=session))
    revisions = MessageRevision.objects.filter(message__session=session).select_related("message").order_by("message__seq", "revision")
    context = {
        "session": session,
        "messages": messages,
        "counts": session_summary(session),
        "summaries": session.summaries.order_by("from_seq"),
        "chain": session.chain.order_by("index"),
        "revisions": revisions,
        "branches": session.branches.order_by("created_at"),
        "events": Event.objects.filter(workspace=session.workspace, session_id=session.session_id).order_by("-id")[:100],
    }
    return render(request, "console/session.html", context)
