"""Writes of sessions and messages."""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import Any

import orjson
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q

from memoryhub.core.errors import ApplicationError, Conflict, NotFound
from memoryhub.core.models import Agent, Workspace
from memoryhub.core.selectors import agent_actor
from memoryhub.conversations.models import ChainSummary, Checkpoint, Message, MessageRevision, Role, Session, Summary
from memoryhub.redaction import redact_text, workspace_key
from memoryhub.timeline.models import Event
from memoryhub.timeline.services import event_record


@dataclass
class MessageInput:
    role: str
    content: str = ""
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    pinned: bool = False


def session_create(
    *, agent: Agent, session_id: str, user_id: str, metadata: dict[str, Any] | None = None, summary_policy: str = "manual",
    meta_compaction_threshold: int = 10,
) -> tuple[Session, bool]:
    """The session, and whether it was created. The same id for the same user and agent
    is the same session (200); for another user or agent it is a conflict (409)."""
    from memoryhub.compliance.services import ensure_not_blocked

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
    if existing.user_id != user_id:
        raise Conflict("This session id belongs to another user_id.", code="SESSION_USER_MISMATCH")
    if existing.agent_id != agent.pk:
        raise Conflict("This session id is taken by another agent.", code="SESSION_ID_TAKEN")
    return existing, False


def _validate_tool_calls(calls: list[dict[str, Any]] | None) -> list[str]:
    """OpenAI-style calls: [{id, type: "function", function: {name, arguments}}]; their ids."""
    ids = []
    for index, call in enumerate(calls or []):
        function = call.get("function") if isinstance(call, dict) else None
        if (
            not isinstance(call, dict)
            or not isinstance(call.get("id"), str)
            or not call["id"]
            or call.get("type", "function") != "function"
            or not isinstance(function, dict)
            or not isinstance(function.get("name"), str)
            or not function["name"]
        ):
            raise ApplicationError(
                "Each tool call needs an id, type \"function\" and function.name.", code="INVALID_TOOL_CALL", details={"index": index}
            )
        ids.append(call["id"])
    return ids


def _redaction_key(workspace: Any) -> bytes:
    from django.conf import settings

    return workspace_key(settings.SECRET_KEY, workspace.pk)


def message_append(*, session: Session, messages: list[MessageInput], actor: str) -> list[Message]:
    """Append in order, all or nothing, with seqs strictly increasing per session."""
    if not messages:
        raise ApplicationError("No messages to append.", code="VALIDATION_ERROR")
    with transaction.atomic():
        # Takes the session's row lock until commit: concurrent appends to one session
        # queue here, so seqs are handed out in commit order with no gap and no repeat
        # (a failed append rolls its increment back with everything else).
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {Session._meta.db_table} SET last_seq = last_seq + %s WHERE id = %s RETURNING last_seq",
                [len(messages), session.pk],
            )
            last = cursor.fetchone()[0]
        first = last - len(messages) + 1
        # Only the calls the new tool results answer are looked up (GIN on tool_calls).
        answered = {m.tool_call_id for m in messages if m.role == Role.TOOL and m.tool_call_id}
        known_calls = {
            call_id
            for call_id in answered
            if Message.objects.filter(session=session, role=Role.ASSISTANT, tool_calls__contains=[{"id": call_id}]).exists()
        }
        rows = []
        redaction_key = _redaction_key(session.workspace) if session.workspace.redact_messages else None
        for offset, item in enumerate(messages):
            if item.role not in Role.values:
                raise ApplicationError(f"Unknown role {item.role!r}.", code="INVALID_ROLE", details={"roles": Role.values})
            call_ids = _validate_tool_calls(item.tool_calls)
            if item.tool_calls and item.role != Role.ASSISTANT:
                raise ApplicationError("Only assistant messages carry tool_calls.", code="INVALID_TOOL_CALL", details={"index": offset})
            if item.role == Role.TOOL:
                if not item.tool_call_id or item.tool_call_id not in known_calls:
                    raise ApplicationError(
                        "A tool message must answer a tool call made earlier in this session (tool_call_id).",
                        code="ORPHAN_TOOL_RESULT",
                        details={"index": offset, "tool_call_id": item.tool_call_id},
                    )
            elif item.tool_call_id:
                raise ApplicationError("Only tool messages carry tool_call_id.", code="INVALID_TOOL_CALL", details={"index": offset})
            known_calls.update(call_ids)
            rows.append(
                Message(
                    workspace_id=session.workspace_id, user_id=session.user_id, session=session, seq=first + offset,
                    role=item.role, content=redact_text(item.content, key=redaction_key).text if redaction_key else item.content,
                    tool_calls=item.tool_calls or None, tool_call_id=item.tool_call_id,
                    pinned=item.pinned,
                )
            )
        Message.objects.bulk_create(rows)
        for message in rows:
            extra = f" with {len(message.tool_calls)} tool call(s)" if message.tool_calls else ""
            event_record(
                workspace=session.workspace, kind="message", summary=f"{message.role} message #{message.seq}{extra}.",
                actor=actor, user_id=session.user_id, session_id=session.session_id, ref={"type": "message", "seq": message.seq},
            )
        if session.summary_policy == "rolling" and rows[-1].role == Role.ASSISTANT and not rows[-1].tool_calls:
            # An exchange ended: summarise what is new, in the background.
            from memoryhub.conversations.tasks import summarise_session
            from memoryhub.core.tasking import enqueue

            enqueue(summarise_session, session.pk)
    session.last_seq = last
    return rows


