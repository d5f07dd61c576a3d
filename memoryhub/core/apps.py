from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CoreConfig(AppConfig):
    name = "memoryhub.core"
    label = "core"
    verbose_name = "Tenancy and identities"

    def ready(self) -> None:
        from memoryhub.core import audit, checks  # noqa: F401  (checks registers the system checks)

        from django.contrib.auth.signals import user_logged_in, user_logged_out
        from django.db.models.signals import post_delete, post_save, pre_save

        from memoryhub.core import live, membership_changes
        from memoryhub.core.middleware import session_started
        from memoryhub.core.models import Membership

        post_migrate.connect(audit.install_append_only_guard, sender=self, dispatch_uid="memoryhub-audit-append-only")
        audit.connect_signals()
        user_logged_in.connect(session_started, dispatch_uid="memoryhub-session-started")
        user_logged_out.connect(live.login_ended, dispatch_uid="memoryhub-login-ended")
        # However a membership changes (the admin, a shell, a service), its streams end.
        pre_save.connect(membership_changes.role_remembered, sender=Membership, dispatch_uid="memoryhub-membership-role")
        post_save.connect(membership_changes.saved, sender=Membership, dispatch_uid="memoryhub-membership-saved")
        post_delete.connect(membership_changes.deleted, sender=Membership, dispatch_uid="memoryhub-membership-deleted")
