"""Retention enforcement: the jobs that remove what a workspace's limits (privacy
app) no longer allow. Every pass that removes something leaves a RetentionRun with the
counts (never the content) and a timeline event."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.utils import timezone

from memoryhub.approvals.models import Approval, ApprovalStatus
from memoryhub.checkpoints.services import checkpoint_prune
from memoryhub.compliance.models import RetentionRun
from memoryhub.conversations.models import Message, Session
from memoryhub.langgraph_checkpoints.services import graph_checkpoint_retain
from memoryhub.core.erasure import purging
from memoryhub.core.models import Workspace
from memoryhub.memory.services import memory_sweep_expired
from memoryhub.usage.models import UsageRecord
from memoryhub.privacy.models import RetentionKind
from memoryhub.privacy.selectors import retention_policies
from memoryhub.timeline.models import Event
from memoryhub.timeline.services import event_record
from memoryhub.tools.models import ToolResult

BATCH = 500
logger = logging.getLogger(__name__)


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
    cutoff = timezone.now() - timedelta(days=days)
    deleted = 0
    while ids := list(ToolResult.objects.filter(workspace=workspace, created_at__lt=cutoff).values_list("pk", flat=True)[:BATCH]):
        deleted += ToolResult.objects.filter(pk__in=ids)._raw_delete(ToolResult.objects.db)
    return deleted


def _prune_sessions(*, workspace: Workspace, days: int) -> int:
    cutoff = timezone.now() - timedelta(days=days)
    recent = Message.objects.filter(workspace=workspace, created_at__gte=cutoff).values("session_id")
    idle = Session.objects.filter(workspace=workspace, updated_at__lt=cutoff, created_at__lt=cutoff).exclude(pk__in=recent)
    deleted = 0
    while batch := list(idle.values_list("pk", "session_id")[:BATCH]):
        with purging():
            Session.objects.filter(pk__in=[pk for pk, _ in batch]).delete()  # the ORM cascades to messages, plans, checkpoints…
            # The timeline keys events by the client's session id: a later session given
            # the same id must not inherit them.
            Event.objects.filter(workspace=workspace, session_id__in=[sid for _, sid in batch]).delete()
        deleted += len(batch)
    return deleted


def _prune_decided_approvals(*, workspace: Workspace, days: int) -> int:
    cutoff = timezone.now() - timedelta(days=days)
    decided = Approval.objects.filter(workspace=workspace, decided_at__lt=cutoff).exclude(status=ApprovalStatus.PENDING)
    deleted = 0
    while ids := list(decided.values_list("pk", flat=True)[:BATCH]):
        deleted += Approval.objects.filter(pk__in=ids)._raw_delete(Approval.objects.db)
    return deleted


def retention_enforce(*, workspace: Workspace | None = None) -> list[RetentionRun]:
    """One pass over every workspace (or one): tool outputs, checkpoints, idle sessions
    and decided approvals beyond their limits. Expired memories are swept every minute by the
    sweep below, which records its counts here too."""
    runs: list[RetentionRun] = []
    workspaces = [workspace] if workspace else list(Workspace.objects.all())
    for ws in workspaces:
        try:
            if run := _enforce_in(workspace=ws):
                runs.append(run)
        except Exception:  # one workspace's trouble must not stop the others' retention
            logger.exception("retention failed in workspace %s", ws.slug)
    return runs


def _enforce_in(*, workspace: Workspace) -> RetentionRun | None:
    started = timezone.now()
    policies = retention_policies(workspace_id=workspace.pk)
    counts: dict[str, int] = {}
    if policies[RetentionKind.TOOL_OUTPUTS]:
        counts[RetentionKind.TOOL_OUTPUTS] = _prune_tool_outputs(workspace=workspace, days=policies[RetentionKind.TOOL_OUTPUTS])
    keep = policies[RetentionKind.CHECKPOINTS]
    counts[RetentionKind.CHECKPOINTS] = checkpoint_prune(keep=keep, workspace=workspace).get(workspace.pk, 0) + graph_checkpoint_retain(
        keep=keep, workspace_id=workspace.pk,
    )
    if policies[RetentionKind.SESSIONS]:
        counts[RetentionKind.SESSIONS] = _prune_sessions(workspace=workspace, days=policies[RetentionKind.SESSIONS])
    if policies[RetentionKind.APPROVALS]:
        counts[RetentionKind.APPROVALS] = _prune_decided_approvals(workspace=workspace, days=policies[RetentionKind.APPROVALS])
    if policies[RetentionKind.USAGE]:
        # The days' totals were added as the minutes were written: only the minutes go.
        cutoff = timezone.now() - timedelta(days=policies[RetentionKind.USAGE])
        counts[RetentionKind.USAGE], _ = UsageRecord.objects.filter(workspace=workspace, minute__lt=cutoff).delete()
    return retention_record(workspace=workspace, counts=counts, started_at=started)


def expired_memories_sweep() -> int:
    """Delete expired memories for real (every minute) and record per workspace how
    many, as a retention run."""
    started = timezone.now()
    deleted = memory_sweep_expired()
    for workspace in Workspace.objects.filter(pk__in=deleted):
        retention_record(workspace=workspace, counts={"memories_expired": deleted[workspace.pk]}, started_at=started)
    return sum(deleted.values())
