from django.apps import AppConfig


class GraphCheckpointsConfig(AppConfig):
    name = "memoryhub.graph_checkpoints"
    label = "graph_checkpoints"
    verbose_name = "LangGraph checkpoints"
