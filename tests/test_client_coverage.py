"""The Python client (clients/python) covers the API: every operation of /api/schema/ has
a method in both clients, and the sync client is the one generated from the async one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from memoryhub_client import AsyncMemoryHub, MemoryHub
from memoryhub_client._transport import operations_of
from tests.conftest import api_client

UNASYNC = Path(__file__).resolve().parent.parent / "clients" / "python" / "scripts" / "unasync.py"
METHODS = {"get", "post", "put", "patch", "delete"}


def schema_operations() -> set[str]:
    response = api_client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return {f"{method.upper()} {path}" for path, item in response.json()["paths"].items() for method in item if method in METHODS}


def test_it_has_a_method_for_every_operation(db: None) -> None:
    operations = schema_operations()
    assert len(operations) > 40
    for client in (MemoryHub, AsyncMemoryHub):
        covered = operations_of(client)
        assert sorted(operations - set(covered)) == [], f"{client.__name__} has no method for these operations"
        assert sorted(set(covered) - operations) == [], f"{client.__name__} calls operations the schema does not have"


def test_it_gives_both_clients_the_same_methods() -> None:
    assert operations_of(MemoryHub) == operations_of(AsyncMemoryHub)
    assert MemoryHub.resources.keys() == AsyncMemoryHub.resources.keys()
    for name, resource in MemoryHub.resources.items():
        public = {attr for attr in dir(resource) if not attr.startswith("_")}
        assert public == {attr for attr in dir(AsyncMemoryHub.resources[name]) if not attr.startswith("_")}, name


def test_it_keeps_the_sync_client_generated_from_the_async_one() -> None:
    spec = importlib.util.spec_from_file_location("unasync", UNASYNC)
    assert spec is not None and spec.loader is not None
    unasync = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(unasync)
    source = (unasync.PACKAGE / "aio.py").read_text()
    assert (unasync.PACKAGE / "client.py").read_text() == unasync.unasync(source), "client.py is stale: run clients/python/scripts/unasync.py"
