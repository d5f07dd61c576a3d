"""The console's live pages: the workspace's Activity, and the streams behind it and the
session page. The streams are sent by the ASGI layer around Django
(memoryhub/serving/event_stream.py); these views only answer it with the stream's plan: who is
reading, what, from where, rendered as HTML for htmx's SSE extension."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from console.access import operator_required
from memoryhub.insights.timeline import timeline_rows
from memoryhub.conversations.sessions import session_of
from memoryhub.core import live
from memoryhub.serving.http_errors import error_page
from memoryhub.timeline.selectors import newest_events

ACTIVITY_SIZE = 100


@require_GET
@operator_required()
def activity(request: HttpRequest) -> HttpResponse:
    events = list(newest_events(workspace_id=request.membership.workspace_id, limit=ACTIVITY_SIZE))
    rows = timeline_rows(workspace_id=request.membership.workspace_id, events=events)
    return render(request, "console/activity.html", {"rows": rows, "after": events[0].id if events else 0})


@require_GET
@operator_required()
def activity_events(request: HttpRequest) -> HttpResponse:
    return _plan(request, session_id=None)


@require_GET
@operator_required()
def session_events(request: HttpRequest, session_id: str) -> HttpResponse:
    session = session_of(workspace=request.membership.workspace, session_id=session_id)
    if session is None:
        return error_page(request, 404, "No such session in this workspace.")
    return _plan(request, session_id=session.session_id)


def _plan(request: HttpRequest, *, session_id: str | None) -> HttpResponse:
    if request.headers.get(live.STREAM_PLAN_HEADER) != live.STREAM_TOKEN:
        return error_page(request, 400, "Live updates are served by the ASGI application (uvicorn memoryhub.asgi:application).")
    raw = request.headers.get("Last-Event-ID") or request.GET.get("last_event_id") or ""
    if not raw.isdigit() or len(raw) > 18:
        return error_page(request, 400, "last_event_id must be an event id.")
    kinds = [kind for kind in request.GET.get("kind", "").split(",") if kind]
    if any(not live.EVENT_KIND.match(kind) for kind in kinds):
        return error_page(request, 400, "kind names kinds of events (approval, message…), comma-separated.")
    return JsonResponse(live.stream_plan(
        workspace_id=request.membership.workspace_id, session_id=session_id, kinds=kinds, after=int(raw),
        ends_on=[live.login_group(request.session.session_key or ""), live.membership_group(request.membership.pk)], html=True,
    ))
