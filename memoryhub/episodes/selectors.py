"""Reads of episodes: the most similar past ones for a new task, and a draft from a session."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from memoryhub.conversations.models import Session
from memoryhub.conversations.summary_backends import ExtractiveSummariser
from memoryhub.core.models import Workspace
from memoryhub.core.pagination import Page, keyset_page
from memoryhub.core.selectors import Principal
from memoryhub.episodes.models import EPISODE_TAG, Episode, EpisodeOutcome
from memoryhub.memory import search
from memoryhub.memory import selectors as memory_selectors
from memoryhub.plans.models import Plan, StepStatus


@dataclass
class SimilarEpisode:
    episode: Episode
    score: float


def episodes_similar(*, principal: Principal, task: str, k: int = 3, outcome: str | None = None, user_id: str | None = None) -> list[SimilarEpisode]:
    tags = [EPISODE_TAG] + ([outcome] if outcome else [])
    hits = search.memory_search(
        principal=principal,
        request=search.SearchRequest(
            filters=memory_selectors.MemoryFilters(tags=tags, memory_type="episodic", user_id=user_id), query=task, mode="hybrid", max_results=k
        ),
    )
    by_memory = {e.memory_id: e for e in Episode.objects.filter(memory_id__in=[h.entry.pk for h in hits]).select_related("agent")}
    return [SimilarEpisode(episode=by_memory[h.entry.pk], score=h.score) for h in hits if h.entry.pk in by_memory]


def episodes_of(*, workspace: Workspace, outcome: str | None = None) -> QuerySet[Episode]:
    episodes = Episode.objects.filter(workspace=workspace).select_related("agent", "session").order_by("-created_at")
    if outcome:
        episodes = episodes.filter(outcome=outcome)
    return episodes


def guidance(similar: list[SimilarEpisode]) -> str:
    """A paragraph to put in the prompt: what worked, what wasted time."""
    if not similar:
        return "No similar past episodes."
    lines = ["You have done this before:"]
    for item in similar:
        e = item.episode
        lines.append(f"- {e.task} ({e.outcome}): {e.narrative}")
    worked = [i.episode for i in similar if i.episode.outcome == EpisodeOutcome.SUCCESS]
    failed = [i.episode for i in similar if i.episode.outcome != EpisodeOutcome.SUCCESS]
    if worked:
        tools = sorted({t for e in worked for t in e.tools_used})
        lines.append("What worked: " + (f"the successful runs used {', '.join(tools)}." if tools else "see the successful runs above."))
    if failed:
        lines.append("What wasted time: " + " ".join(f"{e.task} ended in {e.outcome}." for e in failed))
    return "\n".join(lines)


def episode_draft(*, session: Session, outcome: str | None = None) -> dict[str, Any]:
    """A draft episode from what the session holds (its plan, tool log and messages),
    with the extractive summariser, for the agent to correct and post."""
    plan = Plan.objects.filter(session=session, is_current=True).first()
    steps = list(plan.steps.order_by("position")) if plan else []
    tools = Counter(session.tool_calls.values_list("tool", flat=True))
    sentences = []
    if plan:
        done = [s for s in steps if s.status == StepStatus.DONE]
        failed = [s for s in steps if s.status == StepStatus.FAILED]
        sentences.append(f"Worked on: {plan.goal.rstrip('.')}.")
        sentences.append(f"Finished {len(done)} of {len(steps)} steps" + (f", {len(failed)} failed." if failed else "."))
    if tools:
        sentences.append("Used " + ", ".join(f"{t} ×{n}" for t, n in tools.most_common(5)) + ".")
    summary = ExtractiveSummariser().summarise(list(session.messages.order_by("seq")), max_chars=400)
    for line in summary.splitlines():
        if len(sentences) >= 5:
            break
        text = line.split(": ", 1)[-1].strip()
        if text:
            sentences.append(text if text.endswith((".", "!", "?")) else text + ".")
    while len(sentences) < 3:
        sentences.append("No more was recorded.")
    if outcome is None:
        if any(s.status == StepStatus.FAILED for s in steps):
            outcome = EpisodeOutcome.FAILURE
        elif steps and all(s.status == StepStatus.DONE for s in steps):
            outcome = EpisodeOutcome.SUCCESS
        else:
            outcome = EpisodeOutcome.HANDOFF
    first = session.messages.order_by("seq").values_list("created_at", flat=True).first()
    last = session.messages.order_by("-seq").values_list("created_at", flat=True).first()
    return {
        "user_id": session.user_id,
        "session_id": session.session_id,
        "task": plan.goal if plan else (session.messages.filter(role="user").order_by("seq").values_list("content", flat=True).first() or "")[:200],
        "outcome": outcome,
        "narrative": " ".join(sentences[:5]),
        "tools_used": dict(tools),
        "elapsed_ms": int((last - first).total_seconds() * 1000) if first and last else None,
    }


def episodes_page(
    *, principal: Principal, outcome: str | None = None, user_id: str | None = None, cursor: str | None, limit: int
) -> Page[Episode]:
    """Newest first: an agent's own episodes, or every episode of an operator's workspace."""
    episodes = Episode.objects.filter(workspace=principal.workspace).select_related("agent", "session")
    if principal.is_agent:
        episodes = episodes.filter(agent=principal.agent)
    if outcome:
        episodes = episodes.filter(outcome=outcome)
    if user_id:
        episodes = episodes.filter(user_id=user_id)
    return keyset_page(episodes, key="-id", cursor=cursor, limit=limit)
