"""Writes of checkpoints: save (one statement, race-safe), resume, fork, prune."""

from __future__ import annotations

from typing import Any

import orjson
from django.conf import settings
from django.db import transaction
from django.db.models import F, Window
from django.db.models.functions import RowNumber

from memoryhub.checkpoints.models import Checkpoint, state_stored
from memoryhub.conversations.models import ChainSummary, Session
from memoryhub.conversations.sessions import ensure_session_active, session_branch
from memoryhub.core.errors import ApplicationError, Conflict, NotFound
from memoryhub.core.models import Workspace
from memoryhub.core.sql import prepared_cursor
from memoryhub.plans.models import Plan, PlanStep
from memoryhub.plans.services import StepInput, plan_replace
from memoryhub.timeline.models import Event
from memoryhub.timeline.services import event_announce, event_record
from memoryhub.tools.models import ToolCall

CHECKPOINT_PARTS = ("state", "messages", "plan", "summary")
DEFAULT_SAVE_BUNDLE = ("state", "messages", "plan", "summary")


def checkpoint_parts(*, include: list[str] | None, exclude: list[str] | None, default: tuple[str, ...]) -> list[str]:
    for part in [*(include or []), *(exclude or [])]:
        if part not in CHECKPOINT_PARTS:
            raise ApplicationError(f"Unknown checkpoint part {part!r}.", code="INVALID_PART", details={"parts": list(CHECKPOINT_PARTS)})
    chosen = list(include) if include else list(default)
    return [part for part in CHECKPOINT_PARTS if part in chosen and part not in (exclude or [])]


# The current plan of the session `moved.id` as plan_snapshot gives it, each step with
# the call_ids of its tool calls, oldest first; NULL without a plan.
PLAN_SNAPSHOT_SQL = f"""
    SELECT jsonb_build_object(
        'version', p.version, 'goal', p.goal,
        'steps', coalesce((
            SELECT jsonb_agg(jsonb_build_object(
                'step_id', s.step_id, 'description', s.description, 'status', s.status, 'depends_on', to_jsonb(s.depends_on),
                'parent', s.parent, 'summary', s.summary,
                'tool_calls', coalesce((
                    SELECT jsonb_agg(t.call_id ORDER BY t.created_at, t.id) FROM {ToolCall._meta.db_table} t
                    WHERE t.session_id = moved.id AND t.step_id = s.step_id
                ), '[]'::jsonb)
            ) ORDER BY s.position)
            FROM {PlanStep._meta.db_table} s WHERE s.plan_id = p.id
        ), '[]'::jsonb)
    )
    FROM {Plan._meta.db_table} p WHERE p.session_id = moved.id AND p.is_current
"""


def checkpoint_save(
    *, session: Session, expected_version: int, state: Any, current_step: str = "", label: str = "",
    include: list[str] | None = None, exclude: list[str] | None = None, actor: str,
) -> Checkpoint:
    """Save version expected_version + 1, or 409 VERSION_CONFLICT if another writer
    saved since: the conditional UPDATE of the session's counter decides, so of N
    racing writers exactly one wins, whatever the isolation level."""
    bundle = checkpoint_parts(include=include, exclude=exclude, default=DEFAULT_SAVE_BUNDLE)
    raw = orjson.dumps(state if "state" in bundle else None)
    limit = settings.MEMORYHUB_MAX_CHECKPOINT_BYTES
    if len(raw) > limit:
        raise ApplicationError(
            f"The state is {len(raw)} bytes as JSON; the limit is {limit}.", code="PAYLOAD_TOO_LARGE", status=413,
            details={"limit_bytes": limit, "state_bytes": len(raw)},
        )
    compressed = state_stored(raw)  # outside the transaction, so the lock is short
    label_note = f" ({label})" if label else ""
    # One statement, so one round trip and atomic on its own: move the version counter
    # (only if it still is expected_version), insert the checkpoint with the message seq,
    # running summary and plan of that moment, and record it on the timeline. The ORM's
    # statements and transaction cost more than the rest of a small save together (see
    # docs/benchmarks.md, "Checkpoints"). The plan is plans.selectors.plan_snapshot's shape,
    # built in SQL: reading it first took two more round trips, even with no plan.
    with prepared_cursor() as cursor:
        cursor.execute(
            f"""
            WITH moved AS (
                UPDATE {Session._meta.db_table} SET checkpoint_version = %(next)s
                WHERE id = %(session)s AND checkpoint_version = %(expected)s
                RETURNING id, workspace_id, user_id, session_id, last_seq
            ), saved AS (
                INSERT INTO {Checkpoint._meta.db_table}
                    (workspace_id, user_id, created_at, updated_at, session_id, version, label, current_step, state,
                     state_bytes, stored_bytes, message_seq, summary, plan, bundle, last_call_id, tool_calls)
                SELECT workspace_id, user_id, now(), now(), id, %(next)s, %(label)s, %(step)s, %(state)s,
                       %(state_bytes)s, %(stored_bytes)s, CASE WHEN %(with_messages)s THEN last_seq ELSE 0 END,
                       CASE WHEN %(with_summary)s THEN coalesce((
                           SELECT text FROM {ChainSummary._meta.db_table} c WHERE c.session_id = moved.id ORDER BY index DESC LIMIT 1
                       ), '') ELSE '' END,
                       CASE WHEN %(with_plan)s THEN ({PLAN_SNAPSHOT_SQL}) END, %(bundle)s,
                       coalesce((SELECT call_id FROM {ToolCall._meta.db_table} t WHERE t.session_id = moved.id ORDER BY t.id DESC LIMIT 1), ''),
                       (SELECT count(*) FROM {ToolCall._meta.db_table} t WHERE t.session_id = moved.id)
                FROM moved
                RETURNING id, message_seq, created_at, last_call_id, tool_calls
            ), logged AS (
                INSERT INTO {Event._meta.db_table} (workspace_id, user_id, session_id, kind, at, actor, summary, ref)
                SELECT workspace_id, user_id, session_id, 'checkpoint', now(), %(actor)s, %(event)s, %(ref)s FROM moved
            )
            SELECT id, message_seq, created_at, last_call_id, tool_calls FROM saved
            """,
            {
                "next": expected_version + 1, "session": session.pk, "expected": expected_version, "label": label,
                "step": current_step, "state": compressed, "state_bytes": len(raw), "stored_bytes": len(compressed),
                "with_messages": "messages" in bundle, "with_summary": "summary" in bundle, "bundle": orjson.dumps(bundle).decode(),
                "with_plan": "plan" in bundle,
                "actor": actor, "event": f"Checkpoint v{expected_version + 1}{label_note}, {len(raw)} bytes of state.",
                "ref": orjson.dumps({"type": "checkpoint", "version": expected_version + 1}).decode(),
            },
            prepare=True,
        )
        saved = cursor.fetchone()
    if saved is None:
        current = Session.objects.filter(pk=session.pk).values_list("checkpoint_version", flat=True).first()
        raise Conflict(
            f"expected_version {expected_version} is not the latest version ({current}).",
            code="VERSION_CONFLICT", details={"current_version": current},
        )
    checkpoint_id, message_seq, created_at, last_call_id, call_count = saved
    event_announce(workspace_id=session.workspace_id, kind="checkpoint", session_id=session.session_id)
    checkpoint = Checkpoint(
        pk=checkpoint_id, workspace_id=session.workspace_id, user_id=session.user_id, session=session, version=expected_version + 1,
        label=label, current_step=current_step, state=compressed, state_bytes=len(raw), stored_bytes=len(compressed),
        message_seq=message_seq, bundle=bundle, created_at=created_at, last_call_id=last_call_id, tool_calls=call_count,
    )
    checkpoint._state.adding = False
    return checkpoint


