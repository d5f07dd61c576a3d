from __future__ import annotations

from memoryhub.conversations.models import Message
from memoryhub.memory.models import MemoryEntry
from tests.conftest import Actors, api_client, remember


def test_messages_and_memories_are_kept_as_sent_by_default(actors: Actors) -> None:
    remember(actors.bot_key, "reach me at ann@example.com")
    assert MemoryEntry.objects.get().content == "reach me at ann@example.com"


def test_a_workspace_can_redact_messages_and_memories(actors: Actors) -> None:
    actors.workspace.redact_messages = True
    actors.workspace.redact_memories = True
    actors.workspace.save()
    client = api_client(actors.bot_key)
    client.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    client.post("/api/v1/sessions/s1/messages", {"role": "user", "content": "my card is 4111 1111 1111 1111"}, format="json")
    entry = remember(actors.bot_key, "reach me at ann@example.com")
    assert Message.objects.get().content.startswith("my card is [CARD_")
    assert entry["content"].startswith("reach me at [EMAIL_") and "ann@" not in MemoryEntry.objects.get().content
    # The other workspace is untouched.
    remember(actors.spy_key, "globex: bob@example.com")
    assert MemoryEntry.objects.get(workspace=actors.foreign_workspace).content == "globex: bob@example.com"


def test_admins_switch_it_in_the_console(actors: Actors, client: object) -> None:
    client.force_login(actors.teammate.user)
    assert client.post("/settings/redaction/", {"redact_messages": "on"}).status_code == 403
    client.force_login(actors.owner.user)
    assert client.post("/settings/redaction/", {"redact_messages": "on"}).status_code == 302
    actors.workspace.refresh_from_db()
    assert (actors.workspace.redact_messages, actors.workspace.redact_memories) == (True, False)
    assert "Redact messages" in client.get("/keys/").content.decode()


def test_edits_are_redacted_like_writes(actors: Actors) -> None:
    # Finding 3 of the security review: PATCH and message edits stored text as sent.
    actors.workspace.redact_messages = True
    actors.workspace.redact_memories = True
    actors.workspace.save()
    client = api_client(actors.bot_key)
    client.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    client.post("/api/v1/sessions/s1/messages", {"role": "user", "content": "hello"}, format="json")
    edited = client.patch("/api/v1/sessions/s1/messages/1", {"content": "call me on ann@example.com"}, format="json")
    assert edited.status_code == 200 and "ann@" not in edited.json()["content"]
    assert "ann@" not in Message.objects.get().content
    entry = remember(actors.bot_key, "nothing secret")
    patched = client.patch(f"/api/v1/memories/{entry['id']}", {"content": "card 4111 1111 1111 1111"}, format="json")
    assert patched.status_code == 200 and "4111" not in patched.json()["content"]
    assert "4111" not in MemoryEntry.objects.get().content


def test_a_facts_names_are_redacted_like_its_content(actors: Actors) -> None:
    # A fact's subject and object are the graph's entities (docs/graph.md): shown by neighbours and grounding.
    actors.workspace.redact_memories = True
    actors.workspace.save()
    client = api_client(actors.bot_key)
    written = client.post("/api/v1/graph/edges", {"subject": "Zoe", "predicate": "email", "object": "zoe@example.com", "user_id": "u1"},
                          format="json").json()
    assert "zoe@" not in written["content"] and written["data"]["object"].startswith("[EMAIL_")
    assert "zoe@" not in str(MemoryEntry.objects.get().data)
    found = client.get("/api/v1/graph/neighbors", {"entity": "Zoe"}).json()["results"]
    assert [e["object"] for e in found] == [written["data"]["object"]]
    patched = client.patch(f"/api/v1/memories/{written['id']}", {"data": {"subject": "Zoe", "predicate": "email", "object": "z@example.org"}},
                           format="json")
    assert patched.status_code == 200 and "z@example.org" not in str(MemoryEntry.objects.get(pk=written["id"]).data)


def test_a_framework_item_and_tool_call_arguments_are_redacted_like_the_content(actors: Actors) -> None:
    actors.workspace.redact_messages = True
    actors.workspace.save()
    client = api_client(actors.bot_key)
    client.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    call = {"id": "call_1", "type": "function", "function": {"name": "email", "arguments": "{\"to\": \"ann@example.com\"}"}}
    client.post("/api/v1/sessions/s1/messages", {"messages": [
        {"role": "user", "content": "mail ann@example.com", "item": {"role": "user", "content": "mail ann@example.com"}},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": "sent", "tool_call_id": "call_1"},
    ]}, format="json")
    user, assistant, _ = client.get("/api/v1/sessions/s1/messages").json()["results"]
    assert list(user["item"]) == ["role", "content"] and user["item"]["content"].startswith("mail [EMAIL_")
    assert assistant["tool_calls"][0]["id"] == "call_1" and "ann@" not in assistant["tool_calls"][0]["function"]["arguments"]
    assert not Message.objects.filter(item__contains="ann@").exists()


def test_a_sessions_state_is_redacted_like_its_messages(actors: Actors) -> None:
    actors.workspace.redact_messages = True
    actors.workspace.save()
    client = api_client(actors.bot_key)
    client.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1", "state": {"user:email": "ann@example.com"}}, format="json")
    client.patch("/api/v1/sessions/s1", {"state": {"phone": "call +44 20 7946 0958"}}, format="json")
    client.post("/api/v1/sessions/s1/messages", {"messages": [{"role": "user", "content": "hi"}], "session": {"state": {"card": "4111 1111 1111 1111"}}},
                format="json")
    state = client.get("/api/v1/sessions/s1").json()["state"]
    assert set(state) == {"user:email", "phone", "card"}, state
    assert state["user:email"].startswith("[EMAIL_") and "7946" not in state["phone"] and state["card"].startswith("[CARD_")
