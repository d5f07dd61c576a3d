"""`manage.py embedded_db status|start|stop|url`: the embedded PostgreSQL."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.platform import embedded_pg


class Command(BaseCommand):
    help = "Start, stop or show the embedded PostgreSQL (used when DATABASE_URL is unset)."
    requires_system_checks = []  # so that `status` times the start-up alone

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["status", "start", "stop", "url"])

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        if settings.DATABASES["default"]["ENGINE"] != "memoryhub.platform.db_embedded":
            raise CommandError("DATABASE_URL is set: the hub uses an external PostgreSQL, nothing is embedded.")
        data_dir = Path(settings.MEMORYHUB_DATA_DIR)
        if action == "stop":
            embedded_pg.stop(data_dir)
            self.stdout.write("stopped")
            return
        started = time.monotonic()
        socket_dir = embedded_pg.ensure_running(data_dir)
        elapsed = time.monotonic() - started
        if action == "url":
            self.stdout.write(embedded_pg.database_url(socket_dir))
        else:
            self.stdout.write(f"running: data {embedded_pg.pgdata_dir(data_dir)}, socket {socket_dir} (ready in {elapsed:.2f}s)")
