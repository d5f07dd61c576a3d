"""Reads of the privacy policy: blocks and the retention limits in force."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import QuerySet

from memoryhub.core.models import Workspace
from memoryhub.privacy.models import RETENTION_RULES, BlockedUser, RetentionKind, RetentionPolicy


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


def blocked_users_of(*, workspace: Workspace) -> QuerySet[BlockedUser]:
    return BlockedUser.objects.filter(workspace=workspace).order_by("-created_at")


def blocked_user_of(*, workspace: Workspace, block_id: int) -> BlockedUser | None:
    return blocked_users_of(workspace=workspace).filter(pk=block_id).first()
