from __future__ import annotations

import os
import signal
import threading

import httpx
from django.db import connection
from django.test import override_settings

from memoryhub.checkpoints.models import Checkpoint
from memoryhub.checkpoints.services import checkpoint_prune
from memoryhub.conversations.models import Session
from memoryhub.timeline.models import Event
from tests.conftest import Actors, api_client, assert_error, start_hub

URL = "/api/v1/sessions/s1/checkpoints"


def start(actors: Actors) -> object:
    client = api_client(actors.bot_key)
    client.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    client.post("/api/v1/sessions/s1/messages", {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}, format="json")
    return client


def save(client: object, expected: int, state: object, **extra: object) -> object:
    return client.post(URL, {"expected_version": expected, "state": state, **extra}, format="json")


def test_it_saves_versions_in_sequence(actors: Actors) -> None:
    client = start(actors)
    first = save(client, 0, {"step": 1}, current_step="plan", label="start")
    assert first.status_code == 201 and first.json()["version"] == 1
    assert save(client, 1, {"step": 2}).json()["version"] == 2
    error = assert_error(save(client, 1, {"step": "stale"}), 409, "VERSION_CONFLICT")
    assert error["details"]["current_version"] == 2
    assert_error(save(client, 7, {"step": "future"}), 409, "VERSION_CONFLICT")
    latest = client.get(f"{URL}/latest").json()
    assert (latest["version"], latest["state"]) == (2, {"step": 2})
    assert client.get(f"{URL}/1").json()["state"] == {"step": 1}
    listing = client.get(URL).json()["results"]
    assert [c["version"] for c in listing] == [2, 1] and "state" not in listing[0]
    assert client.get("/api/v1/sessions/s1").json()["last_seq"] == 2
    assert client.get("/api/v1/sessions/s1").json()["latest_checkpoint_version"] == 2


def test_it_resumes_with_the_messages_of_the_moment(actors: Actors) -> None:
    client = start(actors)
    save(client, 0, {"cursor": 2})
    client.post("/api/v1/sessions/s1/messages", {"role": "user", "content": "after the checkpoint"}, format="json")
    read = client.get(f"{URL}/latest", {"include": "messages,state"}).json()
    assert [m["content"] for m in read["messages"]] == ["hi", "hello"]
    assert read["state"] == {"cursor": 2} and "summary" not in read
    assert not Event.objects.filter(kind="resume").exists(), "a GET recorded a resume"
    resume = client.post("/api/v1/sessions/s1/resume", {}, format="json")
    assert resume.status_code == 200
    assert [m["content"] for m in resume.json()["messages"]] == ["hi", "hello"]
    assert resume.json()["state"] == {"cursor": 2} and {"plan", "summary"} <= set(resume.json())
    assert Event.objects.filter(kind="resume", session_id="s1").count() == 1
    save(client, 1, {"cursor": 3})
    assert client.post("/api/v1/sessions/s1/resume", {"from_version": 1}, format="json").json()["version"] == 1
    assert_error(client.post("/api/v1/sessions/s1/resume", {"from_version": 9}, format="json"), 404, "CHECKPOINT_NOT_FOUND")
    assert_error(api_client(actors.owner_key).post("/api/v1/sessions/s1/resume", {}, format="json"), 403, "AGENT_KEY_REQUIRED")
    assert_error(api_client(actors.spy_key).post("/api/v1/sessions/s1/resume", {}, format="json"), 404, "SESSION_NOT_FOUND")
    assert Event.objects.filter(kind="resume", session_id="s1").count() == 2
    for odd in ("²", "1.0", "-1", "99999999999999999999"):
        assert_error(client.get(f"{URL}/{odd}"), 404, "CHECKPOINT_NOT_FOUND")
    only_meta = client.get(f"{URL}/latest", {"exclude": "state,summary"}).json()
    assert "state" not in only_meta
    assert_error(client.get(f"{URL}/latest", {"include": "everything"}), 400, "INVALID_PART")


