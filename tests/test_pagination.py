"""Every list answers {"results", "next"} and is read page by page with `cursor` and
`limit` (docs/api.md, "Conventions"): walking a list while items are added between the
pages loses and repeats nothing that was there when the walk began."""

from __future__ import annotations

from collections.abc import Callable
from itertools import count

import pytest

from memoryhub.compliance.models import PurgeRequest
from tests.conftest import Actors, api_client, assert_error

CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


def walk(client: object, url: str, *, add: Callable[[], None], id_of: Callable[[dict], object], **query: object) -> list[object]:
    """Every item of the list, two at a time, adding one item after each page."""
    seen: list[object] = []
    cursor = None
    while True:
        params = {"limit": 2, **query, **({"cursor": cursor} if cursor else {})}
        body = client.get(url, params).json()
        assert set(body) == {"results", "next"}, body
        assert len(body["results"]) <= 2
        seen += [id_of(item) for item in body["results"]]
        cursor = body["next"]
        if cursor is None:
            return seen
        add()


@pytest.fixture
def bot(actors: Actors) -> object:
    client = api_client(actors.bot_key)
    client.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    return client


def check(before: list[object], seen: list[object]) -> None:
    assert len(seen) == len(set(seen)), f"repeated: {seen}"
    assert set(before) <= set(seen), f"lost: {set(before) - set(seen)}"


def test_messages(bot: object) -> None:
    numbers = count()
    add = lambda: bot.post("/api/v1/sessions/s1/messages", {"role": "user", "content": f"m{next(numbers)}"}, format="json")  # noqa: E731
    for _ in range(5):
        add()
    before = [m["seq"] for m in bot.get("/api/v1/sessions/s1/messages").json()["results"]]
    seen = walk(bot, "/api/v1/sessions/s1/messages", add=add, id_of=lambda m: m["seq"])
    check(before, seen)
    assert seen == sorted(seen), "in order"


def test_tool_calls(bot: object) -> None:
    numbers = count()
    add = lambda: bot.post("/api/v1/sessions/s1/tool-calls", {"tool": "t", "result": f"r{next(numbers)}"}, format="json")  # noqa: E731
    for _ in range(5):
        add()
    before = [c["call_id"] for c in bot.get("/api/v1/sessions/s1/tool-calls").json()["results"]]
    check(before, walk(bot, "/api/v1/sessions/s1/tool-calls", add=add, id_of=lambda c: c["call_id"]))


def test_checkpoints_newest_first(bot: object) -> None:
    versions = count()

    def add() -> None:
        bot.post("/api/v1/sessions/s1/checkpoints", {"expected_version": next(versions), "state": {}}, format="json")

    for _ in range(5):
        add()
    seen = walk(bot, "/api/v1/sessions/s1/checkpoints", add=add, id_of=lambda c: c["version"])
    check([5, 4, 3, 2, 1], seen)
    assert seen[:5] == [5, 4, 3, 2, 1]


def test_timeline(bot: object) -> None:
    add = lambda: bot.post("/api/v1/sessions/s1/messages", {"role": "user", "content": "x"}, format="json")  # noqa: E731
    for _ in range(4):
        add()
    before = [e["id"] for e in bot.get("/api/v1/sessions/s1/timeline").json()["results"]]
    check(before, walk(bot, "/api/v1/sessions/s1/timeline", add=add, id_of=lambda e: e["id"]))


def test_episodes(actors: Actors, bot: object) -> None:
    def add() -> None:
        body = {"user_id": "u1", "task": "t", "outcome": "success", "narrative": "Done."}
        assert bot.post("/api/v1/episodes", body, format="json").status_code == 201

    for _ in range(5):
        add()
    before = [e["id"] for e in bot.get("/api/v1/episodes").json()["results"]]
    check(before, walk(bot, "/api/v1/episodes", add=add, id_of=lambda e: e["id"]))
    assert bot.get("/api/v1/episodes", {"outcome": "failure"}).json() == {"results": [], "next": None}
    # An agent lists its own episodes; an operator the workspace's; another workspace none.
    assert api_client(actors.peer_key).get("/api/v1/episodes").json()["results"] == []
    assert len(api_client(actors.owner_key).get("/api/v1/episodes", {"limit": 200}).json()["results"]) == len(before) + 2
    assert api_client(actors.outsider_key).get("/api/v1/episodes").json()["results"] == []
    assert_error(bot.get("/api/v1/episodes", {"outcome": "won"}), 400, "VALIDATION_ERROR")


