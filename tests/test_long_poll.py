"""`GET /api/v1/approvals/{id}?wait=N` under uvicorn (memoryhub/serving/long_poll.py): the agent
hears of a decision as it is taken, and waiting holds no thread and no connection."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.conftest import Actors, LiveHub, approver_key, assert_error, busy_hub_connections, live_gauges, poll, start_hub

ARGS = {"to": "ceo@example.com", "amount": 1200}


def ask(hub: LiveHub, key: str, session_id: str = "s1", **body: object) -> dict:
    headers = {"Authorization": f"Bearer {key}"}
    httpx.post(f"{hub.url}/api/v1/sessions", json={"session_id": session_id, "user_id": "u1"}, headers=headers)
    response = httpx.post(
        f"{hub.url}/api/v1/approvals",
        json={"session_id": session_id, "tool": "payments.send", "args": ARGS, **body},
        headers=headers,
    )
    assert response.status_code == 201, response.text
    return response.json()


def wait_for(hub: LiveHub, key: str, approval_id: int, wait: int) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = httpx.get(
        f"{hub.url}/api/v1/approvals/{approval_id}", params={"wait": wait}, headers={"Authorization": f"Bearer {key}"}, timeout=90
    )
    return response, time.monotonic() - started


def decide(hub: LiveHub, key: str, approval_id: int, decision: str, **body: object) -> httpx.Response:
    return httpx.post(
        f"{hub.url}/api/v1/approvals/{approval_id}/decision",
        json={"decision": decision, **body},
        headers={"Authorization": f"Bearer {key}"},
    )


def test_it_answers_a_waiting_agent_as_soon_as_an_operator_decides(actors: Actors, live_hub: LiveHub) -> None:
    approval = ask(live_hub, actors.bot_key)
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(wait_for, live_hub, actors.bot_key, approval["id"], 30)
        assert poll(lambda: live_gauges(live_hub, actors.owner_key)["waiting_approvals"] == 1), "the agent is not waiting"
        assert not waiting.done()
        decided_at = time.monotonic()
        assert (
            decide(live_hub, actors.owner_key, approval["id"], "edit", args={"to": "ceo@example.com", "amount": 500}).status_code
            == 200
        )
        response, _ = waiting.result(timeout=30)
    heard_after = time.monotonic() - decided_at
    assert response.status_code == 200
    assert (response.json()["status"], response.json()["args"]["amount"]) == ("edited", 500)
    assert heard_after < 5, heard_after


def test_a_waiting_agent_hears_the_final_decision_of_several_approvers_only(actors: Actors, live_hub: LiveHub) -> None:
    approval = ask(live_hub, actors.bot_key, required_approvals=2)
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(wait_for, live_hub, actors.bot_key, approval["id"], 30)
        assert poll(lambda: live_gauges(live_hub, actors.owner_key)["waiting_approvals"] == 1), "the agent is not waiting"
        assert decide(live_hub, approver_key(actors), approval["id"], "approve").json()["status"] == "pending"
        # One approval of two: the agent still waits (the hub counts it among its waiters).
        assert live_gauges(live_hub, actors.owner_key)["waiting_approvals"] == 1 and not waiting.done()
        assert decide(live_hub, actors.owner_key, approval["id"], "approve").json()["status"] == "approved"
        response, _ = waiting.result(timeout=30)
    body = response.json()
    assert body["status"] == "approved" and [given["by"] for given in body["approvals"]] == ["operator:reviewer", "operator:owner"]


def test_it_answers_at_once_when_already_decided_and_pending_when_the_wait_ends(actors: Actors, live_hub: LiveHub) -> None:
    approval = ask(live_hub, actors.bot_key)
    response, waited = wait_for(live_hub, actors.bot_key, approval["id"], 1)
    assert (response.status_code, response.json()["status"]) == (200, "pending")
    assert 1 <= waited < 5

    decide(live_hub, actors.owner_key, approval["id"], "reject", reason="No.")
    response, waited = wait_for(live_hub, actors.bot_key, approval["id"], 30)
    assert (response.json()["status"], response.json()["reason"]) == ("rejected", "No.")
    assert waited < 5


def test_it_says_expired_when_the_request_expires_during_the_wait(actors: Actors, live_hub: LiveHub) -> None:
    approval = ask(live_hub, actors.bot_key, expires_in=2)
    response, waited = wait_for(live_hub, actors.bot_key, approval["id"], 30)
    assert response.json()["status"] == "expired"  # fail closed: never approved by default
    assert waited < 10
    assert_error(decide(live_hub, actors.owner_key, approval["id"], "approve"), 409, "APPROVAL_EXPIRED")


def test_it_refuses_bad_waits_and_other_workspaces_without_waiting(actors: Actors, live_hub: LiveHub) -> None:
    approval = ask(live_hub, actors.bot_key)
    for wait in ("61", "-1", "soon"):
        response = httpx.get(
            f"{live_hub.url}/api/v1/approvals/{approval['id']}",
            params={"wait": wait},
            headers={"Authorization": f"Bearer {actors.bot_key}"},
        )
        assert_error(response, 400, "VALIDATION_ERROR")
    started = time.monotonic()
    response, _ = wait_for(live_hub, actors.spy_key, approval["id"], 30)  # an agent of another workspace
    assert_error(response, 404, "APPROVAL_NOT_FOUND")
    response, _ = wait_for(live_hub, actors.peer_key, approval["id"], 30)  # another agent of this workspace
    assert_error(response, 404, "APPROVAL_NOT_FOUND")
    response = httpx.get(f"{live_hub.url}/api/v1/approvals/{approval['id']}", params={"wait": 30})
    assert response.status_code == 401
    assert time.monotonic() - started < 5


def test_it_holds_no_thread_and_no_connection_while_agents_wait(actors: Actors, live_hub: LiveHub) -> None:
    approvals = [ask(live_hub, actors.bot_key, session_id=f"s{i}") for i in range(40)]
    threads_before = live_hub.threads()
    with ThreadPoolExecutor(len(approvals)) as pool:
        waiting = [pool.submit(wait_for, live_hub, actors.bot_key, approval["id"], 30) for approval in approvals]
        # Every waiter past Django's first answer, waiting in the long-poll layer.
        assert poll(lambda: live_gauges(live_hub, actors.owner_key)["waiting_approvals"] == len(approvals), timeout=30)
        assert not any(w.done() for w in waiting)
        # None held by the 40 waiters; the hub's own background work (its indexer, the usage
        # flush) may hold one for a moment, so the count is watched, not read once.
        assert poll(lambda: busy_hub_connections() == 0, timeout=5)
        assert live_hub.threads() <= threads_before + 5, (threads_before, live_hub.threads())
        for approval in approvals:
            decide(live_hub, actors.owner_key, approval["id"], "approve")
        answers = [w.result(timeout=30)[0].json()["status"] for w in waiting]
    assert answers == ["approved"] * len(approvals)


def test_it_leaves_no_waiter_behind_when_agents_hang_up(actors: Actors, live_hub: LiveHub) -> None:
    approval = ask(live_hub, actors.bot_key)
    threads_before = live_hub.threads()
    url, headers = f"{live_hub.url}/api/v1/approvals/{approval['id']}", {"Authorization": f"Bearer {actors.bot_key}"}

    def hang_up() -> bool:
        with httpx.Client(timeout=1) as client:
            try:
                client.get(url, params={"wait": 60}, headers=headers)
            except httpx.ReadTimeout:
                return True  # gave up waiting, and the connection closes with the client
        return False

    with ThreadPoolExecutor(20) as pool:
        assert all(pool.map(lambda _: hang_up(), range(20)))
    # The hub still answers, with nothing held for the agents that left.
    released = poll(lambda: (live := live_gauges(live_hub, actors.owner_key))["waiting_approvals"] == live["group_memberships"] == 0)
    assert released, live_gauges(live_hub, actors.owner_key)
    response, _ = wait_for(live_hub, actors.bot_key, approval["id"], 1)
    assert response.json()["status"] == "pending"
    assert live_hub.threads() <= threads_before + 5
    assert busy_hub_connections() == 0


@pytest.mark.redis
def test_it_wakes_a_waiter_in_one_process_on_a_decision_taken_in_another(
    transactional_db: None, actors: Actors, redis_url: str
) -> None:
    first, second = start_hub({"REDIS_URL": redis_url}), start_hub({"REDIS_URL": redis_url})
    try:
        approval = ask(first, actors.bot_key)
        heard: list[httpx.Response] = []
        waiter = threading.Thread(target=lambda: heard.append(wait_for(first, actors.bot_key, approval["id"], 30)[0]))
        waiter.start()
        assert poll(lambda: live_gauges(first, actors.owner_key)["waiting_approvals"] == 1), "the agent is not waiting"
        decided_at = time.monotonic()
        assert decide(second, actors.owner_key, approval["id"], "approve").status_code == 200
        waiter.join(30)
        assert time.monotonic() - decided_at < 5
        assert heard[0].json()["status"] == "approved"
    finally:
        first.stop()
        second.stop()
