from __future__ import annotations

from typing import Any

from memoryhub.checkpoints.models import Checkpoint
from memoryhub.representations import iso_datetime


def checkpoint_json(checkpoint: Checkpoint) -> dict[str, Any]:
    """A checkpoint's metadata; its state, summary, messages and plan are parts a load
    adds when asked for them."""
    return {
        "version": checkpoint.version,
        "label": checkpoint.label,
        "current_step": checkpoint.current_step,
        "created_at": iso_datetime(checkpoint.created_at),
        "state_bytes": checkpoint.state_bytes,
        "stored_bytes": checkpoint.stored_bytes,
        "message_seq": checkpoint.message_seq,
        "tool_log": {"last_call_id": checkpoint.last_call_id or None, "calls": checkpoint.tool_calls},
        "bundle": checkpoint.bundle,
    }
