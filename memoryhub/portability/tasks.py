from __future__ import annotations


from celery import shared_task

from memoryhub.portability import imports, services
from memoryhub.core.jobs import JobStatus, jobs_resume
from memoryhub.portability.models import Export, Import


@shared_task
def run_export(export_id: str) -> str:
    export = services.export_run(export_id=export_id)
    return export.status if export else "gone"


@shared_task
def sweep_exports() -> int:
    """Deletes the expired exports (and dry runs' uploads), and starts again the exports and
    imports a crash left behind (memoryhub/core/jobs.py): a 202 is a promise."""
    jobs_resume(jobs=Export.objects.all(), task=run_export.name)
    # A dry run writes no heartbeat while it runs (its one transaction would hide it): not
    # restarted while it may run.
    jobs_resume(jobs=Import.objects.exclude(dry_run=True, status=JobStatus.RUNNING), task=run_import.name)
    imports.imports_expired_delete()
    return services.exports_expired_delete()


@shared_task
def run_import(import_id: int) -> str:
    job = imports.import_run(import_id=import_id)
    return job.status if job else "gone"
