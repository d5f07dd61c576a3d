"""The console's Episodes page: finished tasks, newest first, or most similar to a task."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from console.access import operator_required
from memoryhub.core.selectors import principal_for_membership
from memoryhub.episodes.models import Episode, EpisodeOutcome
from memoryhub.episodes.selectors import episodes_of, episodes_similar
from memoryhub.memory.embeddings import EmbeddingError
from memoryhub.usage.metering import BudgetExceeded

OUTCOMES = EpisodeOutcome.values


@require_GET
@operator_required()
def episode_list(request: HttpRequest) -> HttpResponse:
    workspace = request.membership.workspace
    task = request.GET.get("task", "").strip()[:4000]
    outcome = request.GET.get("outcome") if request.GET.get("outcome") in OUTCOMES else None
    error = None
    rows: list[tuple[Episode, float | None]] = []
    if task:
        try:
            similar = episodes_similar(principal=principal_for_membership(request.membership), task=task, k=20, outcome=outcome)
            rows = [(s.episode, s.score) for s in similar]
        except (EmbeddingError, BudgetExceeded) as exc:  # the model is down, or the month's budget spent
            error = exc.message
    else:
        rows = [(e, None) for e in episodes_of(workspace=workspace, outcome=outcome)[:100]]
    context = {"rows": rows, "task": task, "outcome": outcome or "", "outcomes": OUTCOMES, "error": error}
    return render(request, "console/episodes.html#results" if request.htmx else "console/episodes.html", context)
