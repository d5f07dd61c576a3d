from __future__ import annotations

from datetime import timedelta

import numpy as np
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from pgvector import Vector

from memoryhub.core.selectors import principal_for_key
from memoryhub.memory import selectors
from memoryhub.memory.embeddings import get_provider
from memoryhub.memory.models import MemoryEntry
from memoryhub.memory.search import names_to_follow, routing, vector_literal
from tests.conftest import Actors, api_client, assert_error, remember, search


def seed(actors: Actors) -> dict[str, dict]:
    return {
        "trip": remember(actors.bot_key, "Maria booked a flight to Lisbon for the conference in June.", tags=["travel", "maria"], metadata={"project": "expo"}),
        "food": remember(actors.bot_key, "Maria is allergic to peanuts and avoids Thai food.", tags=["health", "maria"], user_id="u2"),
        "code": remember(actors.bot_key, "The payment service retries failed webhooks three times.", tags=["engineering"], memory_type="procedural",
                         data={"task": "retry webhooks", "steps": ["wait", "retry"]}),
    }


def test_it_ranks_by_meaning_in_every_mode(actors: Actors) -> None:
    seeded = seed(actors)
    for mode in ("hybrid", "semantic"):
        assert search(actors.bot_key, query="what food can't Maria eat?", mode=mode)[0]["entry"]["id"] == seeded["food"]["id"]
    assert search(actors.bot_key, query="When is the flight to the conference?", mode="keyword")[0]["entry"]["id"] == seeded["trip"]["id"]


def test_it_sends_the_question_vector_as_the_vector_it_is(db: None) -> None:
    # The question's vector goes into the ranking statement as text: it must read back as
    # the very float32 values pgvector's own conversion stands for, tiny, huge, negative
    # zero and values float32 cannot hold exactly alike.
    vector = [1 / 3, -0.0, 1e-8, -2.5e-39, 0.1, 123456.789, -0.999999999, 7e-46]
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::vector = %s::vector, %s::vector::text", [vector_literal(vector), Vector._to_db(vector), vector_literal(vector)])
        same, text = cursor.fetchone()
    assert same
    assert np.array_equal(np.array(text[1:-1].split(","), dtype=np.float32), np.array(vector, dtype=np.float32))


def test_it_shows_each_hit_as_reading_it_would(actors: Actors) -> None:
    seeded = seed(actors)
    client = api_client(actors.bot_key)
    for mode in ("hybrid", "semantic", "keyword"):
        for hit in search(actors.bot_key, query="Maria payment webhooks", mode=mode):
            # Tags, metadata, data, agent, store, dates: the search reads its rows its own way.
            assert hit["entry"] == client.get(f"/api/v1/memories/{hit['entry']['id']}").json()
    assert {hit["entry"]["id"] for hit in search(actors.bot_key, query="Maria payment webhooks")} == {e["id"] for e in seeded.values()}


def test_it_matches_questions_by_keyword_with_or_semantics(actors: Actors) -> None:
    seeded = seed(actors)
    # A whole question: most of its words are in no entry, yet the keyword leg matches.
    hits = search(actors.bot_key, query="how many times does the payment service retry a webhook?", mode="keyword")
    assert hits and hits[0]["entry"]["id"] == seeded["code"]["id"]


def test_it_returns_scores_best_first_within_0_and_1(actors: Actors) -> None:
    seed(actors)
    for mode in ("hybrid", "semantic", "keyword"):
        hits = search(actors.bot_key, query="Maria travel plans", mode=mode)
        scores = [h["score"] for h in hits]
        assert scores == sorted(scores, reverse=True)
        assert all(0 <= s <= 1 for s in scores)


def test_it_applies_min_relevance_and_max_results(actors: Actors) -> None:
    seed(actors)
    everything = search(actors.bot_key, query="Maria", mode="semantic", max_results=10)
    assert len(everything) == 3
    assert len(search(actors.bot_key, query="Maria", mode="semantic", max_results=1)) == 1
    floor = everything[1]["score"]
    assert len(search(actors.bot_key, query="Maria", mode="semantic", min_relevance=floor)) == 2
    assert search(actors.bot_key, query="Maria", mode="semantic", min_relevance=1.0) == []


def test_it_caps_max_results(actors: Actors) -> None:
    api_client(actors.bot_key).post("/api/v1/memories/batch", {"items": [{"content": f"note {i}", "user_id": "u1"} for i in range(120)]}, format="json")
    assert len(search(actors.bot_key, max_results=1000)) == 100


