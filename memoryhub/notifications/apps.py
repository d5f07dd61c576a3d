from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "memoryhub.notifications"
    label = "notifications"
    verbose_name = "Notifications"

    def ready(self) -> None:
        from memoryhub.notifications.services import budget_announce
        from memoryhub.usage.metering import budget_exceeded, budget_warning

        budget_warning.connect(budget_announce, dispatch_uid="memoryhub-budget-warning-webhooks")
        budget_exceeded.connect(budget_announce, dispatch_uid="memoryhub-budget-exceeded-webhooks")
