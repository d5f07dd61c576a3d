from __future__ import annotations

from celery import shared_task

from memoryhub.approvals.services import approvals_expire


@shared_task
def expire_approvals() -> int:
    return approvals_expire()
