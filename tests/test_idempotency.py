"""Idempotency-Key (docs/api.md, "Conventions"): a retry with the same key and body gets
the first answer and creates nothing; the same key with another body is 422; keys are
per credential, kept MEMORYHUB_IDEMPOTENCY_TTL_HOURS, and concurrent retries of one key
produce one effect."""

from __future__ import annotations

import threading
from datetime import timedelta

import httpx
from django.test import override_settings
from django.utils import timezone

from memoryhub.checkpoints.models import Checkpoint
from memoryhub.compliance.models import PurgeRequest
from memoryhub.compliance.services import purge_counts
from memoryhub.conversations.models import Message
from memoryhub.core.idempotency import idempotency_sweep
from memoryhub.core.models import IdempotencyRecord
from memoryhub.memory.models import MemoryEntry
from tests.conftest import Actors, LiveHub, api_client, assert_error, purge_finished


def post(key: str, path: str, body: dict, idempotency_key: str | None) -> object:
    headers = {"HTTP_IDEMPOTENCY_KEY": idempotency_key} if idempotency_key is not None else {}
    return api_client(key).post(path, body, format="json", **headers)


def test_it_answers_a_retry_with_the_first_answer_and_creates_nothing(actors: Actors) -> None:
    first = post(actors.bot_key, "/api/v1/memories", {"content": "likes tea", "user_id": "u1"}, "k-1")
    retry = post(actors.bot_key, "/api/v1/memories", {"user_id": "u1", "content": "likes tea"}, "k-1")  # key order is no difference
    assert first.status_code == retry.status_code == 201
    assert retry.json() == first.json() and retry["Idempotent-Replayed"] == "true"
    assert MemoryEntry.objects.count() == 1
    # Without a key, the same body is a new memory.
    assert post(actors.bot_key, "/api/v1/memories", {"content": "likes tea", "user_id": "u1"}, None).status_code == 201
    assert MemoryEntry.objects.count() == 2


