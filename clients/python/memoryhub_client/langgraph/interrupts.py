"""LangGraph interrupts answered from the hub's approvals inbox.

Inside a node, `ask_approval(hub, tool=..., args=...)` records an approval request on
the hub and interrupts the graph (`interrupt()`, with the request as its value); the
operator decides in the console or through the API; `resume_from_inbox(hub, result)`
waits for the decision and gives the `Command(resume=...)` that carries it into the
node, where `ask_approval` then returns it as an `ApprovalDecision`:

    def refund(state):
        decision = ask_approval(hub, tool="issue_refund", args={"order": state["order"], "amount": 20})
        if not decision.approved:
            return {"status": f"refund refused: {decision.reason}"}
        return {"status": do_refund(**decision.args)}          # the operator may have edited args

    result = graph.invoke(inputs, config)
    while (command := resume_from_inbox(hub, result, timeout=600)) is not None:
        result = graph.invoke(command, config)

The resume value only says which request was answered: the decision itself is read
from the hub again, so a resume value made up elsewhere (or replayed from an old
checkpoint) cannot approve anything. A node runs again from its start when resumed,
so the request is sent with an Idempotency-Key made from the thread, the task and the
call: the second run finds the same request instead of making another. A remembered decision (an approval rule)
answers at once, without interrupting. The request belongs to a hub session: by
default the thread's id (the session must exist; MemoryHubSaver makes one per thread).
`aask_approval` and `aresume_from_inbox` are the same for the async client.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Optional

from langgraph.config import get_config
from langgraph.types import Command, Interrupt, interrupt

from memoryhub_client.aio import AsyncMemoryHub
from memoryhub_client.client import MemoryHub
from memoryhub_client.models import Approval

__all__ = ["ApprovalDecision", "ask_approval", "aask_approval", "resume_from_inbox", "aresume_from_inbox", "APPROVAL_INTERRUPT"]

# The `type` of an interrupt's value that names a hub approval request.
APPROVAL_INTERRUPT = "memoryhub_approval"
DECISIONS = {"approved": "approve", "edited": "edit", "rejected": "reject", "suspended": "suspend", "expired": "expired"}


@dataclass(frozen=True)
class ApprovalDecision:
    """What the operator decided: `decision` is approve, edit, reject, suspend, or
    expired (nobody decided in time); `args` are the arguments to use (edited ones
    after an edit); `reason` the operator's words for a rejection."""

    approval_id: int
    decision: str
    args: Any = None
    reason: str = ""
    decided_by: Optional[str] = None

    @property
    def approved(self) -> bool:
        return self.decision in ("approve", "edit")

    def as_resume(self) -> dict[str, Any]:
        """Plain JSON, as a checkpoint keeps a resume value."""
        return {"approval_id": self.approval_id, "decision": self.decision, "args": self.args, "reason": self.reason,
                "decided_by": self.decided_by}

    @classmethod
    def of(cls, approval: Approval) -> ApprovalDecision:
        return cls(approval_id=approval.id, decision=DECISIONS[approval.status], args=approval.args, reason=approval.reason,
                   decided_by=approval.decided_by)

    @classmethod
    def from_resume(cls, value: Any) -> ApprovalDecision:
        if isinstance(value, ApprovalDecision):
            return value
        if not isinstance(value, dict) or "decision" not in value:
            raise ValueError(f"not an approval decision: {value!r}")
        return cls(approval_id=int(value.get("approval_id") or 0), decision=str(value["decision"]), args=value.get("args"),
                   reason=str(value.get("reason") or ""), decided_by=value.get("decided_by"))


def _request(
    tool: str, args: Any, session_id: Optional[str], context: Any, allowed_decisions: Optional[list[str]], expires_in: Optional[int],
    response_schema: Optional[dict[str, Any]], key: Optional[str],
) -> dict[str, Any]:
    """The request's fields, with the session and Idempotency-Key the running task implies."""
    configurable = get_config().get("configurable", {})
    session = session_id or configurable.get("thread_id")
    if not session:
        raise ValueError("ask_approval needs a session_id, or a thread_id in the graph's config")
    where = [str(session), str(configurable.get("checkpoint_ns", "")), tool, json.dumps(args, sort_keys=True, default=str), key or ""]
    idempotency_key = "lg-approval-" + hashlib.sha256("\x1f".join(where).encode()).hexdigest()[:48]
    return {"session_id": str(session), "tool": tool, "args": args, "context": context, "allowed_decisions": allowed_decisions,
            "expires_in": expires_in, "response_schema": response_schema, "idempotency_key": idempotency_key}


