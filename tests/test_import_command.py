"""`manage.py import` (docs/portability.md, "From the command line")."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from memoryhub.memory.models import MemoryEntry
from memoryhub.memory.vector_index import index_pending_vectors
from memoryhub.portability.models import Import
from tests.conftest import Actors, hub_database_url, remember, run_python
from tests.test_imports_api import MEM0, Target


def test_it_dry_runs_then_imports_an_archive_with_its_progress(actors: Actors, tmp_path: Path) -> None:
    remember(actors.bot_key, "Ann prefers the aisle seat.", user_id="ann")
    remember(actors.bot_key, "Bo likes tea.", user_id="bo")
    call_command("export", str(tmp_path / "acme.zip"), "--workspace", "acme", stdout=io.StringIO(), stderr=io.StringIO())
    target = Target()
    out, err = io.StringIO(), io.StringIO()
    arguments = [str(tmp_path / "acme.zip"), "--workspace", "initech", "--store", "default", "--agent", "bot"]
    call_command("import", *arguments, "--dry-run", stdout=out, stderr=err)
    assert "2 would be created" in out.getvalue(), out.getvalue()
    assert not MemoryEntry.objects.filter(workspace=target.workspace).exists()
    out = io.StringIO()
    call_command("import", *arguments, stdout=out, stderr=err)
    assert " created, 0 skipped" in out.getvalue() and "0 refused" in out.getvalue(), out.getvalue()
    assert sorted(MemoryEntry.objects.filter(workspace=target.workspace).values_list("content", flat=True)) == [
        "Ann prefers the aisle seat.", "Bo likes tea.",
    ]
    assert "records (100%)" in err.getvalue()
    assert Import.objects.filter(workspace=target.workspace).latest("pk").requested_by == "system:manage.py import"


def test_it_imports_mem0_and_reports_refusals_as_errors_when_the_file_is_wrong(actors: Actors, tmp_path: Path) -> None:
    (tmp_path / "mem0.json").write_text(json.dumps(MEM0))
    out = io.StringIO()
    call_command("import", str(tmp_path / "mem0.json"), "--workspace", "acme", "--store", "default", "--agent", "bot", "--format", "mem0",
                 stdout=out, stderr=io.StringIO())
    assert "2 created" in out.getvalue(), out.getvalue()
    (tmp_path / "bad.json").write_text('{"results": 3}')
    with pytest.raises(CommandError, match="INVALID_IMPORT_FILE: Not a mem0 export: results: not a list"):
        call_command("import", str(tmp_path / "bad.json"), "--workspace", "acme", "--store", "default", "--agent", "bot", "--format", "mem0")
    with pytest.raises(CommandError, match="STORE_NOT_FOUND"):
        call_command("import", str(tmp_path / "mem0.json"), "--workspace", "acme", "--store", "nope", "--agent", "bot", "--format", "mem0")


def test_it_exits_when_loaded_and_leaves_the_vectors_to_the_hubs_indexer(actors: Actors, transactional_db: None, tmp_path: Path) -> None:
    # A real `manage.py import` process: had it started the indexer on its own task threads, the
    # interpreter would have waited at exit until every vector was in the index (minutes at 1M).
    remember(actors.bot_key, "Ann prefers the aisle seat.", user_id="ann")
    remember(actors.bot_key, "Bo likes tea.", user_id="bo")
    call_command("export", str(tmp_path / "acme.zip"), "--workspace", "acme", "--with-vectors", stdout=io.StringIO(), stderr=io.StringIO())
    target = Target()
    env = {**os.environ, "DATABASE_URL": hub_database_url(), "REDIS_URL": ""}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    done = run_python(
        [sys.executable, "manage.py", "import", str(tmp_path / "acme.zip"), "--workspace", "initech", "--store", "default", "--agent", "bot"],
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "2 created" in done.stdout and "enter the search index when the hub's indexer next runs" in done.stdout, done.stdout
    imported = MemoryEntry.objects.filter(workspace=target.workspace)
    assert imported.count() == 2 and not imported.filter(vector_indexed=True).exists()
    index_pending_vectors()  # what the hub's indexer does on its next round
    assert imported.filter(vector_indexed=True).count() == 2
