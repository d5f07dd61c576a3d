from django.apps import AppConfig


class PortabilityConfig(AppConfig):
    name = "memoryhub.portability"
    label = "portability"
    verbose_name = "Portability"
