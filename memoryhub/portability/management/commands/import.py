"""`manage.py import PATH --workspace W --store S --agent A [--format F] [--user U] [--dry-run]`:
an archive or a foreign export loaded here and now (docs/portability.md, "From the command line")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import Workspace
from memoryhub.portability.imports import import_file
from memoryhub.portability.management.progress import TerminalProgress
from memoryhub.portability.models import ImportFormat


class Command(BaseCommand):
    help = "Import a MemoryHub archive, or a ChatGPT, Claude or Mem0 export, into a workspace's store and agent."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="the archive (zip) or export (JSON) to read")
        parser.add_argument("--workspace", required=True, help="the workspace's slug")
        parser.add_argument("--store", required=True, help="the store the memories go into")
        parser.add_argument("--agent", required=True, help="the agent the records belong to")
        parser.add_argument("--format", default=ImportFormat.MEMORYHUB, choices=ImportFormat.values)
        parser.add_argument("--user", default="", help="the end user a ChatGPT or Claude export is about (Mem0: who memories naming none are about)")
        parser.add_argument("--dry-run", action="store_true", help="count what would be created, skipped and refused; write nothing")

    def handle(
        self, *args: Any, path: Path, workspace: str, store: str, agent: str, format: str, user: str, dry_run: bool, **options: Any,
    ) -> None:
        found = Workspace.objects.filter(slug=workspace).first()
        if found is None:
            raise CommandError(f"No workspace {workspace!r}.")
        if not path.is_file():
            raise CommandError(f"No file {path}.")
        progress = TerminalProgress(self.stderr)
        try:
            job = import_file(
                workspace=found, path=path, format=format, store=store, agent=agent, user_id=user, dry_run=dry_run, on_progress=progress,
            )
        except ApplicationError as error:
            raise CommandError(f"{error.code}: {error.message}") from None
        progress.end()
        counts = job.counts
        would = "would be " if dry_run else ""
        self.stdout.write(
            f"{format} import {job.pk} into {workspace}/{store} as {agent}: {counts['created']:,} {would}created, "
            f"{counts['skipped']:,} {would}skipped (there already), {counts['refused']:,} {would}refused"
        )
        for refusal in job.refusals:
            self.stdout.write(f"  refused {refusal['count']:,} {refusal['kind']}: {refusal['reason']}")
        if not dry_run and counts["kinds"].get("memories", {}).get("created"):
            self.stdout.write(
                "The memories' vectors enter the search index when the hub's indexer next runs (every 15 s, "
                "in the hub or its worker); until then searches compare them exactly."
            )
