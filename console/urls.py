from django.contrib.auth import views as auth_views
from django.urls import include, path

from console import (
    approval_views,
    compliance_views,
    episode_views,
    graph_views,
    home_views,
    key_views,
    live_views,
    memory_views,
    notification_views,
    portability_views,
    session_views,
    usage_views,
)

urlpatterns = [
    path("login/", home_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]

console_patterns = [
    path("", home_views.home, name="home"),
    path("workspace/", home_views.switch_workspace, name="switch-workspace"),
    path("sessions/", session_views.session_list, name="sessions"),
    path("sessions/<str:session_id>/", session_views.session_detail, name="session"),
    path("sessions/<str:session_id>/events/", live_views.session_events, name="session-events"),
    *(
        path(f"sessions/<str:session_id>/{section}/", session_views.session_section, {"section": section}, name=f"session-{section}")
        for section in ("conversation", "plan", "checkpoints", "summaries", "family")
    ),
    path("activity/", live_views.activity, name="activity"),
    path("activity/events/", live_views.activity_events, name="activity-events"),
    path("sessions/<str:session_id>/checkpoints/diff/", session_views.checkpoint_diff, name="checkpoint-diff"),
    path("sessions/<str:session_id>/tool-calls/<str:call_id>/result/", session_views.tool_result, name="tool-result"),
    path("sessions/<str:session_id>/checkpoints/<int:version>/", session_views.checkpoint_detail, name="checkpoint"),
    path("episodes/", episode_views.episode_list, name="episodes"),
    path("memory/", memory_views.memory_search, name="memory"),
    path("graph/", graph_views.entity, name="entity"),
    path("memory/review/", memory_views.review_queue, name="review"),
    path("memory/bulk/", memory_views.memory_bulk, name="memory-bulk"),
    path("memory/<str:entry_id>/", memory_views.memory_detail, name="memory-detail"),
    path("memory/<str:entry_id>/review/", memory_views.memory_review, name="memory-review"),
    path("memory/<str:entry_id>/merge/", memory_views.memory_merge, name="memory-merge"),
    path("memory/<str:entry_id>/edit/", memory_views.memory_edit, name="memory-edit"),
    path("memory/<str:entry_id>/revert/", memory_views.memory_revert, name="memory-revert"),
    path("memory/<str:entry_id>/not-duplicates/", memory_views.duplicates_dismiss, name="duplicates-dismiss"),
    path("memory/<str:entry_id>/delete/", memory_views.memory_delete, name="memory-delete"),
    path("approvals/", approval_views.inbox, name="approvals"),
    path("approvals/pending/", approval_views.inbox_poll, name="approvals-poll"),
    path("approvals/<int:approval_id>/", approval_views.approval_page, name="approval"),
    path("approvals/<int:approval_id>/decision/", approval_views.decide, name="approval-decide"),
    path("approvals/history/", approval_views.history, name="approval-history"),
    path("approvals/rules/", approval_views.rules, name="approval-rules"),
    path("approvals/rules/<int:rule_id>/revoke/", approval_views.rule_revoke, name="approval-rule-revoke"),
    path("approvals/sessions/<str:session_id>/reactivate/", approval_views.reactivate, name="session-reactivate"),
    path("compliance/", compliance_views.compliance, name="compliance"),
    path("compliance/preview/", compliance_views.purge_preview, name="purge-preview"),
    path("compliance/purges/", compliance_views.purge_start, name="purge-start"),
    path("compliance/purges/<int:purge_id>/progress/", compliance_views.purge_progress, name="purge-progress"),
    path("compliance/purges/<int:purge_id>/receipt.json", compliance_views.purge_receipt, name="purge-receipt"),
    path("compliance/blocks/<int:block_id>/lift/", compliance_views.block_remove, name="block-lift"),
    path("compliance/retention/", compliance_views.retention_update, name="retention-update"),
    path("compliance/audit.jsonl", compliance_views.audit_export, name="audit-export"),
    path("compliance/exports/", compliance_views.user_export_start, name="user-export-start"),
    path("portability/", portability_views.portability, name="portability"),
    path("portability/exports/", portability_views.export_start, name="export-start"),
    path("portability/exports/<str:export_id>/progress/", portability_views.export_progress, name="export-progress"),
    path("portability/exports/<str:export_id>/download/", portability_views.export_download, name="export-download"),
    path("portability/imports/", portability_views.import_start, name="import-start"),
    path("portability/imports/<int:import_id>/progress/", portability_views.import_progress, name="import-progress"),
    path("portability/imports/<int:import_id>/apply/", portability_views.import_apply, name="import-apply"),
    path("usage/", usage_views.usage, name="usage"),
    path("usage/budget/", usage_views.budget_update, name="budget-update"),
    path("keys/", key_views.keys, name="keys"),
    path("settings/notifications/", notification_views.notifications, name="notifications"),
    path("settings/webhooks/", notification_views.webhooks, name="webhooks"),
    path("settings/webhooks/<int:webhook_id>/", notification_views.webhook, name="webhook"),
    *(
        path(f"settings/webhooks/<int:webhook_id>/{action}/", notification_views.webhook_action, {"action": action}, name=f"webhook-{action}")
        for action in ("test", "rotate", "enable", "disable", "delete")
    ),
    path(
        "settings/webhooks/<int:webhook_id>/deliveries/<int:delivery_id>/redeliver/", notification_views.delivery_redeliver,
        name="webhook-redeliver",
    ),
    path("settings/redaction/", key_views.redaction_settings, name="redaction-settings"),
    path("keys/agent/", key_views.agent_key_create, name="agent-key-create"),
    path("keys/agent/<int:key_id>/revoke/", key_views.agent_key_revoke, name="agent-key-revoke"),
    path("keys/operator/", key_views.operator_key_create, name="operator-key-create"),
    path("keys/operator/<int:key_id>/revoke/", key_views.operator_key_revoke, name="operator-key-revoke"),
]

urlpatterns += [path("", include((console_patterns, "console")))]
