from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "memoryhub.approvals"
    label = "approvals"
    verbose_name = "Approvals (human in the loop)"
