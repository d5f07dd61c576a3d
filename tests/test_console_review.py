"""The console's review queue (console/memory_views.py): flagged and quarantined memories
oldest first with counts in the sidebar; approvers and admins verify, flag, quarantine
and release from the queue or the entry's page; viewers read; agent text stays text."""

from __future__ import annotations

from django.test import Client

from memoryhub.memory.models import MemoryEntry
from tests.conftest import Actors, api_client, approver, remember

HTMX = {"HTTP_HX_REQUEST": "true"}


def flagged(actors: Actors, content: str, **fields: object) -> dict:
    entry = remember(actors.bot_key, content, **fields)
    api_client(actors.bot_key).post(f"/api/v1/memories/{entry['id']}/review", {"action": "flag", "reason": "<b>contradicted</b>"}, format="json")
    return entry


def test_it_lists_what_waits_with_counts_and_lets_approvers_act(actors: Actors, client: Client) -> None:
    first = flagged(actors, "Ada lives in <script>alert(1)</script>Lisbon")
    second = flagged(actors, "Ada lives in Porto")
    client.force_login(approver(actors).user)
    html = client.get("/memory/review/").content.decode()
    assert html.index("Ada lives in &lt;script&gt;") < html.index("Ada lives in Porto")  # oldest first
    assert "<script>alert(1)" not in html and "&lt;b&gt;contradicted" in html
    assert 'data-testid="review-waiting" title="flagged or quarantined memories, and groups of duplicates">2<' in html  # the sidebar

    answer = client.post(f"/memory/{first['id']}/review/", {"action": "quarantine", "reason": "planted", "next": "/memory/review/"})
    assert answer.status_code == 302 and answer["Location"] == "/memory/review/"
    assert MemoryEntry.objects.get(pk=first["id"]).review == "quarantined"
    assert api_client(actors.bot_key).get(f"/api/v1/memories/{first['id']}").status_code == 404
    quarantined = client.get("/memory/review/?reason=quarantined").content.decode()
    assert "Ada lives in &lt;script&gt;" in quarantined and "Ada lives in Porto" not in quarantined
    # From the entry's page, with htmx: back to the entry.
    answer = client.post(f"/memory/{second['id']}/review/", {"action": "verify"}, **HTMX)
    assert answer["HX-Redirect"] == f"/memory/{second['id']}/"
    assert MemoryEntry.objects.get(pk=second["id"]).review == "verified"
    assert "Nothing flagged" in client.get("/memory/review/").content.decode()
    # A redirect elsewhere than this site is not followed.
    answer = client.post(f"/memory/{second['id']}/review/", {"action": "flag", "next": "//evil.example/"})
    assert answer["Location"] == f"/memory/{second['id']}/"


def test_viewers_read_and_nobody_acts_across_workspaces(actors: Actors, client: Client) -> None:
    entry = flagged(actors, "Ada prefers tea")
    client.force_login(actors.teammate.user)  # a viewer
    html = client.get("/memory/review/").content.decode()
    assert "Ada prefers tea" in html and 'name="action"' not in html
    assert 'name="action"' not in client.get(f"/memory/{entry['id']}/").content.decode()
    assert client.post(f"/memory/{entry['id']}/review/", {"action": "quarantine"}).status_code == 403
    outsider = Client()
    outsider.force_login(actors.outsider.user)  # an admin of another workspace
    assert "Ada prefers tea" not in outsider.get("/memory/review/").content.decode()
    assert outsider.post(f"/memory/{entry['id']}/review/", {"action": "quarantine"}).status_code == 404
    owner = Client()
    owner.force_login(actors.owner.user)
    assert owner.post(f"/memory/{entry['id']}/review/", {"action": "bless"}).status_code == 400
    assert MemoryEntry.objects.get(pk=entry["id"]).review == "flagged"


def test_it_says_what_to_do_when_nothing_waits(actors: Actors, client: Client) -> None:
    client.force_login(actors.owner.user)
    html = client.get("/memory/review/?reason=quarantined").content.decode()
    assert "Nothing quarantined" in html and "PUT /api/v1/settings/review" in html
    assert 'data-testid="review-waiting"' not in html
    assert client.get("/memory/review/", **HTMX).content.decode().lstrip().startswith('<section class="card" id="queue">')


def duplicated(actors: Actors, content: str, again: str) -> tuple[dict, dict]:
    return remember(actors.bot_key, content), remember(actors.bot_key, again)


def test_it_shows_duplicates_side_by_side_and_lets_approvers_merge_them(actors: Actors, client: Client) -> None:
    first, second = duplicated(actors, "Ivy's <img src=x onerror=alert(1)> plan is gold", "ivy's <IMG SRC=X ONERROR=ALERT(1)> plan is gold!")
    client.force_login(approver(actors).user)
    html = client.get("/memory/review/?reason=duplicates").content.decode()
    assert html.count('data-testid="duplicate"') == 2 and "<img src=x" not in html and "&lt;img src=x" in html
    assert html.index(first["id"]) < html.index(second["id"])  # the first written first
    assert 'data-testid="review-waiting" title="flagged or quarantined memories, and groups of duplicates">1<' in html
    answer = client.post(f"/memory/{second['id']}/merge/", {"others": [first["id"]]})
    assert answer.status_code == 302 and answer["Location"] == "/memory/review/?reason=duplicates"
    kept, merged = MemoryEntry.objects.get(pk=second["id"]), MemoryEntry.objects.get(pk=first["id"])
    assert (kept.version, merged.superseded_by_id) == (2, kept.pk)
    assert "No duplicates wait" in client.get("/memory/review/?reason=duplicates").content.decode()


def test_not_duplicates_leaves_both_and_empties_the_group(actors: Actors, client: Client) -> None:
    first, second = duplicated(actors, "Jon's flight is at 9", "jon's flight is at 9")
    client.force_login(approver(actors).user)
    answer = client.post(f"/memory/{first['id']}/not-duplicates/", **HTMX)
    assert answer["HX-Redirect"] == "/memory/review/?reason=duplicates"
    assert "No duplicates wait" in client.get("/memory/review/?reason=duplicates").content.decode()
    assert MemoryEntry.objects.filter(pk__in=[first["id"], second["id"]], invalidated_at__isnull=True).count() == 2


def test_viewers_and_strangers_cannot_merge_or_dismiss(actors: Actors, client: Client) -> None:
    first, second = duplicated(actors, "Kim likes ska", "kim likes ska")
    client.force_login(actors.teammate.user)  # a viewer: reads the group, no buttons
    html = client.get("/memory/review/?reason=duplicates").content.decode()
    assert html.count('data-testid="duplicate"') == 2 and "Keep this one" not in html and "Not duplicates" not in html
    assert client.post(f"/memory/{second['id']}/merge/", {"others": [first["id"]]}).status_code == 403
    assert client.post(f"/memory/{first['id']}/not-duplicates/").status_code == 403
    outsider = Client()
    outsider.force_login(actors.outsider.user)
    assert 'data-testid="duplicate"' not in outsider.get("/memory/review/?reason=duplicates").content.decode()
    assert outsider.post(f"/memory/{second['id']}/merge/", {"others": [first["id"]]}).status_code == 404
    assert outsider.post(f"/memory/{first['id']}/not-duplicates/").status_code == 404
    owner = Client()
    owner.force_login(actors.owner.user)  # an admin, merging an entry into itself
    assert owner.post(f"/memory/{first['id']}/merge/", {"others": [first["id"]]}).status_code == 400
    assert MemoryEntry.objects.filter(invalidated_at__isnull=False).count() == 0
