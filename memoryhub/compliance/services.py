"""Erasing one end user from every store of a workspace, with a receipt."""

from __future__ import annotations

import time
import uuid
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, models, transaction
from django.db.models import F
from django.utils import timezone

from memoryhub.compliance.journal import journal_append
from memoryhub.core.jobs import JobStatus, job_claim
from memoryhub.compliance.models import PurgeRequest
from memoryhub.core import tasking
from memoryhub.core.audit import audit_record
from memoryhub.core.erasure import purging
from memoryhub.core.models import Membership, Workspace
from memoryhub.core.registry import user_condition_sql, user_field, user_models, user_rows
from memoryhub.core.selectors import operator_actor
from memoryhub.memory.vector_index import user_vector_indexes_prune
from memoryhub.privacy.fence import fence_lock_sql
from memoryhub.privacy.services import user_block, user_hash
from memoryhub.notifications.services import notification_queue, public_url
from memoryhub.timeline.services import event_record
from memoryhub.usage.ledger import pending_user_forgotten


def purge_counts(*, workspace_id: int, user_id: str) -> dict[str, int]:
    return {m._meta.label: user_rows(m, workspace_id=workspace_id, user_id=user_id).count() for m in user_models()}


def purge_request(*, membership: Membership, user_id: str, dry_run: bool, block_new_writes: bool = False) -> PurgeRequest:
    workspace = membership.workspace
    digest = user_hash(workspace_id=workspace.pk, user_id=user_id)
    actor = operator_actor(membership.user)
    if dry_run:
        counts = purge_counts(workspace_id=workspace.pk, user_id=user_id)
        now = timezone.now()
        with transaction.atomic():
            purge = PurgeRequest.objects.create(
                workspace=workspace, requested_by=membership.user, user_hash=digest, dry_run=True, status=JobStatus.DONE, progress=1.0,
                counts=counts, started_at=now, finished_at=now,
            )
            audit_record(action="purge_dry_run", actor=actor, workspace=workspace, target=f"purge:{purge.pk}", details={"user_hash": digest})
        return purge
    try:
        with transaction.atomic():
            purge = PurgeRequest.objects.create(workspace=workspace, requested_by=membership.user, user_hash=digest, pending_user_id=user_id)
            if block_new_writes:
                # Blocked before the purge starts: nothing written meanwhile survives it.
                user_block(workspace=workspace, user_hash_value=digest, purge_id=purge.pk)
            audit_record(
                action="purge_requested", actor=actor, workspace=workspace, target=f"purge:{purge.pk}",
                details={"user_hash": digest, "block_new_writes": block_new_writes},
            )
            tasking.enqueue("memoryhub.compliance.tasks.run_purge", purge.pk)
            transaction.on_commit(
                lambda: journal_append(purge_id=purge.pk, workspace_id=workspace.pk, user_hash=digest, blocked=block_new_writes)
            )
    except IntegrityError:
        # Coalesce: the purge already queued or running for this user is the answer
        # (or, if it ended meanwhile, that one); what this request adds still holds.
        with transaction.atomic():
            live = PurgeRequest.objects.filter(workspace=workspace, user_hash=digest, dry_run=False).order_by("-pk").first()
            if block_new_writes:
                user_block(workspace=workspace, user_hash_value=digest, purge_id=live.pk)
            audit_record(
                action="purge_requested", actor=actor, workspace=workspace, target=f"purge:{live.pk}",
                details={"user_hash": digest, "block_new_writes": block_new_writes, "joined": True},
            )
        return live
    return purge


class PurgeSuperseded(Exception):
    """Another runner took this purge over (ours stalled); ours stops without writing."""


def _purge_claim(*, purge_id: int, runner: str) -> bool:
    """Take the purge if it is queued, or running under a runner whose heartbeat stopped."""
    return job_claim(
        jobs=PurgeRequest.objects.filter(pk=purge_id, dry_run=False), take_over_stalled=True, runner=runner, attempts=F("attempts") + 1,
    )


