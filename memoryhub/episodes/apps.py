from django.apps import AppConfig


class EpisodesConfig(AppConfig):
    name = "memoryhub.episodes"
    label = "episodes"
    verbose_name = "Episodes"
