"""The Python client's waits against a live hub: wait_for_approval decided by an operator
meanwhile, and stream_events through a connection that drops."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from memoryhub_client import AsyncMemoryHub, MemoryHub
from tests.conftest import Actors, LiveHub, live_gauges, once
from tests.hub_clients import QUICK_RETRIES, HubClients
from tests.tcp_proxy import CuttableProxy


@pytest.fixture(params=["sync", "async"])
def hubs(request: pytest.FixtureRequest, live_hub: LiveHub) -> Iterator[HubClients]:
    clients = HubClients(request.param, live_hub.url)
    yield clients
    clients.close()


@pytest.mark.timeout(60)
def test_it_waits_for_an_approval_decided_by_an_operator(actors: Actors, hubs: HubClients) -> None:
    bot = hubs(actors.bot_key)
    bot.sessions.create("s-hitl", user_id="u1")
    approval = bot.approvals.request(session_id="s-hitl", tool="send_email", args={"to": "a@example.com"})
    assert approval.status == "pending" and not approval.decided

    with MemoryHub(base_url=hubs.url, api_key=actors.owner_key) as owner:
        # The operator decides once the hub holds the agent's wait.
        thread, errors = once(lambda: live_gauges(hubs, actors.owner_key)["waiting_approvals"] == 1,
                              lambda: owner.approvals.decide(approval.id, "edit", args={"to": "b@example.com"}, reason="use b"))
        started = time.monotonic()
        decided = bot.wait_for_approval(approval.id, timeout=30)
        thread.join(10)
        assert errors == []
        assert decided.status == "edited" and decided.args == {"to": "b@example.com"} and decided.decided_by == "operator:owner"
        assert time.monotonic() - started < 10  # woken by the decision, not by the timeout

        # Nobody decides: still pending once the timeout has passed.
        waiting = bot.approvals.request(session_id="s-hitl", tool="delete_account", args={"id": 7})
        started = time.monotonic()
        assert bot.wait_for_approval(waiting.id, timeout=1).status == "pending"
        assert time.monotonic() - started < 5
        assert [a.id for a in owner.approvals.iter(status="pending")] == [waiting.id]

        # A remembered decision answers the next identical request at once, until revoked.
        owner.approvals.decide(waiting.id, "reject", reason="never", remember="exact")
        rule = next(owner.approval_rules.iter())
        again = bot.approvals.request(session_id="s-hitl", tool="delete_account", args={"id": 7})
        assert again.status == "rejected" and again.rule == rule.id
        owner.approval_rules.delete(rule.id)
        assert bot.approvals.request(session_id="s-hitl", tool="delete_account", args={"id": 7}).status == "pending"


def hub_port(hub: LiveHub) -> int:
    return int(hub.url.rsplit(":", 1)[1])


@pytest.mark.timeout(60)
def test_it_streams_events_and_resumes_after_a_dropped_connection(actors: Actors, live_hub: LiveHub) -> None:
    proxy = CuttableProxy(hub_port(live_hub))
    with MemoryHub(base_url=live_hub.url, api_key=actors.bot_key) as bot, \
            MemoryHub(base_url=proxy.url, api_key=actors.bot_key, retry=QUICK_RETRIES) as listener:
        bot.sessions.create("s-live", user_id="u1")
        bot.sessions.append_message("s-live", "user", "one")
        events = listener.stream_events("s-live", last_event_id=0, kinds=["message"])
        first = next(events)
        assert first.kind == "message" and first.session_id == "s-live" and "#1" in first.data["summary"]

        proxy.cut(refuse=False)  # the connection drops; the client reconnects with Last-Event-ID
        bot.sessions.append_message("s-live", "user", "two")
        bot.sessions.append_message("s-live", "user", "three")
        rest = [next(events), next(events)]
        assert ["#2" in rest[0].data["summary"], "#3" in rest[1].data["summary"]] == [True, True]
        assert first.id is not None and first.id < rest[0].id < rest[1].id  # no gap, no duplicate
        events.close()
    proxy.close()


@pytest.mark.timeout(60)
def test_it_streams_events_to_the_async_client_and_resumes_too(actors: Actors, live_hub: LiveHub) -> None:
    proxy = CuttableProxy(hub_port(live_hub))

    async def scenario() -> list[str]:
        summaries: list[str] = []
        with MemoryHub(base_url=live_hub.url, api_key=actors.bot_key) as bot:
            bot.sessions.create("s-async", user_id="u1")
            async with AsyncMemoryHub(base_url=proxy.url, api_key=actors.owner_key, retry=QUICK_RETRIES) as listener:
                # The operators' workspace feed, narrowed to one session.
                events = listener.stream_events(filter_session_id="s-async", kinds=["message"], last_event_id=0)
                bot.sessions.append_message("s-async", "user", "one")
                summaries.append((await anext(events)).data["summary"])
                proxy.cut(refuse=False)
                bot.sessions.append_message("s-async", "user", "two")
                summaries.append((await anext(events)).data["summary"])
                await events.aclose()
        return summaries

    try:
        first, second = asyncio.run(scenario())
    finally:
        proxy.close()
    assert "#1" in first and "#2" in second


@pytest.mark.timeout(60)
def test_it_ends_the_stream_when_its_key_is_revoked(actors: Actors, live_hub: LiveHub) -> None:
    with MemoryHub(base_url=live_hub.url, api_key=actors.owner_key) as owner:
        issued = owner.keys.create(agent="bot", label="short-lived")
        assert issued.key and issued.prefix in [k.prefix for k in owner.keys.iter()]
        with MemoryHub(base_url=live_hub.url, api_key=issued.key, retry=QUICK_RETRIES) as agent:
            agent.sessions.create("s-end", user_id="u1")
            thread, errors = once(lambda: live_gauges(live_hub, actors.owner_key)["streams"] == 1, lambda: owner.keys.revoke(issued.prefix))
            started = time.monotonic()
            assert list(agent.stream_events("s-end")) == []  # `event: end`, and no reconnection
            thread.join(10)
        assert errors == [] and time.monotonic() - started < 10
