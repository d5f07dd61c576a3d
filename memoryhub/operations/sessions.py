"""Sessions: start one (or find it again), change its state, delete it, its messages, a
prompt-sized context, branches and summaries."""

from __future__ import annotations

from typing import Any

from memoryhub.approvals.selectors import pending_approvals
from memoryhub.conversations.context import context_build, context_grounding
from memoryhub.conversations.messages import MessageInput, message_append, message_edit
from memoryhub.conversations.models import Message, Session
from memoryhub.conversations.sessions import session_branch, session_create, session_delete, session_update
from memoryhub.conversations.summaries import session_summarise
from memoryhub.core.errors import Conflict
from memoryhub.core.selectors import Principal
from memoryhub.operations import Made, acting_agent
from memoryhub.representations.conversations import chain_json, message_json, session_json


def session_start_answer(
    *, principal: Principal, session_id: str, user_id: str, metadata: dict[str, Any], state: dict[str, Any] | None = None,
    on_exists: str = "return", summary_policy: str | None = None, meta_compaction_threshold: int | None = None,
) -> Made:
    """The session, new, or the same id for the same user again (not new; with
    `on_exists="error"`, 409 SESSION_EXISTS)."""
    options = {"summary_policy": summary_policy, "meta_compaction_threshold": meta_compaction_threshold}
    session, created = session_create(
        agent=acting_agent(principal), session_id=session_id, user_id=user_id, metadata=metadata, state=state, on_exists=on_exists,
        **{name: value for name, value in options.items() if value is not None},
    )
    return Made(session_json(session), new=created)


def session_update_answer(
    *, principal: Principal, session: Session, state: dict[str, Any] | None = None, metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The session, with the keys given of its state and metadata set."""
    acting_agent(principal)
    return session_json(session_update(session=session, state=state, metadata=metadata))


def session_delete_answer(*, principal: Principal, session: Session) -> None:
    """The session and everything in it deleted. One with an approval waiting for a person
    is refused (409): deleting it would take the request from the approvers' inbox."""
    acting_agent(principal)
    if pending_approvals(principal=principal).filter(session=session).exists():
        raise Conflict(
            "This session has an approval waiting for a decision: decide it, or let it expire, first.", code="SESSION_HAS_PENDING_APPROVAL",
        )
    session_delete(session=session, actor=principal.actor)


def messages_append_answer(
    *, principal: Principal, session: Session, messages: list[MessageInput], state: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    appended = message_append(session=session, messages=messages, actor=principal.actor, state=state, metadata=metadata)
    return [message_json(m) for m in appended]


def message_edit_answer(*, principal: Principal, session: Session, seq: int, content: str) -> dict[str, Any]:
    message = message_edit(session=session, seq=seq, content=content, actor=principal.actor)
    return {**message_json(message), "revision": message.revision}


def _context_line(*, role: str, content: str, summarizes: list[int] | None = None, grounding: bool = False) -> dict[str, Any]:
    """A line of a context that is not a stored message: every field a stored one has, null."""
    return {
        "seq": None, "role": role, "content": content, "tool_calls": None, "tool_call_id": None, "pinned": False, "item": None, "created_at": None,
        "summary": summarizes is not None, "summarizes": summarizes, "grounding": grounding,
    }


def context_answer(*, principal: Principal, session: Session, grounding: int = 0, **window: Any) -> dict[str, Any]:
    """A prompt-sized context of the session (`window`: strategy, max_messages, max_tokens,
    pin_first, summary_ratio, preserve_recent), with a system message stating up to
    `grounding` facts relevant to the latest user message. Stored messages and the lines
    the hub adds carry the same fields (null where they do not apply): one shape for clients."""
    # GET never writes (docs/api.md, "GET never writes"): only the agent's own read may keep the summary it made.
    messages, summary = context_build(session=session, read_only=not principal.is_agent, **window)
    lines = [
        {**message_json(m), "summary": False, "summarizes": None, "grounding": False} if isinstance(m, Message)
        else _context_line(role=m.role, content=m.content, summarizes=[m.from_seq, m.to_seq])
        for m in messages
    ]
    if grounding and (message := context_grounding(principal=principal, session=session, limit=grounding)) is not None:
        lines.append(_context_line(role=message["role"], content=message["content"], grounding=True))
    return {
        "messages": lines,
        "summary": None if summary is None else {
            "from_seq": summary.from_seq, "to_seq": summary.to_seq, "text": summary.text, "summariser": summary.summariser,
        },
    }


def session_branch_answer(*, principal: Principal, session: Session, new_session_id: str, upto_seq: int | None, label: str) -> dict[str, Any]:
    branch = session_branch(session=session, actor=principal.actor, new_session_id=new_session_id, upto_seq=upto_seq, label=label)
    return {**session_json(branch), "parent": session.session_id, "parent_seq": branch.parent_seq, "label": branch.label}


def session_summarise_answer(*, principal: Principal, session: Session) -> dict[str, Any]:
    """The messages since the last summary summarised into the chain (None: nothing to
    summarise), and the session as it is after."""
    link = session_summarise(session=session, actor=principal.actor)
    session.refresh_from_db()
    return {"summary": chain_json(link) if link else None, "session": session_json(session)}
