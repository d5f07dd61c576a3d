from django.apps import AppConfig


class UsageConfig(AppConfig):
    name = "memoryhub.usage"
    label = "usage"
    verbose_name = "Usage and cost"
    default_auto_field = "django.db.models.BigAutoField"
