"""The request body before Django reads it (memoryhub/serving/request_body.py), under
uvicorn: nobody unknown gets a large body read, a body must keep coming, and chunked
bodies share a bounded buffer. Raw sockets, so that a test controls every byte."""

from __future__ import annotations

import json
import socket
import time

from django.contrib.auth import get_user_model
from django.test import Client

from memoryhub.core.selectors import caller_known
from memoryhub.memory.models import MemoryEntry
from tests.conftest import Actors, LiveHub, live_gauges, poll, start_hub


def connect(hub: LiveHub) -> socket.socket:
    host, port = hub.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=15)


def head(path: str, *, key: str | None = None, length: int | None = None, chunked: bool = False) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    if key:
        lines.append(f"Authorization: Bearer {key}")
    if length is not None:
        lines.append(f"Content-Length: {length}")
    if chunked:
        lines.append("Transfer-Encoding: chunked")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def answer(sock: socket.socket) -> tuple[int, dict]:
    """The status and JSON body of the answer, read until the hub closes the connection."""
    received = b""
    while data := sock.recv(65536):
        received += data
    status_line, _, rest = received.partition(b"\r\n")
    body = rest.partition(b"\r\n\r\n")[2]
    return int(status_line.split()[1]), json.loads(body) if body.startswith(b"{") else {}


def batch_of(size: int) -> bytes:
    """A batch write of about `size` bytes."""
    items = [{"content": f"note {n} " + "x" * 9_000, "user_id": "u1"} for n in range(size // 9_000 + 1)]
    return json.dumps({"items": items}).encode()


def test_it_reads_no_large_body_of_an_unknown_caller(actors: Actors, live_hub: LiveHub) -> None:
    for key in (None, "mha_000000000000_notakeyatall", actors.bot_key[:-4] + "abcd"):
        for framing in ({"length": 31 * 2**20}, {"chunked": True}):
            with connect(live_hub) as sock:
                sock.sendall(head("/api/v1/memories/batch", key=key, **framing))  # and not a byte of the body
                status, body = answer(sock)
            assert (status, body["error"]["code"]) == (401, "UNAUTHENTICATED"), (key, framing)
    # A known key's large body is read; a small one needs no key to be read (and is refused by Django).
    with connect(live_hub) as sock:
        body = batch_of(100_000)
        sock.sendall(head("/api/v1/memories/batch", key=actors.bot_key, length=len(body)) + body)
        status, _ = answer_once(sock)
    assert status == 201 and MemoryEntry.objects.count() == 12
    with connect(live_hub) as sock:
        sock.sendall(head("/api/v1/memories", length=2) + b"{}")
        assert answer_once(sock)[0] == 401


def answer_once(sock: socket.socket) -> tuple[int, dict]:
    """The status and body of one answer on a kept-alive connection."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(65536)
    headers, _, body = received.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in headers.split(b"\r\n") if line.lower().startswith(b"content-length")))
    while len(body) < length:
        body += sock.recv(65536)
    return int(headers.split()[1]), json.loads(body)


def test_it_answers_408_to_a_body_that_stops_coming(actors: Actors, transactional_db: None) -> None:
    hub = start_hub({"MEMORYHUB_BODY_IDLE_SECONDS": "1", "MEMORYHUB_BODY_SECONDS": "3"})
    try:
        body = json.dumps({"content": "a note", "user_id": "u1"}).encode()
        with connect(hub) as sock:  # stops halfway
            sock.sendall(head("/api/v1/memories", key=actors.bot_key, length=len(body)) + body[:5])
            started = time.monotonic()
            status, error = answer(sock)
        assert (status, error["error"]["code"]) == (408, "REQUEST_TIMEOUT") and time.monotonic() - started < 5
        with connect(hub) as sock:  # keeps coming, a byte a half second: over the whole body's deadline
            sock.sendall(head("/api/v1/memories", key=actors.bot_key, length=len(body)))
            started = time.monotonic()
            try:
                for byte in body:
                    sock.sendall(bytes([byte]))
                    time.sleep(0.5)  # the pace of a slow client is what is tested
            except OSError:
                pass  # closed by the hub
            status, error = answer(sock)
        assert (status, error["error"]["code"]) == (408, "REQUEST_TIMEOUT") and time.monotonic() - started < 6
        assert not MemoryEntry.objects.exists()
    finally:
        hub.stop()


def test_it_bounds_what_chunked_bodies_hold_together(actors: Actors, transactional_db: None) -> None:
    hub = start_hub({"MEMORYHUB_BUFFERED_BODY_BYTES": str(2**20)})
    try:
        # Two chunked bodies held at once, 600 KB each, in a buffer of 1 MB: the second waits for room.
        first, second = connect(hub), connect(hub)
        try:
            part = batch_of(600_000)
            first.sendall(head("/api/v1/memories/batch", key=actors.bot_key, chunked=True) + chunk(part[:600_000]))
            assert poll(lambda: live_gauges(hub, actors.owner_key)["buffered_body_bytes"] == 600_000)
            second.sendall(head("/api/v1/memories/batch", key=actors.bot_key, chunked=True) + chunk(part[:600_000]))
            status, error = answer(second)
            assert (status, error["error"]["code"]) == (503, "BUSY")
            first.sendall(chunk(part[600_000:]) + b"0\r\n\r\n")
            assert answer_once(first)[0] == 201
        finally:
            first.close()
            second.close()
    finally:
        hub.stop()


def test_it_lets_a_logged_in_operators_large_body_through(actors: Actors) -> None:
    browser = Client()
    browser.force_login(actors.owner.user)
    assert caller_known(authorization="", session_key=browser.session.session_key)
    assert not caller_known(authorization="", session_key="no-such-session")
    assert caller_known(authorization=f"Bearer {actors.owner_key}", session_key=None)
    assert not caller_known(authorization="Bearer mho_nope", session_key=browser.session.session_key)  # a bad key is not saved by a cookie
    admin = get_user_model().objects.create_superuser("root", "root@example.com", None)
    browser.force_login(admin)
    assert caller_known(authorization="", session_key=browser.session.session_key)
