from __future__ import annotations

from celery import shared_task

from memoryhub.approvals.services import approvals_escalate, approvals_expire


@shared_task
def expire_approvals() -> int:
    """Expiry and escalation, on the same schedule (both look at pending requests' times)."""
    approvals_escalate()
    return approvals_expire()
