"""A deadline on request heads (memoryhub/serving/deadlines.py): a connection that sends
nothing, or its headers a byte now and then, is answered 408 and closed; whole requests,
kept-alive connections and long streams are not."""

from __future__ import annotations

import socket
import time

import httpx

from tests.conftest import Actors, poll, start_hub
from tests.sse import Stream


def test_it_closes_connections_whose_request_head_does_not_come(actors: Actors, transactional_db: None) -> None:
    hub = start_hub({"MEMORYHUB_HEADER_SECONDS": "1", "MEMORYHUB_STREAM_KEEPALIVE_SECONDS": "1"})
    host, port = hub.url.removeprefix("http://").split(":")
    try:
        with socket.create_connection((host, int(port)), timeout=15) as silent:
            started = time.monotonic()
            assert silent.recv(1024).startswith(b"HTTP/1.1 408")
            assert silent.recv(1024) == b""  # and closed
            assert time.monotonic() - started < 5

        with socket.create_connection((host, int(port)), timeout=15) as dripping:
            started = time.monotonic()
            closed = False
            for byte in b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100:
                try:
                    dripping.sendall(bytes([byte]))
                except OSError:
                    closed = True
                    break
                time.sleep(0.1)  # the pace of a slow client is what is tested
                if time.monotonic() - started > 5:
                    break
            answer = b"" if closed else dripping.recv(1024)
            assert closed or answer.startswith(b"HTTP/1.1 408"), answer
            assert time.monotonic() - started < 5

        # A whole request is answered, a connection kept alive serves the next one, and
        # a stream outlives the deadline many times over.
        with httpx.Client(base_url=hub.url) as client:
            assert client.get("/healthz").status_code == 200
            assert client.get("/healthz").status_code == 200
        httpx.post(f"{hub.url}/api/v1/sessions", json={"session_id": "s1", "user_id": "u1"},
                   headers={"Authorization": f"Bearer {actors.bot_key}"}).raise_for_status()
        stream = Stream(f"{hub.url}/api/v1/sessions/s1/events", headers={"Authorization": f"Bearer {actors.bot_key}"}).start()
        try:
            assert poll(lambda: stream.comments >= 3 or stream.ended(), timeout=10)
            assert stream.comments >= 3 and not stream.ended()
        finally:
            stream.close()
    finally:
        hub.stop()
