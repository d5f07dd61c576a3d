"""A webhook receiver on 127.0.0.1 for the tests: a real HTTP server that checks every
delivery's signature with the Standard Webhooks reference library (`standardwebhooks`),
keeps what it received, and answers as the test scripts it to."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    # What the reference verifier made of the signature with the receiver's secret(s).
    verified: bool

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    # Held back this long before answering (a slow receiver)…
    delay: float = 0.0
    # …or until the test sets this (a receiver the test controls to the moment).
    hold: threading.Event | None = None


@dataclass
class Receiver:
    url: str
    secrets: list[str] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    # The answer to the n-th request (0-based); by default 200.
    answer: Callable[[int], Answer] = lambda _: Answer()
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, count: int, *, timeout: float = 10.0) -> list[Received]:
        """The first `count` requests, as soon as they have arrived."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.received) >= count, timeout=timeout)
            return list(self.received)


def _verified(secrets: list[str], headers: dict[str, str], body: bytes) -> bool:
    for secret in secrets:
        try:
            Webhook(secret).verify(body, headers)
            return True
        except WebhookVerificationError:
            continue
    return False


@contextmanager
def webhook_receiver() -> Iterator[Receiver]:
    receiver = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {name.lower(): value for name, value in self.headers.items()}
            with receiver.arrived:
                index = len(receiver.received)
                receiver.received.append(Received(self.path, headers, body, _verified(receiver.secrets, headers, body)))
                receiver.arrived.notify_all()
            answer = receiver.answer(index)
            if answer.delay:
                threading.Event().wait(answer.delay)
            if answer.hold is not None:
                answer.hold.wait(30)
            self.send_response(answer.status)
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
