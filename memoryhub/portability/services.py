"""Exports: asked for, built in the background, read back, swept when they expire."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from memoryhub.conversations.models import Session
from memoryhub.core import tasking
from memoryhub.core.audit import audit_record
from memoryhub.core.errors import ApplicationError, NotFound
from memoryhub.core.models import Membership, Workspace
from memoryhub.core.selectors import operator_actor
from memoryhub.portability.archive import KINDS, Kind, Written, archive_write, kind_rows
from memoryhub.core.jobs import JobStatus, job_claim
from memoryhub.portability.models import Export, ExportPart, ExportScope
from memoryhub.privacy.services import user_hash
from memoryhub.notifications.services import notification_queue, public_url

RUN_TASK = "memoryhub.portability.tasks.run_export"
# How often a running export writes its progress (and heartbeat) to its row.
PROGRESS_SECONDS = 1.0


def export_request(
    *, membership: Membership, scope: str, user_id: str = "", session_id: str = "", with_vectors: bool = False,
) -> Export:
    """A queued export, started once the transaction commits; audited. The caller has
    checked the operator's role for the scope."""
    workspace = membership.workspace
    if scope == ExportScope.SESSION and not Session.objects.filter(workspace=workspace, session_id=session_id).exists():
        raise NotFound("No such session in this workspace.", code="SESSION_NOT_FOUND")
    if scope == ExportScope.USER and not user_id:
        raise ApplicationError("A user export names its user_id.", code="VALIDATION_ERROR")
    export = Export.objects.create(
        workspace=workspace, scope=scope, asked_user_id=user_id if scope == ExportScope.USER else "",
        session_id=session_id if scope == ExportScope.SESSION else "", with_vectors=with_vectors,
        requested_by=operator_actor(membership.user),
        expires_at=timezone.now() + timedelta(hours=settings.MEMORYHUB_EXPORT_TTL_HOURS),
        # Known at once for a user's export, so that a purge from now on takes it.
        user_ids=[user_id] if scope == ExportScope.USER else [],
    )
    _audit_export(actor=operator_actor(membership.user), workspace=workspace, target=str(export.pk), scope=scope, user_id=user_id,
                  session_id=session_id, with_vectors=with_vectors)
    transaction.on_commit(lambda: tasking.dispatch(RUN_TASK, str(export.pk)))
    return export


def _audit_export(
    *, actor: str, workspace: Workspace, target: str, scope: str, user_id: str, session_id: str, with_vectors: bool,
) -> None:
    # An access request names its user by the keyed hash, as purges do: the audit log never holds a user_id.
    audit_record(
        actor=actor, action="export_requested", workspace=workspace, target=target,
        details={"scope": scope, "with_vectors": with_vectors, **({"session_id": session_id} if session_id else {}),
                 **({"user_hash": user_hash(workspace_id=workspace.pk, user_id=user_id)} if scope == ExportScope.USER else {})},
    )


def export_run(*, export_id: str) -> Export | None:
    """Builds the archive. Claimed by a conditional update, so a second job for the same
    export (a retry, the resume sweep) does nothing while the first runs."""
    claimed = job_claim(jobs=Export.objects.filter(pk=export_id))
    if not claimed:
        return Export.objects.filter(pk=export_id).first()
    export = Export.objects.select_related("workspace").get(pk=export_id)
    try:
        _build(export)
    except Exception as error:  # recorded on the export for whoever asked; the job's log has the rest
        ExportPart.objects.filter(export=export).delete()
        Export.objects.filter(pk=export.pk).update(status=JobStatus.FAILED, error=str(error)[:2000], finished_at=timezone.now())
        raise
    return Export.objects.get(pk=export.pk)


def _scoped_kinds(*, workspace: Workspace, scope: str, user_id: str, session_id: str) -> list[tuple[Kind, QuerySet]]:
    session = Session.objects.get(workspace=workspace, session_id=session_id) if scope == ExportScope.SESSION else None
    return [(kind, kind_rows(kind, workspace=workspace, scope=scope, user_id=user_id, session=session)) for kind in KINDS]


