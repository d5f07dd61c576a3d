"""The Python client's retries against a live hub: a 429 waited out as Retry-After says,
a POST whose answer was lost resent with the same Idempotency-Key (one record), and the
calls that are not resent."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from memoryhub.memory.models import MemoryEntry
from memoryhub_client import NO_RETRIES, AsyncMemoryHub, ConnectionFailed, MemoryHub, NotFound, RateLimited, RetryPolicy
from tests.conftest import Actors, LiveHub, free_port, start_hub
from tests.tcp_proxy import pump
from tests.hub_clients import QUICK_RETRIES, HubClients


class LosesFirstAnswer:
    """A TCP proxy on 127.0.0.1 in front of the hub that passes the first request on and
    hangs up as soon as its answer starts to come back: the effect happened, the answer
    was lost on the way. Later connections pass through. `requests` are the first
    request of each connection, as sent."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.requests: list[bytes] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        request = read_request(client)
        with self._lock:
            self.requests.append(request)
            first = len(self.requests) == 1
        upstream.sendall(request)
        if first:
            upstream.recv(1)  # the hub answers once its transaction has committed
            for sock in (client, upstream):
                sock.close()
            return
        for source, target in ((client, upstream), (upstream, client)):
            threading.Thread(target=pump, args=(source, target), daemon=True).start()

    def close(self) -> None:
        self.listener.close()

    def idempotency_keys(self) -> list[str]:
        keys = []
        for request in self.requests:
            for line in request.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
                name, _, value = line.decode().partition(":")
                if name.strip().lower() == "idempotency-key":
                    keys.append(value.strip())
        return keys


def read_request(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def hub_port(hub: LiveHub) -> int:
    return int(hub.url.rsplit(":", 1)[1])


@pytest.fixture
def proxy(live_hub: LiveHub) -> Iterator[LosesFirstAnswer]:
    proxy = LosesFirstAnswer(hub_port(live_hub))
    yield proxy
    proxy.close()


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_it_resends_a_post_whose_answer_was_lost_with_the_same_key(actors: Actors, proxy: LosesFirstAnswer, flavour: str) -> None:
    clients = HubClients(flavour, proxy.url)
    try:
        entry = clients(actors.bot_key).memories.create("said once", user_id="u1")
    finally:
        clients.close()
    assert [str(pk) for pk in MemoryEntry.objects.filter(content="said once").values_list("id", flat=True)] == [entry.id]
    keys = proxy.idempotency_keys()
    assert len(keys) == 2 and keys[0] == keys[1]  # the retry carried the first attempt's key


def test_it_counts_a_resent_delete_that_finds_nothing_as_done_and_never_resends_a_patch(actors: Actors, live_hub: LiveHub) -> None:
    with MemoryHub(base_url=live_hub.url, api_key=actors.bot_key) as direct:
        entry = direct.memories.create("short-lived", user_id="u1")
        deleting = LosesFirstAnswer(hub_port(live_hub))
        with MemoryHub(base_url=deleting.url, api_key=actors.bot_key, retry=QUICK_RETRIES) as bot:
            assert bot.memories.delete(entry.id) is None  # the second attempt's 404 is the first one's success
        deleting.close()
        assert len(deleting.requests) == 2
        with pytest.raises(NotFound):
            direct.memories.get(entry.id)

        # A PATCH that may have reached the hub is left to the caller (moving a plan step
        # twice is a 409), but the error says so.
        kept = direct.memories.create("patched once", user_id="u1")
        patching = LosesFirstAnswer(hub_port(live_hub))
        with MemoryHub(base_url=patching.url, api_key=actors.bot_key, retry=QUICK_RETRIES) as bot:
            with pytest.raises(ConnectionFailed) as lost:
                bot.memories.update(kept.id, content="patched")
        patching.close()
        assert len(patching.requests) == 1 and lost.value.code == "CONNECTION_ERROR"
        assert direct.memories.get(kept.id).content == "patched"


def test_it_waits_out_a_429_as_retry_after_says(actors: Actors, transactional_db: None) -> None:
    hub = start_hub(extra_env={"MEMORYHUB_RATE_WRITES": "2/second"})
    try:
        # Writes until one is refused: on a busy machine the one-second window may roll
        # over between two writes, so the third is not always the one.
        accepted_at_once = 0
        with MemoryHub(base_url=hub.url, api_key=actors.bot_key, retry=NO_RETRIES) as once:
            with pytest.raises(RateLimited) as limited:
                for n in range(10):
                    once.memories.create(f"until refused {n}", user_id="u1")
                    accepted_at_once += 1
        assert limited.value.status == 429 and limited.value.code == "RATE_LIMITED" and limited.value.retry_after == 1

        # A client that won't wait a whole second gives up at the first 429. (Several
        # writes, because on a busy machine the hub's one-second window may have rolled
        # over since the writes above; ten cannot all fit in 2/second.)
        accepted_before_429 = 0
        with MemoryHub(base_url=hub.url, api_key=actors.bot_key, retry=RetryPolicy(max_retry_after=0.5)) as impatient:
            with pytest.raises(RateLimited):
                for n in range(10):
                    impatient.memories.create(f"not waited for {n}", user_id="u1")
                    accepted_before_429 += 1

        # The default policy waits the second the hub asks for, then succeeds.
        with MemoryHub(base_url=hub.url, api_key=actors.bot_key) as patient:
            started = time.monotonic()
            for n in range(3):
                patient.memories.create(f"c{n}", user_id="u1")
            assert time.monotonic() - started > 0.5

        async def async_writes() -> None:
            async with AsyncMemoryHub(base_url=hub.url, api_key=actors.bot_key) as patient:
                for n in range(3):
                    await patient.memories.create(f"d{n}", user_id="u1")

        started = time.monotonic()
        asyncio.run(async_writes())
        assert time.monotonic() - started > 0.5
    finally:
        hub.stop()
    assert accepted_at_once >= 2
    assert MemoryEntry.objects.filter(content=f"until refused {accepted_at_once}").count() == 0  # the refused one
    assert MemoryEntry.objects.filter(content__startswith="not waited for").count() == accepted_before_429
    assert MemoryEntry.objects.count() == accepted_at_once + accepted_before_429 + 6


def test_it_gives_up_on_a_hub_it_cannot_reach() -> None:
    policy = RetryPolicy(max_attempts=3, backoff=0.01)
    started = time.monotonic()
    with MemoryHub(base_url=f"http://127.0.0.1:{free_port()}", api_key="mh_x", retry=policy) as hub:
        with pytest.raises(ConnectionFailed) as unreachable:
            hub.sessions.create("s", user_id="u1")
    assert unreachable.value.status is None and unreachable.value.idempotency_key
    assert time.monotonic() - started < 5
