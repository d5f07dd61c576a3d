"""Duplicates (docs/memory.md, "Duplicates"): a create compares the new memory with what its
writer can already see, by normalised text and by embedding; `on_duplicate` keeps, skips or
updates; operators see the pairs in the review queue and merge them."""

from __future__ import annotations

import math

import numpy as np
from django.db import connection

from memoryhub.core.models import AuditEntry
from memoryhub.memory.embeddings import get_provider
from memoryhub.memory.models import MemoryEntry
from tests.conftest import (
    Actors, TIGHT_POOL, api_client, approver_key, assert_error, post_at_once, remember, search, start_hub,
)


def create(key: str, content: str, **body: object) -> object:
    return api_client(key).post("/api/v1/memories", {"content": content, "user_id": "u1", **body}, format="json")


def queue(key: str) -> list[dict]:
    response = api_client(key).get("/api/v1/memories/review-queue", {"reason": "duplicates"})
    assert response.status_code == 200, response.content
    return response.json()["results"]


def vector_at(similarity: float, *, seed: int = 1) -> tuple[list[float], list[float]]:
    """Two unit vectors of the model's dimension whose cosine similarity is `similarity`."""
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(2, get_provider().dimensions))
    a /= np.linalg.norm(a)
    b -= a * (a @ b)
    b /= np.linalg.norm(b)
    return a.tolist(), (similarity * a + math.sqrt(1 - similarity**2) * b).tolist()


def test_it_lists_the_same_text_once_case_spaces_and_punctuation_are_set_aside(actors: Actors) -> None:
    first = remember(actors.bot_key, "Alice prefers tea over coffee.")
    again = create(actors.bot_key, "  alice PREFERS tea, over coffee!! ")
    assert again.status_code == 201
    assert (again.json()["duplicate"], again.json()["similar"]) == (False, [{"id": first["id"], "score": 1.0}])
    assert MemoryEntry.objects.count() == 2
    other = create(actors.bot_key, "Alice prefers coffee over tea.")
    assert [s["id"] for s in other.json()["similar"] if s["score"] == 1.0] == []


def test_it_finds_near_duplicates_by_embedding_above_the_threshold_only(actors: Actors) -> None:
    base, close = vector_at(0.97)
    _, far = vector_at(0.80)
    first = remember(actors.bot_key, "The deploy runs on Thursdays.", embedding=base)
    near = create(actors.bot_key, "The deploy runs on Thursdays, usually.", embedding=close).json()
    assert [s["id"] for s in near["similar"]] == [first["id"]] and 0.96 < near["similar"][0]["score"] < 0.98
    assert create(actors.bot_key, "The deploy runs on Thursdays at noon.", embedding=far).json()["similar"] == []


def test_a_word_replaced_is_another_memory_however_close_the_embeddings(actors: Actors) -> None:
    # "Monday" and "Tuesday" embed almost alike: skipping the second would lose a changed fact.
    base, close = vector_at(0.99)
    remember(actors.bot_key, "Tom's weekly flight leaves on Monday.", embedding=base)
    moved = create(actors.bot_key, "Tom's weekly flight leaves on Tuesday.", embedding=close, on_duplicate="skip")
    assert (moved.status_code, moved.json()["duplicate"], moved.json()["similar"]) == (201, False, [])


def test_meaning_is_compared_within_the_newest_entries_and_text_with_all(actors: Actors, settings) -> None:  # type: ignore[no-untyped-def]
    settings.MEMORYHUB_DUPLICATE_WINDOW = 2
    base, close = vector_at(0.97)
    old = remember(actors.bot_key, "Oren likes figs.", embedding=base)
    for seed in (3, 4):  # two newer entries, unlike it
        remember(actors.bot_key, f"Unrelated note {seed}", embedding=vector_at(0.5, seed=seed)[0])
    assert create(actors.bot_key, "Oren enjoys figs", embedding=close).json()["similar"] == []
    assert [s["id"] for s in create(actors.bot_key, "oren likes FIGS", embedding=close).json()["similar"]][0] == old["id"]


