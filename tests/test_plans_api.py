from __future__ import annotations

import threading

from django.db import connection

from memoryhub.plans.models import Plan, PlanStep
from tests.conftest import Actors, api_client, assert_error

PLAN = {
    "goal": "Ship the report",
    "steps": [
        {"step_id": "gather", "description": "Gather the numbers"},
        {"step_id": "draft", "description": "Draft the report", "depends_on": ["gather"]},
        {"step_id": "charts", "description": "Make the charts", "depends_on": ["gather"], "parent": "draft"},
        {"step_id": "send", "description": "Send it", "depends_on": ["draft", "charts"]},
    ],
}


def start(actors: Actors) -> object:
    client = api_client(actors.bot_key)
    client.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    return client


def move(client: object, step: str, status: str, **extra: object) -> object:
    return client.patch(f"/api/v1/sessions/s1/plan/steps/{step}", {"status": status, **extra}, format="json")


def test_it_replaces_the_plan_and_keeps_the_old_one(actors: Actors) -> None:
    client = start(actors)
    first = client.put("/api/v1/sessions/s1/plan", PLAN, format="json")
    assert first.status_code == 200 and first.json()["version"] == 1
    assert [s["step_id"] for s in first.json()["steps"]] == ["gather", "draft", "charts", "send"]
    second = client.put("/api/v1/sessions/s1/plan", {"goal": "Ship it faster", "steps": PLAN["steps"][:2]}, format="json")
    assert second.json()["version"] == 2
    assert client.get("/api/v1/sessions/s1/plan").json()["goal"] == "Ship it faster"
    assert Plan.objects.count() == 2 and Plan.objects.filter(is_current=True).count() == 1


def test_it_refuses_unknown_dependencies_and_cycles(actors: Actors) -> None:
    client = start(actors)
    bad = [
        ([{"step_id": "a", "description": "x", "depends_on": ["ghost"]}], "UNKNOWN_DEPENDENCY"),
        ([{"step_id": "a", "description": "x", "depends_on": ["b"]}, {"step_id": "b", "description": "y", "depends_on": ["a"]}], "PLAN_CYCLE"),
        ([{"step_id": "a", "description": "x", "depends_on": ["a"]}], "PLAN_CYCLE"),
        ([{"step_id": "a", "description": "x", "parent": "nope"}], "UNKNOWN_PARENT"),
        ([{"step_id": "a", "description": "x"}, {"step_id": "a", "description": "y"}], "INVALID_PLAN"),
        ([], "INVALID_PLAN"),
    ]
    for steps, code in bad:
        assert_error(client.put("/api/v1/sessions/s1/plan", {"goal": "g", "steps": steps}, format="json"), 400, code)
    assert_error(client.put("/api/v1/sessions/s1/plan", {"goal": "g", "steps": [{"step_id": 1, "description": "x"}]}, format="json"), 400, "VALIDATION_ERROR")
    assert Plan.objects.count() == 0


def test_it_allows_only_valid_transitions(actors: Actors) -> None:
    client = start(actors)
    client.put("/api/v1/sessions/s1/plan", PLAN, format="json")
    error = assert_error(move(client, "draft", "running"), 409, "DEPENDENCIES_NOT_DONE")
    assert error["details"]["waiting_for"] == ["gather"]
    assert_error(move(client, "gather", "done"), 409, "INVALID_TRANSITION")
    assert move(client, "gather", "running").status_code == 200
    assert move(client, "gather", "done", summary="Q3 revenue 1.2M").json()["summary"] == "Q3 revenue 1.2M"
    assert_error(move(client, "gather", "running"), 409, "INVALID_TRANSITION")
    assert move(client, "draft", "running").status_code == 200
    assert client.get("/api/v1/sessions/s1").json()["current_plan_step"] == "draft"
    assert_error(move(client, "ghost", "running"), 404, "STEP_NOT_FOUND")
    assert_error(move(client, "draft", "finished"), 400, "VALIDATION_ERROR")


def test_it_lets_exactly_one_of_racing_transitions_win(actors: Actors, transactional_db: None) -> None:
    client = start(actors)
    client.put("/api/v1/sessions/s1/plan", PLAN, format="json")
    statuses: list[int] = []
    barrier = threading.Barrier(8)

    def worker() -> None:
        try:
            barrier.wait()
            statuses.append(move(api_client(actors.bot_key), "gather", "running").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200] + [409] * 7
    assert PlanStep.objects.get(step_id="gather").status == "running"


def test_it_renders_a_compact_prompt_slice(actors: Actors) -> None:
    client = start(actors)
    client.put("/api/v1/sessions/s1/plan", PLAN, format="json")
    move(client, "gather", "running")
    move(client, "gather", "done", summary="numbers in sheet Q3")
    move(client, "draft", "running")
    text = client.get("/api/v1/sessions/s1/plan/render", {"current": "draft"}).json()["text"]
    lines = text.splitlines()
    assert lines[0] == "step 2 of 4: Draft the report"
    assert "[done] gather: Gather the numbers -> numbers in sheet Q3" in lines
    assert "[current] draft: Draft the report" in lines
    assert "[pending] send: Send it" in lines


def test_it_renders_a_long_plan_compactly(actors: Actors) -> None:
    client = start(actors)
    steps = [{"step_id": f"s{i}", "description": f"Step number {i} " + "detail " * 20} for i in range(200)]
    client.put("/api/v1/sessions/s1/plan", {"goal": "A long job", "steps": steps}, format="json")
    text = client.get("/api/v1/sessions/s1/plan/render", {"current": "s0"}).json()["text"]
    assert text.splitlines()[0].startswith("step 1 of 200:")
    assert "… and 194 more steps" in text
    assert len(text) < 1500


def test_it_saves_and_forks_the_plan_with_checkpoints(actors: Actors) -> None:
    client = start(actors)
    client.put("/api/v1/sessions/s1/plan", PLAN, format="json")
    move(client, "gather", "running")
    client.post("/api/v1/sessions/s1/checkpoints", {"expected_version": 0, "state": {}}, format="json")
    move(client, "gather", "done")
    saved = client.get("/api/v1/sessions/s1/checkpoints/1", {"include": "plan"}).json()["plan"]
    assert [s["status"] for s in saved["steps"]][0] == "running"
    client.post("/api/v1/sessions/s1/fork", {"from_version": 1, "new_session_id": "s1-fork"}, format="json")
    forked = client.get("/api/v1/sessions/s1-fork/plan").json()
    assert forked["steps"][0]["status"] == "running"
    assert client.get("/api/v1/sessions/s1/plan").json()["steps"][0]["status"] == "done"


def test_it_hides_plans_of_others(actors: Actors) -> None:
    client = start(actors)
    client.put("/api/v1/sessions/s1/plan", PLAN, format="json")
    assert_error(api_client(actors.spy_key).get("/api/v1/sessions/s1/plan"), 404, "SESSION_NOT_FOUND")
    assert_error(api_client(actors.peer_key).put("/api/v1/sessions/s1/plan", PLAN, format="json"), 404, "SESSION_NOT_FOUND")
    api_client(actors.bot_key).post("/api/v1/sessions", {"session_id": "empty", "user_id": "u1"}, format="json")
    assert_error(api_client(actors.bot_key).get("/api/v1/sessions/empty/plan/render"), 404, "PLAN_NOT_FOUND")
