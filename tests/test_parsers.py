"""Request bodies parsed by orjson, with DRF's parser as the judge of anything orjson
refuses: what is accepted and refused is what the contract always accepted and refused."""

from __future__ import annotations

from memoryhub.memory.models import MemoryEntry
from tests.conftest import Actors, api_client, assert_error


def post(actors: Actors, body: bytes, content_type: str = "application/json") -> object:
    return api_client(actors.bot_key).generic("POST", "/api/v1/memories", body, content_type=content_type)


def test_it_parses_json_bodies(actors: Actors) -> None:
    response = post(actors, '{"content": "caf\\u00e9 ☕", "user_id": "u1", "metadata": {"n": 1.5}}'.encode())
    assert response.status_code == 201
    entry = MemoryEntry.objects.get()
    assert entry.content == "café ☕" and entry.metadata == {"n": 1.5}


def test_it_refuses_what_was_always_refused(actors: Actors) -> None:
    for body in (b"{", b'{"content": "x", "user_id": "u1", "metadata": {"n": NaN}}', b'{"content": "x",}', b"\xff\xfe"):
        assert_error(post(actors, body), 400, "MALFORMED_JSON")
    assert not MemoryEntry.objects.exists()


def test_it_accepts_what_only_the_standard_parser_reads(actors: Actors) -> None:
    # A declared non-UTF-8 charset; integers beyond 64 bits (orjson rounds them) are
    # read exactly by the standard parser, then refused: no client language keeps them.
    error = assert_error(post(actors, b'{"content": "x", "user_id": "u1", "metadata": {"big": 123456789012345678901234567890}}'), 400, "UNSUPPORTED_JSON")
    assert error["details"]["path"] == "$.metadata.big"
    assert post(actors, b'{"content": "x", "user_id": "u1", "metadata": {"big": 9223372036854775807, "float": 1.5e3}}').status_code == 201
    assert MemoryEntry.objects.get().metadata == {"big": 9223372036854775807, "float": 1500.0}
    latin = '{"content": "café", "user_id": "u2"}'.encode("latin-1")
    assert post(actors, latin, "application/json; charset=latin-1").status_code == 201
    assert MemoryEntry.objects.get(user_id="u2").content == "café"
