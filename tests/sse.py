"""A small Server-Sent Events client for the tests: reads a stream in a thread and hands
over its events as they arrive."""

from __future__ import annotations

import json
import queue
import threading
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass
class SSEvent:
    id: int | None
    event: str
    data: Any


@dataclass
class Stream:
    url: str
    headers: dict[str, str]
    params: dict[str, str] = field(default_factory=dict)
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    comments: int = 0
    events: queue.Queue[SSEvent | None] = field(default_factory=queue.Queue)
    opened: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    error_body: bytes = b""
    _response: httpx.Response | None = None

    def start(self) -> Stream:
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        assert self.opened.wait(15), "the stream did not open"
        return self

    def _read(self) -> None:
        try:
            with httpx.Client(timeout=httpx.Timeout(60, read=60)) as client, client.stream("GET", self.url, headers=self.headers, params=self.params) as response:
                self._response = response
                self.status, self.response_headers = response.status_code, dict(response.headers)
                self.opened.set()
                if response.status_code != 200:
                    self.error_body = response.read()
                    return
                fields: dict[str, str] = {}
                for line in response.iter_lines():
                    if self._stop.is_set():
                        return
                    if line.startswith(":"):
                        self.comments += 1
                    elif line == "":
                        if "event" in fields or "data" in fields:
                            self.events.put(SSEvent(
                                id=int(fields["id"]) if "id" in fields else None, event=fields.get("event", "message"),
                                data=json.loads(fields["data"]) if "data" in fields else None,
                            ))
                        fields = {}
                    else:
                        name, _, value = line.partition(":")
                        fields[name] = value.removeprefix(" ")
        except httpx.HTTPError:
            pass
        finally:
            self.opened.set()
            self.events.put(None)  # the end

    def take(self, count: int, timeout: float = 10) -> list[SSEvent]:
        """The next `count` events (fewer if the stream ends or `timeout` passes)."""
        taken: list[SSEvent] = []
        while len(taken) < count:
            try:
                item = self.events.get(timeout=timeout)
            except queue.Empty:
                break
            if item is None:
                self.events.put(None)
                break
            taken.append(item)
        return taken

    def close(self) -> None:
        """Hang up (the socket closes under the reading thread)."""
        self._stop.set()
        if self._response is not None:
            try:
                self._response.close()
            except Exception:  # noqa: BLE001 - closing under a reader may raise in either thread
                pass
        if self._thread is not None:
            self._thread.join(5)
