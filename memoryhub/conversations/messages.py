"""Messages: appended with strictly increasing seqs, edited with revisions, read in order."""

from __future__ import annotations

import json
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Max, Min, QuerySet

from memoryhub.conversations.models import ChainSummary, Message, MessageRevision, Role, Session, Summary, SummaryPolicy
from memoryhub.conversations.sessions import session_update
from memoryhub.core import tasking
from memoryhub.core.audit import audit_record
from memoryhub.core.errors import ApplicationError, Conflict, NotFound
from memoryhub.core.models import Workspace
from memoryhub.core.pagination import Page, keyset_page
from memoryhub.core.text import text_problem
from memoryhub.privacy.redaction import json_redactor, redactor
from memoryhub.timeline.services import event_record


@dataclass
class MessageInput:
    role: str
    content: str = ""
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    pinned: bool = False
    # An agent framework's own form of the message (docs/api.md, "Sessions and conversation").
    item: dict[str, Any] | None = None


def item_text(item: dict[str, Any]) -> str:
    """The JSON text a message's framework item is kept as (its key order too). NaN and
    the infinities are refused (ValueError): they are not JSON, and no answer could carry them."""
    return json.dumps(item, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def item_of(message: Message) -> dict[str, Any] | None:
    return None if message.item is None else json.loads(message.item)


def message_checked(item: MessageInput) -> None:
    """The limits every message is held to, whoever writes it (the API's input checks say
    the same first, for its clients; an import has none of its own)."""
    if item.role not in Role.values:
        raise ApplicationError(f"Unknown role {item.role!r}.", code="INVALID_ROLE", details={"roles": Role.values})
    if not isinstance(item.content, str):
        raise ApplicationError("content must be text.", code="INVALID_CONTENT")
    if len(item.content) > settings.MEMORYHUB_MAX_CONTENT_CHARS:
        raise ApplicationError(
            f"content is {len(item.content)} characters; the most is {settings.MEMORYHUB_MAX_CONTENT_CHARS}.", code="CONTENT_TOO_LONG",
            details={"limit": settings.MEMORYHUB_MAX_CONTENT_CHARS},
        )
    if problem := text_problem(item.content):
        raise ApplicationError(f"content: {problem}", code="INVALID_TEXT", details={"field": "content"})
    if item.item is not None:
        if not isinstance(item.item, dict):
            raise ApplicationError("item must be a JSON object.", code="INVALID_ITEM")
        try:
            text = item_text(item.item)
        except (TypeError, ValueError):
            raise ApplicationError("item must be a JSON object.", code="INVALID_ITEM") from None
        limit = settings.MEMORYHUB_MAX_ITEM_BYTES
        if len(text.encode(errors="surrogatepass")) > limit:
            raise ApplicationError(f"item is larger than {limit} bytes as JSON.", code="ITEM_TOO_LARGE", status=413, details={"limit_bytes": limit})
        if problem := text_problem(text):
            raise ApplicationError(f"item: {problem}", code="INVALID_TEXT", details={"field": "item"})


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


@dataclass(frozen=True)
class MessageKeeping:
    """A message's parts as a workspace keeps them (redacted if it redacts messages),
    whoever writes them: an append, an edit, an import."""

    text: Callable[[str], str]
    json: Callable[[Any], Any]

    @classmethod
    def of(cls, workspace: Workspace) -> MessageKeeping:
        enabled = workspace.redact_messages
        return cls(text=redactor(workspace_id=workspace.pk, enabled=enabled), json=json_redactor(workspace_id=workspace.pk, enabled=enabled))

    def calls(self, calls: Any) -> Any:
        """What each call says (`function`: name and arguments) redacted like the text;
        ids and types as sent, which the tool results name."""
        if not calls or not isinstance(calls, list):
            return calls or None
        return [{**call, "function": self.json(call["function"])} if isinstance(call, dict) and "function" in call else call for call in calls]

    def item(self, item: dict[str, Any] | None) -> str | None:
        return None if item is None else item_text(self.json(item))


def message_append(
    *, session: Session, messages: list[MessageInput], actor: str, state: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
) -> list[Message]:
    """Append in order, all or nothing, with seqs strictly increasing per session; with
    `state` and `metadata`, the keys they set in the session's (session_update) in the same
    transaction: a framework's event and the state it changed land together, or neither."""
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
        kept = MessageKeeping.of(session.workspace)
        for offset, item in enumerate(messages):
            message_checked(item)
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
                    role=item.role, content=kept.text(item.content),
                    tool_calls=kept.calls(item.tool_calls), tool_call_id=item.tool_call_id,
                    pinned=item.pinned, item=kept.item(item.item),
                )
            )
        Message.objects.bulk_create(rows)
        for message in rows:
            extra = f" with {len(message.tool_calls)} tool call(s)" if message.tool_calls else ""
            event_record(
                workspace=session.workspace, kind="message", summary=f"{message.role} message #{message.seq}{extra}.",
                actor=actor, user_id=session.user_id, session_id=session.session_id, ref={"type": "message", "seq": message.seq},
            )
        session_update(session=session, state=state, metadata=metadata)
        if session.summary_policy == SummaryPolicy.ROLLING and rows[-1].role == Role.ASSISTANT and not rows[-1].tool_calls:
            # An exchange ended: summarise what is new, in the background.
            tasking.enqueue("memoryhub.conversations.tasks.summarise_session", session.pk)
    session.last_seq = last
    return rows


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
        if message.item is not None:
            # The framework reads its item back, not the content: an edit of one would
            # leave the agent and the operator looking at different messages.
            raise Conflict("Messages an agent framework keeps as an item cannot be edited.", code="MESSAGE_NOT_EDITABLE")
        MessageRevision.objects.create(
            workspace_id=session.workspace_id, user_id=session.user_id, message=message, revision=message.revision, content=message.content
        )
        # Every path that stores text redacts first: an edit too.
        Message.objects.filter(pk=message.pk).update(content=MessageKeeping.of(session.workspace).text(content), revision=F("revision") + 1)
        # Stored summaries that covered the old text are stale now.
        Summary.objects.filter(session=session, from_seq__lte=seq, to_seq__gte=seq).delete()
        event_record(
            workspace=session.workspace, kind="edit", summary=f"{message.role} message #{seq} edited (revision {message.revision + 1}).",
            actor=actor, user_id=session.user_id, session_id=session.session_id, ref={"type": "message", "seq": seq},
        )
    message.refresh_from_db()
    return message