def test_it_skips_a_duplicate_and_answers_the_existing_entry(actors: Actors) -> None:
    first = remember(actors.bot_key, "Bob's dog is called Rex.")
    skipped = create(actors.bot_key, "bob's dog is called rex", on_duplicate="skip")
    assert skipped.status_code == 200
    assert (skipped.json()["id"], skipped.json()["duplicate"], skipped.json()["content"]) == (first["id"], True, "Bob's dog is called Rex.")
    assert MemoryEntry.objects.count() == 1
    fresh = create(actors.bot_key, "Bob has a cat too.", on_duplicate="skip")
    assert (fresh.status_code, fresh.json()["duplicate"]) == (201, False)


def test_it_updates_a_duplicate_as_its_next_revision(actors: Actors) -> None:
    first = remember(actors.bot_key, "Carol lives in Lyon", tags=["home"], metadata={"a": 1})
    updated = create(actors.bot_key, "Carol lives in Lyon.", tags=["city"], metadata={"b": 2}, on_duplicate="update")
    assert updated.status_code == 200
    body = updated.json()
    assert (body["id"], body["duplicate"], body["revision"], body["content"]) == (first["id"], True, 2, "Carol lives in Lyon.")
    assert (body["tags"], body["metadata"]) == (["home", "city"], {"a": 1, "b": 2})
    [current, kept] = api_client(actors.bot_key).get(f"/api/v1/memories/{first['id']}/revisions").json()["results"]
    assert (current["change"], kept["content"]) == ("update", "Carol lives in Lyon")
    assert MemoryEntry.objects.count() == 1


def test_an_agent_updates_only_its_own_duplicate_and_keeps_beside_anothers(actors: Actors) -> None:
    peers = remember(actors.peer_key, "Nia speaks Welsh.", scope="shared")
    beside = create(actors.bot_key, "nia speaks welsh", scope="shared", on_duplicate="update")
    assert beside.status_code == 201 and [s["id"] for s in beside.json()["similar"]] == [peers["id"]]
    assert MemoryEntry.objects.get(pk=peers["id"]).version == 1  # the peer's entry, untouched
    mine = create(actors.bot_key, "Nia speaks Welsh!", scope="shared", on_duplicate="update")
    assert (mine.status_code, mine.json()["id"], mine.json()["revision"]) == (200, beside.json()["id"], 2)


def test_only_what_the_writer_sees_of_the_same_user_scope_and_type_is_a_duplicate(actors: Actors) -> None:
    mine = remember(actors.bot_key, "Dana is vegetarian.")  # agent scope: the bot's alone
    assert create(actors.peer_key, "Dana is vegetarian.").json()["similar"] == []
    assert create(actors.bot_key, "Dana is vegetarian.", user_id="u2").json()["similar"] == []
    assert create(actors.bot_key, "Dana is vegetarian.", memory_type="episodic").json()["similar"] == []
    assert create(actors.bot_key, "Dana is vegetarian.", scope="shared").json()["similar"] == []
    shared = remember(actors.bot_key, "Dana is allergic to nuts.", scope="shared")
    assert [s["id"] for s in create(actors.peer_key, "Dana is allergic to nuts", scope="shared").json()["similar"]] == [shared["id"]]
    assert create(actors.loner_key, "Dana is allergic to nuts", scope="shared").json()["similar"] == []  # another store
    assert create(actors.spy_key, "Dana is vegetarian.", scope="global").json()["similar"] == []
    # A quarantined entry is invisible to agents: writing it again is no duplicate.
    api_client(approver_key(actors)).post(f"/api/v1/memories/{mine['id']}/review", {"action": "quarantine"}, format="json")
    assert (create(actors.bot_key, "Dana is vegetarian.", on_duplicate="skip").status_code) == 201


