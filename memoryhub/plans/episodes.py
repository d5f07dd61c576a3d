"""Episodes: finished tasks, remembered so the next similar task goes better."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from memoryhub.conversations.models import Session
from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import Agent
from memoryhub.core.selectors import Principal, agent_actor
from memoryhub.memory import selectors as memory_selectors
from memoryhub.memory.services import MemoryInput, memory_write
from memoryhub.plans.models import Episode
from memoryhub.timeline.services import event_record

EPISODE_TAG = "agent-episode"
SENTENCE_END = re.compile(r"[.!?](?:\s|$)")


@dataclass
class EpisodeInput:
    user_id: str
    task: str
    outcome: str
    narrative: str
    session_id: str | None = None
    tools_used: dict[str, int] = field(default_factory=dict)
    elapsed_ms: int | None = None
    cost: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def sentence_count(text: str) -> int:
    return len(SENTENCE_END.findall(text.strip() + " "))


def episode_record(*, agent: Agent, item: EpisodeInput, session: Session | None) -> Episode:
    sentences = sentence_count(item.narrative)
    if not 3 <= sentences <= 5:
        raise ApplicationError(
            f"The narrative should be 3 to 5 sentences; it has {sentences}.", code="INVALID_NARRATIVE", details={"sentences": sentences}
        )
    tools = ", ".join(f"{name} ×{count}" for name, count in sorted(item.tools_used.items(), key=lambda kv: -kv[1]))
    content = f"Task: {item.task}\nOutcome: {item.outcome}\n{item.narrative}" + (f"\nTools: {tools}" if tools else "")
    with transaction.atomic():
        [(memory, _)] = memory_write(
            agent=agent,
            items=[MemoryInput(
                content=content, user_id=item.user_id, scope="shared", memory_type="episodic", tags=[EPISODE_TAG, item.outcome],
                metadata={"outcome": item.outcome, **({"session_id": session.session_id} if session else {})},
            )],
        )
        episode = Episode.objects.create(
            workspace_id=agent.workspace_id, user_id=item.user_id, agent=agent, session=session, task=item.task, outcome=item.outcome,
            narrative=item.narrative, tools_used=item.tools_used, elapsed_ms=item.elapsed_ms, cost=item.cost, metadata=item.metadata,
            memory=memory,
        )
        event_record(
            workspace=agent.workspace, kind="episode", summary=f"Episode recorded: {item.outcome}.", actor=agent_actor(agent),
            user_id=item.user_id, session_id=session.session_id if session else "", ref={"type": "episode", "id": episode.pk},
        )
    return episode


@dataclass
class SimilarEpisode:
    episode: Episode
    score: float


def episodes_similar(*, principal: Principal, task: str, k: int = 3, outcome: str | None = None, user_id: str | None = None) -> list[SimilarEpisode]:
    tags = [EPISODE_TAG] + ([outcome] if outcome else [])
    hits = memory_selectors.memory_search(
        principal=principal,
        request=memory_selectors.SearchRequest(
            filters=memory_selectors.MemoryFilters(tags=tags, memory_type="episodic", user_id=user_id), query=task, mode="hybrid", max_results=k
        ),
    )
    by_memory = {e.memory_id: e for e in Episode.objects.filter(memory_id__in=[h.entry.pk for h in hits]).select_related("agent")}
    return [SimilarEpisode(episode=by_memory[h.entry.pk], score=h.score) for h in hits if h.entry.pk in by_memory]


def guidance(similar: list[SimilarEpisode]) -> str:
    """A paragraph to put in the prompt: what worked, what wasted time."""
    if not similar:
        return "No similar past episodes."
    lines = ["You have done this before:"]
    for item in similar:
        e = item.episode
        lines.append(f"- {e.task} ({e.outcome}): {e.narrative}")
    worked = [i.episode for i in similar if i.episode.outcome == "success"]
    failed = [i.episode for i in similar if i.episode.outcome != "success"]
    if worked:
        tools = sorted({t for e in worked for t in e.tools_used})
        lines.append("What worked: " + (f"the successful runs used {', '.join(tools)}." if tools else "see the successful runs above."))
    if failed:
        lines.append("What wasted time: " + " ".join(f"{e.task} ended in {e.outcome}." for e in failed))
    return "\n".join(lines)


def episode_draft(*, session: Session, outcome: str | None = None) -> dict[str, Any]:
    """A draft episode from what the session holds (its plan, tool log and messages),
    with the extractive summariser, for the agent to correct and post."""
    from collections import Counter

    from memoryhub.conversations.summarizers import ExtractiveSummariser
    from memoryhub.plans.models import Plan, StepStatus

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
        outcome = "failure" if any(s.status == StepStatus.FAILED for s in steps) else "success" if steps and all(s.status == StepStatus.DONE for s in steps) else "handoff"
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
