from __future__ import annotations

from celery import shared_task

from memoryhub.compliance import services


# acks_late + reject_on_worker_lost (settings): a worker killed mid-purge leaves the
# message to another worker, and purge_run picks up where the counts stand.
@shared_task
def run_purge(purge_id: int) -> str:
    return services.purge_run(purge_id=purge_id).status
