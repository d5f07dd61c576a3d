from __future__ import annotations

from django.test import Client

from memoryhub.memory.models import MemoryEntry
from tests.conftest import Actors, approver, remember

HTMX = {"HTTP_HX_REQUEST": "true"}


def test_it_lists_the_workspaces_memories(actors: Actors, client: Client) -> None:
    mine = remember(actors.bot_key, "the office wifi is called Otterbox")
    theirs = remember(actors.spy_key, "globex secret plans")
    client.force_login(actors.teammate.user)
    html = client.get("/memory/").content.decode()
    assert "the office wifi is called Otterbox" in html
    assert "globex secret plans" not in html
    assert f"/memory/{mine['id']}/" in html and theirs["id"] not in html


def test_it_searches_with_mode_and_filters(actors: Actors, client: Client) -> None:
    remember(actors.bot_key, "Maria is allergic to peanuts", user_id="maria")
    remember(actors.bot_key, "Deploys happen on Fridays", user_id="ops")
    client.force_login(actors.teammate.user)
    html = client.get("/memory/", {"query": "food allergy", "mode": "semantic", "user_id": "maria"}).content.decode()
    assert "Maria is allergic to peanuts" in html and "Deploys happen" not in html
    assert "<meter" in html


def test_it_marks_a_repeat_of_a_better_result(actors: Actors, client: Client) -> None:
    notes = [
        remember(actors.bot_key, "We cleaned out the garage this weekend, found so much old stuff."),
        remember(actors.bot_key, "We cleaned out the garage this weekend and found so much old stuff!"),
    ]
    client.force_login(actors.teammate.user)
    html = client.get("/memory/", {"query": "cleaning the garage", "mode": "semantic"}).content.decode()
    rows = [row for row in html.split("<tr>")[2:]]  # after the header's
    assert len(rows) == 2 and ">repeat</a>" not in rows[0]
    better = next(n["id"] for n in notes if f"/memory/{n['id']}/" in rows[0])
    # The second row repeats the first, and its badge leads to it.
    assert f'<a class="badge" href="/memory/{better}/"' in rows[1] and ">repeat</a>" in rows[1]


def test_it_keeps_repeats_in_place_and_follows_names_when_asked(actors: Actors, client: Client) -> None:
    remember(actors.bot_key, "We cleaned out the garage this weekend, found so much old stuff.")
    remember(actors.bot_key, "We cleaned out the garage this weekend and found so much old stuff!")
    client.force_login(actors.teammate.user)
    html = client.get("/memory/", {"query": "cleaning the garage", "mode": "semantic", "keep_repeats": "on"}).content.decode()
    assert ">repeat</a>" not in html and html.count("cleaned out the garage") == 2

    remember(actors.bot_key, "Omar: Which city has the best food in April?", user_id="omar")
    remember(actors.bot_key, "Omar: I'm booking flights to go see Farid in April, I haven't seen her in ages.", user_id="omar")
    remember(actors.bot_key, "Omar: My sister Farid lives in Melbourne; she teaches maths at a school there.", user_id="omar")
    question = {"query": "Which city is Omar flying to in April?", "user_id": "omar", "mode": "semantic"}
    score = lambda html: float(html.split("Melbourne")[0].rsplit("</meter>", 1)[1].split("<")[0])  # noqa: E731
    unfollowed = score(client.get("/memory/", {**question, "follow_names": "off"}).content.decode())
    # The entry found through "Farid" (named by the second best result) scores 0.03 more for it.
    for follow in ("", "results", "all"):
        followed = score(client.get("/memory/", {**question, "follow_names": follow}).content.decode())
        assert round(followed - unfollowed, 3) == 0.03, follow


def test_it_answers_htmx_with_the_results_fragment(actors: Actors, client: Client) -> None:
    remember(actors.bot_key, "fragment check")
    client.force_login(actors.teammate.user)
    html = client.get("/memory/", {"query": "fragment"}, **HTMX).content.decode()
    assert html.lstrip().startswith('<section class="card" id="results">')


def test_it_renders_agent_content_as_text(actors: Actors, client: Client) -> None:
    entry = remember(actors.bot_key, "<script>alert('pwned')</script><b>bold</b>")
    client.force_login(actors.teammate.user)
    for url in ("/memory/", f"/memory/{entry['id']}/"):
        html = client.get(url).content.decode()
        assert "<script>alert" not in html and "<b>bold</b>" not in html
        assert "&lt;script&gt;" in html


def test_it_shows_the_history_of_a_fact(actors: Actors, client: Client) -> None:
    for city in ("Berlin", "Paris"):
        latest = remember(actors.bot_key, f"Alice lives in {city}", memory_type="factual", data={"subject": "Alice", "predicate": "lives in", "object": city})
    client.force_login(actors.teammate.user)
    html = client.get(f"/memory/{latest['id']}/").content.decode()
    history = html[html.index("History of this fact"):]
    assert history.index("Berlin") < history.index("Paris")
    assert history.count("until") == 1 and "current" in history


