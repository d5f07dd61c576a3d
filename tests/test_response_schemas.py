"""The harness that checks every API answer against the schema (tests/schema_validation.py)
does fail when an answer breaks it."""

from __future__ import annotations

from typing import Any

import pytest
from django.http import HttpResponse, JsonResponse

from memoryhub.operations import memory as memory_operations
from tests.conftest import Actors, api_client
from tests.schema_validation import schema_check

ME = {"kind": "agent", "workspace": "acme", "agent": "bot", "stores": ["default"], "operator": None, "role": None, "key_prefix": "mha_x"}
FAILED = pytest.fail.Exception


def check(body: Any, *, status: int = 200, method: str = "GET", path: str = "/api/v1/me") -> None:
    schema_check().check(method=method, path=path, response=JsonResponse(body, status=status, safe=False))


def test_it_passes_an_answer_that_matches_its_schema() -> None:
    check(ME)
    check({"error": {"code": "VALIDATION_ERROR", "message": "Invalid input.", "details": {"fields": {}}}}, status=400)


def test_it_fails_a_body_that_breaks_its_schema_naming_operation_status_and_error() -> None:
    with pytest.raises(FAILED) as failure:
        check({**ME, "stores": "default"})
    message = str(failure.value)
    assert "v1_me_retrieve (GET /api/v1/me) answered 200" in message
    assert "at stores: 'default' is not of type 'array'" in message


@pytest.mark.parametrize(
    "body",
    [
        {key: value for key, value in ME.items() if key != "agent"},  # a field missing
        {**ME, "agent": 7},  # a wrong type
        {**ME, "kind": "robot"},  # outside the enum
        {**ME, "nickname": "bot"},  # a field the schema does not declare
    ],
)
def test_it_fails_bodies_with_missing_wrong_or_undeclared_fields(body: dict[str, Any]) -> None:
    with pytest.raises(FAILED, match="v1_me_retrieve"):
        check(body)


def test_it_fails_a_status_the_operation_does_not_declare() -> None:
    with pytest.raises(FAILED, match=r"v1_me_retrieve \(GET /api/v1/me\) answered 201"):
        check(ME, status=201)


def test_it_fails_an_error_outside_the_envelope() -> None:
    with pytest.raises(FAILED, match="answered 404"):
        check({"detail": "Not found."}, status=404, path="/api/v1/memories/0b6f9c1e-0000-4000-8000-000000000000")


def test_it_fails_a_429_without_retry_after() -> None:
    with pytest.raises(FAILED, match="Retry-After"):
        check({"error": {"code": "RATE_LIMITED", "message": "Slow down.", "details": {}}}, status=429)


def test_it_skips_only_404_and_405_of_operations_the_api_does_not_have() -> None:
    check({"error": {"code": "NOT_FOUND", "message": "No.", "details": {}}}, status=404, path="/api/v1/nothing-here")
    check({"error": {"code": "METHOD_NOT_ALLOWED", "message": "No.", "details": {}}}, status=405, method="DELETE")
    with pytest.raises(FAILED, match="the schema has no such operation"):
        check({}, method="PUT")


def test_it_checks_a_bodyless_answer_by_its_status() -> None:
    empty = HttpResponse(status=204)
    schema_check().check(method="DELETE", path="/api/v1/keys/mha_x", response=empty)
    with pytest.raises(FAILED, match="v1_keys_destroy"):
        schema_check().check(method="DELETE", path="/api/v1/keys/mha_x", response=HttpResponse(status=200))


def test_it_fails_the_test_when_a_view_answers_outside_its_schema(actors: Actors, monkeypatch: pytest.MonkeyPatch) -> None:
    # The real path, through api_client(): a view whose output gets a type wrong.
    real_output = memory_operations.written_json
    monkeypatch.setattr(memory_operations, "written_json", lambda written: {**real_output(written), "version": str(written.entry.version)})
    with pytest.raises(FAILED, match=r"v1_memories_create \(POST /api/v1/memories\) answered 201(.|\n)*at version: '1' is not of type 'integer'"):
        api_client(actors.bot_key).post("/api/v1/memories", {"content": "x", "user_id": "u1"}, format="json")
