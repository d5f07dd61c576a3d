from __future__ import annotations

from decimal import Decimal

from typing import Any

from memoryhub.core import live
from memoryhub.core.models import Workspace
from memoryhub.timeline.models import EVENT_KINDS, Event

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
    if kind not in EVENT_KINDS:
        raise ValueError(f"{kind!r} is not a timeline event kind (timeline.models.EVENT_KINDS)")
    event = Event.objects.create(
        workspace=workspace, kind=kind, summary=summary[:300], actor=actor, user_id=user_id, session_id=session_id, ref=ref or {}
    )
    event_announce(workspace_id=workspace.pk, kind=kind, session_id=session_id)
    return event


def event_announce(*, workspace_id: int, kind: str, session_id: str = "") -> None:
    """Wake the live feed's streams for an event recorded in the current transaction, once
    it commits. `event_record` calls it; a write that inserts its event in SQL of its own
    (a checkpoint's one statement) must call it too, or streams see the event only at
    their next re-check, a minute later.

    A wake-up only: the feed reads what is new from the table, in commit order (the id is
    final only once the transaction commits; see migration 0004)."""
    groups = [live.workspace_group(workspace_id)] + ([live.session_group(workspace_id, session_id)] if session_id else [])
    live.publish(groups=groups, message={"kind": kind})


def budget_warning_recorded(*, workspace_id: int, spent: Decimal, warn_at: Decimal, limit: Decimal | None, **_: Any) -> None:
    """The month's warning on the workspace's feed (memoryhub.usage sends it, once a month)."""
    workspace = Workspace.objects.get(pk=workspace_id)
    limit_text = f" of a monthly limit of {limit}" if limit is not None else ""
    event_record(
        workspace=workspace, kind="budget", summary=f"Model costs this month reached {spent}, past the warning at {warn_at}{limit_text}.",
        ref={"type": "budget", "spent": float(spent), "warn_at": float(warn_at), "limit": None if limit is None else float(limit)},
    )
