"""The session tools: start a session; its tool-call log, plan and checkpoints; human
approval; episodes of finished tasks.

Named as agents already call them in the memory SDKs they come from; each parses its
arguments into the domain's inputs and makes one call to memoryhub.operations, the
same the REST API makes (a `session_id` names the agent's session, as a REST URL does)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from memoryhub.approvals.services import ApprovalInput
from memoryhub.episodes.services import EpisodeInput
from memoryhub.operations import approvals, checkpoints, episodes, plans, sessions, tools
from memoryhub.plans.services import StepInput
from memoryhub.tools.services import ToolCallInput

from agents_mcp.app import server
from agents_mcp.arguments import (
    CheckpointPart,
    DecisionName,
    Identifier,
    Json,
    JsonObject,
    Outcome,
    PlanStepArg,
    StepState,
    Text,
    ToolStatus,
    UserId,
    Version,
)
from agents_mcp.running import run


@server.tool()
async def start_session(session_id: Identifier, user_id: UserId, metadata: JsonObject | None = None) -> Json:
    """Start a session (the same id for the same user again is the same session)."""
    return await run(sessions.session_start_answer, session_id=session_id, user_id=user_id, metadata=metadata or {})


@server.tool()
async def record_tool_call(
    session_id: Identifier, tool: Annotated[str, Field(min_length=1, max_length=200)], args: Json | None = None,
    result: Any = "", result_summary: Annotated[str, Field(max_length=20_000)] | None = None, status: ToolStatus = "ok",
    call_id: Identifier | None = None, step_id: Identifier | None = None, duration_ms: Annotated[int, Field(ge=0, le=2**31 - 1)] | None = None,
    cost: Annotated[float, Field(ge=0)] | None = None,
) -> Json:
    """Log a tool call of a session; personal data and secrets are redacted before anything is stored."""
    item = ToolCallInput(
        tool=tool, args=args or {}, result=result, result_summary=result_summary, status=status, call_id=call_id, step_id=step_id,
        duration_ms=duration_ms, cost=cost,
    )
    return await run(tools.tool_call_record_answer, rate="tool_calls", in_session=session_id, item=item)


@server.tool()
async def recall_tool_result(call_id: Identifier) -> Json:
    """The (redacted) raw output of an earlier tool call, by call_id."""
    return await run(tools.tool_result_answer, rate="reads", call_id=call_id)


@server.tool()
async def set_plan(
    session_id: Identifier, goal: Text,
    steps: Annotated[list[PlanStepArg], Field(max_length=1000)],
) -> Json:
    """Replace the session's plan (the old one stays in history)."""
    return await run(plans.plan_replace_answer, in_session=session_id, goal=goal, steps=[StepInput(**step.model_dump()) for step in steps])


@server.tool()
async def update_plan_step(session_id: Identifier, step_id: Identifier, status: StepState, summary: Text | None = None) -> Json:
    """Move a plan step: pending → running → done or failed."""
    return await run(plans.plan_step_answer, in_session=session_id, step_id=step_id, status=status, summary=summary)


@server.tool()
async def render_plan(session_id: Identifier, current: Identifier | None = None) -> Json:
    """The session's plan as a compact prompt slice ("step 3 of 7", done steps with their results)."""
    return await run(plans.plan_render_answer, rate="reads", in_session=session_id, current=current)


@server.tool()
async def save_checkpoint(
    session_id: Identifier, state: Any, expected_version: Version, current_step: Annotated[str, Field(max_length=200)] = "",
    label: Annotated[str, Field(max_length=200)] = "", include: list[CheckpointPart] | None = None,
) -> Json:
    """Save the agent's state as version expected_version + 1; refused (VERSION_CONFLICT) if another writer saved since."""
    return await run(
        checkpoints.checkpoint_save_answer, in_session=session_id, state=state, expected_version=expected_version, current_step=current_step,
        label=label, include=include,
    )


@server.tool()
async def load_checkpoint(
    session_id: Identifier, version: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None, include: list[CheckpointPart] | None = None,
) -> Json:
    """A checkpoint (the latest unless `version`), with state and summary unless `include` says otherwise."""
    return await run(checkpoints.checkpoint_load_answer, rate="reads", in_session=session_id, version=version, include=include)


@server.tool()
async def request_approval(
    session_id: Identifier, tool: Annotated[str, Field(min_length=1, max_length=200)], args: Json,
    allowed_decisions: Annotated[list[DecisionName], Field(min_length=1)] | None = None, context: Any = None,
    expires_in: Annotated[int, Field(ge=1, le=30 * 86400)] | None = None,
    required_approvals: Annotated[int, Field(ge=1, le=10)] = 1, escalate_after: Annotated[int, Field(ge=1, le=30 * 86400)] | None = None,
) -> Json:
    """Ask a human before a risky tool call. Pending until an operator decides (poll get_approval); a remembered decision answers at once.
    `required_approvals`: different approvers who must approve; `escalate_after`: seconds until admins hear it is still undecided."""
    item = ApprovalInput(
        tool=tool, args=args, allowed_decisions=list(allowed_decisions or ["approve", "edit", "reject", "suspend"]), context=context,
        expires_in=expires_in, required_approvals=required_approvals, escalate_after=escalate_after,
    )
    return await run(approvals.approval_request_answer, made_as="waits", in_session=session_id, item=item)


@server.tool()
async def get_approval(approval_id: Annotated[int, Field(ge=1, le=2**63 - 1)]) -> Json:
    """An approval request and its decision, if taken."""
    return await run(approvals.approval_answer, rate="reads", approval_id=approval_id)


@server.tool()
async def record_episode(
    user_id: UserId, task: Text, outcome: Outcome, narrative: Text, session_id: Identifier | None = None,
    tools_used: list[Annotated[str, Field(min_length=1, max_length=200)]] | None = None,
    elapsed_ms: Annotated[int, Field(ge=0, le=2**63 - 1)] | None = None, cost: Annotated[float, Field(ge=0)] | None = None,
    metadata: JsonObject | None = None,
) -> Json:
    """Record a finished task (3–5 sentences of narrative) for similar_episodes to find."""
    counts: dict[str, int] = {}
    for name in tools_used or []:
        counts[name] = counts.get(name, 0) + 1
    item = EpisodeInput(
        session_id=session_id, user_id=user_id, task=task, outcome=outcome, narrative=narrative, tools_used=counts, elapsed_ms=elapsed_ms,
        cost=cost, metadata=metadata or {},
    )
    return await run(episodes.episode_record_answer, in_session=session_id, item=item)


@server.tool()
async def similar_episodes(
    task: Text, k: Annotated[int, Field(ge=1, le=20)] = 3, outcome: Outcome | None = None, user_id: UserId | None = None,
) -> Json:
    """The past episodes most similar to a task, with guidance drawn from them."""
    return await run(episodes.episodes_similar_answer, rate="searches", task=task, k=k, outcome=outcome, user_id=user_id)
