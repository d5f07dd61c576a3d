from __future__ import annotations

from celery import shared_task

from memoryhub.conversations.models import Session
from memoryhub.conversations.summaries import session_summarise
from memoryhub.usage import metering


@shared_task
def summarise_session(session_pk: int) -> int | None:
    """The `rolling` policy's background step; a no-op when nothing is new."""
    session = Session.objects.select_related("agent", "workspace").filter(pk=session_pk).first()
    if session is None:
        return None
    # The summary's model calls (and the memory it writes) are the session's agent's.
    with metering.attributed(workspace_id=session.workspace_id, agent_id=session.agent_id, user_id=session.user_id):
        link = session_summarise(session=session, actor="system")
    return link.index if link else None