def test_it_pushes_every_filter_into_the_search(actors: Actors) -> None:
    seeded = seed(actors)
    q = "Maria"
    assert [h["entry"]["id"] for h in search(actors.bot_key, query=q, tags=["maria", "health"])] == [seeded["food"]["id"]]
    assert [h["entry"]["id"] for h in search(actors.bot_key, query=q, metadata={"project": "expo"})] == [seeded["trip"]["id"]]
    assert [h["entry"]["id"] for h in search(actors.bot_key, query=q, user_id="u2")] == [seeded["food"]["id"]]
    assert [h["entry"]["id"] for h in search(actors.bot_key, query="webhooks", memory_type="procedural")] == [seeded["code"]["id"]]
    MemoryEntry.objects.filter(pk=seeded["trip"]["id"]).update(created_at=timezone.now() - timedelta(days=30))
    recent = search(actors.bot_key, query=q, start_time=(timezone.now() - timedelta(days=1)).isoformat())
    assert seeded["trip"]["id"] not in [h["entry"]["id"] for h in recent]
    old = search(actors.bot_key, query=q, end_time=(timezone.now() - timedelta(days=1)).isoformat())
    assert [h["entry"]["id"] for h in old] == [seeded["trip"]["id"]]


def test_it_lists_newest_first_without_a_query(actors: Actors) -> None:
    seeded = seed(actors)
    hits = search(actors.bot_key, tags=["maria"])
    assert [h["entry"]["id"] for h in hits] == [seeded["food"]["id"], seeded["trip"]["id"]]


def test_it_refuses_bad_search_input(actors: Actors) -> None:
    client = api_client(actors.bot_key)
    for body in ({"mode": "fuzzy"}, {"max_results": 0}, {"min_relevance": 2}, {"tags": "x"}, {"query": 5}, {"embedding": [1.0, "x"]},
                 {"query": "x", "repeats": "drop"}):
        response = client.post("/api/v1/memories/search", body, format="json")
        assert response.status_code == 400, body
        assert response.json()["error"]["code"] in ("VALIDATION_ERROR", "INVALID_EMBEDDING")


def test_it_searches_by_the_callers_own_query_vector_of_the_hubs_dimension(actors: Actors) -> None:
    near, far = [1.0] + [0.0] * 383, [0.0] * 383 + [1.0]
    for content, vector in (("The blue notebook is in the drawer.", near), ("Lunch is at noon.", far)):
        assert api_client(actors.bot_key).post("/api/v1/memories", {"content": content, "user_id": "u1", "embedding": vector}, format="json").status_code == 201
    hits = search(actors.bot_key, embedding=[0.9, 0.1] + [0.0] * 382, mode="semantic", user_id="u1")
    assert [hit["entry"]["content"] for hit in hits][:1] == ["The blue notebook is in the drawer."]
    # Another model's vector (CrewAI embeds with its own): said as such, for the caller to send text instead.
    error = assert_error(api_client(actors.bot_key).post("/api/v1/memories/search", {"embedding": [0.5] * 1536}, format="json"), 400, "DIMENSION_MISMATCH")
    assert error["details"] == {"expected_dimensions": 384, "got": 1536}


def repeated(actors: Actors) -> dict[str, dict]:
    """A note stored twice (as agents do, turn after turn) and a distinct, weaker match."""
    return {
        "garage": remember(actors.bot_key, "We cleaned out the garage this weekend, found so much old stuff."),
        "again": remember(actors.bot_key, "We cleaned out the garage this weekend and found so much old stuff!"),
        "attic": remember(actors.bot_key, "The attic still needs cleaning out before the move."),
    }


def test_it_demotes_a_repeat_below_the_distinct_results(actors: Actors) -> None:
    notes = repeated(actors)
    for mode in ("hybrid", "semantic", "keyword"):
        hits = search(actors.bot_key, query="cleaning out the garage", mode=mode)
        ids = [h["entry"]["id"] for h in hits]
        first = ids[0]
        assert first in (notes["garage"]["id"], notes["again"]["id"]), mode
        other = notes["again"]["id"] if first == notes["garage"]["id"] else notes["garage"]["id"]
        assert ids == [first, notes["attic"]["id"], other], mode
        assert [h["repeat_of"] for h in hits] == [None, None, first], mode
        scores = [h["score"] for h in hits]
        assert scores == sorted(scores, reverse=True) and scores[2] < 0.1 * scores[0], mode


