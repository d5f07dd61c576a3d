from __future__ import annotations

import json
import threading
from typing import Any

from django.db import connection

from memoryhub.conversations.models import ChainSummary, Message, Summary
from memoryhub.core.models import AuditEntry
from memoryhub.timeline.models import Event
from tests.conftest import Actors, api_client, assert_error

CALL = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": \"x\"}"}}


def session(actors: Actors, session_id: str = "s1") -> str:
    api_client(actors.bot_key).post("/api/v1/sessions", {"session_id": session_id, "user_id": "u1"}, format="json")
    return f"/api/v1/sessions/{session_id}/messages"


def test_it_appends_with_increasing_seqs_and_lists_in_order(actors: Actors) -> None:
    url = session(actors)
    client = api_client(actors.bot_key)
    first = client.post(url, {"role": "system", "content": "You are helpful.", "pinned": True}, format="json")
    assert first.status_code == 201 and first.json()["seq"] == 1 and first.json()["role"] == "system"
    batch = client.post(url, {"messages": [
        {"role": "user", "content": "Look this up"},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "content": "result", "tool_call_id": "call_1"},
        {"role": "assistant", "content": "Here it is."},
    ]}, format="json")
    assert batch.status_code == 201 and [m["seq"] for m in batch.json()["messages"]] == [2, 3, 4, 5]
    assert set(batch.json()) == {"messages"}
    history = client.get(url).json()["results"]
    assert [m["seq"] for m in history] == [1, 2, 3, 4, 5]
    assert [m["role"] for m in history] == ["system", "user", "assistant", "tool", "assistant"]
    assert history[0]["pinned"] is True and history[2]["tool_calls"] == [CALL]
    counts = client.get("/api/v1/sessions/s1").json()["counts"]
    assert (counts["messages"], counts["pinned"]) == (5, 1)
    assert counts["by_role"] == {"system": 1, "user": 1, "assistant": 2, "tool": 1}


