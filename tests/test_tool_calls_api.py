from __future__ import annotations

from django.test import override_settings

from memoryhub.timeline.models import Event
from memoryhub.tools.models import ToolCall, ToolResult
from tests.conftest import Actors, api_client, assert_error

URL = "/api/v1/sessions/s1/tool-calls"


def start(actors: Actors) -> object:
    client = api_client(actors.bot_key)
    client.post("/api/v1/sessions", {"session_id": "s1", "user_id": "u1"}, format="json")
    return client


def test_it_logs_a_call_redacted_before_storage(actors: Actors) -> None:
    client = start(actors)
    body = {
        "call_id": "c-1", "tool": "crm.lookup", "args": {"email": "ann@example.com", "api_key": "k-123456"},
        "result": "Found Ann (ann@example.com), card 4111 1111 1111 1111, phone +44 20 7946 0958.", "duration_ms": 120, "cost": 0.002,
    }
    response = client.post(URL, body, format="json")
    assert response.status_code == 201
    out = response.json()
    assert out["call_id"] == "c-1" and out["redactions"] == {"EMAIL": 2, "SECRET": 1, "CARD": 1, "PHONE": 1}
    assert out["args"]["email"].startswith("[EMAIL_") and out["args"]["api_key"].startswith("[SECRET_")
    stored = ToolCall.objects.get()
    everything = str(stored.args) + stored.result_summary + str(Event.objects.filter(kind="tool_call").values_list("summary", flat=True)[0])
    for secret in ("ann@example.com", "k-123456", "4111 1111 1111 1111", "7946 0958"):
        assert secret not in everything
    raw = client.get("/api/v1/tool-calls/c-1/result").json()["result"]
    assert raw.startswith("Found Ann ([EMAIL_") and "4111" not in raw
    # The same value becomes the same placeholder in args and output.
    assert out["args"]["email"] in raw


def test_it_lists_summaries_only_and_summarises_long_outputs(actors: Actors) -> None:
    client = start(actors)
    output = "HEAD " + "x" * 50_000 + " TAIL"
    client.post(URL, {"tool": "fetch", "args": {"url": "https://example.org"}, "result": output}, format="json")
    client.post(URL, {"tool": "calc", "args": {}, "result": "42", "result_summary": "The answer is 42"}, format="json")
    listing = client.get(URL).json()["results"]
    assert [c["tool"] for c in listing] == ["fetch", "calc"]
    assert listing[0]["result_summary"].startswith("HEAD ") and listing[0]["result_summary"].endswith(" TAIL")
    assert "characters elided" in listing[0]["result_summary"] and len(listing[0]["result_summary"]) < 500
    assert listing[1]["result_summary"] == "The answer is 42"
    assert "result" not in listing[0] and listing[0]["call_id"].startswith("call_")
    assert len(client.get(f"/api/v1/tool-calls/{listing[0]['call_id']}/result").json()["result"]) == len(output)


def test_it_stores_big_outputs_compressed_and_refuses_oversized_ones(actors: Actors) -> None:
    client = start(actors)
    big = "line of log output\n" * 500_000  # 9.5 MB
    assert client.post(URL, {"call_id": "big", "tool": "logs", "result": big}, format="json").status_code == 201
    assert len(bytes(ToolResult.objects.get().data)) < len(big) / 20
    with override_settings(MEMORYHUB_MAX_TOOL_RESULT_BYTES=1000):
        error = assert_error(client.post(URL, {"tool": "logs", "result": "y" * 2000}, format="json"), 413, "PAYLOAD_TOO_LARGE")
    assert error["details"]["limit_bytes"] == 1000
    assert ToolCall.objects.count() == 1


def test_it_refuses_bad_calls(actors: Actors) -> None:
    client = start(actors)
    client.post(URL, {"call_id": "dup", "tool": "t"}, format="json")
    assert_error(client.post(URL, {"call_id": "dup", "tool": "t"}, format="json"), 409, "CALL_ID_TAKEN")
    for body in ({"args": {}}, {"tool": 5}, {"tool": "t", "status": "meh"}, {"tool": "t", "duration_ms": -1}, {"tool": "t", "extra": 1}):
        assert_error(client.post(URL, body, format="json"), 400, "VALIDATION_ERROR")
    assert ToolCall.objects.count() == 1


def test_it_hides_calls_of_other_sessions_and_workspaces(actors: Actors) -> None:
    client = start(actors)
    client.post(URL, {"call_id": "mine", "tool": "t", "result": "secret plans"}, format="json")
    assert_error(api_client(actors.peer_key).get("/api/v1/tool-calls/mine/result"), 404, "TOOL_CALL_NOT_FOUND")
    assert_error(api_client(actors.spy_key).get("/api/v1/tool-calls/mine/result"), 404, "TOOL_CALL_NOT_FOUND")
    assert_error(api_client(actors.spy_key).get(URL), 404, "SESSION_NOT_FOUND")
    assert api_client(actors.teammate_key).get("/api/v1/tool-calls/mine/result").status_code == 200


def test_the_plan_render_shows_the_current_steps_tool_calls(actors: Actors) -> None:
    client = start(actors)
    client.put("/api/v1/sessions/s1/plan", {"goal": "g", "steps": [{"step_id": "a", "description": "Look up the customer"}]}, format="json")
    client.patch("/api/v1/sessions/s1/plan/steps/a", {"status": "running"}, format="json")
    client.post(URL, {"tool": "crm.lookup", "step_id": "a", "result": "Customer tier gold"}, format="json")
    text = client.get("/api/v1/sessions/s1/plan/render").json()["text"]
    assert "  tool: crm.lookup (ok): Customer tier gold" in text
    step = client.get("/api/v1/sessions/s1/plan").json()["steps"][0]
    assert len(step["tool_calls"]) == 1 and step["tool_calls"][0].startswith("call_")


def test_another_agents_call_ids_are_no_oracle(actors: Actors) -> None:
    # Security review, finding 8: CALL_ID_TAKEN told any agent of the workspace which
    # call ids others had used. Ids are an agent's own now.
    client = start(actors)
    assert client.post(URL, {"call_id": "call_1", "tool": "t", "result": "bot's"}, format="json").status_code == 201
    peer = api_client(actors.peer_key)
    peer.post("/api/v1/sessions", {"session_id": "p1", "user_id": "u1"}, format="json")
    assert peer.post("/api/v1/sessions/p1/tool-calls", {"call_id": "call_1", "tool": "t", "result": "peer's"}, format="json").status_code == 201
    assert peer.get("/api/v1/tool-calls/call_1/result").json()["result"] == "peer's"
    assert client.get("/api/v1/tool-calls/call_1/result").json()["result"] == "bot's"
    # An agent's own ids stay unique across its sessions; operators see the newest of an id.
    client.post("/api/v1/sessions", {"session_id": "s2", "user_id": "u1"}, format="json")
    assert_error(client.post("/api/v1/sessions/s2/tool-calls", {"call_id": "call_1", "tool": "t"}, format="json"), 409, "CALL_ID_TAKEN")
    assert api_client(actors.teammate_key).get("/api/v1/tool-calls/call_1/result").json()["result"] == "peer's"