@dataclass
class SummaryMessage:
    """The message that stands for a summarised range in a context."""

    seq: int
    content: str
    from_seq: int
    to_seq: int
    role: str = "system"
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    pinned: bool = False


def summary_for_range(*, session: Session, messages: list[Message], summariser: Any, span: tuple[int, int] | None = None) -> Summary:
    """The stored summary of these messages, made once (racing readers: the unique
    constraint keeps one, the other reads it)."""
    from_seq, to_seq = span or (messages[0].seq, messages[-1].seq)
    existing = Summary.objects.filter(session=session, from_seq=from_seq, to_seq=to_seq, summariser=summariser.name).first()
    if existing is not None:
        return existing
    text = summariser.summarise(messages, max_chars=1200)
    try:
        with transaction.atomic():
            return Summary.objects.create(
                workspace_id=session.workspace_id, user_id=session.user_id, session=session, from_seq=from_seq, to_seq=to_seq,
                summariser=summariser.name, text=text,
            )
    except IntegrityError:
        return Summary.objects.get(session=session, from_seq=from_seq, to_seq=to_seq, summariser=summariser.name)


def context_build(
    *, session: Session, strategy: str, max_messages: int | None, max_tokens: int | None, pin_first: int,
    summary_ratio: float = 0.5, preserve_recent: int = 4,
) -> tuple[list[Any], Summary | None]:
    """The context of `session` by `strategy`; the history itself never changes."""
    from memoryhub.conversations.context import select

    summary = None
    if strategy == "summarize":
        history, summary = _summarised_candidates(
            session=session, summary_ratio=summary_ratio, preserve_recent=preserve_recent, max_messages=max_messages, pin_first=pin_first
        )
        strategy = "window"
    else:
        history = _window_candidates(session=session, strategy=strategy, max_messages=max_messages, pin_first=pin_first)
    result = select(history, strategy=strategy, max_messages=max_messages, max_tokens=max_tokens, pin_first=pin_first)
    return result.messages, summary


def message_edit(*, session: Session, seq: int, content: str, actor: str) -> Message:
    """Replace a message's content, keeping the old one as a revision."""
    with transaction.atomic():
        message = Message.objects.select_for_update().filter(session=session, seq=seq).first()
        if message is None:
            raise NotFound("No message with this seq in the session.", code="MESSAGE_NOT_FOUND")
        if message.tool_calls:
            # Its calls were answered by tool results that quote them: changing the
            # call would leave those results answering something never asked.
            raise Conflict("Messages with tool calls cannot be edited.", code="MESSAGE_NOT_EDITABLE")
        MessageRevision.objects.create(
            workspace_id=session.workspace_id, user_id=session.user_id, message=message, revision=message.revision, content=message.content
        )
        Message.objects.filter(pk=message.pk).update(content=content, revision=F("revision") + 1)
        # Stored summaries that covered the old text are stale now.
        Summary.objects.filter(session=session, from_seq__lte=seq, to_seq__gte=seq).delete()
        event_record(
            workspace=session.workspace, kind="edit", summary=f"{message.role} message #{seq} edited (revision {message.revision + 1}).",
            actor=actor, user_id=session.user_id, session_id=session.session_id, ref={"type": "message", "seq": seq},
        )
    message.refresh_from_db()
    return message


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
                    tool_calls=m.tool_calls, tool_call_id=m.tool_call_id, pinned=m.pinned, revision=m.revision,
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


