"""The support agent of examples/support_agent.py as a LangGraph graph on MemoryHub's
adapters: `make example-langgraph-agent` (against a hub from `make run`), or
`python examples/langgraph_support_agent.py --hub URL --key mha_…`.

The same ticket ("my order arrived damaged"), the same tools and the same operator
step, with LangGraph doing the bookkeeping the plain agent does by hand:

- `MemoryHubSaver` is the checkpointer: the graph's thread is the hub session, so the
  timeline shows its checkpoints and a purge of the customer erases them. LangGraph
  saves a checkpoint after every node; `--crash-after-step N` kills the process as
  node N+1 starts, and the next run carries on from the saved one, without running
  the finished nodes again;
- the refund node calls `ask_approval`, which files the request in the console's
  Approvals inbox and interrupts the graph; `resume_from_inbox` waits for the
  operator's decision (approve, edit the amount, reject) and resumes the graph with it;
- `MemoryHubStore` keeps what the agent learnt: the last node puts a lesson under
  ("lessons", "refunds"), and the first node of the next ticket searches them; the
  episode is written to the hub as well, and its guidance pinned to the session.

Tool calls (the customer lookup returns an email address and a phone number, which the
hub stores redacted) and the plan's steps are logged with the plain client, as in
examples/support_agent.py. Needs `pip install "memoryhub-client[langgraph]"`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph

from memoryhub_client import Conflict, MemoryHub
from memoryhub_client.langgraph import MemoryHubSaver, MemoryHubStore
from memoryhub_client.langgraph.interrupts import approval_interrupts, ask_approval, resume_from_inbox
from support_agent import (
    CRASH_EXIT_CODE, TASK, check_order, issue_refund, lookup_customer, parse_arguments, reporting_an_unreachable_hub, send_email, write,
)

LESSONS = ("lessons", "refunds")
NODES = [
    ("recall", "Recall lessons and past episodes of similar tickets"),
    ("lookup_customer", "Find the customer and the order behind the ticket"),
    ("check_order", "Check the order and the damage report"),
    ("refund", "Refund the order, once an operator approves"),
    ("reply", "Tell the customer what was done"),
    ("learn", "Write the episode and the lesson"),
]
# The plan's steps (recall writes the plan, so it is not one) and what each waits for:
# the lesson is written whatever the refund's fate.
PLAN_DEPENDS_ON = {"lookup_customer": [], "check_order": ["lookup_customer"], "refund": ["check_order"], "reply": ["refund"], "learn": []}


class Ticket(TypedDict, total=False):
    ticket: str
    guidance: list[str]
    facts: dict[str, Any]
    refund: dict[str, Any]
    episode: int


Node = Callable[[Ticket, RunnableConfig], dict[str, Any]]


class SupportGraph:
    """The graph's nodes, with the hub client and the console output they share."""

    def __init__(self, hub: MemoryHub, *, user_id: str, crash_after_step: int | None, say: Callable[[str], None]) -> None:
        self.hub = hub
        self.user_id = user_id
        self.crash_after_step = crash_after_step
        self.say = say

    def build(self, checkpointer: MemoryHubSaver, store: MemoryHubStore) -> Any:
        graph = StateGraph(Ticket)
        for number, (name, _) in enumerate(NODES, start=1):
            graph.add_node(name, self.step(number, name, getattr(self, name)))
        graph.add_edge(START, "recall")
        for (name, _), (following, _) in zip(NODES[:3], NODES[1:4]):
            graph.add_edge(name, following)
        # A refused refund goes straight to the lesson: there is nothing to tell the customer yet.
        graph.add_conditional_edges("refund", lambda state: "reply" if state["refund"]["status"] == "issued" else "learn", ["reply", "learn"])
        graph.add_edge("reply", "learn")
        graph.add_edge("learn", END)
        return graph.compile(checkpointer=checkpointer, store=store)

    def step(self, number: int, name: str, run: Callable[[Ticket, str], tuple[dict[str, Any], str]]) -> Node:
        """A node that marks its plan step running and done around `run`."""

        def node(state: Ticket, config: RunnableConfig) -> dict[str, Any]:
            if self.crash_after_step == number - 1:
                # The previous node's checkpoint is saved before this one starts (durability "sync").
                self.say(f"crashing on purpose after step {number - 1} (--crash-after-step)")
                sys.stdout.flush()
                os._exit(CRASH_EXIT_CODE)  # no cleanup, no goodbye: as a killed process
            session_id = config["configurable"]["thread_id"]
            if name != "recall":  # recall writes the plan
                try:
                    self.hub.plans.update_step(session_id, name, status="running")
                except Conflict:
                    pass  # running already: resumed after an interrupt, or after a crash inside it
            update, summary = run(state, session_id)
            status = "failed" if update.get("refund", {}).get("status") == "refused" else "done"
            if name != "recall":
                self.hub.plans.update_step(session_id, name, status=status, summary=summary)
            self.say(f"step {number} {name}: {summary}")
            return update

        node.__name__ = name
        return node

    def tool(self, session_id: str, step_id: str, name: str, args: dict[str, Any], run: Callable[..., dict[str, Any]]) -> dict[str, Any]:
        """Runs a tool and logs the call; the call id is the node's, so a rerun is one call."""
        started = time.monotonic()
        result = run(**args)
        self.hub.tool_calls.record(session_id, name, args=args, result=result, call_id=f"{session_id}.{step_id}", step_id=step_id,
                                   duration_ms=int((time.monotonic() - started) * 1000))
        return result

    # The nodes: each returns its state update and a one-line summary.

    def recall(self, state: Ticket, session_id: str) -> tuple[dict[str, Any], str]:
        lessons = [item.value["lesson"] for item in get_store().search(LESSONS, query=TASK, limit=3)]
        similar = self.hub.episodes.similar(TASK, k=3, outcome="success")
        if similar.results:
            self.hub.sessions.append_message(session_id, "system", f"Guidance from past episodes:\n{similar.guidance}", pinned=True)
        self.hub.sessions.append_message(session_id, "user", f"Ticket {state['ticket']}: my order arrived damaged, please refund it.")
        self.hub.plans.set(session_id, goal=TASK, steps=[
            {"step_id": name, "description": description, "depends_on": PLAN_DEPENDS_ON[name]} for name, description in NODES[1:]
        ])
        return {"guidance": lessons, "facts": {}}, f"{len(lessons)} past lesson(s), {len(similar.results)} past episode(s)"

    def lookup_customer(self, state: Ticket, session_id: str) -> tuple[dict[str, Any], str]:
        customer = self.tool(session_id, "lookup_customer", "lookup_customer", {"ticket": state["ticket"]}, lookup_customer)
        facts = {**state["facts"], "name": customer["name"], "email": customer["email"], "order": customer["order"]}
        return {"facts": facts}, f"customer {customer['name']}, order {customer['order']}"

    def check_order(self, state: Ticket, session_id: str) -> tuple[dict[str, Any], str]:
        order = self.tool(session_id, "check_order", "check_order", {"order": state["facts"]["order"]}, check_order)
        return {"facts": {**state["facts"], "total": order["total"]}}, f"order {order['order']}: {order['damage_report']}, {order['total']:.2f} EUR"

    def refund(self, state: Ticket, session_id: str) -> tuple[dict[str, Any], str]:
        facts = state["facts"]
        # Interrupts the graph until the operator decides; the node then runs again from here.
        decision = ask_approval(self.hub, tool="issue_refund", args={"order": facts["order"], "amount": facts["total"]},
                                context={"ticket": state["ticket"], "reason": "damaged on arrival"})
        if not decision.approved:
            return {"refund": {"status": "refused", "decision": decision.decision, "reason": decision.reason}}, \
                f"{decision.decision}: {decision.reason or 'no reason given'}"
        refund = self.tool(session_id, "refund", "issue_refund", dict(decision.args), issue_refund)
        return {"refund": refund}, f"refund {refund['refund_id']} of {refund['amount']:.2f} EUR ({decision.decision} by {decision.decided_by})"

    def reply(self, state: Ticket, session_id: str) -> tuple[dict[str, Any], str]:
        facts, amount = state["facts"], state["refund"]["amount"]
        fallback = (f"Dear {facts['name']}, we are sorry your order {facts['order']} arrived damaged. "
                    f"We have refunded {amount:.2f} EUR; it reaches your account in 3-5 days.")
        body = write(f"Write a short, kind email to {facts['name']}: order {facts['order']} arrived damaged and we refunded {amount:.2f} EUR.",
                     fallback)
        self.tool(session_id, "reply", "send_email", {"to": facts["email"], "body": body}, send_email)
        self.hub.sessions.append_message(session_id, "assistant", body)
        return {}, f"emailed {facts['name']}"

    def learn(self, state: Ticket, session_id: str) -> tuple[dict[str, Any], str]:
        refund, facts = state["refund"], state["facts"]
        outcome = "success" if refund["status"] == "issued" else "failure"
        if outcome == "success":
            lesson = (f"Ticket {state['ticket']}: checked the damage report before asking for the refund; the operator "
                      f"answered {refund['amount']:.2f} EUR for a {facts['total']:.2f} EUR order.")
        else:
            lesson = f"Ticket {state['ticket']}: the refund was {refund['decision']} ({refund['reason'] or 'no reason given'})."
        tools_used: dict[str, int] = {}
        for call in self.hub.tool_calls.iter(session_id):
            tools_used[call.tool] = tools_used.get(call.tool, 0) + 1
        episode = self.hub.episodes.create(
            user_id=self.user_id, task=TASK, outcome=outcome, narrative=write(f"In 3 sentences, what this support task did: {state}", lesson),
            session_id=session_id, tools_used=tools_used, metadata={"ticket": state["ticket"], "graph": "langgraph"},
        )
        get_store().put(LESSONS, state["ticket"], {"lesson": lesson, "outcome": outcome}, index=["lesson"])
        return {"episode": episode.id}, f"episode #{episode.id} and a lesson written ({outcome})"