def test_it_refuses_a_tool_result_without_an_earlier_call(actors: Actors) -> None:
    url = session(actors)
    client = api_client(actors.bot_key)
    assert_error(client.post(url, {"role": "tool", "content": "x", "tool_call_id": "call_9"}, format="json"), 400, "ORPHAN_TOOL_RESULT")
    assert_error(client.post(url, {"role": "tool", "content": "x"}, format="json"), 400, "ORPHAN_TOOL_RESULT")
    # A batch whose last item is bad stores none of its items, and uses up no seq.
    response = client.post(url, {"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "content": "x", "tool_call_id": "nope"}]}, format="json")
    assert_error(response, 400, "ORPHAN_TOOL_RESULT")
    assert Message.objects.count() == 0
    assert client.post(url, {"role": "user", "content": "hi"}, format="json").json()["seq"] == 1


def test_it_validates_messages(actors: Actors) -> None:
    url = session(actors)
    client = api_client(actors.bot_key)
    for body in ({"role": "robot", "content": "x"}, {"role": "user", "content": 5}, {"role": "user", "content": "x" * 32_001},
                 {"role": "user", "content": "x", "mood": "happy"}, {"messages": []}, {"messages": "x"}):
        assert_error(client.post(url, body, format="json"), 400, "VALIDATION_ERROR")
    assert_error(client.post(url, {"role": "assistant", "tool_calls": [{"id": "c"}]}, format="json"), 400, "INVALID_TOOL_CALL")
    assert_error(client.post(url, {"role": "user", "tool_calls": [CALL]}, format="json"), 400, "INVALID_TOOL_CALL")
    assert_error(client.post(url, {"role": "user", "content": "x", "tool_call_id": "call_1"}, format="json"), 400, "INVALID_TOOL_CALL")
    assert Message.objects.count() == 0


def test_it_hides_sessions_of_others(actors: Actors) -> None:
    url = session(actors)
    assert_error(api_client(actors.peer_key).post(url, {"role": "user", "content": "x"}, format="json"), 404, "SESSION_NOT_FOUND")
    assert_error(api_client(actors.spy_key).get(url), 404, "SESSION_NOT_FOUND")
    assert_error(api_client(actors.bot_key).get("/api/v1/sessions/nope/messages"), 404, "SESSION_NOT_FOUND")
    assert Message.objects.count() == 0


def test_it_records_messages_on_the_timeline_without_content(actors: Actors) -> None:
    url = session(actors)
    api_client(actors.bot_key).post(url, {"role": "user", "content": "my card is 4242 4242 4242 4242"}, format="json")
    event = Event.objects.get(kind="message")
    assert event.session_id == "s1" and event.user_id == "u1" and event.ref == {"type": "message", "seq": 1}
    assert "4242" not in event.summary


def test_it_gives_concurrent_writers_unique_gapless_seqs(actors: Actors, transactional_db: None) -> None:
    url = session(actors)
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def writer(n: int) -> None:
        try:
            barrier.wait()
            for i in range(10):
                response = api_client(actors.bot_key).post(url, {"role": "user", "content": f"writer {n} message {i}"}, format="json")
                assert response.status_code == 201, response.content
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    seqs = list(Message.objects.order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, 81))
    assert Message.objects.values("content").distinct().count() == 80


def test_it_deletes_the_last_messages_or_all_and_never_hands_their_seqs_out_again(actors: Actors) -> None:
    url = session(actors)
    client = api_client(actors.bot_key)
    client.post(url, {"messages": [{"role": "user", "content": f"turn {n}"} for n in range(1, 6)]}, format="json")
    client.post("/api/v1/sessions/s1/summarize")
    assert Summary.objects.exists() or ChainSummary.objects.exists()
    deleted = client.delete(f"{url}?last=2")
    assert deleted.status_code == 200 and deleted.json()["deleted"] == 2
    assert [m["content"] for m in deleted.json()["messages"]] == ["turn 4", "turn 5"]  # what went, oldest first
    assert [m["content"] for m in client.get(url).json()["results"]] == ["turn 1", "turn 2", "turn 3"]
    # What summarised a deleted message went with it.
    assert not Summary.objects.filter(to_seq__gte=4).exists() and not ChainSummary.objects.filter(to_seq__gte=4).exists()
    assert client.post(url, {"role": "user", "content": "turn 6"}, format="json").json()["seq"] == 6
    assert Event.objects.filter(kind="edit", session_id="s1", ref__type="messages_deleted").count() == 1
    audit = AuditEntry.objects.get(action="messages_deleted")
    assert audit.details == {"count": 2, "from_seq": 4, "to_seq": 5} and audit.actor == "agent:bot"
    assert client.delete(f"{url}?all=true").json() == {"deleted": 4}
    assert client.get(url).json()["results"] == [] and client.delete(f"{url}?all=true").json() == {"deleted": 0}


def test_deleting_messages_needs_one_clear_request_from_an_agent_that_sees_the_session(actors: Actors) -> None:
    url = session(actors)
    client = api_client(actors.bot_key)
    client.post(url, {"role": "user", "content": "keep me"}, format="json")
    for query in ("", "?last=0", "?last=201", "?last=2&all=true", "?all=false", "?last=x"):
        assert_error(client.delete(f"{url}{query}"), 400, "VALIDATION_ERROR")
    assert_error(api_client(actors.teammate_key).delete(f"{url}?all=true"), 403, "AGENT_KEY_REQUIRED")  # operators read, agents write
    assert_error(api_client(actors.spy_key).delete(f"{url}?all=true"), 404, "SESSION_NOT_FOUND")
    assert [m["content"] for m in client.get(url).json()["results"]] == ["keep me"]


# What the OpenAI Agents SDK keeps of a turn: keys in its order (not sorted), nested parts,
# numbers and text beyond ASCII; the hub's message is its readable side.
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Weigh ½ the options…"}], "encrypted_content": None}
CALL_ITEM = {"type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": "{\"q\": \"x\"}", "id": "fc_1", "status": "completed"}


def test_it_keeps_a_framework_item_exactly_and_reads_newest_first(actors: Actors) -> None:
    url = session(actors)
    client = api_client(actors.bot_key)
    sent = [
        {"role": "user", "content": "Look this up", "item": {"role": "user", "content": "Look this up"}},
        {"role": "assistant", "content": "Weigh ½ the options…", "item": REASONING},
        {"role": "assistant", "content": "", "tool_calls": [CALL], "item": CALL_ITEM},
        {"role": "tool", "content": "42", "tool_call_id": "call_1", "item": {"type": "function_call_output", "call_id": "call_1", "output": "42", "z": 1.5}},
        {"role": "assistant", "content": "Done."},
    ]
    answered = client.post(url, {"messages": sent}, format="json").json()["messages"]
    history = client.get(url).json()["results"]
    for kept in (answered, history):
        # Byte for byte: the same JSON text, key order included.
        assert [json.dumps(m["item"]) for m in kept] == [json.dumps(m.get("item")) for m in sent]
    assert history[-1]["item"] is None and history[2]["tool_calls"] == [CALL]

    newest = client.get(f"{url}?order=desc&limit=2").json()
    assert [m["seq"] for m in newest["results"]] == [5, 4] and newest["next"]
    rest = client.get(f"{url}?order=desc&limit=2&cursor={newest['next']}").json()
    assert [m["seq"] for m in rest["results"]] == [3, 2]
    assert_error(client.get(f"{url}?order=sideways"), 400, "VALIDATION_ERROR")
    # A branch carries the items with the history.
    client.post("/api/v1/sessions/s1/branch", {"new_session_id": "s1-alt", "upto_seq": 2}, format="json")
    assert [m["item"] for m in client.get("/api/v1/sessions/s1-alt/messages").json()["results"]] == [sent[0]["item"], REASONING]


def test_it_refuses_items_it_cannot_keep_and_edits_that_would_part_them_from_their_message(actors: Actors, settings: Any) -> None:
    settings.MEMORYHUB_MAX_ITEM_BYTES = 1000
    url = session(actors)
    client = api_client(actors.bot_key)
    for item in (["a", "list"], "text"):
        assert_error(client.post(url, {"role": "user", "content": "hi", "item": item}, format="json"), 400, "VALIDATION_ERROR")
    big = client.post(url, {"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "hi", "item": {"big": "é" * 500}}]}, format="json")
    assert assert_error(big, 413, "ITEM_TOO_LARGE")["details"]["limit_bytes"] == 1000  # bytes of UTF-8, not characters
    assert Message.objects.count() == 0
    seq = client.post(url, {"role": "user", "content": "hi", "item": {"role": "user", "content": "hi"}}, format="json").json()["seq"]
    assert_error(client.patch(f"{url}/{seq}", {"content": "changed"}, format="json"), 409, "MESSAGE_NOT_EDITABLE")
    assert client.get(url).json()["results"][0]["content"] == "hi"
