"""Background jobs on the console's pages (purges, exports, imports): each shows the same
progress while it runs, polled by htmx every second until it ends."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render

from memoryhub.core.jobs import Job


def job_progress(job: Job) -> dict[str, Any]:
    """Whether the job still runs (its fragment keeps polling) and how far it is, in percent:
    what templates/console/job_progress.html shows."""
    return {"live": not job.ended, "percent": round(job.progress * 100)}


def job_poll(request: HttpRequest, *, fragment: str, context: dict[str, Any], page: str) -> HttpResponse:
    """A job's poll: its fragment, for htmx; a browser that follows the poll's link gets
    the page that shows the job."""
    if not request.htmx:
        return HttpResponseRedirect(page)
    return render(request, fragment, context)
