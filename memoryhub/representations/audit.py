from __future__ import annotations

from typing import Any

from memoryhub.core.models import AuditEntry
from memoryhub.representations import iso_datetime


def audit_entry_json(entry: AuditEntry) -> dict[str, Any]:
    """An audit log entry, as the API lists it and the console's export writes it;
    `workspace` is the slug it had then (null for the hub's own entries, failed logins)."""
    return {
        "id": entry.pk, "at": iso_datetime(entry.created_at), "workspace": entry.workspace_slug or None, "actor": entry.actor,
        "action": entry.action, "target": entry.target, "details": entry.details, "ip": entry.ip,
    }
