"""`manage.py embedded_db status|start|stop|url`: the embedded PostgreSQL."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.platform import embedded_pg

# `status`'s exit code when the server is not running, as an init script's (LSB).
NOT_RUNNING = 3


class Command(BaseCommand):
    help = (
        "Show (status), start, stop or print the URL of the embedded PostgreSQL (used when DATABASE_URL is unset). "
        "`status` never starts it: it exits 0 when the server runs, 3 when it does not."
    )
    requires_system_checks = []  # so that `start` times the start-up alone

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["status", "start", "stop", "url"])

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        if settings.DATABASES["default"]["ENGINE"] != "memoryhub.platform.db_embedded":
            raise CommandError("DATABASE_URL is set: the hub uses an external PostgreSQL, nothing is embedded.")
        data_dir = Path(settings.MEMORYHUB_DATA_DIR)
        pgdata = embedded_pg.pgdata_dir(data_dir)
        if action == "status":
            found = embedded_pg.running(data_dir)
            if found is None:
                self.stdout.write(f"not running: data {pgdata}")
                sys.exit(NOT_RUNNING)
            pid, socket_dir = found
            self.stdout.write(f"running: pid {pid}, data {pgdata}, socket {socket_dir}")
            return
        if action == "stop":
            if embedded_pg.running(data_dir) is None:
                self.stdout.write(f"not running: data {pgdata}")
                return
            embedded_pg.stop(data_dir)
            self.stdout.write("stopped")
            return
        started = time.monotonic()
        socket_dir = embedded_pg.ensure_running(data_dir)
        elapsed = time.monotonic() - started
        if action == "url":
            self.stdout.write(embedded_pg.database_url(socket_dir))
        else:
            self.stdout.write(f"running: data {pgdata}, socket {socket_dir} (ready in {elapsed:.2f}s)")
