"""`manage.py export PATH --workspace W [--user U | --session S] [--with-vectors]`: an
archive written straight to a file (docs/portability.md, "From the command line")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.conversations.models import Session
from memoryhub.core.models import Workspace
from memoryhub.portability.management.progress import TerminalProgress
from memoryhub.portability.models import ExportScope
from memoryhub.portability.services import export_to_file


class Command(BaseCommand):
    help = "Export a workspace, one end user's data or one session as a MemoryHub archive (a zip) into PATH."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="the zip to write (replaced if it exists)")
        parser.add_argument("--workspace", required=True, help="the workspace's slug")
        scope = parser.add_mutually_exclusive_group()
        scope.add_argument("--user", default="", help="only this end user's data (an access request)")
        scope.add_argument("--session", default="", help="only this session")
        parser.add_argument("--with-vectors", action="store_true", help="carry the memories' embeddings, so an import need not embed")

    def handle(self, *args: Any, path: Path, workspace: str, user: str, session: str, with_vectors: bool, **options: Any) -> None:
        found = Workspace.objects.filter(slug=workspace).first()
        if found is None:
            raise CommandError(f"No workspace {workspace!r}.")
        if session and not Session.objects.filter(workspace=found, session_id=session).exists():
            raise CommandError(f"No session {session!r} in {workspace}.")
        scope = ExportScope.USER if user else ExportScope.SESSION if session else ExportScope.WORKSPACE
        progress = TerminalProgress(self.stderr)
        written = export_to_file(
            workspace=found, scope=scope, path=path, user_id=user, session_id=session, with_vectors=with_vectors, on_progress=progress,
        )
        progress.end()
        rows = sum(written.counts.values())
        self.stdout.write(
            f"{scope} archive written to {path.resolve()}: {rows:,} records, {written.bytes:,} bytes, sha256 {written.sha256}"
        )
