from django.apps import AppConfig


class ObservabilityConfig(AppConfig):
    name = "memoryhub.observability"
    label = "observability"
    verbose_name = "Observability"