def test_purges_audit_and_keys(actors: Actors) -> None:
    owner = api_client(actors.owner_key)
    numbers = count()

    def add_purge() -> None:
        purge = owner.post("/api/v1/purges", {"user_id": f"u{next(numbers)}", "dry_run": True}, format="json").json()
        PurgeRequest.objects.filter(pk=purge["id"]).update(dry_run=False, status="done")

    for _ in range(5):
        add_purge()
    before = [p["id"] for p in owner.get("/api/v1/purges").json()["results"]]
    check(before, walk(owner, "/api/v1/purges", add=add_purge, id_of=lambda p: p["id"]))

    add_key = lambda: owner.post("/api/v1/keys", {"agent": f"a{next(numbers)}"}, format="json")  # noqa: E731
    before = [k["prefix"] for k in owner.get("/api/v1/keys").json()["results"]]
    check(before, walk(owner, "/api/v1/keys", add=add_key, id_of=lambda k: k["prefix"]))

    before = [e["id"] for e in owner.get("/api/v1/audit").json()["results"]]
    check(before, walk(owner, "/api/v1/audit", add=add_key, id_of=lambda e: e["id"]))


def test_memories(bot: object) -> None:
    numbers = count()
    add = lambda: bot.post("/api/v1/memories", {"content": f"fact {next(numbers)}", "user_id": "u1"}, format="json")  # noqa: E731
    for _ in range(5):
        add()
    before = [m["id"] for m in bot.get("/api/v1/memories").json()["results"]]
    check(before, walk(bot, "/api/v1/memories", add=add, id_of=lambda m: m["id"]))


def test_langgraph_checkpoints(bot: object) -> None:
    numbers = count(100)

    def add() -> None:
        bot.post("/api/v1/langgraph/checkpoints", {
            "thread_id": "t1", "user_id": "u1", "checkpoint_id": f"cp-{next(numbers)}", "checkpoint": {"type": "msgpack", "data": ""},
        }, format="json")

    for _ in range(5):
        add()
    before = [c["checkpoint_id"] for c in bot.get("/api/v1/langgraph/checkpoints").json()["results"]]
    seen = walk(bot, "/api/v1/langgraph/checkpoints", add=add, id_of=lambda c: c["checkpoint_id"], thread_id="t1")
    check(before, seen)
    assert seen == sorted(seen, reverse=True), "newest first"


def test_it_pages_by_50_by_default_and_refuses_cursors_it_did_not_give(bot: object) -> None:
    bot.post("/api/v1/sessions/s1/messages", {"messages": [{"role": "user", "content": str(n)} for n in range(51)]}, format="json")
    first = bot.get("/api/v1/sessions/s1/messages").json()
    assert len(first["results"]) == 50 and first["next"]
    rest = bot.get("/api/v1/sessions/s1/messages", {"cursor": first["next"], "limit": 1000}).json()
    assert [m["seq"] for m in rest["results"]] == [51] and rest["next"] is None
    for cursor in ("nonsense", "WzFd" + "x", "dHJ1ZQ", "WyJ4Il0", "W3RydWVd"):  # …, "true", ["x"], [true]
        assert_error(bot.get("/api/v1/sessions/s1/messages", {"cursor": cursor}), 400, "INVALID_CURSOR")
    assert_error(bot.get("/api/v1/sessions/s1/messages", {"limit": "ten"}), 400, "VALIDATION_ERROR")