def test_it_keeps_repeats_in_place_when_asked(actors: Actors) -> None:
    notes = repeated(actors)
    hits = search(actors.bot_key, query="cleaning out the garage", mode="semantic", repeats="keep")
    assert {h["entry"]["id"] for h in hits[:2]} == {notes["garage"]["id"], notes["again"]["id"]}
    assert [h["repeat_of"] for h in hits] == [None, None, None]
    assert hits[1]["score"] > 0.5 * hits[0]["score"]  # its own similarity, not what it adds


def test_it_fills_max_results_with_distinct_results_first(actors: Actors) -> None:
    notes = repeated(actors)
    remember(actors.bot_key, "We cleaned out the garage this weekend - found so much old stuff.")
    hits = search(actors.bot_key, query="cleaning out the garage", max_results=2)
    assert hits[1]["entry"]["id"] == notes["attic"]["id"]
    assert [h["repeat_of"] for h in hits] == [None, None]
    # min_relevance leaves repeats out: they score only what they add.
    floor = hits[1]["score"]
    assert [h["entry"]["id"] for h in search(actors.bot_key, query="cleaning out the garage", min_relevance=floor)] == [
        h["entry"]["id"] for h in hits
    ]


def test_it_never_calls_a_result_a_repeat_of_another_users_entry(actors: Actors) -> None:
    remember(actors.bot_key, "We cleaned out the garage this weekend, found so much old stuff.", user_id="u2")
    mine = remember(actors.bot_key, "We cleaned out the garage this weekend, found so much old stuff.")
    hits = search(actors.bot_key, query="cleaning out the garage", user_id="u1")
    assert [(h["entry"]["id"], h["repeat_of"]) for h in hits] == [(mine["id"], None)]
    # The outsider (another workspace) finds neither, nor a trace of them.
    assert search(actors.spy_key, query="cleaning out the garage") == []


def two_hops(actors: Actors) -> dict[str, dict]:
    """A question answered by two entries, the second reached only through a name."""
    return {
        "food": remember(actors.bot_key, "Omar: Which city has the best food in April?"),
        "trip": remember(actors.bot_key, "Omar: I'm booking flights to go see Farid in April, I haven't seen her in ages."),
        "city": remember(actors.bot_key, "Omar: My sister Farid lives in Melbourne; she teaches maths at a school there."),
        "suitcase": remember(actors.bot_key, "Omar: I need a new suitcase."),
        # Another user's sister of the same name: never followed into.
        "theirs": remember(actors.bot_key, "Farid lives in Sydney now.", user_id="u2"),
    }


def test_it_follows_the_names_of_the_best_results(actors: Actors) -> None:
    notes = two_hops(actors)
    question = {"query": "Which city is Omar flying to in April?", "user_id": "u1", "max_results": 3}
    ids = lambda hits: [h["entry"]["id"] for h in hits]  # noqa: E731
    assert ids(search(actors.bot_key, **question, follow_names="off")) == [notes["food"]["id"], notes["trip"]["id"], notes["suitcase"]["id"]]
    # "Farid" is in the second result and not in the question: the entry naming her city
    # follows, by default among the results read, or through a second ranking of all.
    for follow in ({}, {"follow_names": "results"}, {"follow_names": "all"}):
        hits = search(actors.bot_key, **question, **follow)
        assert ids(hits) == [notes["food"]["id"], notes["trip"]["id"], notes["city"]["id"]], follow
        scores = [h["score"] for h in hits]
        assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)
    for follow in ("results", "all"):
        everything = search(actors.bot_key, **{**question, "max_results": 20}, follow_names=follow)
        assert notes["theirs"]["id"] not in ids(everything)


@override_settings(MEMORYHUB_EXACT_SEARCH_MAX_ROWS=0)
def test_it_follows_names_through_every_entry_on_the_hnsw_route_too(actors: Actors) -> None:
    notes = two_hops(actors)
    question = {"query": "Which city is Omar flying to in April?", "user_id": "u1", "max_results": 3, "follow_names": "all"}
    assert [h["entry"]["id"] for h in search(actors.bot_key, **question)] == [notes["food"]["id"], notes["trip"]["id"], notes["city"]["id"]]