def session_summarise(*, session: Session, actor: str) -> ChainSummary | None:
    """Summarise the messages since the last link of the chain into a new link (None if
    there is nothing new); compact the chain into a long-term memory once it is longer
    than the session's threshold."""
    from memoryhub.conversations.summarizers import get_summariser

    start = session.last_summary_index
    delta = list(session.messages.filter(seq__gt=start).order_by("seq"))
    if not delta:
        return None
    summariser = get_summariser()
    text = summariser.summarise(delta, max_chars=1200)  # outside the transaction: may be slow
    with transaction.atomic():
        # Conditional on the index we started from: of two racing summarisers one
        # moves it, the other finds it moved and adds nothing.
        moved = Session.objects.filter(pk=session.pk, last_summary_index=start).update(last_summary_index=delta[-1].seq)
        if not moved:
            return None
        index = session.chain.count() + 1
        link = ChainSummary.objects.create(
            workspace_id=session.workspace_id, user_id=session.user_id, session=session, index=index, from_seq=delta[0].seq,
            to_seq=delta[-1].seq, summariser=summariser.name, text=text,
        )
        event_record(
            workspace=session.workspace, kind="summary", summary=f"Messages #{delta[0].seq}–#{delta[-1].seq} summarised (chain link {index}).",
            actor=actor, user_id=session.user_id, session_id=session.session_id, ref={"type": "chain_summary", "index": index},
        )
        if index > session.meta_compaction_threshold:
            _compact_chain(session=session, summariser=summariser, actor=actor)
    session.last_summary_index = delta[-1].seq
    return link


def _compact_chain(*, session: Session, summariser: Any, actor: str) -> None:
    """The whole chain becomes one long-term `semantic` memory; the chain resets."""
    from memoryhub.memory.services import MemoryInput, memory_write

    links = list(session.chain.order_by("index"))
    stand_ins = [SummaryMessage(seq=link.from_seq, content=link.text, from_seq=link.from_seq, to_seq=link.to_seq, role="assistant") for link in links]
    text = summariser.summarise(stand_ins, max_chars=4000)
    [(entry, _)] = memory_write(
        agent=session.agent,
        items=[MemoryInput(
            content=text or "\n".join(link.text for link in links)[:4000],
            user_id=session.user_id,
            memory_type="semantic",
            data={"concept": f"conversation {session.session_id}", "category": "session-summary"},
            tags=["session-summary"],
            metadata={"session_id": session.session_id, "from_seq": links[0].from_seq, "to_seq": links[-1].to_seq},
        )],
    )
    session.chain.all().delete()
    event_record(
        workspace=session.workspace, kind="summary", summary=f"Summary chain of {len(links)} links compacted into long-term memory.",
        actor=actor, user_id=session.user_id, session_id=session.session_id, ref={"type": "memory", "id": str(entry.pk)},
    )


# How many of the newest messages a window/truncate context reads beyond max_messages:
# room for units (a call and its results) that straddle the budget's edge.
WINDOW_MARGIN = 64


def _window_candidates(*, session: Session, strategy: str, max_messages: int | None, pin_first: int) -> list[Message]:
    """Only the messages a window can use: the newest max_messages (+ a margin) and
    the protected ones, so a context costs the same at 100 or 100,000 messages.
    A unit cut by the margin looks incomplete and is left out, as it would be anyway."""
    newest = session.messages.order_by("-seq")
    if max_messages is not None:
        newest = newest[: max_messages + WINDOW_MARGIN]
    rows = {m.pk: m for m in newest}
    protected = Q(role=Role.SYSTEM)
    if strategy == "window":
        protected |= Q(pinned=True) | Q(seq__lte=pin_first)
    for message in session.messages.filter(protected):
        rows.setdefault(message.pk, message)
    if strategy == "window":
        # Protected messages carry their whole unit (the results of a pinned call).
        calls = [c.get("id") for m in rows.values() if m.tool_calls and (m.pinned or m.seq <= pin_first) for c in m.tool_calls]
        for message in session.messages.filter(tool_call_id__in=calls):
            rows.setdefault(message.pk, message)
        # …and a pinned tool result carries the call it answers (and that call's other results).
        answered = [m.tool_call_id for m in rows.values() if m.role == Role.TOOL and m.pinned]
        for call_id in answered:
            for message in session.messages.filter(role=Role.ASSISTANT, tool_calls__contains=[{"id": call_id}]):
                rows.setdefault(message.pk, message)
                siblings = [c.get("id") for c in message.tool_calls or []]
                for result in session.messages.filter(tool_call_id__in=siblings):
                    rows.setdefault(result.pk, result)
    return sorted(rows.values(), key=lambda m: m.seq)


