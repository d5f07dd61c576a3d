from __future__ import annotations

from typing import Any

from memoryhub.episodes.models import Episode
from memoryhub.representations import iso_datetime


def episode_json(episode: Episode) -> dict[str, Any]:
    """A finished task (its agent and session loaded with it)."""
    return {
        "id": episode.pk, "user_id": episode.user_id, "agent": episode.agent.name, "task": episode.task, "outcome": episode.outcome,
        "narrative": episode.narrative, "tools_used": episode.tools_used, "elapsed_ms": episode.elapsed_ms, "cost": episode.cost,
        "session_id": episode.session.session_id if episode.session_id else None, "metadata": episode.metadata,
        "created_at": iso_datetime(episode.created_at),
    }
