from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "memoryhub.notifications"
    label = "notifications"
    verbose_name = "Notifications"
