from django.apps import AppConfig


class TimelineConfig(AppConfig):
    name = "memoryhub.timeline"
    label = "timeline"
    verbose_name = "Timeline"

    def ready(self) -> None:
        from memoryhub.timeline.services import budget_warning_recorded
        from memoryhub.usage.metering import budget_warning

        budget_warning.connect(budget_warning_recorded, dispatch_uid="memoryhub-budget-warning")
