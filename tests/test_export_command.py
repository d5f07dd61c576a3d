"""`manage.py export` (docs/portability.md, "From the command line")."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.conftest import Actors, api_client, remember


def test_it_writes_the_archive_with_its_progress(actors: Actors, tmp_path: Path) -> None:
    remember(actors.bot_key, "Ann prefers the aisle seat.", user_id="ann")
    remember(actors.bot_key, "Bo likes tea.", user_id="bo")
    api_client(actors.bot_key).post("/api/v1/sessions", {"session_id": "trip", "user_id": "ann"}, format="json")
    out, err = io.StringIO(), io.StringIO()
    call_command("export", str(tmp_path / "ann.zip"), "--workspace", "acme", "--user", "ann", stdout=out, stderr=err)
    with zipfile.ZipFile(tmp_path / "ann.zip") as archive:
        manifest = json.loads(archive.read("manifest.json"))
        memories = [json.loads(line) for line in archive.read("memories.jsonl").splitlines()]
    assert (manifest["scope"], manifest["user_id"], manifest["counts"]["sessions"]) == ("user", "ann", 1)
    assert [m["content"] for m in memories] == ["Ann prefers the aisle seat."]
    assert "user archive written to" in out.getvalue() and "sha256" in out.getvalue()
    assert "3 of 3 records (100%)" in err.getvalue()  # the memory, the session and its timeline event


def test_it_refuses_what_does_not_exist(actors: Actors, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="No workspace 'nowhere'"):
        call_command("export", str(tmp_path / "x.zip"), "--workspace", "nowhere")
    with pytest.raises(CommandError, match="No session 'nope'"):
        call_command("export", str(tmp_path / "x.zip"), "--workspace", "acme", "--session", "nope")
    assert not (tmp_path / "x.zip").exists()