def test_it_stores_large_states_compressed_and_refuses_oversized_ones(actors: Actors) -> None:
    client = start(actors)
    state = {"notes": ["the same line of agent notes"] * 20_000}
    body = save(client, 0, state).json()
    assert body["state_bytes"] > 500_000 and body["stored_bytes"] < body["state_bytes"] / 20
    assert client.get(f"{URL}/1").json()["state"] == state
    with override_settings(MEMORYHUB_MAX_CHECKPOINT_BYTES=1000):
        error = assert_error(save(client, 1, {"x": "y" * 2000}), 413, "PAYLOAD_TOO_LARGE")
    assert error["details"]["limit_bytes"] == 1000
    assert Checkpoint.objects.count() == 1 and Session.objects.get().checkpoint_version == 1


def test_it_forks_a_session_from_a_version(actors: Actors) -> None:
    client = start(actors)
    save(client, 0, {"plan": "A"})
    client.post("/api/v1/sessions/s1/messages", {"role": "user", "content": "later"}, format="json")
    save(client, 1, {"plan": "B"})
    fork = client.post("/api/v1/sessions/s1/fork", {"from_version": 1, "new_session_id": "s1-fork"}, format="json")
    assert fork.status_code == 201
    forked = client.get("/api/v1/sessions/s1-fork/checkpoints/latest", {"include": "state,messages"}).json()
    assert forked["state"] == {"plan": "A"} and forked["version"] == 1
    assert [m["content"] for m in forked["messages"]] == ["hi", "hello"]
    # Independent: saving in the fork does not touch the original.
    assert client.post("/api/v1/sessions/s1-fork/checkpoints", {"expected_version": 1, "state": {"plan": "C"}}, format="json").json()["version"] == 2
    assert client.get(f"{URL}/latest").json()["state"] == {"plan": "B"}
    assert set(Event.objects.filter(kind="fork").values_list("session_id", flat=True)) == {"s1", "s1-fork"}
    assert_error(client.post("/api/v1/sessions/s1/fork", {"from_version": 9, "new_session_id": "x"}, format="json"), 404, "CHECKPOINT_NOT_FOUND")
    assert_error(client.post("/api/v1/sessions/s1/fork", {"from_version": 1, "new_session_id": "s1-fork"}, format="json"), 409, "SESSION_EXISTS")


def test_it_keeps_checkpoints_in_their_session_and_workspace(actors: Actors) -> None:
    client = start(actors)
    save(client, 0, {"secret": 1})
    assert_error(api_client(actors.spy_key).get(f"{URL}/latest"), 404, "SESSION_NOT_FOUND")
    assert_error(api_client(actors.peer_key).post(URL, {"expected_version": 1, "state": {}}, format="json"), 404, "SESSION_NOT_FOUND")
    assert_error(client.get(f"{URL}/99"), 404, "CHECKPOINT_NOT_FOUND")
    assert_error(client.get(f"{URL}/abc"), 404, "CHECKPOINT_NOT_FOUND")
    for body in ({"state": {}}, {"expected_version": -1, "state": {}}, {"expected_version": "one", "state": {}}, {"expected_version": 0}):
        assert_error(client.post(URL, body, format="json"), 400, "VALIDATION_ERROR")
    assert Checkpoint.objects.count() == 1


def test_retention_keeps_the_newest_and_the_labelled(actors: Actors) -> None:
    client = start(actors)
    for v in range(8):
        save(client, v, {"v": v + 1}, label="milestone" if v == 1 else "")
    assert checkpoint_prune(keep=3) == {actors.workspace.pk: 4}
    assert sorted(Checkpoint.objects.values_list("version", flat=True)) == [2, 6, 7, 8]
    assert save(client, 8, {"v": 9}).json()["version"] == 9  # versions go on


def test_the_timeline_lists_the_sessions_events_in_order(actors: Actors) -> None:
    client = start(actors)
    save(client, 0, {})
    events = client.get("/api/v1/sessions/s1/timeline").json()["results"]
    assert [e["kind"] for e in events] == ["run", "message", "message", "checkpoint"]
    assert [e["id"] for e in events] == sorted(e["id"] for e in events)
    page = client.get("/api/v1/sessions/s1/timeline", {"limit": 2}).json()
    rest = client.get("/api/v1/sessions/s1/timeline", {"cursor": page["next"]}).json()["results"]
    assert [e["id"] for e in page["results"] + rest] == [e["id"] for e in events]
    assert_error(api_client(actors.spy_key).get("/api/v1/sessions/s1/timeline"), 404, "SESSION_NOT_FOUND")