def test_it_follows_no_name_the_question_has_or_every_entry_has() -> None:
    followed = ["Omar: Big news: I'm seeing Farid and Kenji in Lisbon in April.", "Omar: Kenji called."]
    seen = [*followed, "Omar: Kenji again.", "Omar: hello Kenji", "Omar: fine"]
    # "Big" opens a sentence, "April" is a date, "Lisbon" is asked about, "Kenji" is in most entries, "Omar" in all.
    assert names_to_follow(question="Is Omar going to Lisbon?", followed=followed, seen=seen) == ["Farid"]


def test_it_refuses_a_follow_names_it_does_not_know(actors: Actors) -> None:
    for follow in ("sometimes", True):
        response = api_client(actors.bot_key).post("/api/v1/memories/search", {"query": "x", "follow_names": follow}, format="json")
        assert_error(response, 400, "VALIDATION_ERROR")


def test_it_paginates_the_listing_with_a_cursor(actors: Actors) -> None:
    api_client(actors.bot_key).post("/api/v1/memories/batch", {"items": [{"content": f"note {i}", "user_id": "u1"} for i in range(7)]}, format="json")
    client = api_client(actors.bot_key)
    seen: list[str] = []
    url = "/api/v1/memories?limit=3"
    while url:
        page = client.get(url).json()
        seen += [e["id"] for e in page["results"]]
        url = f"/api/v1/memories?limit=3&cursor={page['next']}" if page["next"] else ""
    assert len(seen) == len(set(seen)) == 7
    assert_error(client.get("/api/v1/memories?cursor=garbage"), 400, "INVALID_CURSOR")
    assert_error(client.get("/api/v1/memories?memory_type=dream"), 400, "VALIDATION_ERROR")


def test_it_filters_the_listing_by_metadata_and_tags(actors: Actors) -> None:
    seeded = seed(actors)
    client = api_client(actors.bot_key)
    assert [e["id"] for e in client.get("/api/v1/memories?metadata.project=expo").json()["results"]] == [seeded["trip"]["id"]]
    assert [e["id"] for e in client.get("/api/v1/memories?tags=maria,travel").json()["results"]] == [seeded["trip"]["id"]]
    assert [e["id"] for e in client.get("/api/v1/memories?user_id=u2").json()["results"]] == [seeded["food"]["id"]]


def test_it_reports_stats(actors: Actors) -> None:
    seed(actors)
    stats = api_client(actors.bot_key).get("/api/v1/stats").json()
    assert stats["memories"]["total"] == 3
    assert stats["memories"]["by_type"]["procedural"] == 1
    assert stats["storage_bytes"] > 0
    assert stats["embedding_model"] == {"model": "all-MiniLM-L6-v2-int8", "dimensions": 384}
    assert api_client(actors.bot_key).get("/api/v1/stats?user_id=u2").json()["memories"]["total"] == 1
    assert api_client(actors.spy_key).get("/api/v1/stats").json()["memories"]["total"] == 0


def test_it_asks_the_planner_for_the_same_filters_once(actors: Actors, django_assert_num_queries) -> None:
    # An agent asks about one user turn after turn: the routing estimate (an EXPLAIN) is
    # planned once, then reused; a new user plans their own.
    seed(actors)
    client = api_client(actors.bot_key)
    body = {"query": "what does Maria eat?", "user_id": "u2"}
    client.post("/api/v1/memories/search", body, format="json")
    with django_assert_num_queries(3):  # the key with its stores, the ranking, the shown rows
        hits = client.post("/api/v1/memories/search", body, format="json").json()["results"]
    assert hits[0]["entry"]["content"].startswith("Maria is allergic")
    # Tags only narrow a user small enough for exact search: nothing to plan.
    with django_assert_num_queries(3):
        hits = client.post("/api/v1/memories/search", {**body, "tags": ["health"]}, format="json").json()["results"]
    assert hits and all("health" in hit["entry"]["tags"] for hit in hits)
    with django_assert_num_queries(4):  # + the estimate for a user the hub has not seen asked about
        client.post("/api/v1/memories/search", {**body, "user_id": "u1"}, format="json")


def analyzed(actors: Actors, *, heavy: int = 0) -> None:
    """Entries for the seed's users and `heavy` more for one user, and the statistics
    autovacuum would have gathered on them; the hub's copy of the statistics read anew."""
    seed(actors)
    if heavy:
        items = [{"content": f"Note {n} about the garden shed.", "user_id": "heavy"} for n in range(heavy)]
        assert api_client(actors.bot_key).post("/api/v1/memories/batch", {"items": items}, format="json").status_code == 201
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_memoryentry")
    routing.forget()


