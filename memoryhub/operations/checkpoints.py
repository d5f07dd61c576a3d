"""Checkpoints: save, load (with the parts asked for), resume, fork."""

from __future__ import annotations

from typing import Any

from memoryhub.checkpoints import selectors, services
from memoryhub.checkpoints.models import Checkpoint
from memoryhub.conversations.messages import messages_in_order
from memoryhub.conversations.models import Session
from memoryhub.core.errors import NotFound
from memoryhub.core.selectors import Principal
from memoryhub.representations.checkpoints import checkpoint_json
from memoryhub.representations.conversations import message_json, session_json

# What a load returns unless asked otherwise.
DEFAULT_PARTS = ("state", "summary")


def checkpoint_save_answer(
    *, principal: Principal, session: Session, expected_version: int, state: Any, current_step: str = "", label: str = "",
    include: list[str] | None = None, exclude: list[str] | None = None,
) -> dict[str, Any]:
    checkpoint = services.checkpoint_save(
        session=session, actor=principal.actor, expected_version=expected_version, state=state, current_step=current_step, label=label,
        include=include, exclude=exclude,
    )
    return checkpoint_json(checkpoint)


def _checkpoint(session: Session, version: int | None) -> Checkpoint:
    """Version `version` of the session's checkpoints, or the latest (None)."""
    checkpoint = selectors.checkpoint_load(session=session, version=version)
    if checkpoint is None:
        raise NotFound("No such checkpoint.", code="CHECKPOINT_NOT_FOUND")
    return checkpoint


def _with_parts(checkpoint: Checkpoint, session: Session, parts: list[str]) -> dict[str, Any]:
    body = checkpoint_json(checkpoint)
    if "state" in parts:
        body["state"] = selectors.checkpoint_state(checkpoint)
    if "summary" in parts:
        body["summary"] = checkpoint.summary
    if "messages" in parts:
        body["messages"] = [message_json(m) for m in messages_in_order(session=session, upto_seq=checkpoint.message_seq)]
    if "plan" in parts:
        body["plan"] = checkpoint.plan
    return body


def checkpoint_load_answer(
    *, principal: Principal, session: Session, version: int | None, include: list[str] | None = None, exclude: list[str] | None = None,
) -> dict[str, Any]:
    """A checkpoint (the latest unless `version`) with the parts `include` names (state and
    summary by default), less those `exclude` names."""
    parts = services.checkpoint_parts(include=include, exclude=exclude, default=DEFAULT_PARTS)
    return _with_parts(_checkpoint(session, version), session, parts)


def checkpoint_resume_answer(*, principal: Principal, session: Session, from_version: int | None) -> dict[str, Any]:
    """The checkpoint to resume from, whole; the resume is on the timeline."""
    checkpoint = _checkpoint(session, from_version)
    services.checkpoint_resumed(session=session, checkpoint=checkpoint, actor=principal.actor)
    return _with_parts(checkpoint, session, list(services.CHECKPOINT_PARTS))


def checkpoint_fork_answer(*, principal: Principal, session: Session, from_version: int, new_session_id: str) -> dict[str, Any]:
    fork = services.checkpoint_fork(session=session, actor=principal.actor, from_version=from_version, new_session_id=new_session_id)
    return {**session_json(fork), "forked_from": {"session_id": session.session_id, "version": from_version}}
