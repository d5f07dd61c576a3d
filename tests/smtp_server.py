"""A real SMTP server on 127.0.0.1 for the tests (aiosmtpd): it keeps every message it
accepts, and refuses the recipients a test names, as a mail server would."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller


@dataclass
class Mailbox:
    port: int = 0
    messages: list[EmailMessage] = field(default_factory=list)
    refused: set[str] = field(default_factory=set)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, count: int, *, timeout: float = 10.0) -> list[EmailMessage]:
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.messages) >= count, timeout=timeout)
            return list(self.messages)


class _Handler:
    def __init__(self, mailbox: Mailbox) -> None:
        self.mailbox = mailbox

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: list[str]) -> str:
        if address in self.mailbox.refused:
            return "550 5.1.1 No such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = message_from_bytes(envelope.content, policy=policy.default)
        with self.mailbox.arrived:
            self.mailbox.messages.append(message)  # type: ignore[arg-type]
            self.mailbox.arrived.notify_all()
        return "250 Message accepted for delivery"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def smtp_server() -> Iterator[Mailbox]:
    mailbox = Mailbox(port=free_port())
    controller = Controller(_Handler(mailbox), hostname="127.0.0.1", port=mailbox.port)
    controller.start()
    try:
        yield mailbox
    finally:
        controller.stop()