def _purge_give_up(*, purge: PurgeRequest, runner: str) -> PurgeRequest:
    """A purge that failed MEMORYHUB_PURGE_MAX_ATTEMPTS times ends as failed: the user_id
    is blanked, the fence lifts, the receipt says what is left; it can be asked again."""
    remaining = {label: n for label, n in purge_counts(workspace_id=purge.workspace_id, user_id=purge.pending_user_id).items() if n}
    receipt = _receipt(purge=purge, counts=purge.counts, remaining=remaining, finished=timezone.now())
    receipt.update(attempts=purge.attempts, error=purge.error)
    receipt["verification"]["passed"] = False
    with transaction.atomic():
        ended = PurgeRequest.objects.filter(pk=purge.pk, runner=runner, status=JobStatus.RUNNING).update(
            status=JobStatus.FAILED, finished_at=timezone.now(), receipt=receipt, pending_user_id=""
        )
        if ended:
            audit_record(
                action="purge_failed", actor="system", workspace=purge.workspace, target=f"purge:{purge.pk}",
                details={"user_hash": purge.user_hash, "attempts": purge.attempts, "error": purge.error},
            )
            _enqueue_storage_clean()
    return PurgeRequest.objects.get(pk=purge.pk)


def _receipt(*, purge: PurgeRequest, counts: dict[str, int], remaining: dict[str, int], finished: Any) -> dict[str, Any]:
    """What the receipt proves: who asked, when, what was deleted, what the check found;
    the user only by the keyed hash."""
    return {
        "purge_id": purge.pk,
        "workspace": purge.workspace.slug,
        "user_hash": purge.user_hash,
        "requested_by": purge.requested_by.get_username() if purge.requested_by else None,
        "requested_at": purge.created_at.isoformat(),
        "started_at": purge.started_at.isoformat() if purge.started_at else None,
        "finished_at": finished.isoformat(),
        "deleted": counts,
        "verification": {"models_checked": [m._meta.label for m in user_models()], "remaining": remaining, "passed": not remaining},
    }


def _enqueue_storage_clean() -> None:
    tasking.enqueue("memoryhub.compliance.tasks.clean_purged_storage")


def _delete_batch(*, model: type[models.Model], workspace_id: int, user_id: str, limit: int) -> int:
    """Delete up to `limit` of the user's rows of `model`. References to them that Django
    would set to NULL (a fork's parent, a superseded fact) are cleared in the same
    transaction: the database's own foreign keys check at commit, batch by batch."""
    table, pk = model._meta.db_table, model._meta.pk.column
    with connection.cursor() as cursor:
        cursor.execute(
            f'SELECT "{pk}" FROM "{table}" WHERE workspace_id = %s AND {user_condition_sql(model)} LIMIT %s FOR UPDATE',
            [workspace_id, user_id, limit],
        )
        ids = [row[0] for row in cursor.fetchall()]
        if not ids:
            return 0
        for relation in model._meta.related_objects:
            if relation.on_delete is models.SET_NULL:
                field = relation.field
                related_table = field.model._meta.db_table
                # Rows deleted in this same batch are left alone: updating them first
                # would write (and index: HNSW for memories) a version about to die.
                same_batch = f' AND NOT "{field.model._meta.pk.column}" = ANY(%s)' if related_table == table else ""
                cursor.execute(
                    f'UPDATE "{related_table}" SET "{field.column}" = NULL WHERE "{field.column}" = ANY(%s){same_batch}',
                    [ids, ids] if same_batch else [ids],
                )
        cursor.execute(f'DELETE FROM "{table}" WHERE "{pk}" = ANY(%s)', [ids])
        return cursor.rowcount


def purge_run(*, purge_id: int) -> PurgeRequest:
    """Delete the user's rows model by model in batches, verify nothing is left, write
    the receipt. Each batch commits together with the counts and progress it adds, and
    only while this runner still holds the purge, so a job killed at any point and run
    again ends with the same rows gone and every row counted once."""
    runner = uuid.uuid4().hex
    if not _purge_claim(purge_id=purge_id, runner=runner):
        return PurgeRequest.objects.get(pk=purge_id)
    purge = PurgeRequest.objects.select_related("workspace", "requested_by").get(pk=purge_id)
    if purge.attempts > settings.MEMORYHUB_PURGE_MAX_ATTEMPTS:
        return _purge_give_up(purge=purge, runner=runner)
    try:
        return _purge_delete(purge=purge, runner=runner)
    except Exception as failure:
        # Kept for the receipt by type only: a database message may quote the user_id.
        PurgeRequest.objects.filter(pk=purge_id, runner=runner).update(error=type(failure).__name__, heartbeat_at=None)
        raise