def checkpoint_resumed(*, session: Session, checkpoint: Checkpoint, actor: str) -> None:
    ensure_session_active(session)  # a suspended session waits for an operator first
    event_record(
        workspace=session.workspace, kind="resume", summary=f"Resumed from checkpoint v{checkpoint.version}.", actor=actor,
        user_id=session.user_id, session_id=session.session_id, ref={"type": "checkpoint", "version": checkpoint.version},
    )


def checkpoint_fork(*, session: Session, from_version: int, new_session_id: str, actor: str) -> Session:
    """A new session whose history is the source's up to the checkpoint's message seq,
    and whose first checkpoint (v1) holds that version's state."""
    source = session.checkpoints.filter(version=from_version).first()
    if source is None:
        raise NotFound(f"No checkpoint v{from_version} in this session.", code="CHECKPOINT_NOT_FOUND")
    with transaction.atomic():
        fork = session_branch(session=session, new_session_id=new_session_id, upto_seq=source.message_seq, label=f"fork of v{from_version}", actor=actor)
        Session.objects.filter(pk=fork.pk).update(checkpoint_version=1)
        Checkpoint.objects.create(
            workspace_id=fork.workspace_id, user_id=fork.user_id, session=fork, version=1, label=f"fork of {session.session_id} v{from_version}",
            current_step=source.current_step, state=source.state, state_bytes=source.state_bytes, stored_bytes=source.stored_bytes,
            message_seq=source.message_seq, summary=source.summary, plan=source.plan, bundle=source.bundle,
            last_call_id=source.last_call_id, tool_calls=source.tool_calls,
        )
        if source.plan:
            _restore_plan(session=fork, snapshot=source.plan, actor=actor)
        for target in (session, fork):
            event_record(
                workspace=session.workspace, kind="fork", summary=f"Fork {session.session_id} v{from_version} → {new_session_id}.",
                actor=actor, user_id=session.user_id, session_id=target.session_id,
                ref={"type": "fork", "from": session.session_id, "version": from_version, "to": new_session_id},
            )
    fork.refresh_from_db()
    return fork


def checkpoint_prune(*, keep: int, workspace: Workspace | None = None) -> dict[int, int]:
    """Delete checkpoints beyond the newest `keep` of each session, labelled ones kept.
    Returns {workspace_id: deleted}; the retention job records the counts."""
    candidates = Checkpoint.objects.filter(label="")
    if workspace is not None:
        candidates = candidates.filter(workspace=workspace)
    ranked = candidates.annotate(
        rank=Window(RowNumber(), partition_by=[F("session_id")], order_by=F("version").desc())
    ).values("pk", "workspace_id", "rank")
    doomed = [(row["pk"], row["workspace_id"]) for row in ranked if row["rank"] > keep]
    deleted: dict[int, int] = {}
    for start in range(0, len(doomed), 1000):
        chunk = doomed[start : start + 1000]
        Checkpoint.objects.filter(pk__in=[pk for pk, _ in chunk]).delete()
        for _, workspace_id in chunk:
            deleted[workspace_id] = deleted.get(workspace_id, 0) + 1
    return deleted


def _restore_plan(*, session: Session, snapshot: dict[str, Any], actor: str) -> None:
    """A fork starts with the plan as it was at the checkpoint, statuses included."""
    steps = [StepInput(step_id=s["step_id"], description=s["description"], depends_on=s["depends_on"], parent=s["parent"]) for s in snapshot["steps"]]
    plan = plan_replace(session=session, goal=snapshot["goal"], steps=steps, actor=actor)
    for s in snapshot["steps"]:
        PlanStep.objects.filter(plan=plan, step_id=s["step_id"]).update(status=s["status"], summary=s["summary"])
