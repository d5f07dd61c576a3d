"""The journal beside the database (MEMORYHUB_PURGE_JOURNAL): what a restored backup must
not bring back, kept outside the database so that it survives the database being
replaced. One JSON object per line, flushed to disk, mode 600.

Two kinds of lines: erasures (memoryhub/compliance/journal.py writes and reads them, the
older lines have no `kind`) and withdrawn access, written here: a revoked key, a removed
membership, a changed role. `manage.py restore` applies both again (docs/operations/backups.md,
"Purged users stay purged" and "Revoked access stays revoked").
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

logger = logging.getLogger(__name__)

KEY_REVOKED, MEMBERSHIP_REMOVED, ROLE_CHANGED = "key_revoked", "membership_removed", "role_changed"
WITHDRAWALS = (KEY_REVOKED, MEMBERSHIP_REMOVED, ROLE_CHANGED)


@dataclass(frozen=True)
class Withdrawal:
    """Access taken away: `kind`, the row's id, and what else identifies it (a key's kind
    and prefix, a membership's user and workspace, the new role)."""

    kind: str
    id: int
    details: dict[str, Any]


def journal_path() -> Path:
    return Path(settings.MEMORYHUB_PURGE_JOURNAL)


def journal_write(record: dict[str, Any]) -> None:
    """Append one line, flushed to disk. A failure is logged, not raised: what it records
    has happened (and a restore also reads the database it replaces)."""
    path = journal_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Only the hub's user reads it: who was erased or shut out is nobody else's business.
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "a", encoding="utf-8") as journal:
            journal.write(json.dumps(record) + "\n")
            journal.flush()
            os.fsync(journal.fileno())
    except OSError:
        logger.exception("could not write to the journal %s: %s", path, record)


def journal_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Every line of the journal at `path` as (line number, object)."""
    lines = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                lines.append((number, json.loads(line)))
            except ValueError as error:
                raise ValueError(f"{path}, line {number}: not a journal line ({error})") from error
    return lines


def withdrawal_record(*, kind: str, id: int, **details: Any) -> None:
    """Journal withdrawn access once the current transaction commits."""
    transaction.on_commit(lambda: journal_write({"kind": kind, "id": id, **details}), robust=True)


def withdrawals_read(path: Path) -> list[Withdrawal]:
    return [Withdrawal(kind=raw["kind"], id=int(raw["id"]), details={k: v for k, v in raw.items() if k not in ("kind", "id")})
            for _, raw in journal_lines(path) if raw.get("kind") in WITHDRAWALS]
