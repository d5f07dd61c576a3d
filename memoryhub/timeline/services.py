from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection, transaction

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


@contextmanager
def purging() -> Iterator[None]:
    """Within this block (one transaction) timeline rows may be deleted: the compliance
    purge and the deletion of a whole workspace. Nothing else can."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL memoryhub.timeline_purge = 'on'")
        try:
            yield
        finally:
            # Inside an outer transaction SET LOCAL would outlive this block.
            cursor.execute("SET LOCAL memoryhub.timeline_purge = 'off'")
