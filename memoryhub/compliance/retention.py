"""Retention: how long each kind of record is kept, per workspace, and the job that
enforces it. Every pass that removes something leaves a RetentionRun with the counts
(never the content) and a timeline event; every policy change leaves an audit entry."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memoryhub.compliance.audit import audit_record
from memoryhub.compliance.models import RETENTION_RULES, RetentionKind, RetentionPolicy, RetentionRun
from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import Membership, Workspace
from memoryhub.core.selectors import operator_actor
from memoryhub.timeline.services import event_record

BATCH = 500
logger = logging.getLogger(__name__)


def retention_defaults() -> dict[str, int | None]:
    defaults = {kind: default for kind, (_, default, _) in RETENTION_RULES.items()}
    # The deployment-wide settings are the defaults a workspace starts from.
    defaults[RetentionKind.CHECKPOINTS] = settings.MEMORYHUB_CHECKPOINT_RETENTION
    defaults[RetentionKind.WORKING_MEMORIES] = max(1, round(settings.MEMORYHUB_WORKING_MEMORY_TTL_SECONDS / 3600))
    return defaults


def retention_policies(*, workspace_id: int) -> dict[str, int | None]:
    """The limits in force in a workspace, defaults filled in."""
    policies = retention_defaults()
    for kind, value in RetentionPolicy.objects.filter(workspace_id=workspace_id).values_list("kind", "value"):
        policies[kind] = value
    return policies


def working_memory_ttl(*, workspace_id: int) -> timedelta:
    value = RetentionPolicy.objects.filter(workspace_id=workspace_id, kind=RetentionKind.WORKING_MEMORIES).values_list("value", flat=True).first()
    if value is None:
        return timedelta(seconds=settings.MEMORYHUB_WORKING_MEMORY_TTL_SECONDS)
    return timedelta(hours=value)


def retention_policy_set(*, membership: Membership, kind: str, value: int | None) -> RetentionPolicy | None:
    """Set a workspace's limit for one kind. Saving the value already in force writes
    nothing: a workspace keeps following the deployment's default until it departs."""
    if kind not in RetentionKind.values:
        raise ApplicationError(f"Unknown kind {kind!r}.", code="INVALID_RETENTION_KIND", details={"kinds": RetentionKind.values})
    largest = RETENTION_RULES[kind][2]
    if value is not None and not 1 <= value <= largest:
        raise ApplicationError(f"A {kind} limit is between 1 and {largest}.", code="INVALID_RETENTION_VALUE", details={"max": largest})
    if value is None and kind in (RetentionKind.CHECKPOINTS, RetentionKind.WORKING_MEMORIES):
        raise ApplicationError("This kind always has a limit.", code="INVALID_RETENTION_VALUE")
    workspace = membership.workspace
    with transaction.atomic():
        before = retention_policies(workspace_id=workspace.pk)[kind]
        if before == value:
            return RetentionPolicy.objects.filter(workspace=workspace, kind=kind).first()
        policy, _ = RetentionPolicy.objects.update_or_create(
            workspace=workspace, kind=kind, defaults={"value": value, "updated_by": membership.user}
        )
        audit_record(
            action="retention_changed", actor=operator_actor(membership.user), workspace=workspace, target=kind,
            details={"from": before, "to": value},
        )
    return policy


def retention_record(*, workspace: Workspace, counts: dict[str, int], started_at: timezone.datetime) -> RetentionRun | None:
    """Keep what a pass removed in one workspace (nothing when it removed nothing)."""
    counts = {kind: n for kind, n in counts.items() if n}
    if not counts:
        return None
    run = RetentionRun.objects.create(workspace=workspace, started_at=started_at, finished_at=timezone.now(), counts=counts)
    described = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in counts.items())
    event_record(workspace=workspace, kind="retention", summary=f"Retention removed {described}.", ref={"type": "retention_run", "id": run.pk})
    return run


def _prune_tool_outputs(*, workspace: Workspace, days: int) -> int:
    from memoryhub.plans.models import ToolResult

    cutoff = timezone.now() - timedelta(days=days)
    deleted = 0
    while ids := list(ToolResult.objects.filter(workspace=workspace, created_at__lt=cutoff).values_list("pk", flat=True)[:BATCH]):
        deleted += ToolResult.objects.filter(pk__in=ids)._raw_delete(ToolResult.objects.db)
    return deleted


def _prune_sessions(*, workspace: Workspace, days: int) -> int:
    from memoryhub.conversations.models import Message, Session

    cutoff = timezone.now() - timedelta(days=days)
    recent = Message.objects.filter(workspace=workspace, created_at__gte=cutoff).values("session_id")
    idle = Session.objects.filter(workspace=workspace, updated_at__lt=cutoff, created_at__lt=cutoff).exclude(pk__in=recent)
    deleted = 0
    while ids := list(idle.values_list("pk", flat=True)[:BATCH]):
        with transaction.atomic():
            Session.objects.filter(pk__in=ids).delete()  # the ORM cascades to messages, plans, checkpoints…
        deleted += len(ids)
    return deleted


def retention_enforce(*, workspace: Workspace | None = None) -> list[RetentionRun]:
    """One pass over every workspace (or one): tool outputs, checkpoints and idle
    sessions beyond their limits. Expired memories are swept every minute by the
    memory sweep, which records its counts here too."""
    from memoryhub.conversations.services import checkpoint_prune

    runs: list[RetentionRun] = []
    workspaces = [workspace] if workspace else list(Workspace.objects.all())
    for ws in workspaces:
        try:
            if run := _enforce_in(workspace=ws, checkpoint_prune=checkpoint_prune):
                runs.append(run)
        except Exception:  # one workspace's trouble must not stop the others' retention
            logger.exception("retention failed in workspace %s", ws.slug)
    return runs


def _enforce_in(*, workspace: Workspace, checkpoint_prune: Any) -> RetentionRun | None:
    started = timezone.now()
    policies = retention_policies(workspace_id=workspace.pk)
    counts: dict[str, int] = {}
    if policies[RetentionKind.TOOL_OUTPUTS]:
        counts[RetentionKind.TOOL_OUTPUTS] = _prune_tool_outputs(workspace=workspace, days=policies[RetentionKind.TOOL_OUTPUTS])
    counts[RetentionKind.CHECKPOINTS] = checkpoint_prune(keep=policies[RetentionKind.CHECKPOINTS], workspace=workspace).get(workspace.pk, 0)
    if policies[RetentionKind.SESSIONS]:
        counts[RetentionKind.SESSIONS] = _prune_sessions(workspace=workspace, days=policies[RetentionKind.SESSIONS])
    return retention_record(workspace=workspace, counts=counts, started_at=started)

