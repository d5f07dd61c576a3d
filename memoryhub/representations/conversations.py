from __future__ import annotations

from typing import Any

from memoryhub.conversations.messages import item_of
from memoryhub.conversations.models import ChainSummary, Message, Session
from memoryhub.conversations.sessions import session_summary
from memoryhub.conversations.summaries import chain_of
from memoryhub.plans.selectors import current_step_id
from memoryhub.representations import iso_datetime


def message_json(message: Message) -> dict[str, Any]:
    return {
        "seq": message.seq,
        "role": message.role,
        "content": message.content,
        "tool_calls": message.tool_calls,
        "tool_call_id": message.tool_call_id,
        "pinned": message.pinned,
        "item": item_of(message),
        "created_at": iso_datetime(message.created_at),
    }


def session_json(session: Session) -> dict[str, Any]:
    return {
        "session_id": session.session_id,
        "user_id": session.user_id,
        "agent": session.agent.name,
        "metadata": session.metadata,
        "state": session.state,
        "created_at": iso_datetime(session.created_at),
        "updated_at": iso_datetime(session.updated_at),
        "last_seq": session.last_seq,
        "latest_checkpoint_version": session.checkpoint_version,
        "current_plan_step": current_step_id(session=session),
        "counts": session_summary(session),
        "summary_policy": session.summary_policy,
        "last_summary_index": session.last_summary_index,
        "meta_compaction_threshold": session.meta_compaction_threshold,
        "summary_chain": [chain_json(link) for link in chain_of(session=session)],
        "suspended_at": iso_datetime(session.suspended_at),
        "suspended_by": session.suspended_by or None,
    }


def chain_json(link: ChainSummary) -> dict[str, Any]:
    return {"index": link.index, "from_seq": link.from_seq, "to_seq": link.to_seq, "summariser": link.summariser, "text": link.text,
            "created_at": iso_datetime(link.created_at)}