def test_it_keeps_conflicting_saves_from_becoming_duplicates(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    save = {"expected_version": 0, "state": {"step": 1}}
    assert post(actors.bot_key, "/api/v1/sessions/s1/checkpoints", save, "save-1").status_code == 201
    # A retry of a save that did land is its 201, not a 409 VERSION_CONFLICT.
    assert post(actors.bot_key, "/api/v1/sessions/s1/checkpoints", save, "save-1").json()["version"] == 1
    message = {"role": "user", "content": "hello"}
    assert post(actors.bot_key, "/api/v1/sessions/s1/messages", message, "m-1").json()["seq"] == 1
    assert post(actors.bot_key, "/api/v1/sessions/s1/messages", message, "m-1").json()["seq"] == 1
    assert Checkpoint.objects.count() == 1 and Message.objects.count() == 1


def test_it_refuses_a_key_reused_for_another_request(actors: Actors) -> None:
    post(actors.bot_key, "/api/v1/memories", {"content": "first", "user_id": "u1"}, "k-1")
    assert_error(post(actors.bot_key, "/api/v1/memories", {"content": "second", "user_id": "u1"}, "k-1"), 422, "IDEMPOTENCY_KEY_REUSED")
    assert_error(post(actors.bot_key, "/api/v1/memories/batch", {"items": [{"content": "x", "user_id": "u1"}]}, "k-1"), 422, "IDEMPOTENCY_KEY_REUSED")
    assert list(MemoryEntry.objects.values_list("content", flat=True)) == ["first"]


def test_keys_are_per_credential_and_a_refused_request_keeps_its_key_free(actors: Actors) -> None:
    assert post(actors.bot_key, "/api/v1/memories", {"content": "bot's", "user_id": "u1"}, "shared").status_code == 201
    peer = post(actors.peer_key, "/api/v1/memories", {"content": "bot's", "user_id": "u1"}, "shared")
    assert peer.status_code == 201 and "Idempotent-Replayed" not in peer and peer.json()["agent"] == "peer"
    assert_error(post(actors.bot_key, "/api/v1/memories", {"content": "", "user_id": "u1"}, "fix-me"), 400, "VALIDATION_ERROR")
    assert post(actors.bot_key, "/api/v1/memories", {"content": "fixed", "user_id": "u1"}, "fix-me").status_code == 201
    assert_error(post(actors.bot_key, "/api/v1/memories", {"content": "x", "user_id": "u1"}, "é" * 3), 400, "INVALID_IDEMPOTENCY_KEY")
    assert_error(post(actors.bot_key, "/api/v1/memories", {"content": "x", "user_id": "u1"}, "k" * 256), 400, "INVALID_IDEMPOTENCY_KEY")
    assert MemoryEntry.objects.count() == 3


def test_a_key_is_kept_for_the_ttl_then_swept(actors: Actors) -> None:
    post(actors.bot_key, "/api/v1/memories", {"content": "old", "user_id": "u1"}, "k-old")
    IdempotencyRecord.objects.update(created_at=timezone.now() - timedelta(hours=25))
    assert "Idempotent-Replayed" not in post(actors.bot_key, "/api/v1/memories", {"content": "old", "user_id": "u1"}, "k-old")
    assert MemoryEntry.objects.count() == 2
    IdempotencyRecord.objects.update(created_at=timezone.now() - timedelta(hours=3))
    with override_settings(MEMORYHUB_IDEMPOTENCY_TTL_HOURS=2):
        assert idempotency_sweep() == 1
    assert not IdempotencyRecord.objects.exists()


def test_a_purge_takes_the_answers_about_its_user(actors: Actors, transactional_db: None) -> None:
    post(actors.bot_key, "/api/v1/memories", {"content": "gone's secret", "user_id": "gone"}, "k-gone")
    post(actors.bot_key, "/api/v1/memories/batch", {"items": [{"content": "a", "user_id": "gone"}, {"content": "b", "user_id": "stays"}]}, "k-both")
    post(actors.bot_key, "/api/v1/memories", {"content": "stays'", "user_id": "stays"}, "k-stays")
    # A read by POST names the user only in what it found: the graph's facts about them.
    post(actors.bot_key, "/api/v1/graph/edges", {"subject": "Gone", "predicate": "likes", "object": "jazz", "user_id": "gone"}, "k-edge")
    post(actors.bot_key, "/api/v1/graph/grounding", {"text": "What does Gone like?"}, "k-grounding")
    assert purge_counts(workspace_id=actors.workspace.pk, user_id="gone")["core.IdempotencyRecord"] == 4
    purge = api_client(actors.owner_key).post("/api/v1/purges", {"user_id": "gone"}, format="json").json()
    assert purge_finished(purge["id"]).status == "done"
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["k-stays"]
    assert all(b"gone" not in bytes(body) for body in IdempotencyRecord.objects.values_list("body", flat=True))


def test_concurrent_retries_of_one_key_make_one_effect(actors: Actors, live_hub: LiveHub) -> None:
    headers = {"Authorization": f"Bearer {actors.bot_key}", "Idempotency-Key": "race-1"}
    httpx.post(f"{live_hub.url}/api/v1/sessions", json={"session_id": "s1", "user_id": "u1"}, headers={"Authorization": headers["Authorization"]})
    answers: list[httpx.Response] = []
    start = threading.Barrier(8)

    def save() -> None:
        start.wait()
        body = {"expected_version": 0, "state": {"n": 1}}
        answers.append(httpx.post(f"{live_hub.url}/api/v1/sessions/s1/checkpoints", json=body, headers=headers, timeout=30))

    threads = [threading.Thread(target=save) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [a.status_code for a in answers] == [201] * 8, [a.text for a in answers]
    assert {a.json()["version"] for a in answers} == {1}
    assert sum(a.headers.get("Idempotent-Replayed") == "true" for a in answers) == 7
    assert Checkpoint.objects.count() == 1


def test_no_answer_about_a_user_is_kept_while_their_purge_runs(actors: Actors, transactional_db: None) -> None:
    post(actors.bot_key, "/api/v1/memories", {"content": "about to go", "user_id": "gone"}, None)
    PurgeRequest.objects.create(workspace=actors.workspace, user_hash="h" * 64, pending_user_id="gone")  # live, not run
    search = {"query": "about to go", "user_id": "gone", "mode": "keyword"}
    assert_error(post(actors.bot_key, "/api/v1/memories/search", search, "k-search"), 409, "PURGE_IN_PROGRESS")
    assert not IdempotencyRecord.objects.exists()
    assert post(actors.bot_key, "/api/v1/memories/search", {**search, "user_id": "stays"}, "k-other").status_code == 200
