from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.db.models import Q
from django.utils import timezone

from memoryhub.core.tasking import dispatch
from memoryhub.portability import imports, services
from memoryhub.portability.models import Export, ExportStatus, Import


@shared_task
def run_export(export_id: str) -> str:
    export = services.export_run(export_id=export_id)
    return export.status if export else "gone"


@shared_task
def sweep_exports() -> int:
    """Deletes the expired exports (and dry runs' uploads), and starts again the exports and
    imports a crash left behind: a 202 is a promise (a running job whose heartbeat stopped
    is queued anew)."""
    stalled = timezone.now() - timedelta(minutes=5)
    Export.objects.filter(status=ExportStatus.RUNNING, heartbeat_at__lt=stalled).update(status=ExportStatus.QUEUED)
    for export_id in Export.objects.filter(Q(status=ExportStatus.QUEUED, created_at__lt=stalled)).values_list("pk", flat=True):
        dispatch(run_export.name, str(export_id))
    # A dry run writes no heartbeat (its one transaction would hide it): not restarted while it may run.
    Import.objects.filter(status=ExportStatus.RUNNING, dry_run=False, heartbeat_at__lt=stalled).update(status=ExportStatus.QUEUED)
    for import_id in Import.objects.filter(status=ExportStatus.QUEUED, created_at__lt=stalled).values_list("pk", flat=True):
        dispatch(run_import.name, import_id)
    imports.imports_expired_delete()
    return services.exports_expired_delete()


@shared_task
def run_import(import_id: int) -> str:
    job = imports.import_run(import_id=import_id)
    return job.status if job else "gone"
