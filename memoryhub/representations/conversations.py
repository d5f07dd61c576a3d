from __future__ import annotations

from typing import Any

from memoryhub.conversations.models import Message
from memoryhub.representations import iso_datetime


def message_json(message: Message) -> dict[str, Any]:
    return {
        "seq": message.seq,
        "role": message.role,
        "content": message.content,
        "tool_calls": message.tool_calls,
        "tool_call_id": message.tool_call_id,
        "pinned": message.pinned,
        "created_at": iso_datetime(message.created_at),
    }