def _summary_range(*, session: Session, summary_ratio: float, preserve_recent: int) -> tuple[int, int] | None:
    """The seqs the `summarize` strategy replaces: the oldest `summary_ratio` (clamped to
    0.1–0.8) of the unpinned, non-system messages, never the newest `preserve_recent`,
    widened so a tool call and its results stay on one side. Found with counts and an
    indexed offset, without reading the messages."""
    from memoryhub.conversations.context import SUMMARY_RATIO_MAX, SUMMARY_RATIO_MIN

    ratio = min(max(summary_ratio, SUMMARY_RATIO_MIN), SUMMARY_RATIO_MAX)
    plain = session.messages.filter(pinned=False).exclude(role=Role.SYSTEM).order_by("seq")
    total = plain.count()
    take = min(math.ceil(ratio * total), total - preserve_recent)
    if take <= 0:
        return None
    from_seq = plain.values_list("seq", flat=True)[0]
    to_seq = plain.values_list("seq", flat=True)[take - 1]
    # A call inside the range takes all its results in; results whose call is inside
    # the range cannot stay outside it.
    for call in session.messages.filter(seq__lte=to_seq, seq__gte=from_seq, tool_calls__isnull=False).order_by("-seq")[:8]:
        ids = [c.get("id") for c in call.tool_calls or []]
        last = session.messages.filter(tool_call_id__in=ids).order_by("-seq").values_list("seq", flat=True).first()
        if last and last > to_seq:
            to_seq = last
    return from_seq, to_seq


def _summarised_candidates(
    *, session: Session, summary_ratio: float, preserve_recent: int, max_messages: int | None, pin_first: int
) -> tuple[list[Any], Summary | None]:
    """Window candidates with the summarised range replaced by its (stored) summary."""
    from memoryhub.conversations.summarizers import get_summariser

    window = _window_candidates(session=session, strategy="window", max_messages=max_messages, pin_first=pin_first)
    span = _summary_range(session=session, summary_ratio=summary_ratio, preserve_recent=preserve_recent)
    if span is None:
        return window, None
    from_seq, to_seq = span
    summariser = get_summariser()
    summary = Summary.objects.filter(session=session, from_seq=from_seq, to_seq=to_seq, summariser=summariser.name).first()
    if summary is None:
        covered = list(
            session.messages.filter(seq__gte=from_seq, seq__lte=to_seq, pinned=False).exclude(role=Role.SYSTEM).order_by("seq")
        )
        summary = summary_for_range(session=session, messages=covered, summariser=summariser, span=(from_seq, to_seq))
    stand_in = SummaryMessage(
        seq=from_seq, from_seq=from_seq, to_seq=to_seq,
        content=f"Summary of earlier messages #{from_seq}–#{to_seq}:\n{summary.text}",
    )
    kept = [m for m in window if not (from_seq <= m.seq <= to_seq and not m.pinned and m.role != Role.SYSTEM)]
    return sorted([*kept, stand_in], key=lambda m: (m.seq, not isinstance(m, SummaryMessage))), summary


# --- Checkpoints ----------------------------------------------------------------------------

CHECKPOINT_PARTS = ("state", "messages", "plan", "summary")
DEFAULT_SAVE_BUNDLE = ("state", "messages", "plan", "summary")


def checkpoint_parts(*, include: list[str] | None, exclude: list[str] | None, default: tuple[str, ...]) -> list[str]:
    for part in [*(include or []), *(exclude or [])]:
        if part not in CHECKPOINT_PARTS:
            raise ApplicationError(f"Unknown checkpoint part {part!r}.", code="INVALID_PART", details={"parts": list(CHECKPOINT_PARTS)})
    chosen = list(include) if include else list(default)
    return [part for part in CHECKPOINT_PARTS if part in chosen and part not in (exclude or [])]


