"""The purge journal: every erasure requested, kept outside the database.

A backup restored later holds the users erased since it was taken; the journal is how
`manage.py restore` finds those purges and applies them again (docs/operations/backups.md, "Backups").
It lives outside the database on purpose, so it survives the database it describes
being replaced. A line per non-dry-run purge request, by keyed hash only (never the
user_id), with a fingerprint of the pseudonym key that made the hash.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from memoryhub.core.journal import journal_lines, journal_path, journal_write

__all__ = ["JournalEntry", "journal_append", "journal_path", "journal_read", "journal_touch", "pseudonym_key_fingerprint"]


@dataclass(frozen=True)
class JournalEntry:
    purge_id: int
    workspace_id: int
    user_hash: str
    blocked: bool
    key: str  # pseudonym_key_fingerprint of the key the hash was made with


def pseudonym_key_fingerprint(key: str | None = None) -> str:
    """Names a pseudonym key without revealing it: two hubs' hashes match iff this does."""
    material = (key if key is not None else settings.MEMORYHUB_PSEUDONYM_KEY).encode()
    return hmac.new(material, b"memoryhub pseudonym key fingerprint", hashlib.sha256).hexdigest()[:16]


def journal_append(*, purge_id: int, workspace_id: int, user_hash: str, blocked: bool) -> None:
    """Append one line. Called once the request committed; a failure is logged, not
    raised: the erasure itself goes on (the restore also reads the purges of the
    database it replaces)."""
    journal_write({"purge_id": purge_id, "workspace_id": workspace_id, "user_hash": user_hash, "blocked": blocked,
                   "key": pseudonym_key_fingerprint()})


def journal_touch() -> Path:
    """The journal exists (empty if no purge yet) from the first backup on, so that a
    restore can tell "no purge since" from "journal lost"."""
    path = journal_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600, exist_ok=True)
    return path


def journal_read(path: Path) -> list[JournalEntry]:
    """The purges on record (lines without a `kind`; the others are withdrawn access)."""
    entries = []
    for number, raw in journal_lines(path):
        if "kind" in raw:
            continue
        try:
            entries.append(JournalEntry(int(raw["purge_id"]), int(raw["workspace_id"]), str(raw["user_hash"]), bool(raw["blocked"]), str(raw["key"])))
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{path}, line {number}: not a purge journal entry ({error})") from error
    return entries
