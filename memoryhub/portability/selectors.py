from __future__ import annotations

import uuid
from collections.abc import Collection

from django.db.models import QuerySet
from django.utils import timezone

from memoryhub.core.models import Role, Workspace
from memoryhub.portability.models import Export, ExportScope, Import


def export_of(*, workspace: Workspace, export_id: str) -> Export | None:
    """The workspace's export of that id, while it lives (an expired one is gone for
    readers before the sweep deletes it)."""
    try:
        pk = uuid.UUID(str(export_id))
    except ValueError:
        return None
    return Export.objects.filter(workspace=workspace, pk=pk, expires_at__gt=timezone.now()).first()


def export_scope_role(scope: str) -> str:
    """The role that may ask for, and read, an export of this scope: a user's data answers
    an access request, the compliance role's work; a workspace or a session is the
    admins' (docs/portability.md, "Exports"). The API and the console both ask here."""
    return Role.COMPLIANCE if scope == ExportScope.USER else Role.ADMIN


def exports_of(*, workspace: Workspace, scopes: Collection[str]) -> QuerySet[Export]:
    """The workspace's live exports of these scopes (those the reader's role may read),
    newest first."""
    return Export.objects.filter(workspace=workspace, scope__in=list(scopes), expires_at__gt=timezone.now()).order_by("-created_at")


def imports_of(*, workspace: Workspace) -> QuerySet[Import]:
    return Import.objects.filter(workspace=workspace).select_related("store", "agent").order_by("-created_at", "-pk")


def import_of(*, workspace: Workspace, import_id: int | str) -> Import | None:
    try:
        pk = int(import_id)
    except (TypeError, ValueError):
        return None
    return imports_of(workspace=workspace).filter(pk=pk).first()


def import_applied_from(*, trial: Import) -> Import | None:
    """The import a dry run was applied as, if it was."""
    return Import.objects.filter(trial=trial).first()
