"""`manage.py backup PATH`: the hub's database in one file (docs/operations/backups.md, "Backups")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.backups.services import BackupError, backup_create


class Command(BaseCommand):
    help = "Back up the hub's database (pg_dump, custom format) with a manifest into one file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="file to write (replaced if it exists)")

    def handle(self, *args: Any, path: Path, **options: Any) -> None:
        try:
            manifest = backup_create(path)
        except BackupError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"backup written to {path.resolve()} ({manifest['bytes']:,} bytes; MemoryHub {manifest['hub_version']}, "
            f"last purge #{manifest['last_purge_id'] or 0}). Keep the purge journal with it (docs/operations/backups.md)."
        )
