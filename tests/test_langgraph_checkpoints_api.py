"""The LangGraph checkpoint endpoints (/api/v1/langgraph/…) over HTTP: what the saver
relies on (replace on put, values by version, idempotent writes, list order and
filters, delete, copy, prune, runs), who may see what, and bad input changing nothing."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from memoryhub.compliance.services import purge_run
from memoryhub.conversations.models import Session
from memoryhub.langgraph_checkpoints.models import GraphBlob, GraphCheckpoint, GraphWrite
from memoryhub.timeline.models import Event
from tests.conftest import Actors, api_client, assert_error

THREADS = "/api/v1/langgraph/threads"
LIST = "/api/v1/langgraph/checkpoints"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def put(client: Any, thread: str, checkpoint_id: str, *, parent: str | None = None, ns: str = "", values: dict[str, bytes] | None = None,
        versions: dict[str, str] | None = None, metadata: dict[str, Any] | None = None, user_id: str | None = "u1") -> Any:
    values = values or {}
    body: dict[str, Any] = {
        "thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id, "parent_checkpoint_id": parent,
        "checkpoint": {"type": "msgpack", "data": b64(f"cp-{checkpoint_id}".encode())}, "metadata": metadata or {"source": "loop", "step": 1},
        "channel_versions": versions if versions is not None else {channel: "1" for channel in values},
        "blobs": [{"channel": c, "version": (versions or {}).get(c, "1"), "type": "msgpack", "data": b64(v)} for c, v in values.items()],
    }
    if user_id:
        body["user_id"] = user_id
    return client.post(LIST, body, format="json")


def writes(client: Any, thread: str, checkpoint_id: str, task: str, items: list[tuple[int, str, bytes]], ns: str = "") -> Any:
    return client.post("/api/v1/langgraph/writes", {
        "thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": checkpoint_id, "task_id": task,
        "writes": [{"idx": idx, "channel": channel, "type": "msgpack", "data": b64(data)} for idx, channel, data in items],
    }, format="json")


def listed(client: Any, **params: str) -> list[dict[str, Any]]:
    response = client.get(LIST, params)
    assert response.status_code == 200, response.content[:300]
    return response.json()["results"]


def values_of(item: dict[str, Any]) -> dict[str, bytes]:
    return {v["channel"]: base64.b64decode(v["data"]) for v in item["channel_values"]}


def test_it_keeps_checkpoints_with_the_values_of_their_versions(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    assert put(bot, "t1", "0001", values={"a": b"a1", "b": b"b1"}).status_code == 201
    # Only "a" changed: "b" is read from version 1 stored with the first checkpoint.
    assert put(bot, "t1", "0002", parent="0001", values={"a": b"a2"}, versions={"a": "2", "b": "1"}).status_code == 201
    first, = listed(bot, thread_id="t1", checkpoint_ns="", checkpoint_id="0001")
    latest, = listed(bot, thread_id="t1", checkpoint_ns="", limit="1")
    assert values_of(first) == {"a": b"a1", "b": b"b1"} and first["parent_checkpoint_id"] is None
    assert values_of(latest) == {"a": b"a2", "b": b"b1"} and latest["parent_checkpoint_id"] == "0001"
    assert base64.b64decode(latest["checkpoint"]["data"]) == b"cp-0002"
    # The thread is the agent's session of that id, for user u1, on the timeline.
    session = Session.objects.get(session_id="t1")
    assert (session.agent, session.user_id) == (actors.bot, "u1")
    assert Event.objects.filter(session_id="t1", kind="checkpoint").count() == 2


def test_it_lists_newest_first_by_namespace_metadata_and_before(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    for i, source in enumerate(["input", "loop", "input", "loop"]):
        put(bot, "t1", f"000{i}", parent=f"000{i - 1}" if i else None, metadata={"source": source, "step": i, "run_id": "r1"})
    put(bot, "t1", "0009", ns="child:1")
    ids = lambda **q: [c["checkpoint_id"] for c in listed(bot, thread_id="t1", **q)]  # noqa: E731
    assert ids(checkpoint_ns="") == ["0003", "0002", "0001", "0000"]
    assert ids() == ["0009", "0003", "0002", "0001", "0000"]  # every namespace
    assert ids(checkpoint_ns="", filter=json.dumps({"source": "input"})) == ["0002", "0000"]
    assert ids(checkpoint_ns="", filter=json.dumps({"source": "input", "step": 2})) == ["0002"]
    assert ids(checkpoint_ns="", before="0002") == ["0001", "0000"]
    # Pages follow one another without repeating or skipping.
    first = bot.get(LIST, {"thread_id": "t1", "limit": "2"}).json()
    second = bot.get(LIST, {"thread_id": "t1", "limit": "2", "cursor": first["next"]}).json()
    assert [c["checkpoint_id"] for c in first["results"] + second["results"]] == ["0009", "0003", "0002", "0001"]
    assert listed(bot, thread_id="nothing-here") == []


def test_it_stores_a_tasks_writes_once_and_replaces_special_ones(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    put(bot, "t1", "0001")
    assert writes(bot, "t1", "0001", "task-b", [(0, "x", b"first"), (1, "y", b"y")]).json()["stored"] == 2
    assert writes(bot, "t1", "0001", "task-b", [(0, "x", b"again")]).json()["stored"] == 0  # a resend keeps the first
    writes(bot, "t1", "0001", "task-a", [(-3, "__interrupt__", b"one")])
    writes(bot, "t1", "0001", "task-a", [(-3, "__interrupt__", b"two")])  # special: replaced
    item, = listed(bot, thread_id="t1", checkpoint_ns="")
    assert [(w["task_id"], w["channel"], base64.b64decode(w["data"])) for w in item["pending_writes"]] == [
        ("task-a", "__interrupt__", b"two"), ("task-b", "x", b"first"), ("task-b", "y", b"y"),
    ]


def test_it_deletes_copies_and_prunes_threads(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    for i in range(3):
        put(bot, "t1", f"000{i}", parent=f"000{i - 1}" if i else None, values={"a": f"v{i}".encode()}, versions={"a": str(i)},
            metadata={"step": i, "run_id": f"run-{i}"})
    writes(bot, "t1", "0002", "task", [(0, "a", b"w")])
    copied = bot.post(f"{THREADS}/t1/copy", {"target_thread_id": "t2"}, format="json")
    assert copied.status_code == 201 and copied.json() == {"thread_id": "t2", "copied": 3}
    assert [c["checkpoint_id"] for c in listed(bot, thread_id="t2")] == ["0002", "0001", "0000"]
    assert listed(bot, thread_id="t2", limit="1")[0]["pending_writes"][0]["channel"] == "a"

    assert bot.post("/api/v1/langgraph/prune", {"thread_ids": ["t2"]}, format="json").json() == {"deleted": 2}
    kept, = listed(bot, thread_id="t2")
    assert kept["checkpoint_id"] == "0002" and values_of(kept) == {"a": b"v2"} and len(kept["pending_writes"]) == 1
    assert GraphBlob.objects.filter(session__session_id="t2").count() == 1  # values only old checkpoints named are gone

    assert bot.post("/api/v1/langgraph/runs/delete", {"run_ids": ["run-1", "nobody"]}, format="json").json() == {"deleted": 1}
    assert [c["checkpoint_id"] for c in listed(bot, thread_id="t1")] == ["0002", "0000"]

    assert bot.delete(f"{THREADS}/t1").status_code == 204
    assert listed(bot, thread_id="t1") == [] and not GraphWrite.objects.filter(session__session_id="t1").exists()
    assert Session.objects.filter(session_id="t1").exists()  # the session (messages, timeline) stays
    assert_error(bot.post(f"{THREADS}/t1/copy", {"target_thread_id": "t3"}, format="json"), 404, "THREAD_NOT_FOUND")
    assert not Session.objects.filter(session_id="t3").exists()


def test_it_shows_an_agents_threads_to_that_agent_only(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    put(bot, "t1", "0001", metadata={"run_id": "r1"})
    assert_error(api_client().get(LIST), 401, "UNAUTHENTICATED")
    assert_error(api_client(actors.owner_key).get(LIST), 403, "AGENT_KEY_REQUIRED")
    for key in (actors.peer_key, actors.loner_key, actors.spy_key):  # same store, other store, other workspace
        other = api_client(key)
        assert listed(other, thread_id="t1") == [] and listed(other) == []
        assert_error(other.delete(f"{THREADS}/t1"), 404, "THREAD_NOT_FOUND")
        assert_error(other.post(f"{THREADS}/t1/copy", {"target_thread_id": "mine"}, format="json"), 404, "THREAD_NOT_FOUND")
        assert other.post("/api/v1/langgraph/prune", {"thread_ids": ["t1"], "strategy": "delete"}, format="json").json() == {"deleted": 0}
        assert other.post("/api/v1/langgraph/runs/delete", {"run_ids": ["r1"]}, format="json").json() == {"deleted": 0}
    assert_error(put(api_client(actors.peer_key), "t1", "0002"), 409, "SESSION_ID_TAKEN")
    assert GraphCheckpoint.objects.count() == 1 and listed(bot, thread_id="t1")[0]["checkpoint_id"] == "0001"


@pytest.mark.parametrize("body", [
    {"checkpoint_id": "c", "checkpoint": {"type": "msgpack", "data": "not base64!"}},
    {"checkpoint_id": "c", "checkpoint": {"type": "msgpack", "data": ""}, "blobs": [{"channel": "a", "version": "1", "type": "t"}]},
    {"checkpoint_id": "c", "checkpoint": {"type": "msgpack", "data": ""}, "metadata": "not an object"},
    {"checkpoint_id": "c", "checkpoint": {"type": "msgpack", "data": ""}, "surprise": 1},
    {"checkpoint": {"type": "msgpack", "data": ""}},
])
def test_it_refuses_bad_input_and_changes_nothing(actors: Actors, body: dict[str, Any]) -> None:
    bot = api_client(actors.bot_key)
    assert_error(bot.post(LIST, {"thread_id": "t1", "user_id": "u1", **body}, format="json"), 400, "VALIDATION_ERROR")
    assert not Session.objects.filter(session_id="t1").exists() and not GraphCheckpoint.objects.exists()


def test_it_refuses_bad_ids_queries_and_strategies(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    assert_error(put(bot, "t1", "c", user_id=None), 400, "USER_ID_REQUIRED")
    assert_error(put(bot, "bad thread", "c"), 400, "VALIDATION_ERROR")
    assert_error(bot.get(LIST, {"filter": "[1]"}), 400, "VALIDATION_ERROR")
    assert_error(bot.get(LIST, {"cursor": "nonsense"}), 400, "INVALID_CURSOR")
    assert_error(bot.post("/api/v1/langgraph/prune", {"thread_ids": ["t1"], "strategy": "all"}, format="json"), 400, "VALIDATION_ERROR")
    assert_error(writes(bot, "t1", "c", "task", [(0, "x", b"")]), 400, "USER_ID_REQUIRED")
    assert not Session.objects.filter(session_id="t1").exists()


def test_a_purge_of_the_user_erases_their_threads(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    put(bot, "t1", "0001", values={"a": b"secret"})
    writes(bot, "t1", "0001", "task", [(0, "a", b"secret")])
    put(bot, "t2", "0001", user_id="u2")
    purge = api_client(actors.owner_key).post("/api/v1/purges", {"user_id": "u1"}, format="json")
    assert purge.status_code == 202, purge.content
    purge_run(purge_id=purge.json()["id"])
    assert listed(bot, thread_id="t1") == []
    assert not GraphBlob.objects.filter(user_id="u1").exists() and not GraphWrite.objects.filter(user_id="u1").exists()
    assert [c["thread_id"] for c in listed(bot)] == ["t2"]


def test_retention_keeps_the_newest_checkpoints_of_each_namespace(actors: Actors) -> None:
    from memoryhub.compliance.retention import retention_enforce

    bot = api_client(actors.bot_key)
    for i in range(4):
        put(bot, "t1", f"000{i}", values={"a": f"v{i}".encode()}, versions={"a": str(i)})
    put(bot, "t1", "0009", ns="child:1")
    api_client(actors.owner_key).put("/api/v1/retention", {"policies": {"checkpoints": 2}}, format="json")
    retention_enforce(workspace=actors.workspace)
    assert [c["checkpoint_id"] for c in listed(bot, thread_id="t1")] == ["0009", "0003", "0002"]
    assert sorted(GraphBlob.objects.values_list("version", flat=True)) == ["2", "3"]


def test_a_suspended_session_stops_the_graph_until_reactivated(actors: Actors) -> None:
    from django.utils import timezone

    bot = api_client(actors.bot_key)
    put(bot, "t1", "0001")
    Session.objects.filter(session_id="t1").update(suspended_at=timezone.now(), suspended_by="operator:owner")
    assert_error(put(bot, "t1", "0002", parent="0001"), 409, "SESSION_SUSPENDED")
    assert_error(writes(bot, "t1", "0001", "task", [(0, "x", b"")]), 409, "SESSION_SUSPENDED")
    assert [c["checkpoint_id"] for c in listed(bot, thread_id="t1")] == ["0001"]  # reads go on
