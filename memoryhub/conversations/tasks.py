from __future__ import annotations

from celery import shared_task

from memoryhub.conversations.models import Session
from memoryhub.conversations.summaries import session_summarise


@shared_task
def summarise_session(session_pk: int) -> int | None:
    """The `rolling` policy's background step; a no-op when nothing is new."""
    session = Session.objects.select_related("agent", "workspace").filter(pk=session_pk).first()
    if session is None:
        return None
    link = session_summarise(session=session, actor="system")
    return link.index if link else None

