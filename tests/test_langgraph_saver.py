"""MemoryHubSaver against a live hub: LangGraph's own conformance suite
(langgraph-checkpoint-conformance, every base and extended capability), and a real
StateGraph interrupted in one "process" (saver) and resumed from the hub in another."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from memoryhub.conversations.models import Session
from memoryhub.timeline.models import Event
from memoryhub_client.langgraph import MemoryHubSaver
from tests.conftest import Actors, LiveHub
from tests.hub_clients import QUICK_RETRIES

pytestmark = pytest.mark.timeout(180)


@pytest.mark.django_db(transaction=True)
def test_it_passes_langgraphs_conformance_suite_at_level_full(actors: Actors, live_hub: LiveHub) -> None:
    @checkpointer_test(name="MemoryHubSaver")
    async def hub_saver() -> AsyncIterator[MemoryHubSaver]:
        saver = MemoryHubSaver(base_url=live_hub.url, api_key=actors.bot_key, retry=QUICK_RETRIES)
        yield saver
        await saver.aclose()

    report = asyncio.run(validate(hub_saver))
    failures = {name: result.failures for name, result in report.results.items() if not result.passed}
    assert failures == {}, failures
    assert {name for name, result in report.results.items() if result.passed} == {c.value for c in ALL_CAPABILITIES}
    assert sum(result.tests_passed for result in report.results.values()) > 60, report.results
    assert report.passed_all() and report.conformance_level() == "FULL"


class Trip(TypedDict, total=False):
    city: str
    booked: list[str]
    approved: bool


def trip_graph(saver: MemoryHubSaver, calls: list[str]) -> Any:
    def search(state: Trip) -> Trip:
        calls.append("search")
        return {"booked": [f"hotel in {state['city']}"]}

    def approve(state: Trip) -> Trip:
        calls.append("approve")
        return {"approved": interrupt({"question": f"Book {state['booked'][0]}?"}) == "yes"}

    def book(state: Trip) -> Trip:
        calls.append("book")
        return {"booked": [*state["booked"], "flight"] if state["approved"] else []}

    graph = StateGraph(Trip)
    for name, node in (("search", search), ("approve", approve), ("book", book)):
        graph.add_node(name, node)
    graph.add_edge(START, "search")
    graph.add_edge("search", "approve")
    graph.add_edge("approve", "book")
    graph.add_edge("book", END)
    return graph.compile(checkpointer=saver)


@pytest.mark.django_db(transaction=True)
def test_a_graph_interrupted_in_one_process_resumes_in_another(actors: Actors, live_hub: LiveHub) -> None:
    config = {"configurable": {"thread_id": "trip-1", "user_id": "u7"}}
    first_calls: list[str] = []
    with MemoryHubSaver(base_url=live_hub.url, api_key=actors.bot_key, retry=QUICK_RETRIES) as saver:
        result = trip_graph(saver, first_calls).invoke({"city": "Oslo"}, config)
        [pending] = result["__interrupt__"]
        assert pending.value == {"question": "Book hotel in Oslo?"} and first_calls == ["search", "approve"]

    # A fresh saver (as a new process would have) finds the thread where it stopped, on
    # a config without the user: the thread keeps the user it was started for.
    later_calls: list[str] = []
    with MemoryHubSaver(base_url=live_hub.url, api_key=actors.bot_key, retry=QUICK_RETRIES) as saver:
        graph = trip_graph(saver, later_calls)
        resumed = {"configurable": {"thread_id": "trip-1"}}
        assert graph.get_state(resumed).next == ("approve",)
        final = graph.invoke(Command(resume="yes"), resumed)
        assert final == {"city": "Oslo", "booked": ["hotel in Oslo", "flight"], "approved": True}
        assert later_calls == ["approve", "book"]  # search, finished before, was not run again
        history = list(graph.get_state_history(resumed))
        assert [h.metadata["step"] for h in history] == sorted((h.metadata["step"] for h in history), reverse=True)
        assert history[-1].metadata["source"] == "input"

        # The same graph natively async, on another thread.
        async def run_async() -> Any:
            await graph.ainvoke({"city": "Rome"}, {"configurable": {"thread_id": "trip-2", "user_id": "u7"}})
            return await graph.ainvoke(Command(resume="no"), {"configurable": {"thread_id": "trip-2"}})

        assert asyncio.run(run_async())["booked"] == []
        saver.delete_thread("trip-2")
        assert saver.get_tuple({"configurable": {"thread_id": "trip-2", "checkpoint_ns": ""}}) is None

    # The thread is a session of the end user, on the operators' timeline.
    session = Session.objects.get(session_id="trip-1")
    assert (session.user_id, session.agent.name) == ("u7", "bot")
    assert Event.objects.filter(session_id="trip-1", kind="checkpoint").count() == len(history)
