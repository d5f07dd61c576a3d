"""The import endpoint against generated hostile input (issue 53, "the class, not the
instance"): archives with a valid manifest (counts and checksums right, so the records
are read) whose records hold any JSON in every field a kind declares, and foreign files
of any shape. Whatever the file, the upload answers 202 or a 4xx in the envelope, never a
5xx, and an accepted import ends `done` with what it refused counted, never `failed` on a
record (a crash). Bounded: a few dozen examples, derandomized."""

from __future__ import annotations

import json
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryhub.portability.archive import KINDS
from tests.conftest import Actors, api_client, poll
from tests.test_imports_api import archive_of

EXAMPLES = 60

odd_text = st.sampled_from(["", " ", "a\x00b", "\ud800", "é", "0", "2026-13-45T99:00:00", "not a time", "AAAA", "!!", "x" * 300])
scalar = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12), odd_text,
)
json_value = st.recursive(scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=10)
# Plausible values too, so that records get past the first field and reach deeper checks.
plausible = st.sampled_from([
    "2026-01-02T03:04:05+00:00", "6f1f7e1c-1c5e-4f3a-9a55-0c1d2e3f4a5b", "u1", "s1", "default", "bot", "note", "factual", "agent",
    "user", "assistant", 1, 0, True, {}, [], {"subject": "Ann", "predicate": "likes", "object": "tea"},
])
value = st.one_of(plausible, json_value)


@st.composite
def records_of(draw: st.DrawFn, kind: Any) -> list[Any]:
    made = []
    for n in range(draw(st.integers(1, 3))):
        if draw(st.integers(0, 9)) == 0:
            made.append(draw(json_value))  # not even an object
            continue
        names = draw(st.lists(st.sampled_from(kind.fields), max_size=len(kind.fields), unique=True))
        record = {name: draw(value) for name in names}
        if draw(st.booleans()):
            record.setdefault("id", f"fuzz-{n}")
        made.append(record)
    return made


@st.composite
def archives(draw: st.DrawFn) -> bytes:
    """A zip whose manifest is right about its members: a session to refer to, then the
    generated records of one to three kinds."""
    members: dict[str, bytes] = {
        "sessions.jsonl": json.dumps({"id": 1, "session_id": "s1", "user_id": "u1", "agent": "bot"}).encode() + b"\n",
    }
    for kind in draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=3, unique_by=lambda k: k.name)):
        lines = [json.dumps(record, ensure_ascii=False, allow_nan=False).encode("utf-8", "surrogatepass") for record in draw(records_of(kind))]
        members[f"{kind.name}.jsonl"] = members.get(f"{kind.name}.jsonl", b"") + b"\n".join(lines) + b"\n"
    return archive_of(members)


def outcome(key: str, data: bytes, fmt: str, name: str) -> str:
    """`refused` (a 4xx in the envelope) or the finished job's status; a 5xx fails."""
    response = api_client(key).post(
        "/api/v1/imports", {"file": SimpleUploadedFile(name, data), "format": fmt, "store": "default", "agent": "bot"}, format="multipart",
    )
    assert response.status_code < 500, response.content[:500]
    if response.status_code != 202:
        assert 400 <= response.status_code < 500 and set(response.json()) == {"error"}, response.content[:500]
        return "refused"
    job = response.json()["id"]
    done = poll(lambda: (body := api_client(key).get(f"/api/v1/imports/{job}").json())["status"] in ("done", "failed") and body, timeout=60)
    assert done, "the import did not finish"
    assert done["status"] == "done", done.get("error")
    return done["status"]


@settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=archives())
def test_any_records_in_an_archive_end_in_a_clean_job(actors: Actors, transactional_db: None, data: bytes) -> None:
    outcome(actors.owner_key, data, "memoryhub", "archive.zip")


foreign_files = st.one_of(
    json_value.map(lambda v: json.dumps(v).encode()),
    st.lists(st.dictionaries(st.sampled_from(["id", "memory", "user_id", "created_at", "metadata", "categories", "mapping", "title",
                                              "chat_messages", "uuid", "current_node", "text", "sender"]), value, max_size=6), max_size=3)
    .map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=40),
)


@settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=foreign_files, fmt=st.sampled_from(["mem0", "chatgpt", "claude"]))
def test_any_foreign_file_is_refused_or_ends_in_a_clean_job(actors: Actors, transactional_db: None, data: bytes, fmt: str) -> None:
    outcome(actors.owner_key, data, fmt, "export.json")
