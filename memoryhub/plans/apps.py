from django.apps import AppConfig


class PlansConfig(AppConfig):
    name = "memoryhub.plans"
    label = "plans"
    verbose_name = "Plans"
