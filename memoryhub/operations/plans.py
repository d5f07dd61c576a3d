"""Plans: replace, move a step, render."""

from __future__ import annotations

from typing import Any

from memoryhub.conversations.models import Session
from memoryhub.core.selectors import Principal
from memoryhub.plans.selectors import current_plan, plan_render, plan_snapshot
from memoryhub.plans.services import StepInput, plan_replace, step_transition
from memoryhub.tools.selectors import tool_calls_by_step, tool_summaries_by_step


def plan_answer(*, principal: Principal, session: Session) -> dict[str, Any]:
    """The current plan (404 PLAN_NOT_FOUND without one), each step with its tool calls."""
    current_plan(session=session)
    return _snapshot(session)


def _snapshot(session: Session) -> dict[str, Any]:
    return plan_snapshot(session=session, tool_calls=tool_calls_by_step(session=session)) or {}


def plan_replace_answer(*, principal: Principal, session: Session, goal: str, steps: list[StepInput]) -> dict[str, Any]:
    plan_replace(session=session, goal=goal, steps=steps, actor=principal.actor)
    return _snapshot(session)


def plan_step_answer(*, principal: Principal, session: Session, step_id: str, status: str, summary: str | None) -> dict[str, Any]:
    step = step_transition(session=session, step_id=step_id, status=status, summary=summary, actor=principal.actor)
    return {"step_id": step.step_id, "status": step.status, "summary": step.summary, "depends_on": step.depends_on, "parent": step.parent}


def plan_render_answer(*, principal: Principal, session: Session, current: str | None) -> dict[str, Any]:
    text = plan_render(plan=current_plan(session=session), current=current, tool_calls=tool_summaries_by_step(session=session))
    return {"text": text}
