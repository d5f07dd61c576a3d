"""An approval's response_schema is the agent's, checked on an approver's time
(memoryhub/approvals/schemas.py): hostile patterns cannot hold the hub, schemas whose
references branch or reach outside are refused when sent, and nothing is fetched."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memoryhub.approvals.models import Approval
from memoryhub.approvals.schemas import MAX_UNFOLDED
from tests.conftest import Actors, api_client, assert_error

BUDGET_SECONDS = 1.0  # CPU for one edit checked against a hostile schema; it needs milliseconds


def ask(actors: Actors, schema: dict, **body: object) -> object:
    bot = api_client(actors.bot_key)
    bot.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    return bot.post(
        "/api/v1/approvals", {"session_id": "s1", "tool": "notes.write", "args": {"note": "hi"}, "response_schema": schema, **body}, format="json",
    )


def edit(actors: Actors, approval_id: int, args: dict) -> tuple[object, float]:
    start = time.process_time()
    answer = api_client(actors.owner_key).post(f"/api/v1/approvals/{approval_id}/decision", {"decision": "edit", "args": args}, format="json")
    return answer, time.process_time() - start


def chain(depth: int, combinator: str = "allOf", width: int = 2) -> dict:
    """a1 = a0 and a0, a2 = a1 and a1, …: a schema of `depth` lines whose check is
    `width` times longer with each."""
    defs: dict = {"a0": {"type": "string"}}
    for i in range(depth):
        defs[f"a{i + 1}"] = {combinator: [{"$ref": f"#/$defs/a{i}"}] * width}
    return {"$defs": defs, "type": "object", "properties": {"note": {"$ref": f"#/$defs/a{depth}"}}}


# Each schema with the input that makes a backtracking engine try every way to match
# (Python's `re` on 26 a's and a "!" took 2.6 s, each further a doubling it).
HOSTILE = {
    "pattern": ({"properties": {"note": {"type": "string", "pattern": "^(a+)+$"}}}, {"note": "a" * 100_000 + "!"}),
    "patternProperties": (
        {"patternProperties": {"^(a|aa)+$": {"type": "integer"}}, "additionalProperties": False}, {"a" * 50_000 + "!": 1},
    ),
    "propertyNames": ({"propertyNames": {"pattern": "^(a*)*b$"}}, {"a" * 50_000: 1}),
    "nested": ({"properties": {"note": {"items": {"pattern": "^(\\w+\\s?)*$"}}}}, {"note": ["word " * 10_000 + "!"] * 4}),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_it_checks_an_edit_against_a_hostile_pattern_in_linear_time(actors: Actors, name: str) -> None:
    schema, args = HOSTILE[name]
    asked = ask(actors, schema)
    assert asked.status_code == 201, asked.content
    answer, seconds = edit(actors, asked.json()["id"], args)
    assert_error(answer, 400, "HITL_SCHEMA")
    assert seconds < BUDGET_SECONDS, f"{name}: {seconds:.2f} s of CPU for one edit"
    assert Approval.objects.get().status == "pending"


def test_it_refuses_schemas_whose_references_would_multiply_the_work(actors: Actors) -> None:
    for combinator in ("allOf", "oneOf", "anyOf"):
        error = assert_error(ask(actors, chain(5, combinator, width=10)), 400, "INVALID_SCHEMA")
        assert str(MAX_UNFOLDED) in error["message"]
    error = assert_error(ask(actors, {"$defs": {"tree": {"properties": {"child": {"$ref": "#/$defs/tree"}}}}, "$ref": "#/$defs/tree"}), 400, "INVALID_SCHEMA")
    assert "refers to itself" in error["message"]
    assert "deeper" in assert_error(ask(actors, chain(20)), 400, "INVALID_SCHEMA")["message"]
    assert not Approval.objects.exists()


def test_it_takes_references_that_unfold_into_a_fair_size_and_holds_edits_to_them(actors: Actors) -> None:
    # What pydantic writes for a model with a nested model.
    schema = {
        "$defs": {"Money": {"type": "object", "properties": {"amount": {"type": "integer", "maximum": 1000}, "currency": {"enum": ["EUR", "USD"]}},
                            "required": ["amount", "currency"]}},
        "type": "object", "properties": {"to": {"type": "string", "format": "email"}, "money": {"$ref": "#/$defs/Money"}},
        "required": ["to", "money"],
    }
    approval = ask(actors, schema).json()
    answer, _ = edit(actors, approval["id"], {"to": "a@example.com", "money": {"amount": 5000, "currency": "EUR"}})
    error = assert_error(answer, 400, "HITL_SCHEMA")
    assert "5000" in error["message"] and "/money/amount" in error["message"]
    answer, _ = edit(actors, approval["id"], {"to": "a@example.com", "money": {"amount": 900, "currency": "EUR"}})
    assert answer.status_code == 200 and answer.json()["args"]["money"]["amount"] == 900
    assert ask(actors, chain(10)).status_code == 201  # some 6,000 subschemas unfolded: within MAX_UNFOLDED


def test_it_refuses_patterns_only_a_backtracking_engine_runs(actors: Actors) -> None:
    for pattern in ("(?=a)a", "(?<!b)a", "(a)\\1", "["):
        error = assert_error(ask(actors, {"properties": {"note": {"pattern": pattern}}}), 400, "INVALID_SCHEMA")
        assert "response_schema" in error["message"]
    assert not Approval.objects.exists()


def test_it_fetches_nothing_a_schema_points_at() -> None:
    fetched: list[str] = []

    class Recorder(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fetched.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"type": "string"}')

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        from memoryhub.approvals.schemas import SchemaRefused, response_schema_check

        for reference in (f"http://127.0.0.1:{server.server_address[1]}/schema.json", "file:///etc/passwd", "other.json#/a"):
            with pytest.raises(SchemaRefused):
                response_schema_check({"properties": {"note": {"$ref": reference}}})
    finally:
        server.shutdown()
        server.server_close()
    assert fetched == []


def test_it_refuses_schemas_too_deep_or_too_large(actors: Actors) -> None:
    deep: dict = {"type": "string"}
    for _ in range(50):  # within the 64 levels any JSON body may have
        deep = {"not": deep}
    assert "deeper" in assert_error(ask(actors, deep), 400, "INVALID_SCHEMA")["message"]
    large = {"properties": {f"field{i}": {"type": "string", "description": "x" * 100} for i in range(1000)}}
    assert "larger" in assert_error(ask(actors, large), 400, "INVALID_SCHEMA")["message"]
    for keyword in ("$dynamicRef", "$recursiveRef"):
        assert_error(ask(actors, {"properties": {"note": {keyword: "#"}}}), 400, "INVALID_SCHEMA")
    assert not Approval.objects.exists()


def test_a_schema_stored_before_these_checks_still_lets_approvers_decide(actors: Actors) -> None:
    approval = ask(actors, {"type": "object"}).json()
    Approval.objects.filter(pk=approval["id"]).update(response_schema={"properties": {"note": {"pattern": "(?=a)a"}}})
    answer, _ = edit(actors, approval["id"], {"note": "a"})
    assert "cannot be checked" in assert_error(answer, 400, "HITL_SCHEMA")["message"]
    decided = api_client(actors.owner_key).post(f"/api/v1/approvals/{approval['id']}/decision", {"decision": "approve"}, format="json")
    assert decided.status_code == 200 and decided.json()["status"] == "approved"


def test_an_approvers_edit_is_held_to_the_size_of_an_agents_args(actors: Actors) -> None:
    approval = ask(actors, {"type": "object"}).json()
    answer, _ = edit(actors, approval["id"], {"note": "x" * 300_000})
    assert_error(answer, 413, "PAYLOAD_TOO_LARGE")
    assert Approval.objects.get().status == "pending"
