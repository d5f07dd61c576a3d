from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ComplianceConfig(AppConfig):
    name = "memoryhub.compliance"
    label = "compliance"
    verbose_name = "Compliance"

    def ready(self) -> None:
        from memoryhub.compliance import audit, fence

        post_migrate.connect(fence.install, sender=self, dispatch_uid="memoryhub-compliance-fence")
        audit.connect_signals()
