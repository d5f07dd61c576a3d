from __future__ import annotations

from memoryhub.conversations.models import Summary
from tests.conftest import Actors, api_client, assert_error

CALL = {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}


def seed(actors: Actors) -> str:
    client = api_client(actors.bot_key)
    client.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    messages = [
        {"role": "system", "content": "You are a travel assistant."},
        {"role": "user", "content": "Hi, I'm Priya. I want to visit Lisbon in May.", "pinned": True},
        {"role": "assistant", "content": "Great choice. How many nights?"},
        {"role": "user", "content": "We decided on 5 nights, budget 1200 euros."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "What's the weather like?"},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "content": "Sunny, 24C", "tool_call_id": "call_1"},
        {"role": "assistant", "content": "Sunny and 24C."},
        {"role": "user", "content": "Book the hotel next."},
    ]
    client.post("/api/v1/sessions/s1/messages", {"messages": messages}, format="json")
    return "/api/v1/sessions/s1/context"


def test_it_windows_and_keeps_system_and_pinned(actors: Actors) -> None:
    url = seed(actors)
    body = api_client(actors.bot_key).get(url, {"max_messages": 5}).json()
    # System and pinned take 2 of 5; the call/result pair (7, 8) does not fit in the
    # one slot left after 9 and 10, so the window stops rather than split it.
    assert [m["seq"] for m in body["messages"]] == [1, 2, 9, 10]
    assert body["messages"][0]["role"] == "system" and body["messages"][1]["pinned"] is True


def test_it_never_opens_on_an_orphan_tool_result(actors: Actors) -> None:
    url = seed(actors)
    for n in range(0, 11):
        messages = api_client(actors.bot_key).get(url, {"max_messages": n, "strategy": "truncate"}).json()["messages"]
        seqs = [m["seq"] for m in messages]
        assert (8 in seqs) == (7 in seqs), (n, seqs)


def test_it_honours_a_token_budget(actors: Actors) -> None:
    url = seed(actors)
    small = api_client(actors.bot_key).get(url, {"max_messages": 100, "max_tokens": 40}).json()["messages"]
    full = api_client(actors.bot_key).get(url, {"max_messages": 100}).json()["messages"]
    assert len(small) < len(full) == 10


def test_it_summarises_the_oldest_messages_once(actors: Actors) -> None:
    url = seed(actors)
    client = api_client(actors.bot_key)
    body = client.get(url, {"strategy": "summarize", "summary_ratio": 0.5, "preserve_recent": 2, "max_messages": 100}).json()
    summary_messages = [m for m in body["messages"] if m["summary"]]
    assert len(summary_messages) == 1
    text = body["summary"]["text"]
    assert "5 nights" in text and "1200" in text  # numbers and decisions survive
    assert body["messages"][0]["role"] == "system" and any(m["pinned"] for m in body["messages"])
    assert body["messages"][-1]["content"] == "Book the hotel next."
    client.get(url, {"strategy": "summarize", "summary_ratio": 0.5, "preserve_recent": 2, "max_messages": 100})
    assert Summary.objects.count() == 1
    assert len(client.get("/api/v1/sessions/s1/messages").json()["results"]) == 10  # never destructive


def test_it_refuses_bad_parameters(actors: Actors) -> None:
    url = seed(actors)
    client = api_client(actors.bot_key)
    for params in ({"max_messages": -1}, {"max_messages": 10**9}, {"strategy": "magic"}, {"pin_first": "x"}, {"colour": "red"}):
        assert_error(client.get(url, params), 400, "VALIDATION_ERROR")
    assert_error(api_client(actors.spy_key).get(url), 404, "SESSION_NOT_FOUND")


def test_it_reads_only_the_window_but_keeps_old_pinned_units(actors: Actors) -> None:
    client = api_client(actors.bot_key)
    client.post("/api/v1/sessions", {"session_id": "long", "user_id": "u1"}, format="json")
    old_call = {"id": "old", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    client.post("/api/v1/sessions/long/messages", {"messages": [
        {"role": "system", "content": "rules"},
        {"role": "assistant", "content": "", "tool_calls": [old_call]},
        {"role": "tool", "content": "important result", "tool_call_id": "old", "pinned": True},
    ] + [{"role": "user", "content": f"chatter {i}"} for i in range(300)]}, format="json")
    seqs = [m["seq"] for m in client.get("/api/v1/sessions/long/context", {"max_messages": 10}).json()["messages"]]
    assert seqs[:3] == [1, 2, 3]  # the system prompt, and the pinned result with its call
    assert seqs[3:] == list(range(297, 304))


def test_grounding_appends_the_facts_the_latest_user_message_names(actors: Actors) -> None:
    url = seed(actors)  # the latest user message: "Book the hotel next."
    client = api_client(actors.bot_key)
    for subject, predicate, obj in [("hotel", "booked for", "May 3"), ("Priya", "prefers", "aisle seats"), ("hotel", "in", "Alfama")]:
        client.post("/api/v1/graph/edges", {"subject": subject, "predicate": predicate, "object": obj, "user_id": "u1"}, format="json")
    client.post("/api/v1/graph/edges", {"subject": "hotel", "predicate": "costs", "object": "90 euros", "user_id": "u2"}, format="json")
    plain = client.get(url).json()["messages"]
    grounded = client.get(url, {"grounding": 8}).json()["messages"]
    assert grounded[:-1] == plain and not any(m["grounding"] for m in plain)
    last = grounded[-1]
    assert (last["role"], last["grounding"], last["seq"], last["summary"]) == ("system", True, None, False)
    assert "- hotel booked for May 3" in last["content"] and "- hotel in Alfama" in last["content"]
    assert "Priya" not in last["content"] and "90 euros" not in last["content"]  # not named; another user's
    assert client.get(url, {"grounding": 1}).json()["messages"][-1]["content"].count("\n- ") == 1
    client.post("/api/v1/sessions/s1/messages", {"messages": [{"role": "user", "content": "Thanks!"}]}, format="json")
    assert not any(m["grounding"] for m in client.get(url, {"grounding": 8}).json()["messages"])
    assert_error(client.get(url, {"grounding": 51}), 400, "VALIDATION_ERROR")