def _interrupt_value(approval: Approval) -> dict[str, Any]:
    return {"type": APPROVAL_INTERRUPT, "approval_id": approval.id, "session_id": approval.session_id, "tool": approval.tool,
            "args": approval.args, "context": approval.context, "allowed_decisions": approval.allowed_decisions}


def ask_approval(
    hub: MemoryHub, *, tool: str, args: Any, session_id: Optional[str] = None, context: Any = None,
    allowed_decisions: Optional[list[str]] = None, expires_in: Optional[int] = None, response_schema: Optional[dict[str, Any]] = None,
    key: Optional[str] = None,
) -> ApprovalDecision:
    """In a node: the operator's decision on this tool call. Interrupts the graph until
    it is resumed with the decision (`resume_from_inbox`); `key` tells apart two asks for
    the same tool and args in one node."""
    approval = hub.approvals.request(**_request(tool, args, session_id, context, allowed_decisions, expires_in, response_schema, key))
    if approval.decided:
        return ApprovalDecision.of(approval)  # a remembered decision answered at once
    _claimed(approval, interrupt(_interrupt_value(approval)))
    return _decided(hub.approvals.get(approval.id))


async def aask_approval(
    hub: AsyncMemoryHub, *, tool: str, args: Any, session_id: Optional[str] = None, context: Any = None,
    allowed_decisions: Optional[list[str]] = None, expires_in: Optional[int] = None, response_schema: Optional[dict[str, Any]] = None,
    key: Optional[str] = None,
) -> ApprovalDecision:
    """`ask_approval` for async nodes and the async client."""
    request = _request(tool, args, session_id, context, allowed_decisions, expires_in, response_schema, key)
    approval = await hub.approvals.request(**request)
    if approval.decided:
        return ApprovalDecision.of(approval)
    _claimed(approval, interrupt(_interrupt_value(approval)))
    return _decided(await hub.approvals.get(approval.id))


def _claimed(approval: Approval, resumed: Any) -> None:
    """Whoever resumes the graph chooses the resume value: it may say which request it
    answers, never what was decided. The decision is read again from the hub."""
    if ApprovalDecision.from_resume(resumed).approval_id not in (0, approval.id):
        raise ValueError(f"resumed with the decision on another approval request than #{approval.id}")


def _decided(approval: Approval) -> ApprovalDecision:
    if not approval.decided:
        raise ValueError(f"resumed, but approval request #{approval.id} is still pending on the hub (resume_from_inbox waits for it)")
    return ApprovalDecision.of(approval)


def approval_interrupts(result: Any) -> list[Interrupt]:
    """The approval interrupts of an invoke's result (its `__interrupt__`), of a
    StateSnapshot (`graph.get_state(config)`), or of a list of interrupts."""
    if isinstance(result, dict):
        found = result.get("__interrupt__", ())
    elif hasattr(result, "interrupts"):
        found = result.interrupts
    else:
        found = result or ()
    return [i for i in found if isinstance(i.value, dict) and i.value.get("type") == APPROVAL_INTERRUPT]


def _command(decided: list[tuple[Interrupt, Approval]]) -> Optional[Command]:
    if not decided or any(not approval.decided for _, approval in decided):
        return None
    return Command(resume={i.id: ApprovalDecision.of(approval).as_resume() for i, approval in decided})


def resume_from_inbox(hub: MemoryHub, result: Any, *, timeout: float = 300.0) -> Optional[Command]:
    """Waits (long polls, `timeout` seconds at most per request) until every approval the
    graph is interrupted on is decided, and gives the Command that resumes it with the
    decisions. None when the graph waits on no approval, or one is still pending."""
    decided = [(i, hub.wait_for_approval(i.value["approval_id"], timeout=timeout)) for i in approval_interrupts(result)]
    return _command(decided)


async def aresume_from_inbox(hub: AsyncMemoryHub, result: Any, *, timeout: float = 300.0) -> Optional[Command]:
    """`resume_from_inbox` for the async client."""
    decided = [(i, await hub.wait_for_approval(i.value["approval_id"], timeout=timeout)) for i in approval_interrupts(result)]
    return _command(decided)

