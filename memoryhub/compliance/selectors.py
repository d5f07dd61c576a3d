"""Reads for the Compliance page and the audit export."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Q, QuerySet
from django.utils import timezone

from memoryhub.compliance.models import PurgeRequest, RetentionRun
from memoryhub.core.models import AuditEntry, Workspace
from memoryhub.core.pagination import Page, keyset_page
from memoryhub.core.registry import user_models

# Receipts written before the layout by concept name these models by their old apps.
EARLIER_LABELS = {
    "conversations.Checkpoint": "checkpoints.Checkpoint",
    "plans.ToolCall": "tools.ToolCall",
    "plans.ToolResult": "tools.ToolResult",
    "plans.Episode": "episodes.Episode",
}


def kind_names() -> dict[str, str]:
    """Model labels (as counts and receipts key them) → what an operator calls them."""
    names = {m._meta.label: str(m._meta.verbose_name_plural).capitalize() for m in user_models()}
    return names | {old: names[new] for old, new in EARLIER_LABELS.items() if new in names}


def purges_of(*, workspace: Workspace) -> QuerySet[PurgeRequest]:
    """Real purges (no dry runs), newest first."""
    return PurgeRequest.objects.filter(workspace=workspace, dry_run=False).select_related("requested_by").order_by("-id")


def purges_page(*, workspace: Workspace, cursor: str | None, limit: int) -> Page[PurgeRequest]:
    return keyset_page(purges_of(workspace=workspace), key="-id", cursor=cursor, limit=limit)


def purge_of(*, workspace: Workspace, purge_id: int, dry_runs: bool = False) -> PurgeRequest | None:
    purges = PurgeRequest.objects.filter(workspace=workspace) if dry_runs else purges_of(workspace=workspace)
    return purges.filter(pk=purge_id).first()


def retention_runs_of(*, workspace: Workspace) -> QuerySet[RetentionRun]:
    return RetentionRun.objects.filter(workspace=workspace).order_by("-started_at")


def retention_daily(*, workspace: Workspace, days: int = 14) -> list[tuple[str, int]]:
    """Rows removed by retention per day, oldest first, days without any included."""
    today = timezone.localdate()
    totals = {today - timedelta(days=d): 0 for d in range(days - 1, -1, -1)}
    for run in retention_runs_of(workspace=workspace).filter(started_at__date__gt=today - timedelta(days=days)):
        day = timezone.localdate(run.started_at)
        if day in totals:
            totals[day] += sum(run.counts.values())
    return [(day.isoformat(), n) for day, n in totals.items()]


def audit_entries_of(*, workspace: Workspace, action: str | None = None, oldest_first: bool = False) -> QuerySet[AuditEntry]:
    """The workspace's entries and the logins (and failed ones) of its operators: a
    login belongs to no one workspace. Newest first by id, or `oldest_first` as
    auditors read an export."""
    names = list(workspace.memberships.values_list("user__username", flat=True))
    members = [f"operator:{name}" for name in names] + [f"anonymous:{name}" for name in names]
    entries = AuditEntry.objects.filter(Q(workspace_id=workspace.pk) | Q(workspace_id__isnull=True, actor__in=members))
    if action:
        entries = entries.filter(action=action)
    return entries.order_by("created_at", "id") if oldest_first else entries.order_by("-id")


def audit_page(*, workspace: Workspace, action: str | None, cursor: str | None, limit: int) -> Page[AuditEntry]:
    return keyset_page(audit_entries_of(workspace=workspace, action=action), key="-id", cursor=cursor, limit=limit)