def test_it_hides_entries_of_another_workspace(actors: Actors, client: Client) -> None:
    theirs = remember(actors.spy_key, "globex secret plans")
    client.force_login(actors.owner.user)
    assert client.get(f"/memory/{theirs['id']}/").status_code == 404
    assert client.post(f"/memory/{theirs['id']}/delete/").status_code == 404
    assert MemoryEntry.objects.filter(pk=theirs["id"]).exists()


def test_it_lets_only_admins_and_compliance_delete(actors: Actors, client: Client) -> None:
    entry = remember(actors.bot_key, "delete me")
    client.force_login(actors.teammate.user)
    assert "Delete</button>" not in client.get(f"/memory/{entry['id']}/").content.decode()
    assert client.post(f"/memory/{entry['id']}/delete/").status_code == 403
    client.force_login(actors.owner.user)
    response = client.post(f"/memory/{entry['id']}/delete/", **HTMX)
    assert response["HX-Redirect"] == "/memory/"
    assert not MemoryEntry.objects.filter(pk=entry["id"]).exists()


def test_it_guides_an_empty_workspace(actors: Actors, client: Client) -> None:
    client.force_login(actors.owner.user)
    assert "No memories in this workspace yet" in client.get("/memory/").content.decode()


def test_it_links_a_memory_to_where_it_came_from_and_shows_its_revisions(actors: Actors, client: Client) -> None:
    from tests.conftest import api_client

    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    bot.post("/api/v1/sessions/s1/messages", {"role": "user", "content": "I moved to <b>Lisbon</b>."}, format="json")
    bot.post("/api/v1/sessions/s1/tool-calls", {"tool": "crm.lookup", "call_id": "c-1", "result": "tier: gold"}, format="json")
    learnt = remember(actors.bot_key, "Lives in <i>Lisbon</i>", source={"session_id": "s1", "seq": 1})
    bot.patch(f"/api/v1/memories/{learnt['id']}", {"content": "Lives in <i>Porto</i>"}, format="json")
    looked_up = remember(actors.bot_key, "Gold tier", source={"session_id": "s1", "call_id": "c-1"})
    client.force_login(actors.teammate.user)

    html = client.get(f"/memory/{learnt['id']}/").content.decode()
    assert 'href="/sessions/s1/conversation/?from=1#m-1"' in html and "message #1 of session" in html
    revisions = html[html.index("Revisions"):]
    # The current revision as what it changed (word by word), then the first one whole.
    assert revisions.index("Lives in <del>&lt;i&gt;Lisbon&lt;/i&gt;</del><ins>&lt;i&gt;Porto&lt;/i&gt;</ins>") < revisions.index(
        "Lives in &lt;i&gt;Lisbon&lt;/i&gt;</pre>") and "<i>" not in revisions
    assert "update by agent:bot" in revisions and "create by agent:bot" in revisions
    # The places linked to exist, with their anchors.
    assert 'id="m-1"' in client.get("/sessions/s1/conversation/?from=1").content.decode()
    assert 'href="/sessions/s1/plan/#call-c-1"' in client.get(f"/memory/{looked_up['id']}/").content.decode()
    assert 'id="call-c-1"' in client.get("/sessions/s1/plan/").content.decode()
    assert "One revision" in client.get(f"/memory/{looked_up['id']}/").content.decode()
    # And the other way: a message and a tool call show the memories that came from them.
    conversation = client.get("/sessions/s1/conversation/?from=1").content.decode()
    assert f'href="/memory/{learnt["id"]}/"' in conversation and "Lives in &lt;i&gt;Porto" in conversation
    assert f'href="/memory/{looked_up["id"]}/"' in client.get("/sessions/s1/plan/").content.decode()


def test_approvers_edit_and_revert_a_memory_with_its_changes_shown_word_by_word(actors: Actors, client: Client) -> None:
    entry = remember(actors.bot_key, "Lena lives in <b>Berlin</b> now", tags=["home"])
    client.force_login(approver(actors).user)
    edited = client.post(f"/memory/{entry['id']}/edit/", {"content": "Lena lives in <b>Munich</b> now", "tags": "home, city",
                                                         "reason": "she moved", "version": 1})
    assert edited.status_code == 302 and edited["Location"] == f"/memory/{entry['id']}/"
    html = client.get(f"/memory/{entry['id']}/").content.decode()
    assert "<del>&lt;b&gt;Berlin&lt;/b&gt; </del><ins>&lt;b&gt;Munich&lt;/b&gt; </ins>" in html  # text, word by word
    assert '<ins class="tag">city</ins>' in html and "she moved" in html
    # A stale form (revision 1 again) changes nothing.
    stale = client.post(f"/memory/{entry['id']}/edit/", {"content": "Lena lives in Paris", "reason": "x", "version": 1})
    assert stale.status_code == 409 and MemoryEntry.objects.get(pk=entry["id"]).content == "Lena lives in <b>Munich</b> now"
    assert client.post(f"/memory/{entry['id']}/edit/", {"content": "no reason", "version": 2}).status_code == 400
    back = client.post(f"/memory/{entry['id']}/revert/", {"revision": 1, "reason": "wrong Lena"}, HTTP_HX_REQUEST="true")
    assert back["HX-Redirect"] == f"/memory/{entry['id']}/"
    current = MemoryEntry.objects.get(pk=entry["id"])
    assert (current.content, current.version, current.change, current.tags) == ("Lena lives in <b>Berlin</b> now", 3, "revert", ["home"])
    assert client.post(f"/memory/{entry['id']}/revert/", {"revision": 9}).status_code == 404


