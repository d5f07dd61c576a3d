"""The console's Export & import page, the session page's export and the Compliance page's
access request, through Django's test client (the browser walk is test_browser_pages.py)."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from memoryhub.memory.models import MemoryEntry
from memoryhub.portability.models import Export, ExportScope, Import
from memoryhub.privacy.models import BlockedUser
from memoryhub.privacy.services import user_hash
from tests.conftest import Actors, LiveHub, api_client, poll, remember
from tests.test_browser_console import log_in
from tests.test_console_compliance import compliance_officer

MEM0 = {"results": [
    {"id": "m-1", "memory": "Ann prefers the aisle seat.", "user_id": "ann", "categories": ["travel"]},
    {"id": "m-2", "memory": "Bo likes green tea.", "user_id": "bo"},
]}


def logged_in(actors: Actors, who: str) -> Client:
    client = Client()
    client.force_login(getattr(actors, who).user)
    return client


def export_done(export_id: Any) -> Export:
    done = poll(lambda: (export := Export.objects.get(pk=export_id)).status in ("done", "failed") and export, timeout=30)
    assert done and done.status == "done", done and done.error
    return done


def import_done(import_id: int) -> Import:
    done = poll(lambda: (job := Import.objects.get(pk=import_id)).status in ("done", "failed") and job, timeout=60)
    assert done and done.status == "done", done and done.error
    return done


def upload(client: Client, data: bytes, *, name: str = "mem0.json", fmt: str = "mem0", **fields: str) -> Any:
    form = {"file": SimpleUploadedFile(name, data), "format": fmt, "store": "default", "agent": "bot", **fields}
    return client.post("/portability/imports/", form, HTTP_HX_REQUEST="true")


def zip_body(response: Any) -> tuple[dict[str, Any], bytes]:
    body = b"".join(response.streaming_content)
    with zipfile.ZipFile(io.BytesIO(body)) as zipped:
        return json.loads(zipped.read("manifest.json")), body


def test_it_is_in_the_sidebar_and_offers_each_role_its_part(actors: Actors) -> None:
    teammate = logged_in(actors, "teammate")
    assert 'href="/portability/"' in teammate.get("/").content.decode()  # every role reads the page
    page = teammate.get("/portability/").content.decode()
    assert "Your role reads neither" in page and "admins start them" in page
    assert 'data-testid="export-form"' not in page and 'data-testid="import-form"' not in page
    officer = compliance_officer(actors).get("/portability/").content.decode()
    assert "No export of an end user's data yet" in officer and 'data-testid="export-form"' not in officer
    owner = logged_in(actors, "owner").get("/portability/").content.decode()
    assert 'data-testid="export-form"' in owner and 'data-testid="import-form"' in owner
    assert "No exports yet" in owner and "No imports yet" in owner
    for name in ("default", "other", "bot", "peer", "loner"):  # the workspace's stores and agents to choose from
        assert f'<option value="{name}"' in owner
    assert "spy" not in owner


def test_viewers_and_compliance_officers_may_not_export_the_workspace_nor_import(actors: Actors) -> None:
    for client in (logged_in(actors, "teammate"), compliance_officer(actors)):
        assert client.post("/portability/exports/", {"scope": "workspace"}).status_code == 403
        assert client.post("/portability/exports/", {"scope": "session", "session_id": "s"}).status_code == 403
        assert upload(client, json.dumps(MEM0).encode()).status_code == 403
    assert logged_in(actors, "teammate").post("/compliance/exports/", {"export-user_id": "ann"}).status_code == 403
    assert not Export.objects.exists() and not Import.objects.exists()


def test_it_exports_the_workspace_shows_its_progress_and_serves_the_download(actors: Actors, transactional_db: None) -> None:
    remember(actors.bot_key, "Ann prefers the aisle seat.", user_id="ann")
    owner = logged_in(actors, "owner")
    started = owner.post("/portability/exports/", {"scope": "workspace", "with_vectors": "on"}, HTTP_HX_REQUEST="true")
    html = started.content.decode()
    export = Export.objects.get()
    assert html.lstrip().startswith('<section class="card" id="exports">')
    assert (export.scope, export.with_vectors, export.requested_by) == ("workspace", True, "operator:owner")
    assert f'id="export-{export.pk}"' in html and "with embeddings" in html
    export_done(export.pk)
    row = owner.get(f"/portability/exports/{export.pk}/progress/", HTTP_HX_REQUEST="true").content.decode()
    assert row.lstrip().startswith("<tr") and "hx-trigger" not in row  # the poll stops once it is done
    assert "1 memories" in row and f"/portability/exports/{export.pk}/download/" in row
    download = owner.get(f"/portability/exports/{export.pk}/download/")
    assert download.status_code == 200 and download["Content-Type"] == "application/zip"
    assert download["Content-Disposition"] == f'attachment; filename="memoryhub-workspace-{export.pk}.zip"'
    manifest, body = zip_body(download)
    export.refresh_from_db()
    assert manifest["scope"] == "workspace" and manifest["counts"]["memories"] == 1
    assert hashlib.sha256(body).hexdigest() == export.sha256 and int(download["Content-Length"]) == len(body)
    # Without htmx, the progress address leads to the page, where the export is listed.
    assert owner.get(f"/portability/exports/{export.pk}/progress/")["Location"] == f"/portability/#export-{export.pk}"
    assert f'id="export-{export.pk}"' in owner.get("/portability/").content.decode()


def test_a_running_export_polls_and_an_unfinished_one_is_not_downloaded(actors: Actors) -> None:
    owner = logged_in(actors, "owner")
    owner.post("/portability/exports/", {"scope": "workspace"})  # in a test transaction: never runs
    export = Export.objects.get()
    row = owner.get(f"/portability/exports/{export.pk}/progress/", HTTP_HX_REQUEST="true").content.decode()
    assert f'hx-get="/portability/exports/{export.pk}/progress/"' in row and 'hx-trigger="every 1s"' in row
    assert "Queued" in row and "/download/" not in row
    assert owner.get(f"/portability/exports/{export.pk}/download/").status_code == 409


def test_an_admin_exports_a_session_from_its_page(actors: Actors, transactional_db: None) -> None:
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "trip", "user_id": "ann"}, format="json")
    bot.post("/api/v1/sessions/trip/messages", {"role": "user", "content": "Book me a flight to Oslo."}, format="json")
    owner = logged_in(actors, "owner")
    assert 'data-testid="export-session"' in owner.get("/sessions/trip/").content.decode()
    assert 'data-testid="export-session"' not in logged_in(actors, "teammate").get("/sessions/trip/").content.decode()
    started = owner.post("/portability/exports/", {"scope": "session", "session_id": "trip"})
    export = Export.objects.get()
    assert (export.scope, export.session_id) == ("session", "trip")
    assert started.status_code == 302 and started["Location"] == f"/portability/#export-{export.pk}"
    export_done(export.pk)
    page = owner.get("/portability/").content.decode()
    assert 'href="/sessions/trip/"' in page
    manifest, _ = zip_body(owner.get(f"/portability/exports/{export.pk}/download/"))
    assert (manifest["session_id"], manifest["counts"]["messages"]) == ("trip", 1)


def test_an_export_of_a_session_that_is_not_there_says_so(actors: Actors) -> None:
    owner = logged_in(actors, "owner")
    response = owner.post("/portability/exports/", {"scope": "session", "session_id": "nope"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422 and "No such session" in response.content.decode()
    response = owner.post("/portability/exports/", {"scope": "session"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422 and "names its session" in response.content.decode()
    assert not Export.objects.exists()


def test_roles_decide_which_exports_are_listed_and_read(actors: Actors) -> None:
    owner, teammate, officer = logged_in(actors, "owner"), logged_in(actors, "teammate"), compliance_officer(actors)
    owner.post("/portability/exports/", {"scope": "workspace"})
    officer.post("/compliance/exports/", {"export-user_id": "ann"})
    workspace, user = Export.objects.get(scope=ExportScope.WORKSPACE), Export.objects.get(scope=ExportScope.USER)
    Export.objects.update(status="done")
    listed = owner.get("/portability/").content.decode()
    assert f'id="export-{workspace.pk}"' in listed and f'id="export-{user.pk}"' in listed  # admins read every scope
    listed = officer.get("/portability/").content.decode()
    assert f'id="export-{user.pk}"' in listed and f'id="export-{workspace.pk}"' not in listed
    listed = teammate.get("/portability/").content.decode()
    assert str(workspace.pk) not in listed and str(user.pk) not in listed
    for path in ("progress/", "download/"):
        assert teammate.get(f"/portability/exports/{user.pk}/{path}", HTTP_HX_REQUEST="true").status_code == 403
        assert officer.get(f"/portability/exports/{workspace.pk}/{path}", HTTP_HX_REQUEST="true").status_code == 403
    outsider = logged_in(actors, "outsider")  # an admin, of another workspace
    for export in (workspace, user):
        assert outsider.get(f"/portability/exports/{export.pk}/progress/", HTTP_HX_REQUEST="true").status_code == 404
        assert outsider.get(f"/portability/exports/{export.pk}/download/").status_code == 404
    assert str(workspace.pk) not in outsider.get("/portability/").content.decode()
    Export.objects.filter(pk=workspace.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert owner.get(f"/portability/exports/{workspace.pk}/download/").status_code == 404
    assert str(workspace.pk) not in owner.get("/portability/").content.decode()
    assert owner.get("/portability/exports/not-a-uuid/download/").status_code == 404


def test_a_compliance_officer_exports_a_users_data_from_compliance(actors: Actors, transactional_db: None) -> None:
    remember(actors.bot_key, "Ann prefers the aisle seat.", user_id="ann")
    remember(actors.bot_key, "Bo likes tea.", user_id="bo")
    officer = compliance_officer(actors)
    page = officer.get("/compliance/").content.decode()
    assert "Export an end user's data" in page and 'name="export-user_id"' in page and "No export of an end user's data yet" in page
    preview = officer.post("/compliance/preview/", {"user_id": "ann"}).content.decode()
    assert 'data-testid="export-before-erase"' in preview and 'name="export-user_id" value="ann"' in preview
    started = officer.post("/compliance/exports/", {"export-user_id": "ann"}, HTTP_HX_REQUEST="true").content.decode()
    export = Export.objects.get()
    assert started.lstrip().startswith('<section class="card" id="access-request">')
    assert (export.scope, export.asked_user_id, export.requested_by) == ("user", "ann", "operator:dpo")
    assert f'hx-get="/portability/exports/{export.pk}/progress/"' in started
    export_done(export.pk)
    row = officer.get(f"/portability/exports/{export.pk}/progress/", HTTP_HX_REQUEST="true").content.decode()
    assert "hx-trigger" not in row and "/download/" in row
    manifest, body = zip_body(officer.get(f"/portability/exports/{export.pk}/download/"))
    assert (manifest["user_id"], manifest["counts"]["memories"]) == ("ann", 1) and b"Bo likes tea" not in body
    blank = officer.post("/compliance/exports/", {"export-user_id": "  "}, HTTP_HX_REQUEST="true")
    assert blank.status_code == 422 and "exactly as your agents send it" in blank.content.decode()
    assert Export.objects.count() == 1
    # Without htmx: back to the page, the export listed there.
    assert officer.post("/compliance/exports/", {"export-user_id": "bo"})["Location"] == "/compliance/#access-request"


def test_an_import_is_a_dry_run_first_then_the_real_one(actors: Actors, transactional_db: None) -> None:
    owner = logged_in(actors, "owner")
    started = upload(owner, json.dumps(MEM0).encode())
    trial = Import.objects.get()
    html = started.content.decode()
    assert started.status_code == 200 and html.lstrip().startswith('<section class="card" id="import">')
    assert trial.dry_run and (trial.format, trial.store.name, trial.agent.name, trial.filename) == ("mem0", "default", "bot", "mem0.json")
    assert f'hx-get="/portability/imports/{trial.pk}/progress/"' in html and "Dry run #" in html
    import_done(trial.pk)
    result = owner.get(f"/portability/imports/{trial.pk}/progress/", HTTP_HX_REQUEST="true").content.decode()
    assert "hx-trigger" not in result and "Would create" in result and "Nothing has been written yet" in result
    assert f'hx-post="/portability/imports/{trial.pk}/apply/"' in result
    assert not MemoryEntry.objects.filter(workspace=actors.workspace).exists()  # a dry run writes nothing

    applied = owner.post(f"/portability/imports/{trial.pk}/apply/", HTTP_HX_REQUEST="true")
    job = Import.objects.get(dry_run=False)
    assert applied.content.decode().lstrip().startswith('<div id="import-job"') and f"Import #{job.pk}" in applied.content.decode()
    import_done(job.pk)
    final = owner.get(f"/portability/imports/{job.pk}/progress/", HTTP_HX_REQUEST="true").content.decode()
    assert "Created" in final and "imported" in final and "2 records written" in final and "/apply/" not in final
    assert set(MemoryEntry.objects.filter(workspace=actors.workspace).values_list("user_id", flat=True)) == {"ann", "bo"}
    page = owner.get("/portability/").content.decode()
    assert f"?import={trial.pk}#import" in page and f"?import={job.pk}#import" in page
    shown = owner.get(f"/portability/?import={job.pk}").content.decode()
    assert 'data-testid="import-job"' in shown and f"Import #{job.pk}</strong>" in shown
    # The dry run, shown again, says what became of it instead of offering its button.
    tried = owner.get(f"/portability/?import={trial.pk}").content.decode()
    assert f'href="?import={job.pk}#import" data-testid="import-applied"' in tried and "/apply/" not in tried
    # The same dry run twice: its upload went to the first import.
    again = owner.post(f"/portability/imports/{trial.pk}/apply/", HTTP_HX_REQUEST="true")
    assert again.status_code == 422 and f"Imported as <a href=\"?import={job.pk}#import\"" in again.content.decode()
    assert Import.objects.filter(dry_run=False).count() == 1


def test_a_dry_run_shows_what_it_refuses_and_why(actors: Actors, transactional_db: None) -> None:
    BlockedUser.objects.create(workspace=actors.workspace, user_hash=user_hash(workspace_id=actors.workspace.pk, user_id="ann"))
    owner = logged_in(actors, "owner")
    upload(owner, json.dumps(MEM0).encode())
    trial = import_done(Import.objects.get().pk)
    result = owner.get(f"/portability/imports/{trial.pk}/progress/", HTTP_HX_REQUEST="true").content.decode()
    refusals = result.split('data-testid="import-refusals"')[1].split("</ul>")[0]
    assert "1 memories: blocked" in refusals, result


def test_a_file_the_import_refuses_is_reported_in_the_form_and_nothing_is_kept(actors: Actors) -> None:
    owner = logged_in(actors, "owner")
    response = upload(owner, b"not a zip", name="acme.zip", fmt="memoryhub")
    assert response.status_code == 422 and "not a zip archive" in response.content.decode()
    assert 'data-testid="import-error"' in response.content.decode() and 'data-testid="import-form"' in response.content.decode()
    response = upload(owner, b'{"mapping": 3}', name="conversations.json", fmt="chatgpt")
    assert response.status_code == 422 and "say which end user it is about" in response.content.decode()
    response = upload(owner, json.dumps(MEM0).encode(), store="other")  # bot is not attached to it
    assert response.status_code == 422 and "is not attached to store" in response.content.decode()
    response = upload(owner, json.dumps(MEM0).encode(), agent="spy")  # another workspace's agent: not a choice here
    assert response.status_code == 422 and "Select a valid choice" in response.content.decode()
    response = upload(owner, json.dumps(MEM0).encode(), user_id="   ")
    assert response.status_code == 422 and "exactly as your agents send it" in response.content.decode()
    assert not Import.objects.exists()


def test_imports_are_the_admins_and_each_workspaces_own(actors: Actors) -> None:
    outsider = logged_in(actors, "outsider")  # an admin of globex, which has the agent spy
    outsider.post("/portability/imports/", {"file": SimpleUploadedFile("m.json", json.dumps(MEM0).encode()), "format": "mem0",
                                            "store": "default", "agent": "spy"})
    theirs = Import.objects.get()
    owner, teammate = logged_in(actors, "owner"), logged_in(actors, "teammate")
    assert owner.get(f"/portability/imports/{theirs.pk}/progress/", HTTP_HX_REQUEST="true").status_code == 404
    assert owner.post(f"/portability/imports/{theirs.pk}/apply/").status_code == 404
    assert "m.json" not in owner.get(f"/portability/?import={theirs.pk}").content.decode()
    assert teammate.get(f"/portability/imports/{theirs.pk}/progress/", HTTP_HX_REQUEST="true").status_code == 403
    assert teammate.post(f"/portability/imports/{theirs.pk}/apply/").status_code == 403
    assert Import.objects.count() == 1


def test_it_renders_file_names_user_ids_and_refusals_as_text(actors: Actors) -> None:
    hostile = '<img src=x onerror="alert(1)">'
    owner = logged_in(actors, "owner")
    # No slash: Django keeps an uploaded file's base name only.
    upload(owner, json.dumps(MEM0).encode(), name="<svg onload=alert(1)>.json", user_id=hostile)
    job = Import.objects.get()
    Import.objects.filter(pk=job.pk).update(status="done", counts={"created": 0, "skipped": 0, "refused": 1, "kinds": {}},
                                            refusals=[{"kind": "memories", "reason": hostile, "count": 1}])
    for html in (owner.get("/portability/").content.decode(), owner.get(f"/portability/?import={job.pk}").content.decode()):
        assert "<svg" not in html and hostile not in html and "&lt;svg onload=alert(1)&gt;.json" in html and "&lt;img src=x" in html
    owner.post("/compliance/exports/", {"export-user_id": hostile})
    assert hostile not in owner.get("/portability/").content.decode() and hostile not in owner.get("/compliance/").content.decode()


@pytest.mark.browser
def test_an_admin_exports_and_imports_in_the_browser(actors: Actors, passwords: str, live_hub: LiveHub, page: Any) -> None:
    remember(actors.bot_key, "Ann prefers the aisle seat.", user_id="ann")
    log_in(page, live_hub, "owner")
    page.wait_for_url(f"{live_hub.url}/")
    page.click("nav >> text=Export & import")
    page.click("text=Export the workspace")
    row = page.locator("[data-testid=export-row]")
    row.locator("[data-testid=export-status]", has_text="done").wait_for()  # polled until the job ends
    with page.expect_download() as download:
        row.locator("text=Download").click()
    with zipfile.ZipFile(download.value.path()) as zipped:
        assert json.loads(zipped.read("manifest.json"))["counts"]["memories"] == 1

    page.set_input_files("#id_file", files=[{"name": "mem0.json", "mimeType": "application/json", "buffer": json.dumps(MEM0).encode()}])
    page.select_option("#id_format", "mem0")
    page.click("text=Start the dry run")
    job = page.locator("[data-testid=import-job]")
    job.locator("text=Would create").wait_for()  # the dry run's result, polled
    assert "Nothing has been written yet" in job.inner_text()
    assert MemoryEntry.objects.filter(workspace=actors.workspace).count() == 1
    job.get_by_role("button", name="Import").click()
    job.locator("text=records written").wait_for()
    assert "2 records written" in job.inner_text()
    assert MemoryEntry.objects.filter(workspace=actors.workspace).count() == 3
    page.reload()
    assert page.locator("[data-testid=imports] tbody tr").count() == 2

    # An upload the import refuses: its message in the form, nothing started.
    page.set_input_files("#id_file", files=[{"name": "acme.zip", "mimeType": "application/zip", "buffer": b"not a zip"}])
    page.select_option("#id_format", "memoryhub")
    page.click("text=Start the dry run")
    page.locator("[data-testid=import-error]", has_text="not a zip archive").wait_for()
    assert Import.objects.count() == 2