def test_exactly_one_of_16_racing_writers_wins_each_round(actors: Actors, transactional_db: None) -> None:
    start(actors)
    results: list[list[int]] = []
    for round_ in range(20):  # 320 racing saves in all
        statuses: list[int] = []
        barrier = threading.Barrier(16)

        def writer(n: int) -> None:
            try:
                barrier.wait()
                statuses.append(save(api_client(actors.bot_key), round_, {"writer": n}).status_code)
            finally:
                connection.close()

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        results.append(statuses)
    assert all(sorted(s) == [201] + [409] * 15 for s in results), results
    assert list(Checkpoint.objects.order_by("version").values_list("version", flat=True)) == list(range(1, 21))


def test_a_killed_hub_loses_nothing_that_got_a_201(actors: Actors, transactional_db: None) -> None:
    start(actors)
    hub = start_hub()
    headers = {"Authorization": f"Bearer {actors.bot_key}"}
    saved = httpx.post(f"{hub.url}{URL}", json={"expected_version": 0, "state": {"progress": 41}}, headers=headers, timeout=30)
    assert saved.status_code == 201
    os.kill(hub.process.pid, signal.SIGKILL)  # no shutdown, no flush: a crash
    hub.process.wait()
    again = start_hub()
    try:
        latest = httpx.get(f"{again.url}{URL}/latest", headers=headers, timeout=30).json()
        assert (latest["version"], latest["state"]) == (1, {"progress": 41})
        assert httpx.post(f"{again.url}{URL}", json={"expected_version": 1, "state": {"progress": 42}}, headers=headers, timeout=30).status_code == 201
    finally:
        again.stop()


def test_it_points_at_the_tool_log_of_the_moment(actors: Actors) -> None:
    client = start(actors)
    client.post("/api/v1/sessions/s1/tool-calls", {"call_id": "first", "tool": "t"}, format="json")
    client.post("/api/v1/sessions/s1/tool-calls", {"call_id": "second", "tool": "t"}, format="json")
    assert save(client, 0, {}).json()["tool_log"] == {"last_call_id": "second", "calls": 2}
    client.post("/api/v1/sessions/s1/tool-calls", {"call_id": "third", "tool": "t"}, format="json")
    assert client.get(f"{URL}/1").json()["tool_log"] == {"last_call_id": "second", "calls": 2}


def test_it_keeps_the_plan_of_the_moment_with_each_steps_tool_calls(actors: Actors) -> None:
    from memoryhub.plans.selectors import plan_snapshot
    from memoryhub.tools.selectors import tool_calls_by_step

    client = start(actors)
    save(client, 0, {"n": 0})
    assert client.get(f"{URL}/latest", {"include": "plan"}).json()["plan"] is None  # no plan yet
    steps = [{"step_id": "a", "description": "first"}, {"step_id": "b", "description": "second", "depends_on": ["a"]}]
    assert client.put("/api/v1/sessions/s1/plan", {"goal": "ship", "steps": steps}, format="json").status_code in (200, 201)
    client.patch("/api/v1/sessions/s1/plan/steps/a", {"status": "running"}, format="json")
    for call_id in ("c1", "c2"):
        recorded = client.post("/api/v1/sessions/s1/tool-calls", {"tool": "t", "args": {}, "result": "ok", "call_id": call_id, "step_id": "a"},
                               format="json")
        assert recorded.status_code == 201, recorded.content
    client.patch("/api/v1/sessions/s1/plan/steps/a", {"status": "done", "summary": "did a"}, format="json")
    session = Session.objects.get(session_id="s1")
    expected = plan_snapshot(session=session, tool_calls=tool_calls_by_step(session=session))
    save(client, 1, {"n": 1})
    client.patch("/api/v1/sessions/s1/plan/steps/b", {"status": "running"}, format="json")  # after the checkpoint

    kept = client.get(f"{URL}/latest", {"include": "plan"}).json()["plan"]
    assert kept == expected
    assert [(s["step_id"], s["status"], s["tool_calls"], s["depends_on"]) for s in kept["steps"]] == [
        ("a", "done", ["c1", "c2"], []), ("b", "pending", [], ["a"]),
    ]
