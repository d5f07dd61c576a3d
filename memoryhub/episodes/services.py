"""Writes of episodes: finished tasks, remembered so the next similar task goes better."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from memoryhub.conversations.models import Session
from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import Agent
from memoryhub.core.selectors import agent_actor
from memoryhub.episodes.models import EPISODE_TAG, Episode
from memoryhub.memory.models import MemoryEntry, SourceKind
from memoryhub.memory.services import MemoryInput, memory_write
from memoryhub.timeline.services import event_record



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


def episode_record(*, agent: Agent, item: EpisodeInput, session: Session | None) -> Episode:
    """Record a finished task. The narrative is meant to be 3 to 5 sentences (docs/sessions.md, "Episodes");
    agents are not refused for telling more or less, only for telling too much (the
    API's character limit)."""
    if session is not None and session.user_id != item.user_id:
        raise ApplicationError("The session is about another user_id.", code="SESSION_USER_MISMATCH")
    tools = ", ".join(f"{name} ×{count}" for name, count in sorted(item.tools_used.items(), key=lambda kv: -kv[1]))
    content = f"Task: {item.task}\nOutcome: {item.outcome}\n{item.narrative}" + (f"\nTools: {tools}" if tools else "")
    with transaction.atomic():
        [written] = memory_write(
            agent=agent,
            items=[MemoryInput(
                content=content, user_id=item.user_id, scope="shared", memory_type="episodic", tags=[EPISODE_TAG, item.outcome],
                metadata={"outcome": item.outcome, **({"session_id": session.session_id} if session else {})},
            )],
        )
        episode = Episode.objects.create(
            workspace_id=agent.workspace_id, user_id=item.user_id, agent=agent, session=session, task=item.task, outcome=item.outcome,
            narrative=item.narrative, tools_used=item.tools_used, elapsed_ms=item.elapsed_ms, cost=item.cost, metadata=item.metadata,
            memory=written.entry,
        )
        # The episode's own memory comes from it: named once the episode has its id.
        MemoryEntry.objects.filter(pk=written.entry.pk).update(source_kind=SourceKind.EPISODE, source_episode_id=episode.pk)
        event_record(
            workspace=agent.workspace, kind="episode", summary=f"Episode recorded: {item.outcome}.", actor=agent_actor(agent),
            user_id=item.user_id, session_id=session.session_id if session else "", ref={"type": "episode", "id": episode.pk},
        )
    return episode