def test_a_batch_skips_its_duplicates_in_one_go(actors: Actors) -> None:
    first = remember(actors.bot_key, "Erin works at Globex.")
    response = api_client(actors.bot_key).post("/api/v1/memories/batch", {
        "on_duplicate": "skip",
        "items": [{"content": "erin works at globex", "user_id": "u1"}, {"content": "Erin plays the cello.", "user_id": "u1"}],
    }, format="json")
    assert response.status_code == 201
    [skipped, created] = response.json()["items"]
    assert (skipped["id"], skipped["duplicate"]) == (first["id"], True)
    assert (created["duplicate"], created["similar"]) == (False, [])
    assert MemoryEntry.objects.count() == 2
    assert_error(api_client(actors.bot_key).post("/api/v1/memories/batch", {
        "on_duplicate": "merge", "items": [{"content": "x", "user_id": "u1"}]}, format="json"), 400, "VALIDATION_ERROR")
    assert MemoryEntry.objects.count() == 2


def test_a_batch_finds_each_items_duplicates_by_meaning_among_what_its_writer_sees(actors: Actors, settings) -> None:  # type: ignore[no-untyped-def]
    # A batch has its own statement (every item at once); the same rules as a single create.
    settings.MEMORYHUB_DUPLICATE_WINDOW = 2
    fay, fay_again = vector_at(0.97, seed=5)
    gus, gus_again = vector_at(0.96, seed=6)
    old, old_again = vector_at(0.97, seed=7)
    oldest = remember(actors.bot_key, "Hal likes kiwis.", user_id="u2", embedding=old)
    fays = remember(actors.bot_key, "Fay likes plums.", embedding=fay)
    remember(actors.peer_key, "Fay likes plums a lot.", embedding=fay)  # another agent's: not the bot's to see
    guss = remember(actors.bot_key, "Gus likes pears.", user_id="u2", embedding=gus)
    remember(actors.bot_key, "Ivy likes figs.", user_id="u2", embedding=vector_at(0.5, seed=8)[0])
    response = api_client(actors.bot_key).post("/api/v1/memories/batch", {"items": [
        {"content": "Fay likes plums, really.", "user_id": "u1", "embedding": fay_again},
        {"content": "Gus likes pears, really.", "user_id": "u2", "embedding": gus_again},
        {"content": "Fay likes plums, really.", "user_id": "u1", "embedding": fay_again, "memory_type": "episodic"},
        {"content": "Hal likes kiwis, really.", "user_id": "u2", "embedding": old_again},  # beyond u2's 2 newest
        {"content": "hal likes KIWIS", "user_id": "u2", "embedding": old_again},  # the same text: all are compared
    ]}, format="json")
    assert response.status_code == 201, response.content
    similar = [[s["id"] for s in item["similar"]] for item in response.json()["items"]]
    assert similar == [[fays["id"]], [guss["id"]], [], [], [oldest["id"]]]


def test_a_batch_compares_exactly_at_the_threshold_whatever_it_is_set_to(actors: Actors, settings) -> None:  # type: ignore[no-untyped-def]
    # A batch narrows by the vectors' signs first: nothing above the threshold may be lost to it.
    pairs = {seed: vector_at(similarity, seed=seed) for seed, similarity in ((11, 0.952), (12, 0.948), (13, 0.62), (14, 0.58))}
    firsts = {seed: remember(actors.bot_key, f"Note {seed} about the garden.", embedding=first)["id"] for seed, (first, _) in pairs.items()}

    def found_firsts() -> list[bool]:
        response = api_client(actors.bot_key).post("/api/v1/memories/batch", {"items": [
            {"content": f"Again, note {seed} about the garden.", "user_id": "u1", "embedding": again} for seed, (_, again) in pairs.items()
        ]}, format="json")
        assert response.status_code == 201, response.content
        return [firsts[seed] in {s["id"] for s in item["similar"]} for seed, item in zip(pairs, response.json()["items"], strict=True)]

    assert found_firsts() == [True, False, False, False]
    settings.MEMORYHUB_DUPLICATE_SIMILARITY = 0.6
    assert found_firsts() == [True, True, True, False]


