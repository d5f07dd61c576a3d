"""A memory's history (docs/memory.md, "Provenance and revisions"): every change is a
revision with who, when and why; revisions are listed newest first, an earlier one can
be made current again, operators correct memories with a reason; purges take them."""

from __future__ import annotations

import threading

from django.db import connection

from memoryhub.core.models import AuditEntry
from memoryhub.memory.models import MemoryRevision
from tests.conftest import Actors, api_client, approver_key, assert_error, purge_finished, remember, search


def revisions(key: str, entry_id: str) -> list[dict]:
    response = api_client(key).get(f"/api/v1/memories/{entry_id}/revisions")
    assert response.status_code == 200, response.content[:300]
    return response.json()["results"]


def test_it_keeps_every_revision_with_who_when_and_why(actors: Actors) -> None:
    entry = remember(actors.bot_key, "the build server is jenkins-01", tags=["infra"])
    assert (entry["revision"], entry["source"], entry["review"]) == (1, {"kind": "api"}, "unreviewed")
    bot = api_client(actors.bot_key)
    bot.patch(f"/api/v1/memories/{entry['id']}", {"content": "the build server is buildkite"}, format="json")
    reviewer = approver_key(actors)
    edited = api_client(reviewer).patch(
        f"/api/v1/memories/{entry['id']}", {"tags": ["infra", "ci"], "reason": "tagged for the CI team"}, format="json",
    )
    assert edited.status_code == 200 and edited.json()["revision"] == 3

    history = revisions(actors.bot_key, entry["id"])
    assert [(r["revision"], r["change"], r["changed_by"]) for r in history] == [
        (3, "operator_edit", "operator:reviewer"), (2, "update", "agent:bot"), (1, "create", "agent:bot"),
    ]
    assert [r["content"] for r in history] == ["the build server is buildkite", "the build server is buildkite", "the build server is jenkins-01"]
    assert (history[0]["tags"], history[0]["reason"]) == (["infra", "ci"], "tagged for the CI team")
    assert history[0]["changed_at"] >= history[1]["changed_at"] >= history[2]["changed_at"]
    audit = AuditEntry.objects.get(action="memory_changed", actor="operator:reviewer")
    assert audit.details == {"change": "operator_edit", "reason": "tagged for the CI team"}


def test_it_reverts_to_an_earlier_revision_as_a_new_one(actors: Actors) -> None:
    entry = remember(actors.bot_key, "the build server is jenkins-01")
    bot = api_client(actors.bot_key)
    bot.patch(f"/api/v1/memories/{entry['id']}", {"content": "the build server is buildkite"}, format="json")
    reverted = bot.post(f"/api/v1/memories/{entry['id']}/revert", {"revision": 1, "reason": "buildkite was a trial"}, format="json")
    assert reverted.status_code == 200
    assert (reverted.json()["content"], reverted.json()["revision"]) == ("the build server is jenkins-01", 3)
    assert [(r["revision"], r["change"], r["reason"]) for r in revisions(actors.bot_key, entry["id"])][0] == (3, "revert", "buildkite was a trial")
    # Searched as it reads now, by keyword and by meaning.
    assert [h["entry"]["id"] for h in search(actors.bot_key, query="jenkins", mode="keyword")] == [entry["id"]]
    assert search(actors.bot_key, query="buildkite", mode="keyword") == []
    assert_error(bot.post(f"/api/v1/memories/{entry['id']}/revert", {"revision": 9}, format="json"), 404, "REVISION_NOT_FOUND")
    assert bot.get(f"/api/v1/memories/{entry['id']}").json()["revision"] == 3


def test_only_who_may_change_a_memory_sees_its_history_changed(actors: Actors) -> None:
    entry = remember(actors.bot_key, "Ada prefers tea", scope="shared")
    url = f"/api/v1/memories/{entry['id']}"
    # Another agent reads a shared entry and its history, but changes neither.
    assert len(revisions(actors.peer_key, entry["id"])) == 1
    assert_error(api_client(actors.peer_key).post(f"{url}/revert", {"revision": 1}, format="json"), 403, "NOT_OWNER")
    assert_error(api_client(actors.peer_key).patch(url, {"content": "x"}, format="json"), 403, "NOT_OWNER")
    # A viewer reads; an approver edits only with a reason; a foreign workspace sees nothing.
    assert_error(api_client(actors.teammate_key).patch(url, {"content": "x", "reason": "r"}, format="json"), 403, "NOT_OWNER")
    assert_error(api_client(actors.teammate_key).post(f"{url}/revert", {"revision": 1}, format="json"), 403, "NOT_OWNER")
    reviewer = api_client(approver_key(actors))
    error = assert_error(reviewer.patch(url, {"content": "Ada prefers green tea"}, format="json"), 400, "VALIDATION_ERROR")
    assert "reason" in error["details"]
    for outsider in (actors.outsider_key, actors.spy_key):
        assert_error(api_client(outsider).get(f"{url}/revisions"), 404, "MEMORY_NOT_FOUND")
        assert_error(api_client(outsider).post(f"{url}/revert", {"revision": 1}, format="json"), 404, "MEMORY_NOT_FOUND")
    assert api_client(actors.bot_key).get(url).json()["revision"] == 1 and not MemoryRevision.objects.exists()


def test_a_write_to_an_existing_key_is_a_revision_too(actors: Actors) -> None:
    bot = api_client(actors.bot_key)
    first = bot.post("/api/v1/memories", {"content": "deploys on Tuesdays", "user_id": "u1", "key": "deploy-day"}, format="json").json()
    again = bot.post("/api/v1/memories", {"content": "deploys on Thursdays", "user_id": "u1", "key": "deploy-day"}, format="json").json()
    assert again["id"] == first["id"] and again["revision"] == 2
    assert [(r["revision"], r["change"], r["content"]) for r in revisions(actors.bot_key, first["id"])] == [
        (2, "update", "deploys on Thursdays"), (1, "create", "deploys on Tuesdays"),
    ]


def test_two_changes_at_once_keep_both_revisions(actors: Actors, transactional_db: None) -> None:
    entry = remember(actors.bot_key, "v1")
    start, answers = threading.Barrier(2), []

    def change(content: str) -> None:
        start.wait()
        try:
            answers.append(api_client(actors.bot_key).patch(f"/api/v1/memories/{entry['id']}", {"content": content}, format="json").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=change, args=(text,)) for text in ("v2a", "v2b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [200, 200]
    history = revisions(actors.bot_key, entry["id"])
    assert [r["revision"] for r in history] == [3, 2, 1] and {history[0]["content"], history[1]["content"]} == {"v2a", "v2b"}


def test_a_purge_erases_the_users_revisions(actors: Actors, transactional_db: None) -> None:
    entry = remember(actors.bot_key, "Ada's card ends 4242")
    api_client(actors.bot_key).patch(f"/api/v1/memories/{entry['id']}", {"content": "Ada's card ends 1881"}, format="json")
    assert MemoryRevision.objects.filter(user_id="u1").count() == 1
    purge = api_client(actors.owner_key).post("/api/v1/purges", {"user_id": "u1"}, format="json").json()
    done = purge_finished(purge["id"])
    assert done.status == "done" and not MemoryRevision.objects.filter(user_id="u1").exists()
    assert done.counts["memory.MemoryRevision"] == 1