def test_viewers_and_strangers_neither_edit_nor_revert(actors: Actors, client: Client) -> None:
    entry = remember(actors.bot_key, "Mo drinks oat milk")
    client.force_login(actors.teammate.user)
    assert "Edit this memory" not in client.get(f"/memory/{entry['id']}/").content.decode()
    assert client.post(f"/memory/{entry['id']}/edit/", {"content": "x", "reason": "y", "version": 1}).status_code == 403
    assert client.post(f"/memory/{entry['id']}/revert/", {"revision": 1}).status_code == 403
    outsider = Client()
    outsider.force_login(actors.outsider.user)
    assert outsider.post(f"/memory/{entry['id']}/edit/", {"content": "x", "reason": "y", "version": 1}).status_code == 404
    assert outsider.post(f"/memory/{entry['id']}/revert/", {"revision": 1}).status_code == 404
    assert MemoryEntry.objects.get(pk=entry["id"]).version == 1


def test_approvers_act_on_selected_results_after_seeing_how_many(actors: Actors, client: Client) -> None:
    first, second, third = (remember(actors.bot_key, f"Pia note {n} <b>x</b>") for n in range(3))
    client.force_login(approver(actors).user)
    page = client.get("/memory/").content.decode()
    assert 'form="bulk"' in page and '<option value="delete">' not in page  # approvers do not delete
    asked = client.post("/memory/bulk/", {"ids": [first["id"], second["id"]], "action": "quarantine", "next": "/memory/?query=Pia"})
    html = asked.content.decode()
    assert asked.status_code == 200 and "Quarantine 2 memories?" in html and "Pia note 0 &lt;b&gt;" in html
    assert MemoryEntry.objects.filter(review="quarantined").count() == 0  # nothing before the confirmation
    done = client.post("/memory/bulk/", {"ids": [first["id"], second["id"]], "action": "quarantine", "confirmed": "yes",
                                         "reason": "planted", "next": "/memory/?query=Pia"})
    assert done.status_code == 302 and done["Location"] == "/memory/?query=Pia"
    assert MemoryEntry.objects.filter(review="quarantined").count() == 2 and MemoryEntry.objects.get(pk=third["id"]).review == "unreviewed"
    tagged = client.post("/memory/bulk/", {"ids": [third["id"]], "action": "tag", "tag": "checked", "confirmed": "yes"})
    assert tagged.status_code == 302 and MemoryEntry.objects.get(pk=third["id"]).tags == ["checked"]
    assert client.post("/memory/bulk/", {"ids": [third["id"]], "action": "tag", "tag": " ", "confirmed": "yes"}).status_code == 400
    assert client.post("/memory/bulk/", {"ids": [third["id"]], "action": "delete", "confirmed": "yes"}).status_code == 403
    assert MemoryEntry.objects.count() == 3


def test_bulk_actions_are_all_or_nothing_and_role_bound(actors: Actors, client: Client) -> None:
    mine = remember(actors.bot_key, "Quinn likes rye")
    foreign = remember(actors.spy_key, "Globex secret")
    client.force_login(actors.owner.user)  # an admin: may delete, not what another workspace holds
    answer = client.post("/memory/bulk/", {"ids": [mine["id"], foreign["id"]], "action": "delete", "confirmed": "yes"})
    assert answer.status_code == 404 and MemoryEntry.objects.count() == 2
    assert client.post("/memory/bulk/", {"ids": [mine["id"]], "action": "delete", "confirmed": "yes"}).status_code == 302
    assert not MemoryEntry.objects.filter(pk=mine["id"]).exists()
    viewer = Client()
    viewer.force_login(actors.teammate.user)
    other = remember(actors.bot_key, "Quinn likes wheat")
    assert 'form="bulk"' not in viewer.get("/memory/").content.decode()
    assert viewer.post("/memory/bulk/", {"ids": [other["id"]], "action": "quarantine", "confirmed": "yes"}).status_code == 403
    assert MemoryEntry.objects.get(pk=other["id"]).review == "unreviewed"


def test_it_shows_metadata_and_data_as_json(actors: Actors, client: Client) -> None:
    fact = remember(actors.bot_key, "Alice lives in Lisbon", memory_type="factual", metadata={"checked": True, "note": None},
                    data={"subject": "Alice", "predicate": "lives in", "object": "Lisbon"})
    client.force_login(actors.teammate.user)
    html = client.get(f"/memory/{fact['id']}/").content.decode()
    # JSON as agents wrote it (true, null, double quotes, escaped for HTML), not a Python repr (True, None, 'quotes').
    assert "&quot;checked&quot;: true" in html and "&quot;note&quot;: null" in html
    assert "&quot;confidence&quot;: 1.0" in html
    assert "True" not in html.split("Metadata", 1)[1].split("</table>", 1)[0]
