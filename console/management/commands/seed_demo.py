"""`manage.py seed_demo`: a demo workspace to look around the console (see console/demo.py)."""

from __future__ import annotations

import logging
import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from console import demo
from memoryhub.core.errors import ApplicationError

PASSWORD_VARIABLE = "MEMORYHUB_DEMO_PASSWORD"


class Command(BaseCommand):
    help = (
        "Seed the `demo` workspace (agents, sessions, approvals, memories, a finished purge) and its admin login `demo`. "
        "Does nothing if it was seeded already; refuses a `demo` workspace it did not make."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--password", help=f"Password of the `demo` login (default: ${PASSWORD_VARIABLE}, else {demo.DEFAULT_PASSWORD})."
        )
        parser.add_argument(
            "--if-empty", action="store_true",
            help="Seed only if no other workspace holds data; otherwise say why in one line (what `make run` uses).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        chosen = options["password"] or os.environ.get(PASSWORD_VARIABLE)
        # The seed's own background jobs (vector indexing, the purge's clean-up) would
        # log a line each after the summary; their failures are still logged.
        logging.getLogger("celery.app.trace").setLevel(logging.WARNING)
        try:
            outcome = demo.demo_seed(password=chosen or demo.DEFAULT_PASSWORD, if_empty=options["if_empty"])
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(outcome.message)
        if outcome.status == "skipped":
            return
        if outcome.status == "seeded":
            self.stdout.write(
                f"  {outcome.seconds:.1f} s: " + ", ".join(f"{what.replace('_', ' ')} {n}" for what, n in outcome.counts.items())
            )
            password = "the password you chose" if chosen else f"password {demo.DEFAULT_PASSWORD}"
        else:
            password = f"password {demo.DEFAULT_PASSWORD} unless it was seeded with another"
        # `make run` passes its PORT; the server listens on 127.0.0.1 only.
        url = f"http://127.0.0.1:{os.environ.get('PORT') or '8000'}/login/"
        self.stdout.write(f"Log in at {url} as {demo.DEMO_USERNAME}, {password}.")
