from django.apps import AppConfig


class BackupsConfig(AppConfig):
    name = "memoryhub.backups"
    label = "backups"
    verbose_name = "Backups"
