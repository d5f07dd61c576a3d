from django.apps import AppConfig


class CheckpointsConfig(AppConfig):
    name = "memoryhub.checkpoints"
    label = "checkpoints"
    verbose_name = "Checkpoints"