def checkpoint_save(
    *, session: Session, expected_version: int, state: Any, current_step: str = "", label: str = "",
    include: list[str] | None = None, exclude: list[str] | None = None, actor: str,
) -> Checkpoint:
    """Save version expected_version + 1, or 409 VERSION_CONFLICT if another writer
    saved since: the conditional UPDATE of the session's counter decides, so of N
    racing writers exactly one wins, whatever the isolation level."""
    from django.conf import settings

    bundle = checkpoint_parts(include=include, exclude=exclude, default=DEFAULT_SAVE_BUNDLE)
    raw = orjson.dumps(state if "state" in bundle else None)
    limit = settings.MEMORYHUB_MAX_CHECKPOINT_BYTES
    if len(raw) > limit:
        raise ApplicationError(
            f"The state is {len(raw)} bytes as JSON; the limit is {limit}.", code="PAYLOAD_TOO_LARGE", status=413,
            details={"limit_bytes": limit, "state_bytes": len(raw)},
        )
    # Level 1: most of the gain of zlib on JSON for a fraction of its time (a 1 MB state
    # compresses in ~3 ms instead of ~15), outside the transaction so the lock is short.
    compressed = zlib.compress(raw, 1)
    label_note = f" ({label})" if label else ""
    plan = None
    if "plan" in bundle:
        from memoryhub.plans.selectors import plan_snapshot

        snapshot = plan_snapshot(session=session)
        plan = orjson.dumps(snapshot).decode() if snapshot is not None else None
    # One statement, so one round trip and atomic on its own: move the version counter
    # (only if it still is expected_version), insert the checkpoint with the message seq
    # and running summary of that moment, and record it on the timeline. The ORM's three
    # statements and transaction cost more than the rest of a small save together
    # (see README, checkpoint benchmark).
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH moved AS (
                UPDATE {Session._meta.db_table} SET checkpoint_version = %(next)s
                WHERE id = %(session)s AND checkpoint_version = %(expected)s
                RETURNING id, workspace_id, user_id, session_id, last_seq
            ), saved AS (
                INSERT INTO {Checkpoint._meta.db_table}
                    (workspace_id, user_id, created_at, updated_at, session_id, version, label, current_step, state,
                     state_bytes, stored_bytes, message_seq, summary, plan, bundle, last_call_id, tool_calls)
                SELECT workspace_id, user_id, now(), now(), id, %(next)s, %(label)s, %(step)s, %(state)s,
                       %(state_bytes)s, %(stored_bytes)s, CASE WHEN %(with_messages)s THEN last_seq ELSE 0 END,
                       CASE WHEN %(with_summary)s THEN coalesce((
                           SELECT text FROM {ChainSummary._meta.db_table} c WHERE c.session_id = moved.id ORDER BY index DESC LIMIT 1
                       ), '') ELSE '' END,
                       %(plan)s::jsonb, %(bundle)s,
                       coalesce((SELECT call_id FROM plans_toolcall t WHERE t.session_id = moved.id ORDER BY t.id DESC LIMIT 1), ''),
                       (SELECT count(*) FROM plans_toolcall t WHERE t.session_id = moved.id)
                FROM moved
                RETURNING id, message_seq, created_at, last_call_id, tool_calls
            ), logged AS (
                INSERT INTO {Event._meta.db_table} (workspace_id, user_id, session_id, kind, at, actor, summary, ref)
                SELECT workspace_id, user_id, session_id, 'checkpoint', now(), %(actor)s, %(event)s, %(ref)s FROM moved
            )
            SELECT id, message_seq, created_at, last_call_id, tool_calls FROM saved
            """,
            {
                "next": expected_version + 1, "session": session.pk, "expected": expected_version, "label": label,
                "step": current_step, "state": compressed, "state_bytes": len(raw), "stored_bytes": len(compressed),
                "with_messages": "messages" in bundle, "with_summary": "summary" in bundle, "bundle": orjson.dumps(bundle).decode(),
                "plan": plan,
                "actor": actor, "event": f"Checkpoint v{expected_version + 1}{label_note}, {len(raw)} bytes of state.",
                "ref": orjson.dumps({"type": "checkpoint", "version": expected_version + 1}).decode(),
            },
        )
        saved = cursor.fetchone()
    if saved is None:
        current = Session.objects.filter(pk=session.pk).values_list("checkpoint_version", flat=True).first()
        raise Conflict(
            f"expected_version {expected_version} is not the latest version ({current}).",
            code="VERSION_CONFLICT", details={"current_version": current},
        )
    checkpoint_id, message_seq, created_at, last_call_id, call_count = saved
    checkpoint = Checkpoint(
        pk=checkpoint_id, workspace_id=session.workspace_id, user_id=session.user_id, session=session, version=expected_version + 1,
        label=label, current_step=current_step, state=compressed, state_bytes=len(raw), stored_bytes=len(compressed),
        message_seq=message_seq, bundle=bundle, created_at=created_at, last_call_id=last_call_id, tool_calls=call_count,
    )
    checkpoint._state.adding = False
    return checkpoint


def checkpoint_state(checkpoint: Checkpoint) -> Any:
    return orjson.loads(zlib.decompress(bytes(checkpoint.state))) if checkpoint.state is not None else None


def checkpoint_resumed(*, session: Session, checkpoint: Checkpoint, actor: str) -> None:
    event_record(
        workspace=session.workspace, kind="resume", summary=f"Resumed from checkpoint v{checkpoint.version}.", actor=actor,
        user_id=session.user_id, session_id=session.session_id, ref={"type": "checkpoint", "version": checkpoint.version},
    )


def checkpoint_fork(*, session: Session, from_version: int, new_session_id: str, actor: str) -> Session:
    """A new session whose history is the source's up to the checkpoint's message seq,
    and whose first checkpoint (v1) holds that version's state."""
    source = session.checkpoints.filter(version=from_version).first()
    if source is None:
        raise NotFound(f"No checkpoint v{from_version} in this session.", code="CHECKPOINT_NOT_FOUND")
    with transaction.atomic():
        fork = session_branch(session=session, new_session_id=new_session_id, upto_seq=source.message_seq, label=f"fork of v{from_version}", actor=actor)
        Session.objects.filter(pk=fork.pk).update(checkpoint_version=1)
        Checkpoint.objects.create(
            workspace_id=fork.workspace_id, user_id=fork.user_id, session=fork, version=1, label=f"fork of {session.session_id} v{from_version}",
            current_step=source.current_step, state=source.state, state_bytes=source.state_bytes, stored_bytes=source.stored_bytes,
            message_seq=source.message_seq, summary=source.summary, plan=source.plan, bundle=source.bundle,
            last_call_id=source.last_call_id, tool_calls=source.tool_calls,
        )
        if source.plan:
            _restore_plan(session=fork, snapshot=source.plan, actor=actor)
        for target in (session, fork):
            event_record(
                workspace=session.workspace, kind="fork", summary=f"Fork {session.session_id} v{from_version} → {new_session_id}.",
                actor=actor, user_id=session.user_id, session_id=target.session_id,
                ref={"type": "fork", "from": session.session_id, "version": from_version, "to": new_session_id},
            )
    fork.refresh_from_db()
    return fork


