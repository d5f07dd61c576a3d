from django.apps import AppConfig


class GraphCheckpointsConfig(AppConfig):
    name = "memoryhub.langgraph_checkpoints"
    # The label of the package's first name (memoryhub/graph_checkpoints, renamed so that
    # it is not read as the knowledge graph's): its tables, migrations and content types
    # keep it, so the rename moved no data.
    label = "graph_checkpoints"
    verbose_name = "LangGraph checkpoints"
