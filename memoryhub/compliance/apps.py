from django.apps import AppConfig


class ComplianceConfig(AppConfig):
    name = "memoryhub.compliance"
    label = "compliance"
    verbose_name = "Compliance"