def plans(queries: CaptureQueriesContext) -> list[str]:
    """The routing estimates (EXPLAINs) among a request's statements."""
    return [q["sql"] for q in queries.captured_queries if q["sql"].startswith("EXPLAIN")]


def test_it_routes_users_by_the_tables_statistics_without_planning(actors: Actors) -> None:
    analyzed(actors)
    client = api_client(actors.bot_key)
    with CaptureQueriesContext(connection) as first:
        hits = client.post("/api/v1/memories/search", {"query": "what does Maria eat?", "user_id": "u2"}, format="json").json()["results"]
    assert hits[0]["entry"]["content"].startswith("Maria is allergic")
    # The key, the statistics (kept for a while, as estimates are), the ranking, the shown rows.
    assert len(first) == 4 and not plans(first)
    for user in ("u1", "someone-new"):  # users the hub has not been asked about: nothing to plan
        with CaptureQueriesContext(connection) as later:
            assert client.post("/api/v1/memories/search", {"query": "Lisbon", "user_id": user}, format="json").status_code == 200
        assert later.captured_queries and not plans(later)


@override_settings(MEMORYHUB_EXACT_SEARCH_MAX_ROWS=30)
def test_it_plans_a_user_the_statistics_put_over_the_exact_limit(actors: Actors) -> None:
    analyzed(actors, heavy=40)
    client = api_client(actors.bot_key)
    client.post("/api/v1/memories/search", {"query": "the garden shed", "user_id": "u2"}, format="json")  # reads the statistics
    with CaptureQueriesContext(connection) as heavy:
        hits = client.post("/api/v1/memories/search", {"query": "the garden shed", "user_id": "heavy"}, format="json").json()["results"]
    assert len(hits) == 10 and all(hit["entry"]["user_id"] == "heavy" for hit in hits)
    assert plans(heavy)


def test_the_statistics_never_say_less_than_the_planner(actors: Actors) -> None:
    # What routing by statistics stands on: for the most common users (listed in the
    # statistics) and the rest alike, the planner's estimate of a search's set is at
    # most what the statistics say of its user, and with the user alone it is that.
    analyzed(actors, heavy=40)
    principal = principal_for_key(actors.bot_key)
    model_id = get_provider().model_id
    for user in ("heavy", "u2", "nobody-at-all"):
        bound = routing.user_rows_bound(user)
        assert bound is not None
        for filters in (selectors.MemoryFilters(user_id=user), selectors.MemoryFilters(user_id=user, tags=["health"])):
            routing.forget()
            estimate = routing.estimated_rows(principal=principal, filters=filters, model_id=model_id, dim=384)
            assert estimate <= bound
            if not filters.tags:
                assert estimate == bound
    assert routing.user_rows_bound("heavy") >= 40 > routing.user_rows_bound("u2")


@override_settings(MEMORYHUB_EXACT_SEARCH_MAX_ROWS=0)
def test_it_plans_the_narrower_set_when_the_wider_one_is_too_large(actors: Actors, django_assert_num_queries) -> None:
    seed(actors)
    client = api_client(actors.bot_key)
    body = {"query": "what does Maria eat?", "user_id": "u2"}
    client.post("/api/v1/memories/search", body, format="json")
    client.post("/api/v1/memories/search", {**body, "tags": ["health"]}, format="json")
    # The key (both estimates were kept), then the HNSW route: its settings in a savepoint,
    # the ranking, the shown rows.
    with django_assert_num_queries(6):
        hits = client.post("/api/v1/memories/search", {**body, "tags": ["health"]}, format="json").json()["results"]
    assert hits and all("health" in hit["entry"]["tags"] for hit in hits)


@override_settings(MEMORYHUB_SEARCH_ESTIMATE_SECONDS=0)
def test_it_plans_every_search_when_estimates_are_not_kept(actors: Actors, django_assert_num_queries) -> None:
    seed(actors)
    client = api_client(actors.bot_key)
    body = {"query": "what does Maria eat?", "user_id": "u2"}
    client.post("/api/v1/memories/search", body, format="json")
    with django_assert_num_queries(4):
        client.post("/api/v1/memories/search", body, format="json")
