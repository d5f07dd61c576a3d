"""Summaries: of a context's overflow (stored once per range) and the rolling chain,
compacted into a long-term memory when it grows past the session's threshold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from memoryhub.conversations.models import ChainSummary, Message, Session, Summary
from memoryhub.conversations.summary_backends import get_summariser
from memoryhub.memory.models import MemoryType, SourceKind
from memoryhub.memory.services import MemoryInput, Source, memory_write
from memoryhub.timeline.services import event_record


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


def summaries_of(*, session: Session) -> QuerySet[Summary]:
    return session.summaries.order_by("from_seq")


def chain_of(*, session: Session) -> QuerySet[ChainSummary]:
    return session.chain.order_by("index")


def session_summarise(*, session: Session, actor: str) -> ChainSummary | None:
    """Summarise the messages since the last link of the chain into a new link (None if
    there is nothing new); compact the chain into a long-term memory once it is longer
    than the session's threshold."""
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
    links = list(chain_of(session=session))
    stand_ins = [SummaryMessage(seq=link.from_seq, content=link.text, from_seq=link.from_seq, to_seq=link.to_seq, role="assistant") for link in links]
    text = summariser.summarise(stand_ins, max_chars=4000)
    [written] = memory_write(
        agent=session.agent,
        items=[MemoryInput(
            content=text or "\n".join(link.text for link in links)[:4000],
            user_id=session.user_id,
            memory_type=MemoryType.SEMANTIC,
            data={"concept": f"conversation {session.session_id}", "category": "session-summary"},
            tags=["session-summary"],
            metadata={"session_id": session.session_id, "from_seq": links[0].from_seq, "to_seq": links[-1].to_seq},
            source=Source(kind=SourceKind.SUMMARY, session_id=session.session_id),
        )],
    )
    session.chain.all().delete()
    event_record(
        workspace=session.workspace, kind="summary", summary=f"Summary chain of {len(links)} links compacted into long-term memory.",
        actor=actor, user_id=session.user_id, session_id=session.session_id, ref={"type": "memory", "id": str(written.entry.pk)},
    )