def run_until_done(graph: Any, hub: MemoryHub, config: RunnableConfig, ticket: str, *, approval_timeout: float,
                   say: Callable[[str], None]) -> int:
    """Runs (or resumes) the ticket's graph through its approval to its end: 0 refunded,
    1 refused, 2 still waiting for the operator."""
    snapshot = graph.get_state(config)
    if snapshot.values.get("episode"):
        say(f"ticket {ticket} is finished already (episode #{snapshot.values['episode']})")
        return 0
    if snapshot.next:
        say(f"resumed thread {config['configurable']['thread_id']} from checkpoint {snapshot.config['configurable']['checkpoint_id']}: "
            f"next {', '.join(snapshot.next)}")
        payload: Any = None
    else:
        payload = {"ticket": ticket}
    while True:
        # "sync": each node's checkpoint is on the hub before the next node starts.
        for _ in graph.stream(payload, config, stream_mode="updates", durability="sync"):
            pass
        snapshot = graph.get_state(config)
        waiting = approval_interrupts(snapshot)
        if not waiting:
            return 0 if snapshot.values["refund"]["status"] == "issued" else 1
        for interrupt in waiting:
            say(f"waiting for an operator to approve refund #{interrupt.value['approval_id']} "
                f"({interrupt.value['args']['amount']:.2f} EUR): console → Approvals")
        payload = resume_from_inbox(hub, snapshot, timeout=approval_timeout)
        if payload is None:
            say("the refund still waits for an operator; run again to keep waiting")
            return 2