def _purge_delete(*, purge: PurgeRequest, runner: str) -> PurgeRequest:
    purge_id = purge.pk
    user_id, workspace_id = purge.pending_user_id, purge.workspace_id
    with transaction.atomic(), connection.cursor() as cursor:
        # The fence (fence.py): wait for writes about this user that were in flight
        # before the request; later ones are refused by the trigger.
        cursor.execute(fence_lock_sql(), [workspace_id, user_id])
    targets = user_models()
    counts: dict[str, int] = dict(purge.counts)
    left = purge_counts(workspace_id=workspace_id, user_id=user_id)
    total = max(1, sum(counts.values()) + sum(left.values()))
    batch = settings.MEMORYHUB_PURGE_BATCH_ROWS
    try:
        for model in targets:
            label = model._meta.label
            while True:
                with purging():
                    deleted = _delete_batch(model=model, workspace_id=workspace_id, user_id=user_id, limit=batch)
                    if not deleted:
                        break
                    counts[label] = counts.get(label, 0) + deleted
                    held = PurgeRequest.objects.filter(pk=purge_id, runner=runner, status=JobStatus.RUNNING).update(
                        counts=counts, progress=min(0.99, sum(counts.values()) / total), heartbeat_at=timezone.now()
                    )
                    if not held:
                        raise PurgeSuperseded()
            counts.setdefault(label, 0)
    except PurgeSuperseded:
        return PurgeRequest.objects.get(pk=purge_id)
    # Usage this process counted about the user and has not written yet would bring their
    # user_id back once written: it stays counted, as no one's.
    pending_user_forgotten(workspace_id, user_id)
    remaining = {label: n for label, n in purge_counts(workspace_id=workspace_id, user_id=user_id).items() if n}
    finished = timezone.now()
    receipt = _receipt(purge=purge, counts=counts, remaining=remaining, finished=finished)
    passed = not remaining
    with transaction.atomic():
        ended = PurgeRequest.objects.filter(pk=purge_id, runner=runner, status=JobStatus.RUNNING).update(
            status=JobStatus.DONE if passed else JobStatus.FAILED, finished_at=finished, receipt=receipt, pending_user_id="",
            progress=1.0, counts=counts,
        )
        if not ended:
            return PurgeRequest.objects.get(pk=purge_id)
        event_record(
            workspace=purge.workspace, kind="purge",
            summary=f"Purge #{purge.pk}: {sum(counts.values())} rows deleted, verification {'passed' if passed else 'FAILED'}.",
            actor=operator_actor(purge.requested_by), ref={"type": "purge", "id": purge.pk},
        )
        # Nothing about the user in it: their id would outlive the purge in the receivers.
        notification_queue(
            workspace=purge.workspace, event="purge.completed",
            title=f"Purge #{purge.pk} {'completed' if passed else 'FAILED its verification'}: {sum(counts.values())} rows deleted",
            data={
                "purge_id": str(purge.pk), "status": JobStatus.DONE if passed else JobStatus.FAILED, "deleted": sum(counts.values()),
                "verification_passed": passed, "url": public_url("/compliance/"),
            },
        )
        audit_record(
            action="purge_completed" if passed else "purge_failed", actor="system", workspace=purge.workspace, target=f"purge:{purge.pk}",
            details={"user_hash": purge.user_hash, "deleted": sum(counts.values()), "verification_passed": passed},
        )
        _enqueue_storage_clean()
    purge.refresh_from_db()
    return purge


STORAGE_LOCK = (7244, 1)  # one storage clean-up at a time, hub-wide


