"""`manage.py backup PATH`: the hub's database in one file (docs/operations/backups.md, "Backups")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.backups.services import BackupError, Encryption, backup_create, passphrase_read


class Command(BaseCommand):
    help = "Back up the hub's database (pg_dump, custom format) with a manifest into one file, encrypted with age if asked."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="file to write (replaced if it exists)")
        parser.add_argument(
            "--encrypt-to", action="append", default=None, metavar="AGE_PUBLIC_KEY",
            help="encrypt to this age public key (age1…; repeat for several). Default: MEMORYHUB_BACKUP_RECIPIENTS",
        )
        parser.add_argument("--passphrase-file", type=Path, default=None, help="encrypt with the passphrase in this file instead")

    def handle(self, *args: Any, path: Path, encrypt_to: list[str] | None, passphrase_file: Path | None, **options: Any) -> None:
        recipients = tuple(encrypt_to if encrypt_to is not None else settings.MEMORYHUB_BACKUP_RECIPIENTS)
        try:
            if recipients and passphrase_file:
                raise BackupError("encrypt to public keys or with a passphrase, not both.")
            encryption = Encryption(recipients=recipients, passphrase=passphrase_read(passphrase_file) if passphrase_file else None)
            manifest = backup_create(path, encryption=encryption)
        except BackupError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"backup written to {path.resolve()} ({manifest['bytes']:,} bytes{', encrypted' if manifest['encrypted'] else ''}; "
            f"MemoryHub {manifest['hub_version']}, last purge #{manifest['last_purge_id'] or 0}). "
            "Keep the purge journal with it (docs/operations/backups.md)."
        )
