from django.apps import AppConfig


class TimelineConfig(AppConfig):
    name = "memoryhub.timeline"
    label = "timeline"
    verbose_name = "Timeline"
