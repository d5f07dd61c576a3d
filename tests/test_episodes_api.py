from __future__ import annotations

from memoryhub.episodes.models import Episode
from memoryhub.memory.models import MemoryEntry
from tests.conftest import Actors, api_client, assert_error


def record(key: str, task: str, outcome: str, narrative: str, **extra: object) -> object:
    body = {"user_id": "u1", "task": task, "outcome": outcome, "narrative": narrative, **extra}
    return api_client(key).post("/api/v1/episodes", body, format="json")


def seed(actors: Actors) -> None:
    record(actors.bot_key, "Book a flight from Berlin to Lisbon", "success",
           "Searched three airlines. Compared prices and picked the cheapest direct flight. Booked it with the saved card.",
           tools_used={"flights.search": 3, "payments.charge": 1}, elapsed_ms=42000)
    record(actors.bot_key, "Book a flight from Paris to Rome", "failure",
           "Searched one airline only. The fare expired while waiting for confirmation. Gave up after two retries.",
           tools_used={"flights.search": 1})
    record(actors.bot_key, "Summarise the quarterly sales report", "success",
           "Read the PDF. Extracted the tables. Wrote a one-page summary.", tools_used={"pdf.read": 1})


def test_it_takes_narratives_of_any_length_in_sentences_and_tools_as_a_list(actors: Actors) -> None:
    # Agents send lists of the tools they called and narratives of their own length.
    response = record(actors.bot_key, "Look up the weather", "success", "Done.", tools_used=["weather.get", "geo.lookup", "weather.get"])
    assert response.status_code == 201, response.content
    assert response.json()["tools_used"] == {"weather.get": 2, "geo.lookup": 1}
    assert Episode.objects.get().tools_used == {"weather.get": 2, "geo.lookup": 1}
    long = " ".join(f"Step {n} went fine." for n in range(12))
    assert record(actors.bot_key, "A long task", "success", long).status_code == 201


def test_it_records_an_episode_as_a_searchable_memory(actors: Actors) -> None:
    response = record(actors.bot_key, "Reset a user's password", "handoff", "Verified identity. The account was locked by security. Handed off to a human.")
    assert response.status_code == 201
    assert response.json()["outcome"] == "handoff"
    memory = MemoryEntry.objects.get(memory_type="episodic")
    assert "agent-episode" in memory.tags and memory.user_id == "u1"
    # The memory says it came from the episode.
    source = api_client(actors.bot_key).get(f"/api/v1/memories/{memory.pk}").json()["source"]
    assert source == {"kind": "episode", "episode_id": response.json()["id"]}


def test_it_finds_similar_episodes_with_guidance(actors: Actors) -> None:
    seed(actors)
    body = api_client(actors.bot_key).post("/api/v1/episodes/similar", {"task": "Book a flight from Madrid to Lisbon", "k": 2}, format="json").json()
    tasks = [r["episode"]["task"] for r in body["results"]]
    assert len(tasks) == 2 and all("flight" in t for t in tasks)
    assert body["guidance"].startswith("You have done this before:")
    assert "What worked: the successful runs used flights.search, payments.charge." in body["guidance"]
    assert "What wasted time: Book a flight from Paris to Rome ended in failure." in body["guidance"]
    only_success = api_client(actors.bot_key).post("/api/v1/episodes/similar", {"task": "flight booking", "outcome": "success"}, format="json").json()
    assert {r["episode"]["outcome"] for r in only_success["results"]} == {"success"}


def test_it_links_the_session_and_checks_its_user(actors: Actors) -> None:
    api_client(actors.bot_key).post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    ok = record(actors.bot_key, "t", "success", "One. Two. Three.", session_id="s1")
    assert ok.json()["session_id"] == "s1"
    assert_error(record(actors.bot_key, "t", "success", "One. Two. Three.", session_id="nope"), 404, "SESSION_NOT_FOUND")
    body = {"user_id": "u2", "task": "t", "outcome": "success", "narrative": "One. Two. Three.", "session_id": "s1"}
    assert_error(api_client(actors.bot_key).post("/api/v1/episodes", body, format="json"), 400, "SESSION_USER_MISMATCH")


def test_it_refuses_bad_episodes(actors: Actors) -> None:
    assert_error(record(actors.bot_key, "t", "success", "x" * 4001), 400, "VALIDATION_ERROR")
    assert_error(record(actors.bot_key, "t", "success", "One. Two. Three.", tools_used="search"), 400, "VALIDATION_ERROR")
    assert_error(record(actors.bot_key, "t", "success", "One. Two. Three.", tools_used=["search", 3]), 400, "VALIDATION_ERROR")
    assert_error(record(actors.bot_key, "t", "won", "One. Two. Three."), 400, "VALIDATION_ERROR")
    assert_error(record(actors.bot_key, "t", "success", "One. Two. Three.", tools_used={"x": -1}), 400, "VALIDATION_ERROR")
    assert_error(record(actors.owner_key, "t", "success", "One. Two. Three."), 403, "AGENT_KEY_REQUIRED")
    assert Episode.objects.count() == 0


def test_it_keeps_episodes_in_their_workspace(actors: Actors) -> None:
    seed(actors)
    body = api_client(actors.spy_key).post("/api/v1/episodes/similar", {"task": "Book a flight"}, format="json").json()
    assert body["results"] == [] and body["guidance"] == "No similar past episodes."


def test_it_drafts_an_episode_from_a_session_that_can_be_posted(actors: Actors) -> None:
    client = api_client(actors.bot_key)
    client.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    client.post("/api/v1/sessions/s1/messages", {"messages": [
        {"role": "user", "content": "Please renew my passport before June 3."},
        {"role": "assistant", "content": "We decided to book the appointment for May 12."},
    ]}, format="json")
    client.put("/api/v1/sessions/s1/plan", {"goal": "Renew the passport", "steps": [{"step_id": "book", "description": "Book an appointment"}]}, format="json")
    client.patch("/api/v1/sessions/s1/plan/steps/book", {"status": "running"}, format="json")
    client.post("/api/v1/sessions/s1/tool-calls", {"tool": "calendar.book", "step_id": "book", "result": "booked"}, format="json")
    client.patch("/api/v1/sessions/s1/plan/steps/book", {"status": "done"}, format="json")
    draft = client.post("/api/v1/sessions/s1/episode-draft", {}, format="json").json()
    assert (draft["task"], draft["outcome"], draft["tools_used"]) == ("Renew the passport", "success", {"calendar.book": 1})
    assert "May 12" in draft["narrative"]
    posted = api_client(actors.bot_key).post("/api/v1/episodes", draft, format="json")
    assert posted.status_code == 201, posted.content
    assert_error(api_client(actors.spy_key).post("/api/v1/sessions/s1/episode-draft", {}, format="json"), 404, "SESSION_NOT_FOUND")
