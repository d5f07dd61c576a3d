"""The Python client against a live hub: round trips of memories, sessions, plans, tool
calls, checkpoints and episodes, each test run with the sync and the async client."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

import pytest

from memoryhub_client import AuthenticationError, BadRequest, Conflict, NotFound, UnprocessableEntity
from memoryhub_client.models import GraphRule, LoadedCheckpoint, Memory, MemoryInput, Page, StepInput
from tests.conftest import Actors, LiveHub, poll
from tests.hub_clients import HubClients


@pytest.fixture(params=["sync", "async"])
def hubs(request: pytest.FixtureRequest, live_hub: LiveHub) -> Iterator[HubClients]:
    clients = HubClients(request.param, live_hub.url)
    yield clients
    clients.close()


def test_it_round_trips_memories(actors: Actors, hubs: HubClients) -> None:
    bot = hubs(actors.bot_key)
    assert bot.me().kind == "agent"
    entry = bot.memories.create("Prefers window seats on long flights", user_id="u1", tags=["travel", "seat"], metadata={"source": "chat"})
    assert isinstance(entry, Memory) and entry.scope == "agent" and entry.tags == ["travel", "seat"]
    assert bot.memories.get(entry.id).content == entry.content

    hits = bot.memories.search("window seat", user_id="u1")
    assert hits[0].entry.id == entry.id and hits[0].score > 0
    again = bot.memories.create("Prefers window seats on long flights!", user_id="u1")
    hits = bot.memories.search("window seat", user_id="u1")
    assert [h.repeat_of for h in hits] == [None, hits[0].entry.id]
    assert [h.repeat_of for h in bot.memories.search("window seat", user_id="u1", repeats="keep")] == [None, None]
    bot.memories.delete(again.id)

    # Two hops: the second result names Farid, and the entry naming her city follows.
    for text in ("Omar: Which city has the best food in April?",
                 "Omar: I'm booking flights to go see Farid in April, I haven't seen her in ages.",
                 "Omar: My sister Farid lives in Melbourne; she teaches maths at a school there.", "Omar: I need a new suitcase."):
        bot.memories.create(text, user_id="omar")
    question = dict(user_id="omar", max_results=3)
    unfollowed = bot.memories.search("Which city is Omar flying to in April?", **question, follow_names="off")
    assert not any("Melbourne" in h.entry.content for h in unfollowed)
    for follow in ("results", "all"):
        hits = bot.memories.search("Which city is Omar flying to in April?", **question, follow_names=follow)
        assert any("Melbourne" in h.entry.content for h in hits)
        assert not any(h.reranked for h in hits)  # this hub has no reranker
    with pytest.raises(BadRequest) as refused:
        bot.memories.search("Which city is Omar flying to in April?", **question, rerank=True)
    assert refused.value.code == "RERANK_NOT_CONFIGURED"

    updated = bot.memories.update(entry.id, content="Prefers aisle seats", version=entry.version)
    assert updated.content == "Prefers aisle seats" and updated.version > entry.version
    with pytest.raises(Conflict) as stale:
        bot.memories.update(entry.id, content="stale", version=entry.version)
    assert stale.value.status == 409 and stale.value.code and stale.value.message

    batch = bot.memories.create_batch([{"content": f"note {n}", "user_id": "u1", "tags": ["travel"]} for n in range(4)])
    assert len(batch) == 4
    first_page = bot.memories.list(tags=["travel"], limit=2)
    assert isinstance(first_page, Page) and len(first_page.results) == 2 and first_page.next
    assert bot.memories.list(tags=["travel"], limit=2, cursor=first_page.next).results[0].id not in {m.id for m in first_page.results}
    every = [m.id for m in bot.memories.iter(tags=["travel"], limit=2)]
    assert sorted(every) == sorted([entry.id, *(m.id for m in batch)])
    assert [m.id for m in bot.memories.iter(metadata={"source": "chat"})] == [entry.id]
    assert bot.memories.stats(user_id="u1").memories.total == 5

    # Where it came from, and its history.
    bot.sessions.create("s-prov", user_id="u1")
    bot.sessions.append_message("s-prov", role="user", content="I moved to Lisbon.")
    learnt = bot.memories.create("Lives in Lisbon", user_id="u1", source={"session_id": "s-prov", "seq": 1})
    assert (learnt.source.kind, learnt.source.session_id, learnt.source.seq, learnt.revision) == ("message", "s-prov", 1, 1)
    bot.memories.update(learnt.id, content="Lives in Porto")
    assert [(r.revision, r.change) for r in bot.memories.revisions(learnt.id)] == [(2, "update"), (1, "create")]
    back = bot.memories.revert(learnt.id, 1, reason="Porto was a typo")
    assert (back.content, back.revision) == ("Lives in Lisbon", 3)
    [batched] = bot.memories.create_batch([MemoryInput(content="Has a cat", user_id="u1", source={"session_id": "s-prov", "seq": 1})])
    assert batched.source.kind == "message"
    assert bot.memories.review(batched.id, "flag", reason="said in jest").review == "flagged"
    owner = hubs(actors.owner_key)
    assert [m.id for m in owner.review.queue("flagged").results] == [batched.id]
    assert owner.review.update_settings(quarantine_sources=["tool_call"]) == {"quarantine_sources": ["tool_call"]}
    assert owner.review.settings() == {"quarantine_sources": ["tool_call"]}
    assert owner.memories.review(batched.id, "quarantine").review == "quarantined"
    with pytest.raises(NotFound):
        bot.memories.get(batched.id)
    bot.memories.delete(learnt.id)
    owner.memories.delete(batched.id)  # quarantined: no agent sees it, its writer included

    # Duplicates: listed, skipped, merged.
    said = bot.memories.create("Likes green tea", user_id="u1")
    again = bot.memories.create("likes green tea!", user_id="u1")
    assert (again.duplicate, [(s.id, s.score) for s in again.similar]) == (False, [(said.id, 1.0)])
    assert bot.memories.create("Likes  green tea", user_id="u1", on_duplicate="skip").id == said.id
    [skipped] = bot.memories.create_batch([{"content": "LIKES GREEN TEA", "user_id": "u1"}], on_duplicate="skip")
    assert (skipped.id, skipped.duplicate) == (said.id, True)
    merged = bot.memories.merge(said.id, [again.id], reason="same")
    assert merged.revision == 2 and bot.memories.get(again.id).superseded_by == said.id

    bot.memories.delete(entry.id)
    with pytest.raises(NotFound) as gone:
        bot.memories.get(entry.id)
    assert gone.value.status == 404
    with pytest.raises(BadRequest) as invalid:
        bot.memories.create("", user_id="u1")
    assert "fields" in invalid.value.details
    with pytest.raises(AuthenticationError):
        hubs("mh_not_a_key").me()


def test_it_walks_the_graph(actors: Actors, hubs: HubClients) -> None:
    bot, owner = hubs(actors.bot_key), hubs(actors.owner_key)
    assert owner.graph.set_rules([GraphRule(predicate="reports to", kind="transitive"),
                                  {"predicate": "parent of", "kind": "inverse", "inverse": "child of"}]).rules[0].inverse == "child of"
    assert [r.kind for r in bot.graph.rules().rules] == ["inverse", "transitive"]
    first = bot.graph.add("Alice", "reports to", "Bob", user_id="u1", confidence=0.9)
    assert first.memory_type == "factual" and first.data["confidence"] == 0.9
    bot.graph.add("Bob", "reports to", "Carol", user_id="u1")
    around = bot.graph.neighbors("alice", depth=2, predicates=["reports to"])
    assert [(e.subject, e.object, e.inferred) for e in around.results] == [
        ("Alice", "Bob", False), ("Bob", "Carol", False), ("Alice", "Carol", True),
    ]
    assert around.results[2].via == [first.id, around.results[1].entry_id]
    assert [(e.subject, e.object) for e in bot.graph.path("Alice", "Carol").path] == [("Alice", "Bob"), ("Bob", "Carol")]
    with pytest.raises(NotFound) as none:
        bot.graph.path("Alice", "Zed")
    assert none.value.code == "NO_PATH"
    grounding = bot.graph.grounding("Who is Alice's boss?", limit=2)
    assert grounding.facts[0].subject == "Alice" and grounding.message["role"] == "system"
    bot.sessions.create("g:1", user_id="u1")
    bot.sessions.append_message("g:1", role="user", content="Does Bob approve Alice's leave?")
    context = bot.sessions.context("g:1", grounding=3)
    assert context.messages[-1].grounding and "Alice reports to Bob" in context.messages[-1].content


def test_it_drives_a_session(actors: Actors, hubs: HubClients) -> None:
    bot = hubs(actors.bot_key)
    session = bot.sessions.create("trip:42", user_id="u1", metadata={"channel": "web"})
    assert session.session_id == "trip:42" and bot.sessions.create("trip:42", user_id="u1").session_id == "trip:42"
    with pytest.raises(Conflict):
        bot.sessions.create("trip:42", user_id="u2")

    system = bot.sessions.append_message("trip:42", "system", "You book trips.", pinned=True)
    later = bot.sessions.append_messages("trip:42", [{"role": "user", "content": "Book Lisbon"}, {"role": "assistant", "content": "Dates?"}])
    assert [m.seq for m in later] == sorted(m.seq for m in later) and later[0].seq > system.seq
    assert bot.sessions.list_messages("trip:42", limit=2).next
    assert [m.content for m in bot.sessions.iter_messages("trip:42", limit=2)] == ["You book trips.", "Book Lisbon", "Dates?"]
    assert bot.sessions.edit_message("trip:42", later[1].seq, content="Which dates?").revision >= 1
    context = bot.sessions.context("trip:42", max_messages=2)
    assert context.messages[0].role == "system" and context.messages[-1].content == "Which dates?"
    branched = bot.sessions.branch("trip:42", new_session_id="trip:42-b", upto_seq=later[0].seq)
    assert branched.parent == "trip:42"

    plan = bot.plans.set("trip:42", goal="Book Lisbon", steps=[
        StepInput(step_id="dates", description="Ask for dates"), {"step_id": "book", "description": "Book", "depends_on": ["dates"]},
    ])
    assert [s.step_id for s in plan.steps] == ["dates", "book"] and bot.plans.get("trip:42").goal == "Book Lisbon"
    with pytest.raises(Conflict):
        bot.plans.update_step("trip:42", "book", status="running")
    bot.plans.update_step("trip:42", "dates", status="running")
    assert bot.plans.update_step("trip:42", "dates", status="done", summary="May 3-7").status == "done"
    assert "May 3-7" in bot.plans.render("trip:42", current="book")

    call = bot.tool_calls.record("trip:42", "crm_lookup", args={"q": "jane"}, result={"email": "jane@example.com"}, step_id="dates")
    assert call.redactions and call.tool == "crm_lookup"
    assert [c.call_id for c in bot.tool_calls.iter("trip:42")] == [call.call_id]
    assert "jane@example.com" not in str(bot.tool_calls.result(call.call_id).result)

    saved = bot.checkpoints.save("trip:42", expected_version=0, state={"cursor": 1}, current_step="book", label="first")
    assert saved.version == 1
    with pytest.raises(Conflict) as stale:
        bot.checkpoints.save("trip:42", expected_version=0, state={"cursor": 2})
    assert stale.value.details["current_version"] == 1
    latest = bot.checkpoints.latest("trip:42")
    assert isinstance(latest, LoadedCheckpoint) and latest.state == {"cursor": 1} and bot.checkpoints.get("trip:42", 1).version == 1
    assert [c.version for c in bot.checkpoints.iter("trip:42")] == [1]
    resumed = bot.checkpoints.resume("trip:42")
    assert resumed.state == {"cursor": 1} and resumed.messages and resumed.plan is not None
    forked = bot.checkpoints.fork("trip:42", from_version=1, new_session_id="trip:43")
    assert forked.forked_from.session_id == "trip:42" and bot.sessions.get("trip:43").latest_checkpoint_version >= 1
    assert bot.sessions.get("trip:42").latest_checkpoint_version == 1

    episode = bot.episodes.create(
        user_id="u1", task="Book a trip to Lisbon", outcome="success", session_id="trip:42", tools_used=["crm_lookup"],
        narrative="Asked for dates. Looked the customer up. Booked the flight.",
    )
    assert episode.tools_used == {"crm_lookup": 1}
    assert bot.episodes.similar("Book a trip to Porto", k=3).results[0].episode.id == episode.id
    assert [e.id for e in bot.episodes.iter(user_id="u1")] == [episode.id]
    assert bot.episodes.draft("trip:42").session_id == "trip:42"

    kinds = {event.kind for event in bot.sessions.iter_timeline("trip:42", limit=3)}
    assert {"message", "checkpoint"} <= kinds


def test_it_takes_a_key_read_from_a_file_and_never_repeats_a_broken_one(actors: Actors, hubs: HubClients) -> None:
    # A key file ends with a newline: that is whitespace around the key, not part of it.
    assert hubs(f"  {actors.bot_key}\n").me().kind == "agent"
    secret = actors.bot_key[-12:]
    for broken in (actors.bot_key[:-12] + "\n" + secret, actors.bot_key.replace("_", " ", 1) + secret, "", " \n"):
        with pytest.raises(ValueError) as refused:
            hubs(broken)
        assert secret not in str(refused.value) and "mha_" in str(refused.value)


def test_it_exports_downloads_and_imports_an_archive(actors: Actors, hubs: HubClients) -> None:
    bot, owner = hubs(actors.bot_key), hubs(actors.owner_key)
    bot.memories.create("Ann prefers the aisle seat.", user_id="ann")
    started = owner.exports.create(scope="workspace")
    done = poll(lambda: (export := owner.exports.get(started.id)).status == "done" and export, timeout=30)
    assert done and done.counts["memories"] == 1
    archive = owner.exports.download(started.id)
    assert hashlib.sha256(archive).hexdigest() == done.sha256
    # The archive of this very workspace brought back: everything is there already.
    restored = owner.imports.create(archive, format="memoryhub", store="default", agent="bot", filename="acme.zip")
    finished = poll(lambda: (job := owner.imports.get(restored.id)).status == "done" and job, timeout=30)
    assert finished and finished.counts.created == 0 and finished.counts.kinds["memories"]["skipped"] == 1
    mem0 = json.dumps([{"id": "m-1", "memory": "Bo likes tea.", "user_id": "bo"}]).encode()
    dry = owner.imports.create(mem0, format="mem0", store="default", agent="bot", dry_run=True)
    counted = poll(lambda: (job := owner.imports.get(dry.id)).status == "done" and job, timeout=30)
    assert counted and counted.dry_run and counted.counts.created == 1
    assert [hit.entry.content for hit in bot.memories.search("tea", user_id="bo")] == []
    with pytest.raises(UnprocessableEntity) as refused:
        owner.imports.create(b"not json", format="mem0", store="default", agent="bot")
    assert refused.value.code == "INVALID_IMPORT_FILE" and refused.value.status == 422


def test_it_reads_usage_and_sets_the_budget(actors: Actors, hubs: HubClients) -> None:
    bot, owner = hubs(actors.bot_key), hubs(actors.owner_key)
    bot.memories.create("Ann prefers the aisle seat.", user_id="ann")
    seen = owner.usage.get(group_by="operation")
    assert [line.key for line in seen.results] == ["embed"] and seen.totals.calls == 1 and seen.from_ is not None
    assert bot.usage.get().totals.calls == 1
    budget = owner.usage.set_budget(monthly_limit=10, warn_at=8)
    assert (budget.monthly_limit, budget.warn_at, owner.usage.budget().spent) == (10.0, 8.0, 0.0)  # the local model is free
    assert owner.usage.set_budget(monthly_limit=None).monthly_limit is None


def test_it_deletes_a_sessions_last_messages_or_all(actors: Actors, hubs: HubClients) -> None:
    bot = hubs(actors.bot_key)
    bot.sessions.create(session_id="pop", user_id="u1")
    bot.sessions.append_messages("pop", [{"role": "user", "content": f"turn {n}", "item": {"turn": n}} for n in range(4)])
    [popped] = bot.sessions.pop_messages("pop")
    assert (popped.content, popped.item) == ("turn 3", {"turn": 3})
    assert bot.sessions.delete_messages("pop", last=1) == 1
    assert [m.content for m in bot.sessions.list_messages("pop").results] == ["turn 0", "turn 1"]
    assert [m.content for m in bot.sessions.list_messages("pop", order="desc", limit=1).results] == ["turn 1"]
    assert bot.sessions.delete_messages("pop", all=True) == 2
    assert bot.sessions.list_messages("pop").results == [] and bot.sessions.pop_messages("pop") == []
    with pytest.raises(ValueError):
        bot.sessions.delete_messages("pop")
