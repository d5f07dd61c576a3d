"""Sessions: started by an agent under the client's own id, branched, and read."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from memoryhub.conversations.models import Message, Role, Session, SummaryPolicy
from memoryhub.core.audit import audit_record
from memoryhub.core.errors import ApplicationError, Conflict, Forbidden, NotFound
from memoryhub.core.models import Agent, Membership, Workspace
from memoryhub.core.models import Role as OperatorRole  # Role here is a message's
from memoryhub.core.selectors import Principal, agent_actor, operator_actor
from memoryhub.privacy.services import ensure_not_blocked
from memoryhub.timeline.services import event_record


def session_create(
    *, agent: Agent, session_id: str, user_id: str, metadata: dict[str, Any] | None = None, summary_policy: str = SummaryPolicy.MANUAL,
    meta_compaction_threshold: int = 10,
) -> tuple[Session, bool]:
    """The session, and whether it was created. The same id for the same user and agent
    is the same session (200); for another user or agent it is a conflict (409)."""
    ensure_not_blocked(workspace_id=agent.workspace_id, user_id=user_id)
    try:
        with transaction.atomic():
            session = Session.objects.create(
                workspace_id=agent.workspace_id, agent=agent, session_id=session_id, user_id=user_id, metadata=metadata or {},
                summary_policy=summary_policy, meta_compaction_threshold=meta_compaction_threshold,
            )
            event_record(
                workspace=agent.workspace, kind="run", summary=f"Session started by agent {agent.name}.",
                actor=agent_actor(agent), user_id=user_id, session_id=session_id, ref={"type": "session", "id": session.pk},
            )
            return session, True
    except IntegrityError:
        existing = Session.objects.select_related("agent").get(workspace_id=agent.workspace_id, session_id=session_id)
    # Ownership first: another agent's session tells nothing, not even its end user.
    if existing.agent_id != agent.pk:
        raise Conflict("This session id is taken.", code="SESSION_ID_TAKEN")
    if existing.user_id != user_id:
        raise Conflict("This session id belongs to another user_id.", code="SESSION_USER_MISMATCH")
    return existing, False


def session_branch(*, session: Session, new_session_id: str, upto_seq: int | None, label: str, actor: str) -> Session:
    """A new, independent session with a copy of the history up to `upto_seq`."""
    upto = session.last_seq if upto_seq is None else upto_seq
    if upto > session.last_seq:
        raise ApplicationError(f"upto_seq is beyond the last message (#{session.last_seq}).", code="INVALID_SEQ")
    try:
        with transaction.atomic():
            branch = Session.objects.create(
                workspace_id=session.workspace_id, agent_id=session.agent_id, session_id=new_session_id, user_id=session.user_id,
                metadata=session.metadata, parent=session, parent_seq=upto, label=label, last_seq=upto,
            )
            copies = [
                Message(
                    workspace_id=m.workspace_id, user_id=m.user_id, session=branch, seq=m.seq, role=m.role, content=m.content,
                    tool_calls=m.tool_calls, tool_call_id=m.tool_call_id, pinned=m.pinned, revision=m.revision, item=m.item,
                )
                for m in session.messages.filter(seq__lte=upto).order_by("seq")
            ]
            Message.objects.bulk_create(copies, batch_size=1000)
            for target, summary in ((session, f"Branched into {new_session_id} at #{upto}."), (branch, f"Branched from {session.session_id} at #{upto}.")):
                event_record(
                    workspace=session.workspace, kind="branch", summary=summary, actor=actor, user_id=session.user_id,
                    session_id=target.session_id, ref={"type": "session", "from": session.session_id, "to": new_session_id, "upto_seq": upto},
                )
    except IntegrityError:
        raise Conflict("A session with this id exists already.", code="SESSION_EXISTS") from None
    return branch


def session_suspend(*, session: Session, actor: str, reason: str) -> None:
    """Mark the session suspended (an operator's `suspend` answer to an approval); part
    of the caller's transaction. Suspending a suspended session changes nothing."""
    if Session.objects.filter(pk=session.pk, suspended_at__isnull=True).update(suspended_at=timezone.now(), suspended_by=actor):
        event_record(
            workspace=session.workspace, kind="run", summary=f"Session suspended by {actor}" + (f": {reason}" if reason else "."),
            actor=actor, user_id=session.user_id, session_id=session.session_id, ref={"type": "session", "id": session.pk, "suspended": True},
        )


def session_reactivate(*, membership: Membership, session: Session, address: str | None = None) -> Session:
    """An operator lets a suspended session go on (approvers and admins). Reactivating
    an active session → 409, so two operators clicking at once see who was first."""
    if not membership.allows(OperatorRole.APPROVER):
        raise Forbidden("Reactivating a session needs the approver or admin role.")
    actor = operator_actor(membership.user)
    with transaction.atomic():
        if not Session.objects.filter(pk=session.pk, suspended_at__isnull=False).update(suspended_at=None, suspended_by=""):
            raise Conflict("This session is not suspended.", code="SESSION_NOT_SUSPENDED")
        event_record(
            workspace=session.workspace, kind="run", summary=f"Session reactivated by {actor}.", actor=actor, user_id=session.user_id,
            session_id=session.session_id, ref={"type": "session", "id": session.pk, "suspended": False},
        )
        audit_record(action="session_reactivated", actor=actor, workspace=membership.workspace, target=f"session:{session.pk}", ip=address)
    session.refresh_from_db()
    return session


def ensure_session_active(session: Session) -> None:
    """Refuse what an agent must not do while an operator has it paused."""
    if session.suspended_at is not None:
        raise Conflict(
            f"This session was suspended by {session.suspended_by}; an operator must reactivate it first.", code="SESSION_SUSPENDED",
            details={"suspended_at": session.suspended_at.isoformat(), "suspended_by": session.suspended_by},
        )


def visible_sessions(principal: Principal) -> QuerySet[Session]:
    """Agents see the sessions they own; operators every session of their workspace."""
    sessions = Session.objects.filter(workspace=principal.workspace)
    if principal.is_agent:
        sessions = sessions.filter(agent=principal.agent)
    return sessions


def session_get(*, principal: Principal, session_id: str) -> Session:
    session = visible_sessions(principal).select_related("agent", "workspace").filter(session_id=session_id).first()
    if session is None:
        raise NotFound("No such session.", code="SESSION_NOT_FOUND")
    return session


def sessions_of(*, workspace: Workspace, search: str = "") -> QuerySet[Session]:
    sessions = Session.objects.filter(workspace=workspace).select_related("agent").order_by("-created_at")
    if search:
        sessions = sessions.filter(session_id__icontains=search) | sessions.filter(user_id=search)
    return sessions


def session_of(*, workspace: Workspace, session_id: str) -> Session | None:
    """A session of an operator's workspace, with what its page shows of its agent and parent."""
    return Session.objects.filter(workspace=workspace, session_id=session_id).select_related("agent", "parent").first()


def branches_of(*, session: Session) -> QuerySet[Session]:
    return session.branches.order_by("created_at")


def session_family_tree(*, session: Session) -> list[dict[str, object]]:
    """The branches and forks around `session`: from its oldest ancestor down, as
    nested nodes, one query per generation."""
    root = session
    seen = {root.pk}
    while root.parent_id and root.parent_id not in seen:
        root = Session.objects.get(pk=root.parent_id)
        seen.add(root.pk)
    nodes = {root.pk: {"session": root, "children": []}}
    generation = [root.pk]
    while generation:
        children = list(Session.objects.filter(parent_id__in=generation).order_by("created_at"))
        generation = []
        for child in children:
            if child.pk in nodes:
                continue
            nodes[child.pk] = {"session": child, "children": []}
            nodes[child.parent_id]["children"].append(nodes[child.pk])
            generation.append(child.pk)
    return [nodes[root.pk]] if len(nodes) > 1 else []


def session_summary(session: Session) -> dict[str, Any]:
    """Message counts in one query."""
    counts = session.messages.aggregate(
        messages=Count("pk"),
        pinned=Count("pk", filter=Q(pinned=True)),
        **{role: Count("pk", filter=Q(role=role)) for role in Role.values},
    )
    return {
        "messages": counts["messages"],
        "pinned": counts["pinned"],
        "by_role": {role: counts[role] for role in Role.values},
    }


def suspended_sessions(*, workspace: Workspace) -> QuerySet[Session]:
    """Sessions an operator paused with a `suspend` answer, longest waiting first."""
    return Session.objects.filter(workspace=workspace, suspended_at__isnull=False).select_related("agent").order_by("suspended_at")
