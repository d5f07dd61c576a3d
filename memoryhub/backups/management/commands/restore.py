"""`manage.py restore PATH`: replace the hub's database with a backup (docs/operations/backups.md, "Backups")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.backups.services import BackupError, Encryption, backup_restore, identities_read, passphrase_read


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
        parser.add_argument("--identity", type=Path, action="append", default=[], help="age secret key file that decrypts an encrypted backup")
        parser.add_argument("--passphrase-file", type=Path, default=None, help="the passphrase of an encrypted backup, in a file")

    def handle(
        self, *args: Any, path: Path, force: bool, purge_journal: Path | None, without_purge_journal: bool, identity: list[Path],
        passphrase_file: Path | None, **options: Any,
    ) -> None:
        try:
            encryption = Encryption(
                identities=tuple(key for file in identity for key in identities_read(file)),
                passphrase=passphrase_read(passphrase_file) if passphrase_file else None,
            )
            report = backup_restore(
                path, force=force, journal=purge_journal, without_journal=without_purge_journal, say=self.stdout.write, encryption=encryption,
            )
        except (BackupError, ValueError) as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"restored the backup of {report.manifest['created_at']}"
            + (", migrated to this code" if report.migrated else "")
            + f"; {report.journal_entries} purge(s) on record, {len(report.purges_reapplied)} applied again"
            + (f" (purges {', '.join(map(str, report.purges_reapplied))})" if report.purges_reapplied else "")
            + f"; {report.withdrawals_reapplied} revoked key(s), removed membership(s) or changed role(s) applied again."
        )
