"""Sessions: start one (or find it again)."""

from __future__ import annotations

from typing import Any

from memoryhub.conversations.sessions import session_create
from memoryhub.core.selectors import Principal
from memoryhub.operations import Made, acting_agent
from memoryhub.representations.conversations import session_json


def session_start_answer(
    *, principal: Principal, session_id: str, user_id: str, metadata: dict[str, Any], summary_policy: str | None = None,
    meta_compaction_threshold: int | None = None,
) -> Made:
    """The session, new, or the same id for the same user again (not new)."""
    options = {"summary_policy": summary_policy, "meta_compaction_threshold": meta_compaction_threshold}
    session, created = session_create(
        agent=acting_agent(principal), session_id=session_id, user_id=user_id, metadata=metadata,
        **{name: value for name, value in options.items() if value is not None},
    )
    return Made(session_json(session), new=created)