def threads(first: int = 1042) -> Iterator[str]:
    number = first
    while True:
        yield f"T-{number}"
        number += 1


def main(argv: list[str] | None = None) -> int:
    options = parse_arguments(argv, doc=__doc__, make_target="example-langgraph-agent", session="lg-support-<ticket>",
                              crash_after=f"node N's checkpoint, N from 1 to {len(NODES) - 1}", steps=len(NODES) - 1)
    return reporting_an_unreachable_hub(lambda: run(options), hub=options.hub, make_target="example-langgraph-agent")


def run(options: argparse.Namespace) -> int:
    say: Callable[[str], None] = lambda line: print(line, flush=True)  # noqa: E731
    with ExitStack() as stack:
        hub = stack.enter_context(MemoryHub(base_url=options.hub, api_key=options.key))
        saver = stack.enter_context(MemoryHubSaver(base_url=options.hub, api_key=options.key, user_id=options.user_id))
        store = stack.enter_context(MemoryHubStore(base_url=options.hub, api_key=options.key, user_id=options.user_id))
        graph = SupportGraph(hub, user_id=options.user_id, crash_after_step=options.crash_after_step, say=say).build(saver, store)

        def config_of(ticket: str) -> RunnableConfig:
            return {"configurable": {"thread_id": options.session or f"lg-support-{ticket}", "user_id": options.user_id}}

        ticket = options.ticket or next(t for t in threads() if not graph.get_state(config_of(t)).values.get("episode"))
        return run_until_done(graph, hub, config_of(ticket), ticket, approval_timeout=options.approval_timeout, say=say)


if __name__ == "__main__":
    sys.exit(main())
