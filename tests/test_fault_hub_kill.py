"""The hub SIGKILLed in the middle of a stream of writes from the Python client, and
started again on the same port: every write the client saw succeed is there once, and
the client's retries (same Idempotency-Key) complete the others, none twice."""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter

import pytest

from memoryhub.memory.models import MemoryEntry
from memoryhub_client import MemoryHub
from memoryhub_client._transport import RetryPolicy
from tests.conftest import Actors, free_port, start_hub
from tests.faults import wait_for

pytestmark = pytest.mark.faults

WRITERS = 2
WRITES_EACH = 15


def test_it_loses_and_repeats_no_write_when_the_hub_is_killed_mid_stream(actors: Actors, transactional_db: None) -> None:
    port = free_port()
    hub = start_hub(port=port)
    # Enough patience to outlast a restart (~3-10 s on a busy 2-core machine).
    policy = RetryPolicy(max_attempts=40, backoff=0.2, max_backoff=1.0)
    acknowledged: dict[str, str] = {}  # content -> id the client got back
    failures: list[BaseException] = []
    done = Counter[str]()

    def writer(n: int) -> None:
        with MemoryHub(base_url=hub.url, api_key=actors.bot_key, retry=policy, timeout=30) as client:
            for i in range(WRITES_EACH):
                content = f"kill test writer {n} write {i}"
                try:
                    acknowledged[content] = client.memories.create(content, user_id="kill").id
                except BaseException as exc:  # noqa: BLE001 - the test reports every lost call
                    failures.append(exc)
                done["writes"] += 1

    threads = [threading.Thread(target=writer, args=(n,), daemon=True) for n in range(WRITERS)]
    try:
        for thread in threads:
            thread.start()
        wait_for(lambda: done["writes"] >= 6, timeout=60, what="the first writes")
        hub.process.send_signal(signal.SIGKILL)  # writes are in flight: nothing gets to finish
        hub.process.wait()
        killed_after = done["writes"]
        time.sleep(0.5)
        hub = start_hub(port=port)
        for thread in threads:
            thread.join(timeout=120)
    finally:
        hub.stop()

    assert killed_after < WRITERS * WRITES_EACH, "every write ended before the kill: nothing was tested"
    assert not failures, failures
    stored = Counter(MemoryEntry.objects.filter(user_id="kill").values_list("content", flat=True))
    assert len(acknowledged) == WRITERS * WRITES_EACH
    assert set(stored) == set(acknowledged), set(acknowledged) ^ set(stored)
    assert max(stored.values()) == 1, [c for c, n in stored.items() if n > 1]
    # The ids the client got are the stored ones: a retry answered with the first answer.
    ids = {str(pk) for pk in MemoryEntry.objects.filter(user_id="kill").values_list("id", flat=True)}
    assert ids == {str(pk) for pk in acknowledged.values()}
