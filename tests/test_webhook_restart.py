"""Deliveries and the hub's process: a request never waits for a receiver, and a delivery
the hub was sending when it was SIGKILLed is sent by the next hub (the same message id)."""

from __future__ import annotations

import signal
import threading

import httpx
import pytest

from memoryhub.core.jobs import JobStatus
from memoryhub.notifications.models import WebhookDelivery
from memoryhub.notifications.services import EndpointInput, webhook_create
from tests.conftest import Actors, poll, start_hub
from tests.webhook_receiver import Answer, webhook_receiver

pytestmark = pytest.mark.faults


def test_a_delivery_cut_off_by_a_killed_hub_is_sent_by_the_next_one(actors: Actors, transactional_db: None, settings: object) -> None:
    settings.MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]  # type: ignore[attr-defined]  # the hubs have it from conftest
    held = threading.Event()
    # A runner silent for 2 s has died (the default, 120 s, is for jobs minutes long).
    # The periodic task that takes up lost deliveries runs (test hubs leave it off).
    env = {"MEMORYHUB_JOB_STALL_SECONDS": "2", "MEMORYHUB_RUN_SCHEDULER": "1"}
    with webhook_receiver() as receiver:
        receiver.answer = lambda index: Answer(200, hold=held if index == 0 else None)
        endpoint = webhook_create(membership=actors.owner, item=EndpointInput(url=receiver.url, events=["approval.requested"]))
        receiver.secrets.append(endpoint.secret)
        hub = start_hub(env)
        try:
            with httpx.Client(base_url=f"{hub.url}/api/v1", headers={"Authorization": f"Bearer {actors.bot_key}"}, timeout=15) as bot:
                bot.post("/sessions", json={"session_id": "s1", "user_id": "u1"}).raise_for_status()
                # The receiver holds the delivery for 30 s: a request that waited for it would time out.
                asked = bot.post("/approvals", json={"session_id": "s1", "tool": "refund", "args": {"amount": 5}})
            assert asked.status_code == 201 and not held.is_set()
            [first] = receiver.wait_for(1)
            assert WebhookDelivery.objects.get().status == JobStatus.RUNNING
            hub.process.send_signal(signal.SIGKILL)
            hub.process.wait()
            held.set()  # the first attempt's answer goes nowhere: the hub that asked is gone
            hub = start_hub(env)
            got = receiver.wait_for(2, timeout=60)
            assert len(got) == 2, "the delivery the killed hub held was not sent again"
            assert got[1].headers["webhook-id"] == first.headers["webhook-id"] and got[1].verified
            delivered = poll(lambda: WebhookDelivery.objects.filter(status=JobStatus.DONE).first())
            assert delivered is not None and delivered.last_status_code == 200
        finally:
            held.set()
            hub.stop()
