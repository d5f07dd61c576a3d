"""The archive's format is declared once (memoryhub/portability/archive.py, `Kind.fields`),
versioned with the manifest, and held here: a model's new or renamed column changes no
archive until it is declared; the records an export writes match a committed golden copy
(tests/golden/archive.json: each kind's fields in order and their JSON types; rewrite it
on purpose with MEMORYHUB_WRITE_GOLDEN=1); and an import reads only what is declared."""

from __future__ import annotations

import json
from typing import Any

from memoryhub.memory.models import MemoryEntry
from memoryhub.portability.archive import INTERNAL, KINDS, VERSION
from tests.conftest import Actors, api_client
from tests.graph_helpers import fact, rules
from tests.test_authorization_matrix import acme  # noqa: F401 - a fixture: a record of every kind
from tests.test_exports_api import archive, finished
from tests.test_imports_api import _memories_archive, imported
from tests.test_interface_golden import _held

JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number", type(None): "null"}


def test_every_column_is_declared_or_the_hubs_own() -> None:
    for kind in KINDS:
        columns = {f.name for f in kind.model._meta.concrete_fields if not f.generated}
        extra = {name for name, _ in kind.extra}
        assert set(kind.fields) <= columns | extra, (kind.name, set(kind.fields) - columns - extra)
        # A column neither in the archive nor the hub's own bookkeeping must be decided on.
        assert columns - set(kind.fields) <= INTERNAL, (kind.name, columns - set(kind.fields) - INTERNAL)
        assert len(set(kind.fields)) == len(kind.fields), kind.name


def test_an_export_writes_the_declared_records(actors: Actors, acme: dict[str, str], transactional_db: None) -> None:  # noqa: F811
    agent = api_client(actors.bot_key)
    entry = MemoryEntry.objects.get(pk=acme["entry_id"])
    assert agent.patch(f"/api/v1/memories/{entry.pk}", {"content": "A second wording.", "version": entry.version}, format="json").status_code == 200
    rules(actors.owner_key, {"predicate": "part of", "kind": "transitive"})
    fact(actors.bot_key, "Oslo", "part of", "Norway")
    started = api_client(actors.owner_key).post("/api/v1/exports", {"scope": "workspace", "with_vectors": True}, format="json").json()
    finished(actors.owner_key, started)
    manifest, kinds, _ = archive(actors.owner_key, started)
    assert manifest["version"] == VERSION and set(kinds) == {kind.name for kind in KINDS}
    shapes: dict[str, Any] = {}
    for kind in KINDS:
        records = kinds[kind.name]
        assert records, f"the seed has no {kind.name}: the golden copy would not cover it"
        assert all(list(record) == list(kind.fields) for record in records), kind.name  # every field, in the declared order
        shapes[kind.name] = {name: sorted({JSON_TYPES[type(r[name])] for r in records}) for name in kind.fields}
    _held("archive.json", {"version": VERSION, "kinds": shapes})


def test_an_import_reads_only_the_declared_fields(actors: Actors, transactional_db: None) -> None:
    record = {
        "id": "6f1f7e1c-1c5e-4f3a-9a55-0c1d2e3f4a5b", "user_id": "u1", "content": "Ann prefers the aisle.", "memory_type": "note",
        "scope": "agent", "store": "default", "agent": "bot", "version": 1,
        # The hub's own bookkeeping, which no archive declares: rebuilt, never taken.
        "vector_indexed": True, "content_fingerprint": "forged", "search_extra": "forged words",
    }
    imported(actors.owner_key, _memories_archive(json.dumps(record).encode() + b"\n", 1))
    stored = MemoryEntry.objects.get(workspace=actors.workspace, content="Ann prefers the aisle.")
    assert stored.content_fingerprint != "forged" and "forged" not in stored.search_extra


def test_the_manual_lists_each_kinds_fields_as_declared() -> None:
    from pathlib import Path

    manual = (Path(__file__).parent.parent / "docs" / "portability.md").read_text(encoding="utf-8")
    for kind in KINDS:
        assert f"| `{kind.name}` | {', '.join(f'`{name}`' for name in kind.fields)} |" in manual, kind.name