def _older_snapshots_gone(cursor: Any, *, since: Any, patience: float = 30.0) -> bool:
    """Whether every transaction that began before `since` has ended (waiting up to
    `patience` seconds): one of them could still see the deleted rows, and VACUUM keeps
    what someone can see. A long one (a pg_dump) makes the pass come back later."""
    deadline = time.monotonic() + patience
    while True:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_xmin IS NOT NULL AND xact_start < %s",
            [since],
        )
        if not cursor.fetchone()[0]:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)


def cleanup_pending() -> models.QuerySet[PurgeRequest]:
    """Purges that deleted rows (a failed one may have) whose storage is not cleaned yet."""
    return PurgeRequest.objects.filter(status__in=[JobStatus.DONE, JobStatus.FAILED], dry_run=False, storage_cleaned_at__isnull=True)


def purged_storage_clean() -> int:
    """VACUUM, with index clean-up forced, the tables purges deleted from, until no
    finished purge is left waiting for it; returns how many purges it covered.

    A plain VACUUM skips the index scans when the dead rows are few (under 2% of the
    pages, PostgreSQL's "bypass"): after a purge, the user's vectors would stay in the
    HNSW index and their user_id in the btrees. INDEX_CLEANUP ON removes them, at the
    cost of a full pass over each index (minutes for HNSW at a million rows), so one
    pass serves every purge that finished before it began."""
    covered = 0
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", STORAGE_LOCK)
        if not cursor.fetchone()[0]:
            return 0  # the pass under way loops until nothing is waiting
        try:
            while True:
                begun = timezone.now()
                waiting = list(cleanup_pending().filter(finished_at__lte=begun))
                if not waiting:
                    return covered
                if not _older_snapshots_gone(cursor, since=min(purge.finished_at for purge in waiting)):
                    return covered  # the resume job tries again later
                labels = {label for purge in waiting for label, n in purge.counts.items() if n}
                # A purged user's own vector index goes whole (its predicate names them),
                # rather than have its entries vacuumed out one by one.
                user_vector_indexes_prune()
                # The purge rows too: their old versions held the user_id while the job ran.
                tables = [m._meta.db_table for m in user_models() if m._meta.label in labels] + [PurgeRequest._meta.db_table]
                started = time.monotonic()
                for table in tables:
                    cursor.execute(f'VACUUM (INDEX_CLEANUP ON) "{table}"')
                seconds = round(time.monotonic() - started, 3)
                done = timezone.now()
                for purge in waiting:
                    cleanup = {"finished_at": done.isoformat(), "tables": tables, "seconds": seconds, "index_cleanup": True}
                    PurgeRequest.objects.filter(pk=purge.pk).update(
                        storage_cleaned_at=done, vacuum_seconds=seconds, receipt={**purge.receipt, "storage_cleanup": cleanup}
                    )
                covered += len(waiting)
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", STORAGE_LOCK)


def purge_reapply(*, workspace_id: int, user_hash_value: str, blocked: bool, source: str) -> list[PurgeRequest]:
    """Erase again, after a restore, a user a purge erased since the backup was taken:
    the purge is known by its keyed hash only, so the user_ids of the workspace's rows
    are hashed until one matches. Each match gets a purge of its own, run here and now,
    with a receipt and an audit entry naming where it came from (`source`)."""
    workspace = Workspace.objects.filter(pk=workspace_id).first()
    if workspace is None:
        return []  # the workspace is not in the backup: nothing of it came back
    if blocked:
        user_block(workspace=workspace, user_hash_value=user_hash_value, purge_id=None)
    matches = set()
    for model in user_models():
        field = user_field(model)
        for value in model._default_manager.filter(workspace_id=workspace_id).values_list(field, flat=True).distinct():
            for user_id in value if isinstance(value, list) else [value]:
                if user_id and user_hash(workspace_id=workspace_id, user_id=user_id) == user_hash_value:
                    matches.add(user_id)
    done = []
    for user_id in sorted(matches):
        with transaction.atomic():
            purge = PurgeRequest.objects.create(workspace=workspace, user_hash=user_hash_value, pending_user_id=user_id)
            audit_record(
                action="purge_requested", actor="system", workspace=workspace, target=f"purge:{purge.pk}",
                details={"user_hash": user_hash_value, "reapplied_after_restore": source},
            )
        done.append(purge_run(purge_id=purge.pk))
    return done
