"""A walk through every kind of timeline event (memoryhub.timeline.models.EVENT_KINDS),
each caused over HTTP and waited for on a live workspace stream: an event whose write
does not wake the feed arrives only at the stream's re-check, a minute later, and fails
the walk."""

from __future__ import annotations

from collections.abc import Callable

import contextlib

import httpx

from memoryhub.timeline.models import EVENT_KINDS
from tests.conftest import Actors, LiveHub
from tests.sse import Stream
from tests.webhook_receiver import Answer, webhook_receiver

# Far below the stream's re-check (60 s), which would deliver an event nothing woke.
ARRIVES_WITHIN_SECONDS = 10


def walk_every_event_kind(hub: LiveHub, actors: Actors, *, run_retention: Callable[[], None]) -> list[str]:
    """Cause each kind of event in turn and wait for it on a workspace stream before the
    next, so that no later wake-up carries it; the kinds in the order they arrived."""
    agent = httpx.Client(base_url=f"{hub.url}/api/v1", headers={"Authorization": f"Bearer {actors.bot_key}"}, timeout=30)
    operator = httpx.Client(base_url=f"{hub.url}/api/v1", headers={"Authorization": f"Bearer {actors.owner_key}"}, timeout=30)

    def ok(response: httpx.Response) -> httpx.Response:
        assert response.status_code < 300, (response.request.url, response.status_code, response.text)
        return response

    def write_and_delete_memory() -> None:
        entry = ok(agent.post("/memories", json={"content": "Dana likes window seats.", "user_id": "u1"})).json()
        ok(agent.delete(f"/memories/{entry['id']}"))

    def save_one_checkpoint_too_many() -> None:
        ok(operator.put("/retention", json={"policies": {"checkpoints": 1}}))
        ok(agent.post("/sessions/walk/checkpoints", json={"expected_version": 1, "state": {"step": 2}}))
        run_retention()

    def cross_the_budget_warning() -> None:
        ok(operator.put("/settings/budget", json={"monthly_limit": 100, "warn_at": 0}))
        ok(agent.post("/memories", json={"content": "Dana flies on Friday.", "user_id": "u1"}))
        ok(operator.get("/usage"))  # what the hub counted is written, and the month's warning given

    def have_a_receiver_say_gone() -> None:
        receiver.answer = lambda _: Answer(410)
        hook = ok(operator.post("/webhooks", json={"url": receiver.url, "events": ["purge.completed"]})).json()
        ok(operator.post(f"/webhooks/{hook['id']}/test"))

    steps: list[tuple[str, Callable[[], object]]] = [
        ("run", lambda: ok(agent.post("/sessions", json={"session_id": "walk", "user_id": "u1"}))),
        ("message", lambda: [ok(agent.post("/sessions/walk/messages", json={"role": role, "content": text}))
                             for role, text in (("user", "Book a table for two."), ("assistant", "Booked for 8 pm."))]),
        ("edit", lambda: ok(agent.patch("/sessions/walk/messages/1", json={"content": "Book a table for three."}))),
        ("branch", lambda: ok(agent.post("/sessions/walk/branch", json={"new_session_id": "walk-branch", "upto_seq": 1}))),
        ("summary", lambda: ok(agent.post("/sessions/walk/summarize"))),
        ("plan", lambda: ok(agent.put("/sessions/walk/plan", json={"goal": "dinner", "steps": [{"step_id": "book", "description": "Book"}]}))),
        ("tool_call", lambda: ok(agent.post("/sessions/walk/tool-calls", json={"call_id": "c1", "tool": "crm.lookup", "result": "ok"}))),
        ("checkpoint", lambda: ok(agent.post("/sessions/walk/checkpoints", json={"expected_version": 0, "state": {"step": 1}}))),
        ("resume", lambda: ok(agent.post("/sessions/walk/resume", json={}))),
        ("fork", lambda: ok(agent.post("/sessions/walk/fork", json={"from_version": 1, "new_session_id": "walk-fork"}))),
        ("approval", lambda: ok(agent.post("/approvals", json={"session_id": "walk", "tool": "payments.send", "args": {"amount": 1}}))),
        ("episode", lambda: ok(agent.post("/episodes", json={"user_id": "u1", "task": "dinner", "outcome": "success", "narrative": "Booked."}))),
        ("memory", write_and_delete_memory),
        ("purge", lambda: ok(operator.post("/purges", json={"user_id": "walk-gone", "dry_run": False}))),
        ("retention", save_one_checkpoint_too_many),
        ("budget", cross_the_budget_warning),
        ("webhook", have_a_receiver_say_gone),
    ]
    assert sorted(kind for kind, _ in steps) == sorted(EVENT_KINDS), "a kind of event the walk does not cause"
    exits = contextlib.ExitStack()
    stream = Stream(f"{hub.url}/api/v1/events", headers={"Authorization": f"Bearer {actors.owner_key}"}).start()
    arrived: list[str] = []
    receiver = exits.enter_context(webhook_receiver())
    try:
        assert stream.status == 200, stream.error_body
        for kind, cause in steps:
            cause()
            while True:
                [event] = stream.take(1, timeout=ARRIVES_WITHIN_SECONDS) or [None]
                assert event is not None, f"no {kind!r} event within {ARRIVES_WITHIN_SECONDS} s: its write did not wake the feed"
                if event.event == kind:
                    arrived.append(kind)
                    break
    finally:
        stream.close()
        agent.close()
        operator.close()
        exits.close()
    return arrived
