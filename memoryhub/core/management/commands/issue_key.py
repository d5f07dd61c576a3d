"""`manage.py issue_key`: create what is missing and print a new key alone on the last line."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from memoryhub.core import services
from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import Role, Workspace

DEFAULT_WORKSPACE = "default"


class Command(BaseCommand):
    help = (
        "Issue an agent key (--workspace W --store S --agent A) or an operator key "
        "(--operator USERNAME [--role ROLE] [--workspace W]). The key is printed alone on the last line."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", help="Workspace slug; created if missing.")
        parser.add_argument("--store", help="Store the agent is attached to; created if missing.")
        parser.add_argument("--agent", help="Agent name; created if missing.")
        parser.add_argument("--operator", help="Operator username; created if missing (log in after `changepassword`).")
        parser.add_argument("--role", choices=Role.values, help="Operator role (default viewer for a new operator).")
        parser.add_argument("--label", default="", help="A note to recognise the key by.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            with transaction.atomic():
                key = self._issue(options)
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(key)

    def _issue(self, options: dict[str, Any]) -> str:
        if options["operator"]:
            if options["agent"] or options["store"]:
                raise CommandError("--operator cannot be combined with --agent or --store.")
            workspace = services.workspace_get_or_create(slug=options["workspace"] or self._default_workspace())
            membership = services.operator_get_or_create(username=options["operator"], workspace=workspace, role=options["role"])
            _, plaintext = services.operator_key_issue(membership=membership, label=options["label"], actor="command:issue_key")
            self.stderr.write(f"operator {membership.user.get_username()} ({membership.role}) in workspace {workspace.slug}")
            return plaintext
        missing = [name for name in ("workspace", "store", "agent") if not options[name]]
        if missing:
            raise CommandError(
                "An agent key needs --workspace, --store and --agent (missing: "
                + ", ".join(f"--{m}" for m in missing)
                + "); an operator key needs --operator."
            )
        if options["role"]:
            raise CommandError("--role applies to operator keys only.")
        workspace = services.workspace_get_or_create(slug=options["workspace"])
        _, plaintext = services.agent_key_provision(
            workspace=workspace, store=options["store"], agent=options["agent"], label=options["label"], actor="command:issue_key"
        )
        self.stderr.write(f"agent {options['agent']} in workspace {workspace.slug}, store {options['store']}")
        return plaintext

    def _default_workspace(self) -> str:
        # With one workspace, operators belong to it; otherwise to "default".
        slugs = list(Workspace.objects.values_list("slug", flat=True)[:2])
        return slugs[0] if len(slugs) == 1 else DEFAULT_WORKSPACE
