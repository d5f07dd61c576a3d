from __future__ import annotations

import uuid

from django.utils import timezone

from memoryhub.core.models import Workspace
from memoryhub.portability.models import Export


def export_of(*, workspace: Workspace, export_id: str) -> Export | None:
    """The workspace's export of that id, while it lives (an expired one is gone for
    readers before the sweep deletes it)."""
    try:
        pk = uuid.UUID(str(export_id))
    except ValueError:
        return None
    return Export.objects.filter(workspace=workspace, pk=pk, expires_at__gt=timezone.now()).first()