def checkpoint_prune(*, keep: int, workspace: Workspace | None = None) -> dict[int, int]:
    """Delete checkpoints beyond the newest `keep` of each session, labelled ones kept.
    Returns {workspace_id: deleted}; the retention job records the counts."""
    from django.db.models import Window
    from django.db.models.functions import RowNumber

    candidates = Checkpoint.objects.filter(label="")
    if workspace is not None:
        candidates = candidates.filter(workspace=workspace)
    ranked = candidates.annotate(
        rank=Window(RowNumber(), partition_by=[F("session_id")], order_by=F("version").desc())
    ).values("pk", "workspace_id", "rank")
    doomed = [(row["pk"], row["workspace_id"]) for row in ranked if row["rank"] > keep]
    deleted: dict[int, int] = {}
    for start in range(0, len(doomed), 1000):
        chunk = doomed[start : start + 1000]
        Checkpoint.objects.filter(pk__in=[pk for pk, _ in chunk]).delete()
        for _, workspace_id in chunk:
            deleted[workspace_id] = deleted.get(workspace_id, 0) + 1
    return deleted


def _restore_plan(*, session: Session, snapshot: dict[str, Any], actor: str) -> None:
    """A fork starts with the plan as it was at the checkpoint, statuses included."""
    from memoryhub.plans.models import PlanStep
    from memoryhub.plans.services import StepInput, plan_replace

    steps = [StepInput(step_id=s["step_id"], description=s["description"], depends_on=s["depends_on"], parent=s["parent"]) for s in snapshot["steps"]]
    plan = plan_replace(session=session, goal=snapshot["goal"], steps=steps, actor=actor)
    for s in snapshot["steps"]:
        PlanStep.objects.filter(plan=plan, step_id=s["step_id"]).update(status=s["status"], summary=s["summary"])
