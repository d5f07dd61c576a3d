"""uvicorn's HTTP protocol with a deadline on each request's line and headers:
`uvicorn memoryhub.asgi:application --http memoryhub.serving.deadlines:HeaderDeadlineProtocol`
(`make run` and the production command in docs/operations/deployment.md pass it).

uvicorn waits for a request's head as long as the client likes: a connection that sends
nothing, or its headers a byte now and then, stayed open past 90 s in the security
review, each one a socket and a slot for as long as the client wants. Here the head must
be complete MEMORYHUB_HEADER_SECONDS after the connection opens or after the request's
first byte (an idle keep-alive connection is closed by uvicorn's own keep-alive timeout);
otherwise the hub answers 408 and closes. What comes after the head, the body, has its
deadlines in memoryhub/serving/request_body.py.
"""

from __future__ import annotations

import asyncio

from django.conf import settings
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain\r\ncontent-length: 29\r\nconnection: close\r\n\r\nThe request came too slowly.\n"


class HeaderDeadlineProtocol(HttpToolsProtocol):
    _head_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()  # a later request on a kept-alive connection: from its first byte

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._head_deadline is None:
            self._head_deadline = self.loop.call_later(settings.MEMORYHUB_HEADER_SECONDS, self._too_slow)

    def _disarm(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _too_slow(self) -> None:
        self._head_deadline = None
        if self.transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete:
            return  # an answer is still going out on this connection (a stream): it has its own life
        self.transport.write(TIMED_OUT)
        self.transport.close()
