"""`manage.py backup_identity PATH`: a key pair to encrypt backups to (docs/operations/backups.md, "Encrypted backups")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.backups.services import BackupError, backup_identity_create


class Command(BaseCommand):
    help = "Make an age key pair: the secret key into PATH (mode 600), the public key printed, for `backup --encrypt-to`."
    requires_system_checks = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="file for the secret key (never overwritten); keep it away from the backups")

    def handle(self, *args: Any, path: Path, **options: Any) -> None:
        try:
            public_key = backup_identity_create(path)
        except BackupError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(f"secret key written to {path.resolve()}; encrypt backups to it with:")
        self.stdout.write(public_key)
