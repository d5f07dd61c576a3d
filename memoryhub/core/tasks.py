from __future__ import annotations

import os
import socket
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from memoryhub.core.idempotency import idempotency_sweep


@shared_task
def ping() -> dict[str, object]:
    """Answers where it ran: the health check and the Redis-mode tests use it."""
    return {"pong": True, "pid": os.getpid(), "host": socket.gethostname()}


@shared_task
def sweep_login_attempts() -> int:
    """Delete login records (django-axes) older than the retention period."""
    from axes.models import AccessAttempt, AccessFailureLog, AccessLog

    cutoff = timezone.now() - timedelta(days=settings.MEMORYHUB_LOGIN_LOG_RETENTION_DAYS)
    deleted = 0
    for model, field in ((AccessLog, "attempt_time"), (AccessFailureLog, "attempt_time"), (AccessAttempt, "attempt_time")):
        count, _ = model.objects.filter(**{f"{field}__lt": cutoff}).delete()
        deleted += count
    return deleted


@shared_task
def sweep_idempotency_keys() -> int:
    return idempotency_sweep()
