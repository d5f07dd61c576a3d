"""Odd input is a 4xx in the contract's envelope and writes nothing, never a 500: a
corpus of what agents and fuzzers send (NUL characters, lone surrogates, deep nesting,
numbers beyond a column or 64 bits, NaN, blank strings, odd path values, wrong content
types), sent to every endpoint that takes input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection

from memoryhub.core.registry import own_models
from tests.conftest import Actors, api_client

CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
EPISODE = {"user_id": "u1", "task": "t", "outcome": "success", "narrative": "Done."}
# Every endpoint that takes a body, with a body it accepts.
ENDPOINTS: list[tuple[str, str, dict[str, Any]]] = [
    ("post", "/api/v1/memories", {"content": "c", "user_id": "u1", "metadata": {"k": "v"}, "tags": ["t"], "ttl_seconds": 60}),
    ("post", "/api/v1/memories", {"content": "c", "user_id": "u1", "memory_type": "factual", "key": "k1",
                                  "data": {"subject": "s", "predicate": "p", "object": "o", "confidence": 0.9}}),
    ("post", "/api/v1/memories/batch", {"items": [{"content": "c", "user_id": "u1"}]}),
    ("post", "/api/v1/memories/search", {"query": "q", "user_id": "u1", "max_results": 5, "metadata": {"k": "v"}}),
    ("put", "/api/v1/memories/items", {"namespace": ["a", "b"], "key": "k", "value": {"t": "x"}, "ttl_seconds": 60, "user_id": "u1"}),
    ("post", "/api/v1/memories/items/search", {"namespace_prefix": ["a"], "query": "q", "filter": {"t": {"$gt": 1}}, "limit": 5}),
    ("post", "/api/v1/sessions", {"session_id": "s2", "user_id": "u1", "metadata": {"k": "v"}}),
    ("post", "/api/v1/sessions/s1/messages", {"role": "user", "content": "hi"}),
    ("post", "/api/v1/sessions/s1/messages", {"messages": [{"role": "assistant", "content": "", "tool_calls": [CALL]}]}),
    ("patch", "/api/v1/sessions/s1/messages/1", {"content": "edited"}),
    ("post", "/api/v1/sessions/s1/branch", {"new_session_id": "s3", "upto_seq": 1, "label": "b"}),
    ("put", "/api/v1/sessions/s1/plan", {"goal": "g", "steps": [{"step_id": "a", "description": "d"}]}),
    ("patch", "/api/v1/sessions/s1/plan/steps/a", {"status": "running", "summary": "s"}),
    ("post", "/api/v1/sessions/s1/tool-calls", {"tool": "t", "args": {"q": 1}, "result": "r", "duration_ms": 5, "cost": 0.1}),
    ("post", "/api/v1/sessions/s1/checkpoints", {"expected_version": 1, "state": {"k": "v"}, "label": "l", "current_step": "a"}),
    ("post", "/api/v1/sessions/s1/fork", {"from_version": 1, "new_session_id": "s4"}),
    ("post", "/api/v1/sessions/s1/resume", {"from_version": 1}),
    ("post", "/api/v1/episodes", {**EPISODE, "elapsed_ms": 5, "tools_used": {"t": 1}, "metadata": {"k": "v"}}),
    ("post", "/api/v1/episodes/similar", {"task": "t", "k": 3}),
    ("post", "/api/v1/langgraph/checkpoints", {
        "thread_id": "t1", "user_id": "u1", "checkpoint_ns": "n", "checkpoint_id": "c1", "checkpoint": {"type": "msgpack", "data": "eA=="},
        "metadata": {"step": 1}, "channel_versions": {"a": "1"}, "blobs": [{"channel": "a", "version": "1", "type": "msgpack", "data": "eA=="}],
    }),
    ("post", "/api/v1/langgraph/writes", {
        "thread_id": "t1", "user_id": "u1", "checkpoint_id": "c1", "task_id": "t", "task_path": "p",
        "writes": [{"idx": 0, "channel": "a", "type": "msgpack", "data": "eA=="}],
    }),
]
BIG = [2**31, 2**40, 2**63, 2**70, -1]
TEXT = ["x\u0000y", "\ud800", "", "   ", "x" * 100_000]


def nested(levels: int) -> Any:
    value: Any = "deep"
    for _ in range(levels):
        value = {"k": value}
    return value


def corpus(body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, value in body.items():
        if isinstance(value, str):
            for odd in TEXT:
                yield f"{name}={odd[:12]!r}", {**body, name: odd}
        elif isinstance(value, bool):
            yield f"{name}=null-ish", {**body, name: "yes"}
        elif isinstance(value, int | float):
            for odd in BIG:
                yield f"{name}={odd}", {**body, name: odd}
        elif isinstance(value, dict):
            yield f"{name} NUL key", {**body, name: {**value, "k\u0000": 1}}
            yield f"{name} surrogate key", {**body, name: {**value, "\udfff": 1}}
            yield f"{name} 1000 levels", {**body, name: nested(1000)}
            yield f"{name} big int", {**body, name: {**value, "n": 2**70}}
            for label, inner in corpus(value):  # a fact's subject, a tool's args…
                yield f"{name}.{label}", {**body, name: inner}
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for label, item in corpus(value[0]):
                yield f"{name}[0].{label}", {**body, name: [item]}
        elif isinstance(value, list):
            yield f"{name} NUL item", {**body, name: ["x\u0000"]}
    yield "extra NUL field", {**body, "\u0000": 1}


def table_counts() -> dict[str, int]:
    with connection.cursor() as cursor:
        counts = {}
        for model in own_models():
            cursor.execute(f'SELECT count(*) FROM "{model._meta.db_table}"')
            counts[model._meta.label] = cursor.fetchone()[0]
    return counts


@pytest.fixture
def bot(actors: Actors) -> Any:
    client = api_client(actors.bot_key)
    client.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    client.post("/api/v1/sessions/s1/messages", {"role": "user", "content": "first"}, format="json")
    client.put("/api/v1/sessions/s1/plan", {"goal": "g", "steps": [{"step_id": "a", "description": "d"}]}, format="json")
    client.post("/api/v1/sessions/s1/checkpoints", {"expected_version": 0, "state": {}}, format="json")
    return client


def refused(response: Any, what: str) -> None:
    assert 400 <= response.status_code < 500, f"{what}: {response.status_code} {response.content[:300]!r}"
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] and isinstance(body["error"]["details"], dict), what


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS, ids=[f"{m} {p}" for m, p, _ in ENDPOINTS])
def test_it_refuses_odd_bodies_and_writes_nothing(bot: Any, method: str, path: str, body: dict[str, Any]) -> None:
    for label, odd in corpus(body):
        before = table_counts()
        # Encoded here: json.dumps escapes lone surrogates (the test client's encoder cannot).
        response = getattr(bot, method)(path, json.dumps(odd), content_type="application/json")
        if response.status_code < 400:
            # A few mutations are harmless for some fields (an empty label, a blank
            # summary); what matters is that none is a 500 and refusals write nothing.
            continue
        refused(response, f"{method} {path} {label}")
        assert table_counts() == before, f"{method} {path} {label} wrote something"


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS[:1] + ENDPOINTS[4:6], ids=["memories", "sessions", "messages"])
def test_it_refuses_bodies_that_are_not_json_objects(bot: Any, method: str, path: str, body: dict[str, Any]) -> None:
    before = table_counts()
    raw_bodies = [b'{"content": NaN}', b'{"content": Infinity}', b'{"n": 1e400}', b"[1, 2]", b'"text"', b"null", b"{", b"\xff\xfe",
                  json.dumps({"content": "\ud800"}).encode(), b'{"a":' + b"[" * 5000 + b"]" * 5000 + b"}"]
    for raw in raw_bodies:
        refused(getattr(bot, method)(path, raw, content_type="application/json"), f"{path} {raw[:20]!r}")
    refused(getattr(bot, method)(path, "content=x", content_type="application/x-www-form-urlencoded"), "form body")
    refused(getattr(bot, method)(path, "x", content_type="text/plain"), "text body")
    assert table_counts() == before


def test_it_refuses_odd_path_and_query_values(bot: Any) -> None:
    for path in ["/api/v1/sessions/s1/checkpoints/²", "/api/v1/sessions/s1/checkpoints/99999999999999999999",
                 "/api/v1/sessions/s1/messages/99999999999999999999999", "/api/v1/purges/99999999999999999999999",
                 "/api/v1/sessions/a%00b", "/api/v1/sessions/a%00b/messages", "/api/v1/memories/not-a-uuid",
                 "/api/v1/tool-calls/x%00/result"]:
        refused(bot.get(path), path)
    refused(bot.patch("/api/v1/sessions/s1/messages/99999999999999999999999", {"content": "x"}, format="json"), "huge seq")
    for query in [{"user_id": "a\u0000"}, {"tags": "a\u0000"}, {"cursor": "\u0000"}, {"limit": "\u0000"}, {"metadata.k\u0000": "v"},
                  {"created_after": "²"}]:
        refused(bot.get("/api/v1/memories", query), str(query))
    refused(bot.get("/api/v1/sessions/s1/context", {"max_messages": "²"}), "context ²")
    refused(bot.get("/api/v1/stats", {"user_id": "\u0000"}), "stats NUL")
    # Bytes that are not UTF-8 (a surrogate's encoding) arrive as replacement characters.
    assert bot.get("/api/v1/memories?user_id=%ED%BF%BF").status_code == 200


def test_it_takes_or_refuses_long_fact_subjects_and_keys_without_a_500(bot: Any) -> None:
    # The documented limits, exact on both sides: a subject or predicate of at most 2,000
    # characters, a key of at most 255.
    for size in (255, 256, 600, 1999, 2000, 2001):
        fact = {"content": "c", "user_id": "u1", "memory_type": "factual", "data": {"subject": "s" * size, "predicate": "p" * size, "object": "o"}}
        response = bot.post("/api/v1/memories", fact, format="json")
        assert response.status_code == (201 if size <= 2000 else 400), (size, response.status_code, response.content[:200])
        keyed = bot.post("/api/v1/memories", {"content": "c", "user_id": "u1", "key": "k" * size}, format="json")
        assert keyed.status_code == (201 if size <= 255 else 400), (size, keyed.status_code, keyed.content[:200])
        for refused_one, limit, code in ((response, 2000, "INVALID_DATA"), (keyed, 255, "VALIDATION_ERROR")):
            if size > limit:
                assert refused_one.json()["error"]["code"] == code, refused_one.content[:200]
    # A long subject and predicate still make one fact: the newer supersedes the older.
    from memoryhub.memory.models import MemoryEntry

    long = {"content": "c", "user_id": "u9", "memory_type": "factual", "data": {"subject": "S" * 1500, "predicate": "P" * 1500, "object": "o1"}}
    assert bot.post("/api/v1/memories", long, format="json").status_code == 201
    assert bot.post("/api/v1/memories", {**long, "data": {**long["data"], "object": "o2"}}, format="json").status_code == 201
    current = MemoryEntry.objects.filter(user_id="u9", invalidated_at__isnull=True)
    assert [entry.data["object"] for entry in current] == ["o2"]
