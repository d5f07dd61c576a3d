"""What the console shows for each timeline event: the event, and the record it is about
(the message, the tool call, the checkpoint, the approval, the episode), read in one
query per kind of record for a whole page of events, never one per event."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.db.models import Model, Q

from memoryhub.approvals.models import Approval
from memoryhub.checkpoints.models import Checkpoint
from memoryhub.conversations.models import Message
from memoryhub.episodes.models import Episode
from memoryhub.timeline.models import Event
from memoryhub.tools.models import ToolCall


@dataclass
class TimelineRow:
    event: Event
    record: Any = None  # the message, tool call, checkpoint, approval or episode; None once deleted


# ref "type" → (model, the field the ref's key names, that key in the ref)
_SESSION_RECORDS: dict[str, tuple[type[Model], str, str]] = {
    "message": (Message, "seq", "seq"),
    "tool_call": (ToolCall, "call_id", "call_id"),
    "checkpoint": (Checkpoint, "version", "version"),
}
_RECORDS_BY_ID: dict[str, type[Model]] = {"approval": Approval, "episode": Episode}
_HEAVY_FIELDS: dict[type[Model], tuple[str, ...]] = {Checkpoint: ("state", "plan", "bundle", "summary")}


def _record_key(event: Event) -> tuple[str, str, object] | None:
    """What the event is about, as (ref type, session id, key): session records by the
    session and their key, the others by id under session ""; None when it names none."""
    ref = event.ref if isinstance(event.ref, dict) else {}
    ref_type = ref.get("type")
    if ref_type in _SESSION_RECORDS and event.session_id:
        key = ref.get(_SESSION_RECORDS[ref_type][2])
        if isinstance(key, (str, int)) and not isinstance(key, bool):
            return ref_type, event.session_id, key
    elif ref_type in _RECORDS_BY_ID:
        key = str(ref.get("id", ""))
        if key.isdigit() and len(key) < 19:
            return ref_type, "", int(key)
    return None


def timeline_rows(*, workspace_id: int, events: list[Event]) -> list[TimelineRow]:
    keys = [_record_key(event) for event in events]
    wanted: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    for ref_type, session_id, key in filter(None, keys):
        wanted[ref_type][session_id].add(key)
    found: dict[tuple[str, str, object], Any] = {}
    for ref_type, by_session in wanted.items():
        if ref_type in _RECORDS_BY_ID:
            model = _RECORDS_BY_ID[ref_type]
            for record in model.objects.filter(workspace_id=workspace_id, pk__in=by_session[""]).select_related("session"):
                found[ref_type, "", record.pk] = record
            continue
        model, field, _ = _SESSION_RECORDS[ref_type]
        scope = Q()
        for session_id, session_keys in by_session.items():
            scope |= Q(session__session_id=session_id, **{f"{field}__in": session_keys})
        records = model.objects.filter(scope, workspace_id=workspace_id).select_related("session").defer(*_HEAVY_FIELDS.get(model, ()))
        for record in records:
            found[ref_type, record.session.session_id, getattr(record, field)] = record
    return [TimelineRow(event=event, record=found.get(key) if key else None) for event, key in zip(events, keys, strict=True)]
