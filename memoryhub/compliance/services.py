"""Erasing one end user from every store of a workspace, with a receipt."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone

from memoryhub.compliance.models import BlockedUser, PurgeRequest, PurgeStatus
from memoryhub.core.checks import own_models
from memoryhub.core.errors import Forbidden
from memoryhub.core.models import Membership
from memoryhub.timeline.services import event_record, purging


def user_hash(*, workspace_id: int, user_id: str) -> str:
    """A keyed hash: proves which user a receipt is about to whoever knows the user_id,
    reveals nothing to whoever does not."""
    key = hmac.new(settings.SECRET_KEY.encode(), f"purge:{workspace_id}".encode(), hashlib.sha256).digest()
    return hmac.new(key, user_id.encode(), hashlib.sha256).hexdigest()


def user_models() -> list[type[models.Model]]:
    """Every model of ours that holds a user_id, children before parents (a message
    before its session), so each is counted before a cascade could remove it."""
    found = [m for m in own_models() if "user_id" in {f.name for f in m._meta.get_fields()} and not m._meta.abstract]

    def depth(model: type[models.Model]) -> int:
        parents = [
            f.related_model for f in model._meta.get_fields()
            if (f.many_to_one or (f.one_to_one and f.concrete)) and f.related_model in found and f.related_model is not model
        ]
        return 1 + max((depth(p) for p in parents), default=0)

    return sorted(found, key=depth, reverse=True)


def purge_counts(*, workspace_id: int, user_id: str) -> dict[str, int]:
    return {m._meta.label: m.objects.filter(workspace_id=workspace_id, user_id=user_id).count() for m in user_models()}


def ensure_not_blocked(*, workspace_id: int, user_id: str) -> None:
    """Every service that creates records about a user calls this first."""
    if BlockedUser.objects.filter(workspace_id=workspace_id, user_hash=user_hash(workspace_id=workspace_id, user_id=user_id)).exists():
        raise Forbidden("This user was purged and new records about them are blocked.", code="USER_PURGED")


def block_lift(*, workspace_id: int, user_id: str) -> bool:
    deleted, _ = BlockedUser.objects.filter(workspace_id=workspace_id, user_hash=user_hash(workspace_id=workspace_id, user_id=user_id)).delete()
    return bool(deleted)


def purge_request(*, membership: Membership, user_id: str, dry_run: bool, block_new_writes: bool = False) -> PurgeRequest:
    workspace = membership.workspace
    digest = user_hash(workspace_id=workspace.pk, user_id=user_id)
    if dry_run:
        counts = purge_counts(workspace_id=workspace.pk, user_id=user_id)
        now = timezone.now()
        return PurgeRequest.objects.create(
            workspace=workspace, requested_by=membership.user, user_hash=digest, dry_run=True, status=PurgeStatus.DONE, progress=1.0,
            counts=counts, started_at=now, finished_at=now,
        )
    try:
        with transaction.atomic():
            purge = PurgeRequest.objects.create(workspace=workspace, requested_by=membership.user, user_hash=digest, pending_user_id=user_id)
            if block_new_writes:
                # Blocked before the purge starts: nothing written meanwhile survives it.
                BlockedUser.objects.get_or_create(workspace=workspace, user_hash=digest, defaults={"purge": purge})
            from memoryhub.compliance.tasks import run_purge
            from memoryhub.core.tasking import enqueue

            enqueue(run_purge, purge.pk)
    except IntegrityError:
        # Coalesce: the purge already queued or running for this user is the answer.
        return PurgeRequest.objects.get(workspace=workspace, user_hash=digest, dry_run=False, status__in=[PurgeStatus.QUEUED, PurgeStatus.RUNNING])
    return purge


def purge_run(*, purge_id: int) -> PurgeRequest:
    """Delete the user's rows model by model, verify nothing is left, write the receipt.
    Safe to run again after a crash: deleting what is already gone counts nothing twice."""
    claimed = PurgeRequest.objects.filter(pk=purge_id, status__in=[PurgeStatus.QUEUED, PurgeStatus.RUNNING]).update(
        status=PurgeStatus.RUNNING, started_at=timezone.now()
    )
    purge = PurgeRequest.objects.select_related("workspace", "requested_by").get(pk=purge_id)
    if not claimed:
        return purge
    user_id, workspace_id = purge.pending_user_id, purge.workspace_id
    targets = user_models()
    counts: dict[str, int] = dict(purge.counts)
    for index, model in enumerate(targets):
        with purging():
            deleted = model.objects.filter(workspace_id=workspace_id, user_id=user_id)._raw_delete(model.objects.db)
        counts[model._meta.label] = counts.get(model._meta.label, 0) + deleted
        PurgeRequest.objects.filter(pk=purge_id).update(progress=(index + 1) / len(targets), counts=counts)
    remaining = {label: n for label, n in purge_counts(workspace_id=workspace_id, user_id=user_id).items() if n}
    finished = timezone.now()
    receipt: dict[str, Any] = {
        "purge_id": purge.pk,
        "workspace": purge.workspace.slug,
        "user_hash": purge.user_hash,
        "requested_by": purge.requested_by.get_username() if purge.requested_by else None,
        "requested_at": purge.created_at.isoformat(),
        "finished_at": finished.isoformat(),
        "deleted": counts,
        "verification": {"models_checked": [m._meta.label for m in targets], "remaining": remaining, "passed": not remaining},
    }
    PurgeRequest.objects.filter(pk=purge_id).update(
        status=PurgeStatus.DONE if not remaining else PurgeStatus.FAILED, finished_at=finished, receipt=receipt, pending_user_id="",
        progress=1.0,
    )
    event_record(
        workspace=purge.workspace, kind="purge", summary=f"Purge #{purge.pk}: {sum(counts.values())} rows deleted, verification {'passed' if not remaining else 'FAILED'}.",
        actor=f"operator:{receipt['requested_by']}", ref={"type": "purge", "id": purge.pk},
    )
    # Deleted vectors leave the HNSW index only when the table is vacuumed.
    with connection.cursor() as cursor:
        for model in targets:
            cursor.execute(f"VACUUM {model._meta.db_table}")
    purge.refresh_from_db()
    return purge