def batch_similar(key: str, items: list[tuple[str, list[float]]]) -> list[list[str]]:
    response = api_client(key).post("/api/v1/memories/batch", {"items": [
        {"content": content, "user_id": "u1", "embedding": embedding} for content, embedding in items
    ]}, format="json")
    assert response.status_code == 201, response.content
    return [[s["id"] for s in item["similar"]] for item in response.json()["items"]]


def test_a_batch_compares_a_changed_vector_as_it_is_now(actors: Actors) -> None:
    old, near_old = vector_at(0.97, seed=21)
    new, near_new = vector_at(0.97, seed=22)
    entry = remember(actors.bot_key, "Kai's desk is by the window.", embedding=old)
    changed = api_client(actors.bot_key).patch(f"/api/v1/memories/{entry['id']}", {"embedding": new}, format="json")
    assert changed.status_code == 200, changed.content
    assert batch_similar(actors.bot_key, [("Kai's desk is by the window, still.", near_new), ("Kai's desk is by the window, really.", near_old)]) == [[entry["id"]], []]


def test_a_batch_finds_entries_written_before_their_signs_were_kept(actors: Actors) -> None:
    # Entries older than migration 0015 have no signs of their own: they are read through their vector.
    first, again = vector_at(0.97, seed=23)
    entry = remember(actors.bot_key, "Lia keeps bees.", embedding=first)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memory_memoryentry SET embedding_signs = NULL WHERE id = %s", [entry["id"]])
    assert batch_similar(actors.bot_key, [("Lia keeps bees, still.", again), ("Unrelated.", vector_at(0.5, seed=24)[0])]) == [[entry["id"]], []]


def test_a_kept_batch_refused_for_a_bad_vector_writes_nothing_and_the_next_one_goes_through(actors: Actors) -> None:
    # A kept batch's lookup starts before its vectors are checked; a refusal must wait for it.
    remember(actors.bot_key, "Jo likes rye bread.")
    good = get_provider().dimensions * [0.1]
    bad = api_client(actors.bot_key).post("/api/v1/memories/batch", {"items": [
        {"content": "jo likes RYE bread", "user_id": "u1", "embedding": good},
        {"content": "Jo likes spelt.", "user_id": "u1", "embedding": [0.1, 0.2]},
    ]}, format="json")
    assert_error(bad, 400, "INVALID_EMBEDDING")
    assert MemoryEntry.objects.count() == 1
    response = api_client(actors.bot_key).post("/api/v1/memories/batch", {"items": [
        {"content": "jo likes RYE bread", "user_id": "u1"}, {"content": "Jo likes spelt.", "user_id": "u1"},
    ]}, format="json")
    assert response.status_code == 201, response.content
    assert [len(item["similar"]) for item in response.json()["items"]] == [1, 0]
    assert MemoryEntry.objects.count() == 3


