from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "memoryhub.core"
    label = "core"
    verbose_name = "Tenancy and identities"

    def ready(self) -> None:
        from memoryhub.core import checks  # noqa: F401  (registers the system checks)
