"""Fuzzing every operation of the OpenAPI schema with schemathesis, in-process (WSGI),
as an agent and as an admin: no answer is a 5xx, and every answer matches the schema
(status, body, headers). Fixed seed and a bounded number of cases per operation, so it
runs the same in CI every time; `make bench`-style long runs raise FUZZ_EXAMPLES."""

from __future__ import annotations

import os
from collections.abc import Iterator
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.conf import settings as django_settings
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis import checks

from tests.conftest import Actors

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "6"))

# The schema is read at collection, before the session fixture collects static files:
# WhiteNoise warns about a static root that does not exist yet on a fresh clone.
Path(django_settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)
schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", import_module("memoryhub.wsgi").application)


@pytest.fixture(params=["bot", "owner"])
def key(request: pytest.FixtureRequest, actors: Actors) -> Iterator[str]:
    # Requests go through the WSGI handler in this thread, inside the test's transaction:
    # like Django's test client, keep the handler from closing that connection.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield getattr(actors, f"{request.param}_key")
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture],
)
def test_no_operation_answers_a_5xx_or_off_schema(case: Any, key: str) -> None:
    case.call_and_validate(
        headers={"Authorization": f"Bearer {key}"},
        checks=[checks.not_a_server_error, checks.status_code_conformance, checks.response_schema_conformance,
                checks.content_type_conformance, checks.response_headers_conformance],
    )
