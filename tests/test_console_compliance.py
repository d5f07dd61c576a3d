"""The console's Compliance page through Django's test client (the browser test is in
test_browser_compliance.py)."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from memoryhub.compliance.models import PurgeRequest
from memoryhub.compliance.services import purge_counts
from memoryhub.core import services
from memoryhub.core.models import AuditEntry, Role
from memoryhub.privacy.models import BlockedUser, RetentionPolicy
from memoryhub.privacy.selectors import retention_policies
from memoryhub.privacy.services import user_hash
from tests.conftest import Actors, LiveHub, api_client, purge_finished
from tests.test_browser_console import log_in


def seed(actors: Actors, user_id: str) -> None:
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/memories", {"content": "likes tea", "user_id": user_id}, format="json")
    bot.post("/api/v1/sessions", {"session_id": f"s-{user_id}", "user_id": user_id}, format="json")
    bot.post(f"/api/v1/sessions/s-{user_id}/messages", {"messages": [{"role": "user", "content": "hello"}]}, format="json")


def compliance_officer(actors: Actors) -> Client:
    membership = services.operator_get_or_create(username="dpo", workspace=actors.workspace, role=Role.COMPLIANCE)
    client = Client()
    client.force_login(membership.user)
    return client


def test_only_compliance_officers_and_admins_see_it(actors: Actors, client: Client) -> None:
    client.force_login(actors.teammate.user)
    assert client.get("/compliance/").status_code == 403
    assert "Compliance" not in client.get("/").content.decode()  # not offered to a viewer
    assert client.post("/compliance/preview/", {"user_id": "u1"}).status_code == 403
    client.force_login(actors.owner.user)
    page = client.get("/compliance/").content.decode()
    assert "Erase an end user" in page and "No purges yet" in page and "No user is blocked" in page
    assert compliance_officer(actors).get("/compliance/").status_code == 200


def test_it_previews_without_deleting(actors: Actors) -> None:
    seed(actors, "alice")
    before = purge_counts(workspace_id=actors.workspace.pk, user_id="alice")
    html = compliance_officer(actors).post("/compliance/preview/", {"user_id": "alice"}, HTTP_HX_REQUEST="true").content.decode()
    assert html.lstrip().startswith('<section class="card" id="erase">')
    assert f"Would delete {sum(before.values())} rows" in html and "Memory entries" in html and "Type the user_id again" in html
    assert purge_counts(workspace_id=actors.workspace.pk, user_id="alice") == before
    assert AuditEntry.objects.filter(action="purge_dry_run", actor="operator:dpo").count() == 1


def test_it_guides_when_nothing_is_held(actors: Actors) -> None:
    html = compliance_officer(actors).post("/compliance/preview/", {"user_id": "nobody"}).content.decode()
    assert "holds nothing about this user_id" in html


def test_it_renders_a_typed_user_id_as_text(actors: Actors) -> None:
    html = compliance_officer(actors).post("/compliance/preview/", {"user_id": "<script>alert(1)</script>"}).content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html


def test_a_mistyped_confirmation_erases_nothing(actors: Actors) -> None:
    seed(actors, "alice")
    response = compliance_officer(actors).post(
        "/compliance/purges/", {"user_id": "alice", "confirm_user_id": "alicе"}, HTTP_HX_REQUEST="true"  # Cyrillic е
    )
    assert response.status_code == 422 and "does not match" in response.content.decode()
    assert not PurgeRequest.objects.filter(dry_run=False).exists()
    assert purge_counts(workspace_id=actors.workspace.pk, user_id="alice")["memory.MemoryEntry"] == 1


def test_it_erases_shows_progress_and_offers_the_receipt(actors: Actors, transactional_db: None) -> None:
    seed(actors, "alice")
    seed(actors, "bob")
    bob = purge_counts(workspace_id=actors.workspace.pk, user_id="bob")
    dpo = compliance_officer(actors)
    started = dpo.post("/compliance/purges/", {"user_id": "alice", "confirm_user_id": "alice", "block_new_writes": "on"}, HTTP_HX_REQUEST="true")
    assert 'data-testid="purge-progress"' in started.content.decode()
    purge = purge_finished(PurgeRequest.objects.get(dry_run=False).pk)
    progress = dpo.get(f"/compliance/purges/{purge.pk}/progress/", HTTP_HX_REQUEST="true").content.decode()
    assert "verified" in progress and "hx-trigger" not in progress  # polling stops when done
    assert "Memory entries" in progress and f"/compliance/purges/{purge.pk}/receipt.json" in progress
    download = dpo.get(f"/compliance/purges/{purge.pk}/receipt.json")
    assert download["Content-Disposition"] == f'attachment; filename="purge-{purge.pk}-receipt.json"'
    receipt = json.loads(download.content)
    assert receipt["user_hash"] == user_hash(workspace_id=actors.workspace.pk, user_id="alice") and receipt["verification"]["passed"]
    assert "alice" not in download.content.decode()
    assert sum(purge_counts(workspace_id=actors.workspace.pk, user_id="alice").values()) == 0
    assert purge_counts(workspace_id=actors.workspace.pk, user_id="bob") == bob
    page = dpo.get("/compliance/").content.decode()
    assert f"#{purge.pk}" in page and BlockedUser.objects.get().user_hash in page


def test_receipts_of_another_workspace_are_not_found(actors: Actors, transactional_db: None) -> None:
    outsider = Client()
    outsider.force_login(actors.outsider.user)
    outsider.post("/compliance/purges/", {"user_id": "x", "confirm_user_id": "x"})
    purge = purge_finished(PurgeRequest.objects.get(dry_run=False).pk)
    dpo = compliance_officer(actors)
    assert dpo.get(f"/compliance/purges/{purge.pk}/receipt.json").status_code == 404
    assert dpo.get(f"/compliance/purges/{purge.pk}/progress/", HTTP_HX_REQUEST="true").status_code == 404


def test_only_admins_lift_a_block(actors: Actors, client: Client) -> None:
    block = BlockedUser.objects.create(workspace=actors.workspace, user_hash="f" * 64)
    assert compliance_officer(actors).post(f"/compliance/blocks/{block.pk}/lift/").status_code == 403
    client.force_login(actors.outsider.user)
    assert client.post(f"/compliance/blocks/{block.pk}/lift/").status_code == 404
    client.force_login(actors.owner.user)
    assert client.post(f"/compliance/blocks/{block.pk}/lift/", HTTP_HX_REQUEST="true").content == b""
    assert not BlockedUser.objects.exists()
    assert AuditEntry.objects.get(action="block_lifted").details == {"user_hash": "f" * 64}


def test_it_saves_retention_policies_and_reports_bad_ones(actors: Actors) -> None:
    dpo = compliance_officer(actors)
    response = dpo.post("/compliance/retention/", {"tool_outputs": "30", "checkpoints": "10", "working_memories": "2", "sessions": ""}, follow=True)
    assert "Retention policies saved" in response.content.decode()
    assert retention_policies(workspace_id=actors.workspace.pk) == {"tool_outputs": 30, "checkpoints": 10, "working_memories": 2, "sessions": None, "approvals": None, "usage": None}
    assert not RetentionPolicy.objects.filter(kind="sessions").exists()  # left at the default: it follows the default
    response = dpo.post("/compliance/retention/", {"tool_outputs": "soon", "checkpoints": "", "working_memories": "2", "sessions": ""}, follow=True)
    html = response.content.decode()
    assert "is not a whole number" in html and "This kind always has a limit" in html
    response = dpo.post("/compliance/retention/", {"tool_outputs": "²", "checkpoints": "10", "working_memories": "2", "sessions": "99999999"}, follow=True)
    assert response.status_code == 200 and "is not a whole number" in response.content.decode() and "between 1 and 36500" in response.content.decode()
    assert RetentionPolicy.objects.get(kind="checkpoints").value == 10


def test_it_exports_the_audit_log(actors: Actors) -> None:
    dpo = compliance_officer(actors)
    dpo.post("/compliance/retention/", {"tool_outputs": "30", "checkpoints": "50", "working_memories": "1", "sessions": ""})
    lines = [json.loads(line) for line in dpo.get("/compliance/audit.jsonl").content.decode().splitlines()]
    assert ("retention_changed", "operator:dpo", "tool_outputs") in [(e["action"], e["actor"], e["target"]) for e in lines]
    assert all(e["workspace"] in ("acme", None) for e in lines)
    assert "globex" not in json.dumps(lines)


@pytest.mark.browser
def test_a_compliance_officer_erases_a_user_in_the_browser(actors: Actors, passwords: str, live_hub: LiveHub, page: object) -> None:
    seed(actors, "alice")
    seed(actors, "bob")
    bob = purge_counts(workspace_id=actors.workspace.pk, user_id="bob")
    log_in(page, live_hub, "owner")
    page.click("nav >> text=Compliance")
    page.fill("#id_user_id", "alice")
    page.click("text=Preview what would be deleted")
    preview = page.locator("[data-testid=purge-preview]")
    assert "Would delete 5 rows" in preview.inner_text() and "Memory entries" in preview.inner_text()
    page.fill("#id_confirm_user_id", "alicee")
    page.click("text=Erase for good")
    page.locator("text=This does not match").wait_for()
    assert not PurgeRequest.objects.filter(dry_run=False).exists()

    page.fill("#id_confirm_user_id", "alice")
    page.check("#id_block_new_writes")
    page.click("text=Erase for good")
    page.locator("[data-testid=purge-status]", has_text="Done").wait_for()  # polled until the job ends
    assert page.locator("[data-testid=purge-percent]").inner_text() == "100%"
    assert "verified" in page.locator("[data-testid=purge-progress]").inner_text()
    with page.expect_download() as download:
        page.click("text=Download the receipt (JSON)")
    receipt = json.loads(open(download.value.path()).read())
    assert receipt["verification"]["passed"] and receipt["user_hash"] == user_hash(workspace_id=actors.workspace.pk, user_id="alice")
    assert sum(purge_counts(workspace_id=actors.workspace.pk, user_id="alice").values()) == 0
    assert purge_counts(workspace_id=actors.workspace.pk, user_id="bob") == bob

    page.reload()
    assert page.locator("#receipts tr", has_text="verified").count() == 1
    assert page.locator("#blocked tbody tr").count() == 1
    page.fill("#retention-tool_outputs", "30")
    page.click("text=Save policies")
    page.locator("text=Retention policies saved").wait_for()
    assert page.locator("#audit", has_text="retention_changed").count() == 1
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#blocked >> text=Lift")
    page.locator("#blocked tbody tr").wait_for(state="detached")
    assert not BlockedUser.objects.exists()
