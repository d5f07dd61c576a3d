from __future__ import annotations

from celery import shared_task

from memoryhub.compliance import services


# acks_late + reject_on_worker_lost (settings): a worker killed mid-purge leaves the
# message to another worker, and purge_run picks up where the counts stand.
@shared_task
def run_purge(purge_id: int) -> str:
    return services.purge_run(purge_id=purge_id).status


@shared_task
def resume_purges() -> int:
    """Purges a crash left behind (queued but never started, or started long ago and
    never finished) are started again: a 202 is a promise. Re-running is safe."""
    from datetime import timedelta

    from django.db.models import Q
    from django.utils import timezone

    from memoryhub.compliance.models import PurgeRequest, PurgeStatus
    from memoryhub.core.tasking import dispatch

    now = timezone.now()
    stale = PurgeRequest.objects.filter(dry_run=False).filter(
        Q(status=PurgeStatus.QUEUED, created_at__lt=now - timedelta(minutes=1))
        | Q(status=PurgeStatus.RUNNING, started_at__lt=now - timedelta(minutes=30))
    )
    ids = list(stale.values_list("pk", flat=True))
    for purge_id in ids:
        dispatch(run_purge, purge_id)
    return len(ids)
