from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "memoryhub.console"
    label = "console"
    verbose_name = "Operator console"
