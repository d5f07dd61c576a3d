"""Reads of plans, and the plan rendered for a prompt."""

from __future__ import annotations

from typing import Any

from memoryhub.conversations.models import Session
from memoryhub.core.errors import NotFound
from memoryhub.plans.models import Plan, PlanStep, StepStatus

# Future steps listed by name beyond the current one; the rest are counted, so a plan of
# hundreds of steps still renders in a few hundred tokens.
FUTURE_SHOWN = 5
DONE_SHOWN = 20


def current_plan(*, session: Session) -> Plan:
    plan = Plan.objects.filter(session=session, is_current=True).first()
    if plan is None:
        raise NotFound("This session has no plan.", code="PLAN_NOT_FOUND")
    return plan


def plan_snapshot(*, session: Session, tool_calls: dict[str, list[str]] | None = None) -> dict[str, Any] | None:
    """The current plan as data; each step lists the call_ids in `tool_calls` attached
    to it (the tool log is a sibling app: callers pass tools.selectors.tool_calls_by_step)."""
    plan = Plan.objects.filter(session=session, is_current=True).first()
    if plan is None:
        return None
    calls = tool_calls or {}
    return {
        "version": plan.version,
        "goal": plan.goal,
        "steps": [
            {"step_id": s.step_id, "description": s.description, "status": s.status, "depends_on": s.depends_on, "parent": s.parent,
             "summary": s.summary, "tool_calls": calls.get(s.step_id, [])}
            for s in plan.steps.order_by("position")
        ],
    }


def current_step_id(*, session: Session) -> str | None:
    plan = Plan.objects.filter(session=session, is_current=True).first()
    if plan is None:
        return None
    return plan.steps.filter(status=StepStatus.RUNNING).order_by("position").values_list("step_id", flat=True).first()


def plan_render(*, plan: Plan, current: str | None, tool_calls: dict[str, list[str]] | None = None) -> str:
    """Done steps one line with their summary, the current step in full (with its tool
    calls' summaries), future steps by name, distant ones elided with a count."""
    steps: list[PlanStep] = list(plan.steps.order_by("position"))
    if current is None:
        current = next((s.step_id for s in steps if s.status == StepStatus.RUNNING), None) or next(
            (s.step_id for s in steps if s.status == StepStatus.PENDING), None
        )
    index = next((i for i, s in enumerate(steps) if s.step_id == current), None)
    lines = []
    if index is None:
        lines.append(f"Goal: {plan.goal} ({len(steps)} steps, none current)")
    else:
        lines.append(f"step {index + 1} of {len(steps)}: {steps[index].description}")
        lines.append(f"Goal: {plan.goal}")
    finished = [s for s in steps if s.status in (StepStatus.DONE, StepStatus.FAILED) and s.step_id != current]
    if len(finished) > DONE_SHOWN:
        lines.append(f"[done] … {len(finished) - DONE_SHOWN} earlier steps finished")
    for s in finished[-DONE_SHOWN:]:
        tag = "done" if s.status == StepStatus.DONE else "failed"
        lines.append(f"[{tag}] {s.step_id}: {s.description}" + (f" -> {s.summary}" if s.summary else ""))
    if index is not None:
        step = steps[index]
        lines.append(f"[current] {step.step_id}: {step.description}")
        if step.depends_on:
            lines.append(f"  after: {', '.join(step.depends_on)}")
        for summary in (tool_calls or {}).get(step.step_id, []):
            lines.append(f"  tool: {summary}")
    future = [s for s in steps if s.status in (StepStatus.PENDING, StepStatus.RUNNING) and s.step_id != current]
    for s in future[:FUTURE_SHOWN]:
        lines.append(f"[{s.status}] {s.step_id}: {s.description.splitlines()[0][:80]}")
    if len(future) > FUTURE_SHOWN:
        lines.append(f"[pending] … and {len(future) - FUTURE_SHOWN} more steps")
    return "\n".join(lines)
