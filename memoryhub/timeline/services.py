from __future__ import annotations

from typing import Any

from memoryhub.core.models import Workspace
from memoryhub.timeline.models import Event

SYSTEM_ACTOR = "system"


def event_record(
    *,
    workspace: Workspace,
    kind: str,
    summary: str,
    actor: str = SYSTEM_ACTOR,
    user_id: str = "",
    session_id: str = "",
    ref: dict[str, Any] | None = None,
) -> Event:
    return Event.objects.create(
        workspace=workspace, kind=kind, summary=summary[:300], actor=actor, user_id=user_id, session_id=session_id, ref=ref or {}
    )
