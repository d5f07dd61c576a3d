from django.apps import AppConfig


class GraphConfig(AppConfig):
    name = "memoryhub.graph"
    label = "graph"
    verbose_name = "Graph memory"
