from django.apps import AppConfig
from django.db.models.signals import post_migrate


class PrivacyConfig(AppConfig):
    name = "memoryhub.privacy"
    label = "privacy"
    verbose_name = "Privacy policy"

    def ready(self) -> None:
        from memoryhub.privacy import fence

        post_migrate.connect(fence.install, sender=self, dispatch_uid="memoryhub-privacy-fence")
