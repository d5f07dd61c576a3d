"""Where a memory came from (docs/memory.md, "Provenance and revisions"): an agent names
the message, tool call or episode it learnt something from; the hub checks it is the
agent's own, in one query per kind for a whole batch, and says so on every read."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext

from memoryhub.conversations.models import Message
from memoryhub.episodes.models import Episode
from memoryhub.memory.models import MemoryEntry
from memoryhub.tools.models import ToolCall
from tests.conftest import Actors, api_client, assert_error


def seed(key: str, session_id: str = "s1") -> int:
    """A session of the agent holding `key` with two messages, a tool call and an episode; the episode's id."""
    client = api_client(key)
    client.post("/api/v1/sessions", {"session_id": session_id, "user_id": "u1"}, format="json")
    client.post(f"/api/v1/sessions/{session_id}/messages", {"messages": [
        {"role": "user", "content": "I moved to Lisbon."}, {"role": "assistant", "content": "Noted."},
    ]}, format="json")
    client.post(f"/api/v1/sessions/{session_id}/tool-calls", {"tool": "crm.lookup", "call_id": "c-1", "result": "tier: gold"}, format="json")
    episode = client.post("/api/v1/episodes", {"user_id": "u1", "task": "update address", "outcome": "success", "narrative": "Done."},
                          format="json")
    return episode.json()["id"]


def create(key: str, source: Any, **fields: Any) -> Any:
    return api_client(key).post("/api/v1/memories", {"content": "lives in Lisbon", "user_id": "u1", "source": source, **fields}, format="json")


def test_it_records_the_message_tool_call_or_episode_a_memory_came_from(actors: Actors) -> None:
    episode_id = seed(actors.bot_key)
    for source, expected in (
        ({"session_id": "s1", "seq": 1}, {"kind": "message", "session_id": "s1", "seq": 1}),
        ({"session_id": "s1", "call_id": "c-1"}, {"kind": "tool_call", "session_id": "s1", "call_id": "c-1"}),
        ({"episode_id": episode_id}, {"kind": "episode", "episode_id": episode_id}),
    ):
        created = create(actors.bot_key, source)
        assert created.status_code == 201, created.content
        assert created.json()["source"] == expected
        assert api_client(actors.owner_key).get(f"/api/v1/memories/{created.json()['id']}").json()["source"] == expected
    plain = api_client(actors.bot_key).post("/api/v1/memories", {"content": "x", "user_id": "u1"}, format="json").json()
    assert plain["source"] == {"kind": "api"}


def test_it_refuses_a_source_that_is_not_the_agents_own(actors: Actors) -> None:
    seed(actors.bot_key)
    peer_episode = seed(actors.peer_key, "p1")
    seed(actors.spy_key, "g1")
    entries = MemoryEntry.objects.count()  # the episodes' own
    for source in (
        {"session_id": "s1", "seq": 9},  # no such message
        {"session_id": "p1", "seq": 1},  # another agent's session
        {"session_id": "g1", "seq": 1},  # another workspace's
        {"session_id": "s1", "call_id": "c-9"},
        {"session_id": "p1", "call_id": "c-1"},
        {"episode_id": peer_episode},
        {"episode_id": 10**12},
    ):
        error = assert_error(create(actors.bot_key, source), 422, "SOURCE_NOT_FOUND")
        assert error["details"]["kind"] in ("message", "tool_call", "episode")
    for source in ({"session_id": "s1"}, {"seq": 1}, {"session_id": "s1", "seq": 1, "call_id": "c-1"}, {"episode_id": 1, "seq": 1}, {}, "s1"):
        assert create(actors.bot_key, source).status_code == 400, source
    assert MemoryEntry.objects.count() == entries


def test_a_batch_checks_its_sources_in_one_query_per_kind_all_or_nothing(actors: Actors) -> None:
    episode_id = seed(actors.bot_key)
    client = api_client(actors.bot_key)
    items = [{"content": f"fact {n}", "user_id": "u1", "source": {"session_id": "s1", "seq": 1 + n % 2}} for n in range(40)]
    items += [{"content": "from the lookup", "user_id": "u1", "source": {"session_id": "s1", "call_id": "c-1"}},
              {"content": "from the episode", "user_id": "u1", "source": {"episode_id": episode_id}}]
    with CaptureQueriesContext(connection) as queries:
        written = client.post("/api/v1/memories/batch", {"items": items}, format="json")
    assert written.status_code == 201, written.content
    assert [i["source"]["kind"] for i in written.json()["items"]] == ["message"] * 40 + ["tool_call", "episode"]
    tables = [f'FROM "{model._meta.db_table}"' for model in (Message, ToolCall, Episode)]
    source_queries = [q for q in queries.captured_queries if any(table in q["sql"] for table in tables)]
    assert len(source_queries) == 3, [q["sql"][:120] for q in source_queries]

    refused = client.post("/api/v1/memories/batch", {"items": [*items[:5], {"content": "bad", "user_id": "u1", "source": {"session_id": "s1", "seq": 99}}]},
                          format="json")
    assert_error(refused, 422, "SOURCE_NOT_FOUND")
    assert MemoryEntry.objects.filter(content__startswith="fact ").count() == 40
