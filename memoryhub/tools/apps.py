from django.apps import AppConfig


class ToolsConfig(AppConfig):
    name = "memoryhub.tools"
    label = "tools"
    verbose_name = "Tool calls"
