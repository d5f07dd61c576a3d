from __future__ import annotations

from typing import Any

from memoryhub.core import live
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
    event = Event.objects.create(
        workspace=workspace, kind=kind, summary=summary[:300], actor=actor, user_id=user_id, session_id=session_id, ref=ref or {}
    )
    # A wake-up only: the feed reads what is new from the table, in commit order (the id
    # is final only once the transaction commits; see migration 0004).
    groups = [live.workspace_group(workspace.pk)] + ([live.session_group(workspace.pk, session_id)] if session_id else [])
    live.publish(groups=groups, message={"kind": kind})
    return event
