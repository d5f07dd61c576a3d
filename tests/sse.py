"""A small Server-Sent Events client for the tests: reads a stream in a thread and hands
over its events as they arrive. A raw socket (HTTP/1.0, so the body is not chunked),
which a test can hang up at once, as a client that goes away does."""

from __future__ import annotations

import json
import queue
import socket
import threading
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode, urlsplit


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
    error_body: bytes = b""
    _sock: socket.socket | None = None
    _thread: threading.Thread | None = None

    def start(self) -> Stream:
        parts = urlsplit(self.url)
        self._sock = socket.create_connection((parts.hostname, parts.port), timeout=60)
        target = parts.path + (f"?{urlencode(self.params)}" if self.params else "")
        head = "".join(f"{name}: {value}\r\n" for name, value in {"Host": parts.netloc, "Accept": "text/event-stream", **self.headers}.items())
        self._sock.sendall(f"GET {target} HTTP/1.0\r\n{head}\r\n".encode())
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        assert self.opened.wait(15), "the stream did not open"
        return self

    def _read(self) -> None:
        assert self._sock is not None
        lines = self._sock.makefile("rb")
        try:
            self.status = int(lines.readline().split()[1])
            while (line := lines.readline().decode().strip()) != "":
                name, _, value = line.partition(":")
                self.response_headers[name.strip().lower()] = value.strip()
            self.opened.set()
            if self.status != 200:
                self.error_body = lines.read()
                return
            fields: dict[str, str] = {}
            for raw in lines:
                line = raw.decode().rstrip("\r\n")
                if line.startswith(":"):
                    self.comments += 1
                elif line == "":
                    if "event" in fields or "data" in fields:
                        self.events.put(SSEvent(
                            id=int(fields["id"]) if "id" in fields else None, event=fields.get("event", "message"),
                            data=_parsed(fields["data"]) if "data" in fields else None,
                        ))
                    fields = {}
                else:
                    name, _, value = line.partition(":")
                    value = value.removeprefix(" ")
                    # Several data lines are one value, joined by LF (the SSE standard).
                    fields[name] = f"{fields[name]}\n{value}" if name == "data" and "data" in fields else value
        except (OSError, ValueError, IndexError):
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

    def take_until(self, last: Callable[[SSEvent], bool], timeout: float = 10) -> list[SSEvent]:
        """The events up to the first for which `last` holds, that one included (fewer if
        the stream ends or `timeout` passes between two events)."""
        taken: list[SSEvent] = []
        while not taken or not last(taken[-1]):
            [event] = self.take(1, timeout=timeout) or [None]
            if event is None:
                break
            taken.append(event)
        return taken

    def ended(self) -> bool:
        """Whether the hub has ended the stream (its reading thread has stopped)."""
        return self._thread is not None and not self._thread.is_alive()

    def close(self) -> None:
        """Hang up."""
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._sock.close()
        if self._thread is not None:
            self._thread.join(5)


def _parsed(data: str) -> Any:
    """JSON for the API's streams; the console's carry HTML, kept as text."""
    if data.startswith("<"):
        return data
    return json.loads(data)
