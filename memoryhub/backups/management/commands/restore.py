"""`manage.py restore PATH`: replace the hub's database with a backup (docs/operations/backups.md, "Backups")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.backups.services import BackupError, backup_restore


class Command(BaseCommand):
    help = "Restore a backup made by `manage.py backup`, then apply again every purge made since it."
    requires_system_checks = []  # the database may be empty or of another release until restored

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--force", action="store_true", help="replace a database that holds data")
        parser.add_argument("--purge-journal", type=Path, default=None, help="the purge journal of the hub the backup came from")
        parser.add_argument(
            "--without-purge-journal", action="store_true", help="restore without a journal (only if no purge happened since the backup)"
        )

    def handle(self, *args: Any, path: Path, force: bool, purge_journal: Path | None, without_purge_journal: bool, **options: Any) -> None:
        try:
            report = backup_restore(path, force=force, journal=purge_journal, without_journal=without_purge_journal, say=self.stdout.write)
        except (BackupError, ValueError) as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"restored the backup of {report.manifest['created_at']}"
            + (", migrated to this code" if report.migrated else "")
            + f"; {report.journal_entries} purge(s) on record, {len(report.purges_reapplied)} applied again"
            + (f" (purges {', '.join(map(str, report.purges_reapplied))})" if report.purges_reapplied else "")
            + f"; {report.withdrawals_reapplied} revoked key(s), removed membership(s) or changed role(s) applied again."
        )
