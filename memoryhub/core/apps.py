from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CoreConfig(AppConfig):
    name = "memoryhub.core"
    label = "core"
    verbose_name = "Tenancy and identities"

    def ready(self) -> None:
        from memoryhub.core import audit, checks  # noqa: F401  (checks registers the system checks)

        from django.contrib.auth.signals import user_logged_in, user_logged_out

        from memoryhub.core import live
        from memoryhub.core.middleware import session_started

        post_migrate.connect(audit.install_append_only_guard, sender=self, dispatch_uid="memoryhub-audit-append-only")
        audit.connect_signals()
        user_logged_in.connect(session_started, dispatch_uid="memoryhub-session-started")
        user_logged_out.connect(live.login_ended, dispatch_uid="memoryhub-login-ended")