def _manifest(*, workspace: Workspace, scope: str, user_id: str, session_id: str, with_vectors: bool) -> dict[str, Any]:
    return {
        "scope": scope, "workspace": workspace.slug, "created_at": timezone.now().isoformat(), "with_vectors": with_vectors,
        **({"user_id": user_id} if user_id else {}), **({"session_id": session_id} if session_id else {}),
    }


def export_to_file(
    *, workspace: Workspace, scope: str, path: Path, user_id: str = "", session_id: str = "", with_vectors: bool = False,
    on_progress: Callable[[int, int], None] = lambda done, total: None,
) -> Written:
    """The archive written straight to `path` (the command line's export: an operator on
    the hub's machine, no download to expire); audited as the command line's."""
    kinds = _scoped_kinds(workspace=workspace, scope=scope, user_id=user_id, session_id=session_id)
    total, done = sum(rows.count() for _, rows in kinds), 0

    def on_rows(n: int) -> None:
        nonlocal done
        done += n
        on_progress(done, total)

    _audit_export(actor="system:manage.py export", workspace=workspace, target=str(path), scope=scope, user_id=user_id,
                  session_id=session_id, with_vectors=with_vectors)
    with open(path, "wb") as out:
        return archive_write(
            save_part=lambda seq, data: out.write(data), with_vectors=with_vectors, on_rows=on_rows, kinds=kinds,
            manifest=_manifest(workspace=workspace, scope=scope, user_id=user_id, session_id=session_id, with_vectors=with_vectors),
            sealed_for=workspace.pk,
        )


def progress_recorder(job: QuerySet) -> Callable[[int, int], None]:
    """(done, total) written to a job's row as its progress, with its heartbeat (what the
    sweep reads to restart a job a crash stopped), once a second at most; never 1.0, which
    the job's end writes with its results."""
    reported = time.monotonic()

    def report(done: int, total: int) -> None:
        nonlocal reported
        if time.monotonic() - reported >= PROGRESS_SECONDS:
            reported = time.monotonic()
            job.update(progress=round(min(done / max(total, 1), 0.99), 4), heartbeat_at=timezone.now())

    return report


def _build(export: Export) -> None:
    kinds = _scoped_kinds(workspace=export.workspace, scope=export.scope, user_id=export.asked_user_id, session_id=export.session_id)
    total = max(1, sum(rows.count() for _, rows in kinds))
    ExportPart.objects.filter(export=export).delete()  # a run cut short before
    done, report = 0, progress_recorder(Export.objects.filter(pk=export.pk))

    def on_rows(n: int) -> None:
        nonlocal done
        done += n
        report(done, total)

    def save_part(seq: int, data: bytes) -> None:
        ExportPart.objects.create(export=export, seq=seq, data=data)

    manifest = _manifest(
        workspace=export.workspace, scope=export.scope, user_id=export.asked_user_id, session_id=export.session_id,
        with_vectors=export.with_vectors,
    )
    written = archive_write(
        save_part=save_part, manifest=manifest, kinds=kinds, with_vectors=export.with_vectors, on_rows=on_rows, sealed_for=export.workspace_id,
    )
    with transaction.atomic():
        Export.objects.filter(pk=export.pk).update(
            status=JobStatus.DONE, progress=1.0, counts=written.counts, bytes=written.bytes, sha256=written.sha256,
            user_ids=sorted(written.user_ids | set(export.user_ids)), finished_at=timezone.now(), heartbeat_at=timezone.now(),
        )
        notification_queue(
            workspace=export.workspace, event="export.completed", title=f"The {export.scope} export {export.pk} is ready to download",
            data={
                "export_id": str(export.pk), "scope": export.scope, "status": JobStatus.DONE, "bytes": written.bytes,
                "expires_at": export.expires_at.isoformat(), "url": public_url("/portability/"),
            },
            user_id=export.asked_user_id,
        )


def export_download(*, export: Export) -> Iterator[bytes]:
    """The archive's bytes, part by part (one part in memory at a time)."""
    for pk in ExportPart.objects.filter(export=export).order_by("seq").values_list("pk", flat=True):
        yield bytes(ExportPart.objects.values_list("data", flat=True).get(pk=pk))


def exports_expired_delete() -> int:
    """Deletes the exports past their expiry, archives and all."""
    _, deleted = Export.objects.filter(expires_at__lte=timezone.now()).delete()
    return deleted.get(Export._meta.label, 0)
