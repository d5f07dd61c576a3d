"""Writes of plans: replace the plan, move a step."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.db.models import Max

from memoryhub.conversations.models import Session
from memoryhub.core.errors import ApplicationError, Conflict, NotFound
from memoryhub.plans.models import TRANSITIONS, Plan, PlanStep, StepStatus
from memoryhub.timeline.services import event_record

MAX_STEPS = 1000


@dataclass
class StepInput:
    step_id: str
    description: str
    depends_on: list[str] = field(default_factory=list)
    parent: str | None = None


def _check_graph(steps: list[StepInput]) -> None:
    ids = [s.step_id for s in steps]
    if len(ids) != len(set(ids)):
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        raise ApplicationError("Step ids must be unique.", code="INVALID_PLAN", details={"duplicates": duplicates})
    known = set(ids)
    for step in steps:
        unknown = [d for d in step.depends_on if d not in known]
        if unknown:
            raise ApplicationError(f"Step {step.step_id!r} depends on unknown steps.", code="UNKNOWN_DEPENDENCY", details={"step": step.step_id, "unknown": unknown})
        if step.parent is not None and step.parent not in known:
            raise ApplicationError(f"Step {step.step_id!r} has an unknown parent.", code="UNKNOWN_PARENT", details={"step": step.step_id, "parent": step.parent})
        if step.step_id in step.depends_on or step.parent == step.step_id:
            raise ApplicationError(f"Step {step.step_id!r} depends on itself.", code="PLAN_CYCLE", details={"cycle": [step.step_id]})
    # Kahn's algorithm over dependency and parent edges: what is left is on a cycle.
    edges = {s.step_id: set(s.depends_on) | ({s.parent} if s.parent else set()) for s in steps}
    remaining = dict(edges)
    while True:
        ready = [sid for sid, deps in remaining.items() if not deps & remaining.keys()]
        if not ready:
            break
        for sid in ready:
            remaining.pop(sid)
    if remaining:
        raise ApplicationError("The plan's dependencies form a cycle.", code="PLAN_CYCLE", details={"cycle": sorted(remaining)})


def plan_replace(*, session: Session, goal: str, steps: list[StepInput], actor: str) -> Plan:
    """Make a new current plan; the previous one stays in the history."""
    if not steps:
        raise ApplicationError("A plan needs at least one step.", code="INVALID_PLAN")
    if len(steps) > MAX_STEPS:
        raise ApplicationError(f"A plan has at most {MAX_STEPS} steps.", code="INVALID_PLAN")
    _check_graph(steps)
    try:
        with transaction.atomic():
            version = (Plan.objects.filter(session=session).aggregate(v=Max("version"))["v"] or 0) + 1
            Plan.objects.filter(session=session, is_current=True).update(is_current=False)
            plan = Plan.objects.create(workspace_id=session.workspace_id, user_id=session.user_id, session=session, version=version, goal=goal)
            PlanStep.objects.bulk_create([
                PlanStep(
                    workspace_id=session.workspace_id, user_id=session.user_id, plan=plan, step_id=s.step_id, position=i,
                    description=s.description, depends_on=s.depends_on, parent=s.parent,
                )
                for i, s in enumerate(steps)
            ])
            event_record(
                workspace=session.workspace, kind="plan", summary=f"Plan v{version} with {len(steps)} steps.", actor=actor,
                user_id=session.user_id, session_id=session.session_id, ref={"type": "plan", "version": version},
            )
    except IntegrityError:
        raise Conflict("Another plan was written at the same time; read it and retry.", code="PLAN_CONFLICT") from None
    return plan


def step_transition(*, session: Session, step_id: str, status: str, summary: str | None, actor: str) -> PlanStep:
    """Move a step of the current plan; invalid moves are 409, and of two racing
    moves of one step exactly one wins (the update is conditional on the status read)."""
    plan = Plan.objects.filter(session=session, is_current=True).first()
    if plan is None:
        raise NotFound("This session has no plan.", code="PLAN_NOT_FOUND")
    step = plan.steps.filter(step_id=step_id).first()
    if step is None:
        raise NotFound(f"No step {step_id!r} in the current plan.", code="STEP_NOT_FOUND")
    if status not in TRANSITIONS.get(step.status, set()):
        raise Conflict(
            f"A {step.status} step cannot become {status}.", code="INVALID_TRANSITION",
            details={"from": step.status, "to": status, "allowed": sorted(TRANSITIONS[step.status])},
        )
    if status == StepStatus.RUNNING and step.depends_on:
        waiting = list(plan.steps.filter(step_id__in=step.depends_on).exclude(status=StepStatus.DONE).values_list("step_id", flat=True))
        if waiting:
            raise Conflict("Its dependencies are not done.", code="DEPENDENCIES_NOT_DONE", details={"waiting_for": sorted(waiting)})
    changes: dict[str, object] = {"status": status}
    if summary is not None:
        changes["summary"] = summary
    with transaction.atomic():
        moved = PlanStep.objects.filter(pk=step.pk, status=step.status).update(**changes)
        if not moved:
            raise Conflict("The step changed meanwhile; read it again.", code="TRANSITION_CONFLICT")
        event_record(
            workspace=session.workspace, kind="plan", summary=f"Step {step_id} {step.status} → {status}.", actor=actor,
            user_id=session.user_id, session_id=session.session_id, ref={"type": "plan_step", "step_id": step_id, "status": status},
        )
    step.refresh_from_db()
    return step
