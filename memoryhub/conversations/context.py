"""Projecting a session's history into a prompt-sized context. The selection is pure
functions (the history is never changed, only selected from); context_build loads only
the candidates a context can use and hands them to it.

Messages are grouped into units first: an assistant message with tool calls and the
tool messages answering them form one unit, kept or dropped together, so a context
never holds a tool result without its call or a call without its results.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q

from memoryhub.core.selectors import Principal
from memoryhub.graph.selectors import graph_grounding

from memoryhub.conversations.models import Message, Role, Session, Summary
from memoryhub.conversations.summaries import SummaryMessage, summary_for_range
from memoryhub.conversations.summary_backends import ContextMessage, ExtractiveSummariser, get_summariser

# A rough, model-independent estimate: ~4 characters per token for English text, plus
# a few tokens of per-message overhead (role, separators) as chat formats add.
CHARS_PER_TOKEN = 4
TOKENS_PER_MESSAGE = 4


def estimate_tokens(message: ContextMessage) -> int:
    text = len(message.content or "")
    if message.tool_calls:
        text += len(json.dumps(message.tool_calls))
    return TOKENS_PER_MESSAGE + math.ceil(text / CHARS_PER_TOKEN)


@dataclass
class Unit:
    messages: list[ContextMessage] = field(default_factory=list)
    protected: bool = False
    orphan: bool = False  # a tool result whose call is not in the history

    @property
    def size(self) -> int:
        return len(self.messages)

    @property
    def tokens(self) -> int:
        return sum(estimate_tokens(m) for m in self.messages)


def units_of(history: Sequence[ContextMessage]) -> list[Unit]:
    """Group tool results with the assistant message that called them.

    A tool result whose call is not in `history` (a branch cut it off, say) becomes a
    unit of its own marked as an orphan and is never selected."""
    units: list[Unit] = []
    owner: dict[str, Unit] = {}
    for message in history:
        if message.role == "tool":
            unit = owner.get(message.tool_call_id or "")
            if unit is not None:
                unit.messages.append(message)
            else:
                units.append(Unit(messages=[message], orphan=True))
            continue
        unit = Unit(messages=[message])
        units.append(unit)
        for call in message.tool_calls or []:
            owner[call.get("id", "")] = unit
    return units


def _is_orphan(unit: Unit) -> bool:
    if unit.orphan:
        return True
    calls = {c.get("id") for m in unit.messages for c in (m.tool_calls or [])}
    answered = {m.tool_call_id for m in unit.messages if m.role == "tool"}
    return bool(calls - answered)  # a call whose results never came (yet) is not sent


@dataclass
class ContextResult:
    messages: list[ContextMessage]
    dropped: int
    tokens: int


def select(
    history: Sequence[ContextMessage],
    *,
    strategy: str,
    max_messages: int | None,
    max_tokens: int | None = None,
    pin_first: int = 0,
) -> ContextResult:
    """`truncate`: every system message, then the newest others. `window`: also keeps
    pinned messages and the first `pin_first` messages. Both fill the budget
    (max_messages and/or max_tokens) newest first with whole units, and return the
    kept messages in their original order. When the protected messages alone exceed
    the budget they are all returned anyway: dropping a system prompt is never right.
    """
    units = [u for u in units_of(history) if not _is_orphan(u)]
    first_seqs = {m.seq for m in list(history)[:pin_first]} if strategy == "window" else set()
    for unit in units:
        unit.protected = any(
            m.role == "system" or (strategy == "window" and (m.pinned or m.seq in first_seqs)) for m in unit.messages
        )
    kept = [u for u in units if u.protected]
    used_messages = sum(u.size for u in kept)
    used_tokens = sum(u.tokens for u in kept)
    for unit in reversed([u for u in units if not u.protected]):
        if max_messages is not None and used_messages + unit.size > max_messages:
            break
        if max_tokens is not None and used_tokens + unit.tokens > max_tokens:
            break
        kept.append(unit)
        used_messages += unit.size
        used_tokens += unit.tokens
    chosen = {id(m) for u in kept for m in u.messages}
    messages = [m for m in history if id(m) in chosen]
    return ContextResult(messages=messages, dropped=len(history) - len(messages), tokens=used_tokens)


SUMMARY_RATIO_MIN, SUMMARY_RATIO_MAX = 0.1, 0.8


# --- Building a session's context from the database ------------------------------------------

def context_build(
    *, session: Session, strategy: str, max_messages: int | None, max_tokens: int | None, pin_first: int,
    summary_ratio: float = 0.5, preserve_recent: int = 4, read_only: bool = False,
) -> tuple[list[Any], Summary | None]:
    """The context of `session` by `strategy`; the history itself never changes.

    `summarize` stores the summary it makes, once per range, for the next read (the
    contract's one cache). A `read_only` caller (an operator looking) uses a stored
    summary if there is one and otherwise the built-in extractive summariser, keeping
    nothing and calling no outside summariser."""
    summary = None
    if strategy == "summarize":
        history, summary = _summarised_candidates(
            session=session, summary_ratio=summary_ratio, preserve_recent=preserve_recent, max_messages=max_messages, pin_first=pin_first,
            read_only=read_only,
        )
        strategy = "window"
    else:
        history = _window_candidates(session=session, strategy=strategy, max_messages=max_messages, pin_first=pin_first)
    result = select(history, strategy=strategy, max_messages=max_messages, max_tokens=max_tokens, pin_first=pin_first)
    return result.messages, summary


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
    *, session: Session, summary_ratio: float, preserve_recent: int, max_messages: int | None, pin_first: int, read_only: bool
) -> tuple[list[Any], Summary | None]:
    """Window candidates with the summarised range replaced by its (stored) summary."""
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
        if read_only:
            local = ExtractiveSummariser()
            summary = Summary(
                workspace_id=session.workspace_id, user_id=session.user_id, session=session, from_seq=from_seq, to_seq=to_seq,
                summariser=local.name, text=local.summarise(covered, max_chars=1200),
            )
        else:
            summary = summary_for_range(session=session, messages=covered, summariser=summariser, span=(from_seq, to_seq))
    stand_in = SummaryMessage(
        seq=from_seq, from_seq=from_seq, to_seq=to_seq,
        content=f"Summary of earlier messages #{from_seq}–#{to_seq}:\n{summary.text}",
    )
    kept = [m for m in window if not (from_seq <= m.seq <= to_seq and not m.pinned and m.role != Role.SYSTEM)]
    return sorted([*kept, stand_in], key=lambda m: (m.seq, not isinstance(m, SummaryMessage))), summary


def context_grounding(*, principal: Principal, session: Session, limit: int) -> dict[str, str] | None:
    """The grounding message a context ends with, as `GraphMemory.load()` appends it: the
    facts (of the session's end user, as the caller sees them) most relevant to the latest
    user message; None without one, or when nothing it names is known."""
    latest = session.messages.filter(role=Role.USER).order_by("-seq").only("content").first()
    if latest is None or not latest.content.strip():
        return None
    return graph_grounding(principal=principal, text=latest.content, user_id=session.user_id, limit=limit).message
