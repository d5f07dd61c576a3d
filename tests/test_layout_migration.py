"""The layout by concept moved models between apps without moving data: a database
created before it (every app at its last migration of that time) migrates to the new
layout with every row where it was, and back."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from memoryhub.checkpoints.models import Checkpoint
from memoryhub.core.models import AuditEntry
from memoryhub.episodes.models import Episode
from memoryhub.privacy.models import BlockedUser, RetentionPolicy
from memoryhub.tools.models import ToolCall, ToolResult

# The leaf migration of every app of ours on main before the layout by concept; the
# apps it created did not exist.
BEFORE_LAYOUT = [
    ("core", "0003_workspace_redaction"),
    ("timeline", "0003_alter_event_options"),
    ("memory", "0002_vector_indexed"),
    ("conversations", "0009_alter_chainsummary_options_alter_summary_options"),
    ("plans", "0004_alter_toolresult_options"),
    ("compliance", "0005_purge_attempts"),
    ("privacy", None),
    ("tools", None),
    ("checkpoints", None),
    ("episodes", None),
]
MOVED_TABLES = [
    "compliance_auditentry", "compliance_blockeduser", "compliance_retentionpolicy", "conversations_checkpoint",
    "plans_toolcall", "plans_toolresult", "plans_episode",
]


def _leaves(executor: MigrationExecutor) -> list[tuple[str, str]]:
    return executor.loader.graph.leaf_nodes()


@pytest.fixture
def old_layout(transactional_db: None) -> Iterator[MigrationExecutor]:
    """The test database taken back to the old layout, and forward again afterwards
    whatever the test did (the rest of the suite needs the new one)."""
    executor = MigrationExecutor(connection)
    latest = _leaves(executor)
    executor.migrate(BEFORE_LAYOUT)
    try:
        yield MigrationExecutor(connection)
    finally:
        MigrationExecutor(connection).migrate(latest)


def _counts() -> dict[str, int]:
    with connection.cursor() as cursor:
        counts = {}
        for table in MOVED_TABLES:
            cursor.execute(f'SELECT count(*) FROM "{table}"')
            counts[table] = cursor.fetchone()[0]
    return counts


def _constraint_names(table: str) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass", [table])
        return {row[0] for row in cursor.fetchall()}


def test_it_migrates_back_to_the_old_layout_and_forward_with_every_row(old_layout: MigrationExecutor) -> None:
    # One test for both ways: each trip back and forth costs 15 s of migrations.
    # Back (the fixture): the old constraint names and the purge foreign key.
    assert "conversations_checkpoint_user_id_not_blank" in _constraint_names("conversations_checkpoint")
    assert "plans_toolcall_user_id_not_blank" in _constraint_names("plans_toolcall")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_constraint WHERE conrelid = 'compliance_blockeduser'::regclass AND contype = 'f' "
            "AND confrelid = 'compliance_purgerequest'::regclass"
        )
        assert cursor.fetchone()[0] == 1

    old = old_layout.loader.project_state([node for node in BEFORE_LAYOUT if node[1]]).apps
    workspace = old.get_model("core", "Workspace").objects.create(slug="before")
    agent = old.get_model("core", "Agent").objects.create(workspace=workspace, name="bot")
    session = old.get_model("conversations", "Session").objects.create(workspace=workspace, agent=agent, session_id="s1", user_id="u1")
    old.get_model("conversations", "Checkpoint").objects.create(
        workspace=workspace, session=session, user_id="u1", version=1, label="first", state=b"x", bundle=["state"]
    )
    call = old.get_model("plans", "ToolCall").objects.create(
        workspace=workspace, session=session, user_id="u1", call_id="c1", tool="search", status="ok"
    )
    old.get_model("plans", "ToolResult").objects.create(workspace=workspace, user_id="u1", call=call, data=b"output")
    old.get_model("plans", "Episode").objects.create(
        workspace=workspace, agent=agent, session=session, user_id="u1", task="t", outcome="success", narrative="n"
    )
    purge = old.get_model("compliance", "PurgeRequest").objects.create(workspace=workspace, user_hash="h" * 64, status="done")
    old.get_model("compliance", "BlockedUser").objects.create(workspace=workspace, user_hash="h" * 64, purge=purge)
    old.get_model("compliance", "RetentionPolicy").objects.create(workspace=workspace, kind="checkpoints", value=7)
    old.get_model("compliance", "AuditEntry").objects.create(actor="operator:owner", action="login", workspace_slug="before")
    before = _counts()

    old_layout.loader.build_graph()
    old_layout.migrate(_leaves(old_layout))

    assert _counts() == before
    checkpoint = Checkpoint.objects.get(session__session_id="s1")
    assert (checkpoint.version, checkpoint.label, bytes(checkpoint.state)) == (1, "first", b"x")
    assert bytes(ToolResult.objects.get(call=ToolCall.objects.get(call_id="c1")).data) == b"output"
    assert Episode.objects.get(session__session_id="s1").outcome == "success"
    assert BlockedUser.objects.get(workspace__slug="before").purge_id == purge.pk
    assert RetentionPolicy.objects.get(workspace__slug="before").value == 7
    assert AuditEntry.objects.filter(workspace_slug="before", action="login").count() == 1
    # Constraints named after the app moved with their model.
    assert "checkpoints_checkpoint_user_id_not_blank" in _constraint_names("conversations_checkpoint")
    assert {"tools_toolcall_user_id_not_blank", "tool_call_unique_per_agent"} <= _constraint_names("plans_toolcall")
    assert ToolCall.objects.get(call_id="c1").agent_id == agent.pk  # filled in from the session (tools 0003)
    assert "episodes_episode_user_id_not_blank" in _constraint_names("plans_episode")
