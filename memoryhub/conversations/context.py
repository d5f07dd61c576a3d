"""Projecting a session's history into a prompt-sized context. Pure functions: the
history is never changed, only selected from.

Messages are grouped into units first: an assistant message with tool calls and the
tool messages answering them form one unit, kept or dropped together, so a context
never holds a tool result without its call or a call without its results.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

# A rough, model-independent estimate: ~4 characters per token for English text, plus
# a few tokens of per-message overhead (role, separators) as chat formats add.
CHARS_PER_TOKEN = 4
TOKENS_PER_MESSAGE = 4


class ContextMessage(Protocol):
    seq: int
    role: str
    content: str
    tool_calls: list[dict] | None
    tool_call_id: str | None
    pinned: bool


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