def test_operators_see_duplicates_in_the_queue_and_merge_them(actors: Actors) -> None:
    kept = remember(actors.bot_key, "Frank's birthday is May 3.", tags=["birthday"])
    again = remember(actors.bot_key, "frank's birthday is may 3", tags=["dates"])
    reviewer = approver_key(actors)
    [group] = queue(actors.teammate_key)
    assert ([e["id"] for e in group["entries"]], group["score"]) == ([kept["id"], again["id"]], 1.0)
    assert queue(actors.outsider_key) == []
    assert_error(api_client(actors.bot_key).get("/api/v1/memories/review-queue", {"reason": "duplicates"}), 403, "FORBIDDEN")

    merge = {"others": [again["id"]], "reason": "same fact"}
    assert_error(api_client(actors.teammate_key).post(f"/api/v1/memories/{kept['id']}/merge", merge, format="json"), 403, "NOT_OWNER")
    assert_error(api_client(actors.outsider_key).post(f"/api/v1/memories/{kept['id']}/merge", merge, format="json"), 404, "MEMORY_NOT_FOUND")
    assert_error(api_client(actors.peer_key).post(f"/api/v1/memories/{kept['id']}/merge", merge, format="json"), 404, "MEMORY_NOT_FOUND")
    merged = api_client(reviewer).post(f"/api/v1/memories/{kept['id']}/merge", merge, format="json")
    assert merged.status_code == 200, merged.content
    assert (merged.json()["revision"], merged.json()["tags"]) == (2, ["birthday", "dates"])
    gone = api_client(actors.teammate_key).get(f"/api/v1/memories/{again['id']}").json()
    assert gone["superseded_by"] == kept["id"] and gone["invalidated_at"] is not None
    assert [h["entry"]["id"] for h in search(actors.bot_key, query="Frank birthday", user_id="u1")] == [kept["id"]]
    assert [e["id"] for e in api_client(actors.bot_key).get("/api/v1/memories", {"user_id": "u1"}).json()["results"]] == [kept["id"]]
    [revision, _] = api_client(reviewer).get(f"/api/v1/memories/{kept['id']}/revisions").json()["results"]
    assert (revision["change"], revision["reason"]) == ("merge", "same fact")
    assert AuditEntry.objects.filter(action="memory_merged", actor="operator:reviewer").count() == 1
    assert queue(actors.teammate_key) == []
    # Merged once: a second merge of the same entry finds nothing current to merge.
    assert_error(api_client(reviewer).post(f"/api/v1/memories/{kept['id']}/merge", merge, format="json"), 404, "MEMORY_NOT_FOUND")


def test_an_agent_merges_only_entries_that_are_all_its_own(actors: Actors) -> None:
    mine = remember(actors.bot_key, "Gina likes jazz.", scope="shared")
    also_mine = remember(actors.bot_key, "Gina likes jazz music.", scope="shared")
    peers = remember(actors.peer_key, "Gina likes jazz!", scope="shared")
    other_user = remember(actors.bot_key, "Gina likes jazz.", scope="shared", user_id="u2")
    bot = api_client(actors.bot_key)
    assert_error(bot.post(f"/api/v1/memories/{mine['id']}/merge", {"others": [peers["id"]]}, format="json"), 403, "NOT_OWNER")
    assert_error(bot.post(f"/api/v1/memories/{mine['id']}/merge", {"others": [mine["id"]]}, format="json"), 400, "VALIDATION_ERROR")
    assert_error(bot.post(f"/api/v1/memories/{mine['id']}/merge", {"others": [other_user["id"]]}, format="json"), 400, "VALIDATION_ERROR")
    assert MemoryEntry.objects.filter(superseded_by__isnull=False).count() == 0
    merged = bot.post(f"/api/v1/memories/{mine['id']}/merge", {"others": [also_mine["id"]]}, format="json")
    assert merged.status_code == 200 and MemoryEntry.objects.get(pk=also_mine["id"]).superseded_by_id is not None


def test_writers_racing_to_store_the_same_memory_store_it_once(transactional_db: None, actors: Actors) -> None:
    hub = start_hub(TIGHT_POOL | {"MEMORYHUB_DB_POOL_MAX": "6"})
    try:
        body = {"content": "Hank moved to Oslo.", "user_id": "u1", "on_duplicate": "skip"}
        answers = post_at_once(hub, actors.bot_key, [("/api/v1/memories", body)] * 6)
    finally:
        hub.stop()
    assert sorted(a.status_code for a in answers) == [200] * 5 + [201]
    assert len({a.json()["id"] for a in answers}) == 1 and MemoryEntry.objects.count() == 1
