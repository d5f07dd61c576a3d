from __future__ import annotations

from celery import shared_task

from memoryhub.compliance import retention, services
from memoryhub.compliance.models import PurgeRequest
from memoryhub.core.jobs import job_stall_cutoff, jobs_resume
from memoryhub.core.tasking import dispatch


# acks_late + reject_on_worker_lost (settings): a worker killed mid-purge leaves the
# message to another worker, and purge_run picks up where the counts stand.
@shared_task
def run_purge(purge_id: int) -> str:
    return services.purge_run(purge_id=purge_id).status


@shared_task
def resume_purges() -> int:
    """Purges a crash left behind are started again (memoryhub/core/jobs.py): a 202 is a
    promise. Starting one twice is harmless: a purge is claimed by one job at a time."""
    ids = jobs_resume(jobs=PurgeRequest.objects.filter(dry_run=False), task=run_purge.name)
    # A clean-up lost with its process: start it again (a pass under way is left alone).
    if services.cleanup_pending().filter(finished_at__lt=job_stall_cutoff()).exists():
        dispatch(clean_purged_storage.name)
    return len(ids)


@shared_task
def clean_purged_storage() -> int:
    return services.purged_storage_clean()


@shared_task
def enforce_retention() -> int:
    return sum(sum(run.counts.values()) for run in retention.retention_enforce())


@shared_task
def sweep_expired_memories() -> int:
    return retention.expired_memories_sweep()