@dataclass
class DeletedMessages:
    count: int
    messages: list[Message]  # what `last` took, oldest first (a clear loads none)


def messages_delete(*, session: Session, last: int | None, actor: str) -> DeletedMessages:
    """Delete the session's last `last` messages, or all of them (None): what an agent's
    framework pops or clears is gone from the hub too. Seqs are not handed out again (the
    next append continues after the deleted ones); summaries and chain links that read a
    deleted message go with it."""
    with transaction.atomic():
        # Locked like an append, so a delete and an append never cross: what is read
        # here is exactly what goes (a framework's pop answers the item it removed).
        Session.objects.select_for_update().filter(pk=session.pk).values_list("pk", flat=True).first()
        if last is None:
            # A clear loads no message, nor even their seqs: the range and count are enough.
            taken: list[Message] = []
            span = session.messages.aggregate(first=Min("seq"), latest=Max("seq"), count=Count("pk"))
            first, latest, count = span["first"], span["latest"], span["count"]
        else:
            taken = list(session.messages.order_by("-seq")[:last])[::-1]
            first, latest, count = (taken[0].seq, taken[-1].seq, len(taken)) if taken else (None, None, 0)
        if not count:
            return DeletedMessages(count=0, messages=[])
        Message.objects.filter(session=session, seq__gte=first, seq__lte=latest).delete()
        Summary.objects.filter(session=session, to_seq__gte=first).delete()
        ChainSummary.objects.filter(session=session, to_seq__gte=first).delete()
        Session.objects.filter(pk=session.pk, last_summary_index__gte=first).update(last_summary_index=first - 1)
        described = f"#{first}" if first == latest else f"#{first}–#{latest}"
        event_record(
            workspace=session.workspace, kind="edit", summary=f"{count} message(s) deleted ({described}).", actor=actor,
            user_id=session.user_id, session_id=session.session_id, ref={"type": "messages_deleted", "from_seq": first, "to_seq": latest},
        )
        # No text: the audit log outlives purges.
        audit_record(
            action="messages_deleted", actor=actor, workspace=session.workspace, target=f"session:{session.session_id}",
            details={"count": count, "from_seq": first, "to_seq": latest},
        )
    return DeletedMessages(count=count, messages=taken)


def messages_in_order(*, session: Session, upto_seq: int | None = None, from_seq: int | None = None) -> QuerySet[Message]:
    """The session's messages by seq, between `from_seq` and `upto_seq` (both included)."""
    messages = session.messages.order_by("seq")
    if from_seq is not None:
        messages = messages.filter(seq__gte=from_seq)
    return messages if upto_seq is None else messages.filter(seq__lte=upto_seq)


def message_revisions_of(*, session: Session) -> QuerySet[MessageRevision]:
    return MessageRevision.objects.filter(message__session=session).select_related("message").order_by("message__seq", "revision")


def messages_page(*, session: Session, cursor: str | None, limit: int, newest_first: bool = False) -> Page[Message]:
    """The history in order (or newest first), a page at a time (contexts are the
    prompt-sized reads)."""
    return keyset_page(session.messages.all(), key="-seq" if newest_first else "seq", cursor=cursor, limit=limit)
