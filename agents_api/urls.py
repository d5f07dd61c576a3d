from django.urls import path, register_converter

from agents_api import approvals, checkpoints, episodes, events, graph_checkpoints, items, memories, plans, purges, sessions, timeline, tools, views
from agents_api.converters import Int64Converter

register_converter(Int64Converter, "int64")

app_name = "agents_api"

urlpatterns = [
    path("me", views.MeView.as_view(), name="me"),
    path("keys", views.KeysView.as_view(), name="keys"),
    path("keys/<str:prefix>", views.KeyRevokeView.as_view(), name="key-revoke"),
    path("memories", memories.MemoriesView.as_view(), name="memories"),
    path("memories/batch", memories.MemoryBatchView.as_view(), name="memories-batch"),
    path("memories/search", memories.MemorySearchView.as_view(), name="memories-search"),
    path("memories/items", items.ItemsView.as_view(), name="memory-items"),
    path("memories/items/get", items.ItemsGetView.as_view(), name="memory-items-get"),
    path("memories/items/delete", items.ItemsDeleteView.as_view(), name="memory-items-delete"),
    path("memories/items/search", items.ItemsSearchView.as_view(), name="memory-items-search"),
    path("memories/namespaces", items.NamespacesView.as_view(), name="memory-namespaces"),
    path("memories/<str:entry_id>", memories.MemoryDetailView.as_view(), name="memory-detail"),
    path("stats", memories.StatsView.as_view(), name="stats"),
    path("sessions", sessions.SessionsView.as_view(), name="sessions"),
    path("sessions/<str:session_id>", sessions.SessionDetailView.as_view(), name="session-detail"),
    path("sessions/<str:session_id>/messages", sessions.MessagesView.as_view(), name="session-messages"),
    path("sessions/<str:session_id>/messages/<int64:seq>", sessions.MessageEditView.as_view(), name="session-message"),
    path("sessions/<str:session_id>/context", sessions.ContextView.as_view(), name="session-context"),
    path("sessions/<str:session_id>/branch", sessions.BranchView.as_view(), name="session-branch"),
    path("sessions/<str:session_id>/summarize", sessions.SummarizeView.as_view(), name="session-summarize"),
    path("sessions/<str:session_id>/checkpoints", checkpoints.CheckpointsView.as_view(), name="session-checkpoints"),
    path("sessions/<str:session_id>/checkpoints/<str:version>", checkpoints.CheckpointDetailView.as_view(), name="session-checkpoint"),
    path("sessions/<str:session_id>/fork", checkpoints.ForkView.as_view(), name="session-fork"),
    path("sessions/<str:session_id>/resume", checkpoints.ResumeView.as_view(), name="session-resume"),
    path("sessions/<str:session_id>/reactivate", sessions.ReactivateView.as_view(), name="session-reactivate"),
    path("sessions/<str:session_id>/timeline", timeline.TimelineView.as_view(), name="session-timeline"),
    path("sessions/<str:session_id>/events", events.SessionEventsView.as_view(), name="session-events"),
    path("events", events.WorkspaceEventsView.as_view(), name="events"),
    path("sessions/<str:session_id>/plan", plans.PlanView.as_view(), name="session-plan"),
    path("sessions/<str:session_id>/plan/render", plans.PlanRenderView.as_view(), name="session-plan-render"),
    path("sessions/<str:session_id>/plan/steps/<str:step_id>", plans.StepView.as_view(), name="session-plan-step"),
    path("sessions/<str:session_id>/tool-calls", tools.ToolCallsView.as_view(), name="session-tool-calls"),
    path("sessions/<str:session_id>/episode-draft", episodes.EpisodeDraftView.as_view(), name="session-episode-draft"),
    path("tool-calls/<str:call_id>/result", tools.ToolResultView.as_view(), name="tool-call-result"),
    path("episodes", episodes.EpisodesView.as_view(), name="episodes"),
    path("purges", purges.PurgesView.as_view(), name="purges"),
    path("purges/<int64:purge_id>", purges.PurgeDetailView.as_view(), name="purge-detail"),
    path("purges/unblock", purges.BlockLiftView.as_view(), name="purge-unblock"),
    path("retention", purges.RetentionView.as_view(), name="retention"),
    path("audit", purges.AuditView.as_view(), name="audit"),
    path("episodes/similar", episodes.SimilarEpisodesView.as_view(), name="episodes-similar"),
    path("approvals", approvals.ApprovalsView.as_view(), name="approvals"),
    path("approvals/<int64:approval_id>", approvals.ApprovalDetailView.as_view(), name="approval-detail"),
    path("approvals/<int64:approval_id>/decision", approvals.DecisionView.as_view(), name="approval-decision"),
    path("approval-rules", approvals.RulesView.as_view(), name="approval-rules"),
    path("approval-rules/<int64:rule_id>", approvals.RuleDetailView.as_view(), name="approval-rule"),
    # LangGraph's checkpointer (beyond CONTRACT.md; README, "LangGraph checkpointer").
    path("langgraph/checkpoints", graph_checkpoints.GraphCheckpointsView.as_view(), name="langgraph-checkpoints"),
    path("langgraph/threads/<str:thread_id>", graph_checkpoints.GraphThreadView.as_view(), name="langgraph-thread"),
    path("langgraph/writes", graph_checkpoints.GraphWritesView.as_view(), name="langgraph-writes"),
    path("langgraph/threads/<str:thread_id>/copy", graph_checkpoints.GraphThreadCopyView.as_view(), name="langgraph-thread-copy"),
    path("langgraph/prune", graph_checkpoints.GraphPruneView.as_view(), name="langgraph-prune"),
    path("langgraph/runs/delete", graph_checkpoints.GraphRunsDeleteView.as_view(), name="langgraph-runs-delete"),
]
