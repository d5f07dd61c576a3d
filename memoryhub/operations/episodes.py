"""Episodes: record a finished task, find similar ones."""

from __future__ import annotations

from typing import Any

from memoryhub.conversations.models import Session
from memoryhub.core.selectors import Principal
from memoryhub.episodes.selectors import episodes_similar, guidance
from memoryhub.episodes.services import EpisodeInput, episode_record
from memoryhub.operations import acting_agent
from memoryhub.representations.episodes import episode_json


def episode_record_answer(*, principal: Principal, session: Session | None, item: EpisodeInput) -> dict[str, Any]:
    return episode_json(episode_record(agent=acting_agent(principal), item=item, session=session))


def episodes_similar_answer(
    *, principal: Principal, task: str, k: int, outcome: str | None, user_id: str | None,
) -> dict[str, Any]:
    similar = episodes_similar(principal=principal, task=task, k=k, outcome=outcome, user_id=user_id)
    return {"results": [{"episode": episode_json(s.episode), "score": round(s.score, 6)} for s in similar], "guidance": guidance(similar)}
