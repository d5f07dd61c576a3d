"""Sessions: started by an agent under the client's own id, branched, and read."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from memoryhub.conversations.models import Message, Role, Session, SummaryPolicy
from memoryhub.core.audit import audit_record
from memoryhub.core.errors import ApplicationError, Conflict, Forbidden, NotFound
from memoryhub.core.limits import MAX_JSON_BYTES, json_size_problem
from memoryhub.core.models import Agent, Membership, Workspace
from memoryhub.core.models import Role as OperatorRole  # Role here is a message's
from memoryhub.core.pagination import Page, keyset_page
from memoryhub.core.selectors import Principal, agent_actor, operator_actor
from memoryhub.privacy.redaction import json_redactor
from memoryhub.privacy.services import ensure_not_blocked
from memoryhub.timeline.services import event_record


def session_create(
    *, agent: Agent, session_id: str, user_id: str, metadata: dict[str, Any] | None = None, state: dict[str, Any] | None = None,
    summary_policy: str = SummaryPolicy.MANUAL, meta_compaction_threshold: int = 10, on_exists: str = "return",
) -> tuple[Session, bool]:
    """The session, and whether it was created. The same id for the same user and agent
    is the same session (200; `state` and `metadata` are then the existing session's),
    or with `on_exists="error"` a conflict (409 SESSION_EXISTS: a framework whose create
    must not find an old session); for another user or agent it is a conflict (409)."""
    ensure_not_blocked(workspace_id=agent.workspace_id, user_id=user_id)
    session_checked(metadata=metadata or {}, state=state or {})
    state = state_kept(agent.workspace)(state or {})
    try:
        with transaction.atomic():
            session = Session.objects.create(
                workspace_id=agent.workspace_id, agent=agent, session_id=session_id, user_id=user_id, metadata=metadata or {},
                state=state, summary_policy=summary_policy, meta_compaction_threshold=meta_compaction_threshold,
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
    if on_exists == "error":
        raise Conflict("A session with this id exists already.", code="SESSION_EXISTS")
    return existing, False


def session_checked(*, metadata: Any, state: Any) -> None:
    """The limits every session's metadata and state are held to, whoever writes them (an
    import has no input checks of its own): JSON objects, within their sizes."""
    for name, value in (("metadata", metadata), ("state", state)):
        if not isinstance(value, dict):
            raise ApplicationError(f"{name} must be a JSON object.", code=f"INVALID_{name.upper()}")
    limit = settings.MEMORYHUB_MAX_ITEM_BYTES
    if len(json.dumps(state, ensure_ascii=False).encode(errors="surrogatepass")) > limit:
        raise ApplicationError(f"The session's state would be larger than {limit} bytes as JSON.", code="STATE_TOO_LARGE", status=413,
                               details={"limit_bytes": limit})
    if json_size_problem(metadata):
        raise ApplicationError(f"The session's metadata would be larger than {MAX_JSON_BYTES} bytes as JSON.", code="METADATA_TOO_LARGE",
                               status=413, details={"limit_bytes": MAX_JSON_BYTES})


def state_kept(workspace: Workspace) -> Callable[[Any], Any]:
    """A session's state as the workspace keeps it: it is what the agent says of the
    conversation (a framework's user:name, say), so it is redacted as messages are."""
    return json_redactor(workspace_id=workspace.pk, enabled=workspace.redact_messages)


def session_update(*, session: Session, state: dict[str, Any] | None = None, metadata: dict[str, Any] | None = None) -> Session:
    """Set the keys given of the session's state and metadata, each to its new value
    (a whole new value: an object is replaced, not merged into; null is kept as a value);
    the other keys stay. One statement: updates of different keys made at once all land.
    Part of the caller's transaction (an append makes it with its messages)."""
    if state:
        state = state_kept(session.workspace)(state)
    changes = [(column, values) for column, values in (("state", state), ("metadata", metadata)) if values]
    if not changes:
        return session
    assignments = ", ".join(f"{column} = {column} || %s::jsonb" for column, _ in changes)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Session._meta.db_table} SET {assignments}, updated_at = now() WHERE id = %s RETURNING state, metadata, updated_at",
            [*(json.dumps(values) for _, values in changes), session.pk],
        )
        new_state, new_metadata, session.updated_at = cursor.fetchone()
        session.state = json.loads(new_state) if isinstance(new_state, str) else new_state
        session.metadata = json.loads(new_metadata) if isinstance(new_metadata, str) else new_metadata
        session_checked(metadata=session.metadata, state=session.state)  # refused: the transaction rolls the update back
    return session


def session_delete(*, session: Session, actor: str) -> int:
    """Delete the session and everything in it (messages, summaries, plans, checkpoints,
    tool calls, approvals); how many messages it held. Its timeline stays (append-only),
    the deletion on it; audited, without content (the audit log outlives purges). Locked
    like an append: one in flight commits first, and goes with the session."""
    with transaction.atomic():
        if not Session.objects.select_for_update().filter(pk=session.pk).exists():
            raise NotFound("No such session.", code="SESSION_NOT_FOUND")
        count = session.messages.count()
        Session.objects.filter(pk=session.pk).delete()  # the ORM cascades to messages, plans, checkpoints…
        event_record(
            workspace=session.workspace, kind="run", summary=f"Session deleted by {actor} ({count} message(s)).", actor=actor,
            user_id=session.user_id, session_id=session.session_id, ref={"type": "session_deleted", "messages": count},
        )
        audit_record(
            action="session_deleted", actor=actor, workspace=session.workspace, target=f"session:{session.session_id}",
            details={"messages": count},
        )
    return count


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


def sessions_page(
    *, principal: Principal, user_id: str | None, metadata: dict[str, str], cursor: str | None, limit: int,
) -> Page[Session]:
    """The caller's sessions (an agent's own, an operator's workspace's), newest first: of
    one end user, with these metadata values (each key equal)."""
    sessions = visible_sessions(principal).select_related("agent")
    if user_id is not None:
        sessions = sessions.filter(user_id=user_id)
    if metadata:
        sessions = sessions.filter(metadata__contains=metadata)
    return keyset_page(sessions, key="-id", cursor=cursor, limit=limit)


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
