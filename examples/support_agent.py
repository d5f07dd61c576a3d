"""A support agent that keeps its memory in MemoryHub: `make example-agent` (against a
hub from `make run`), or `python examples/support_agent.py --hub URL --key mha_…`.

The task: a customer writes that an order arrived damaged; the agent looks the customer
up, checks the order, refunds it (a risky step: it asks an operator first and waits),
and tells the customer. Along the way it

- opens a session and a plan, and marks each step running and done;
- logs every tool call (the customer lookup returns an email address and a phone
  number: the hub stores them redacted);
- asks for approval before the refund and waits for the operator's decision (approve,
  edit the amount, or reject) in the console's Approvals page;
- saves a checkpoint after each step. `--crash-after-step N` kills the process right
  after step N's checkpoint; run it again and it resumes from the latest checkpoint,
  without doing the finished steps again;
- writes an episode at the end; the next run (another ticket) starts by asking for
  similar past episodes and takes their guidance.

No language model is needed: the replies are templates. With an OpenAI-compatible
endpoint in MEMORYHUB_EXAMPLE_LLM_URL (e.g. http://127.0.0.1:11434/v1; optional
MEMORYHUB_EXAMPLE_LLM_MODEL and MEMORYHUB_EXAMPLE_LLM_KEY) the customer's email and the
episode's narrative are written by the model.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import httpx

from memoryhub_client import Conflict, ConnectionFailed, MemoryHub, NotFound

PENDING = "pending"
CRASH_EXIT_CODE = 3  # what `--crash-after-step` exits with, so a test tells it from a failure
TASK = "Refund a damaged order and tell the customer"
STEPS = [
    ("lookup_customer", "Find the customer and the order behind the ticket"),
    ("check_order", "Check the order and the damage report"),
    ("refund", "Refund the order, once an operator approves"),
    ("notify_customer", "Tell the customer what was done"),
]


# --- the agent's tools (local fakes: a real agent would call its CRM, shop, payments) --------


def lookup_customer(ticket: str) -> dict[str, Any]:
    return {"ticket": ticket, "name": "Maria Rossi", "email": "maria.rossi@example.com", "phone": "+39 347 555 0199", "order": "1042"}


def check_order(order: str) -> dict[str, Any]:
    return {"order": order, "total": 89.90, "status": "delivered", "damage_report": "screen cracked on arrival"}


def issue_refund(order: str, amount: float) -> dict[str, Any]:
    return {"refund_id": f"rf-{order}", "order": order, "amount": amount, "status": "issued"}


def send_email(to: str, body: str) -> dict[str, Any]:
    return {"to": to, "sent": True, "chars": len(body)}


# --- an optional model ----------------------------------------------------------------------


def write(prompt: str, fallback: str) -> str:
    """The model's answer to `prompt` if an endpoint is configured, else `fallback`."""
    url = os.environ.get("MEMORYHUB_EXAMPLE_LLM_URL")
    if not url:
        return fallback
    response = httpx.post(
        f"{url.rstrip('/')}/chat/completions", timeout=60,
        headers={"Authorization": f"Bearer {os.environ.get('MEMORYHUB_EXAMPLE_LLM_KEY', 'none')}"},
        json={"model": os.environ.get("MEMORYHUB_EXAMPLE_LLM_MODEL", "gpt-4o-mini"), "messages": [{"role": "user", "content": prompt}]},
    )
    response.raise_for_status()
    return response.json()["choices"][0]["message"]["content"].strip() or fallback


# --- the agent ----------------------------------------------------------------------------------


class SupportAgent:
    def __init__(self, hub: MemoryHub, *, session_id: str, user_id: str, ticket: str, crash_after_step: int | None,
                 approval_timeout: float, say: Callable[[str], None] = print) -> None:
        self.hub = hub
        self.session_id = session_id
        self.user_id = user_id
        self.ticket = ticket
        self.crash_after_step = crash_after_step
        self.approval_timeout = approval_timeout
        self.say = say
        self.state: dict[str, Any] = {"done": [], "facts": {}, "tools": {}}
        self.version = 0

    def run(self) -> int:
        started = time.monotonic()
        self.open_session()
        if "episode" in self.state:
            self.say(f"ticket {self.ticket} is finished already (episode #{self.state['episode']})")
            return 0
        for number, (step_id, _) in enumerate(STEPS, start=1):
            if step_id in self.state["done"]:
                self.say(f"step {number} {step_id}: done before the restart, skipped")
                continue
            try:
                self.hub.plans.update_step(self.session_id, step_id, status="running")
            except Conflict:
                pass  # running already: the process that started it died before its checkpoint
            summary = getattr(self, step_id)()
            if summary == PENDING:
                return 2  # the next run finds the same approval request and waits again
            if summary is None:  # refused: the task ends here
                return self.finish(started, outcome="failure")
            self.hub.plans.update_step(self.session_id, step_id, status="done", summary=summary)
            self.state["done"].append(step_id)
            self.checkpoint(step_id)
            self.say(f"step {number} {step_id}: {summary}")
            if self.crash_after_step == number:
                self.say(f"crashing on purpose after step {number} (--crash-after-step)")
                sys.stdout.flush()
                os._exit(CRASH_EXIT_CODE)  # no cleanup, no goodbye: as a killed process
        return self.finish(started, outcome="success")

    def open_session(self) -> None:
        session = self.hub.sessions.create(self.session_id, user_id=self.user_id, metadata={"ticket": self.ticket})
        try:
            loaded = self.hub.checkpoints.resume(self.session_id)
        except NotFound:
            loaded = None
        if loaded is not None:
            self.state, self.version = loaded.state, loaded.version
            self.say(f"resumed session {self.session_id} from checkpoint v{loaded.version}: done {', '.join(self.state['done']) or 'nothing'}")
            return
        self.say(f"session {session.session_id} opened for user {self.user_id}")
        similar = self.hub.episodes.similar(TASK, k=3, outcome="success")
        if similar.results:
            self.state["guidance"] = similar.guidance
            self.hub.sessions.append_message(self.session_id, "system", f"Guidance from past episodes:\n{similar.guidance}", pinned=True)
            tasks = "; ".join(f"{hit.episode.task} ({hit.episode.metadata.get('ticket') or hit.episode.session_id})" for hit in similar.results)
            self.say(f"guidance from {len(similar.results)} past episode(s): {tasks}")
        self.hub.sessions.append_message(self.session_id, "user", f"Ticket {self.ticket}: my order arrived damaged, please refund it.")
        self.hub.plans.set(self.session_id, goal=TASK, steps=[
            {"step_id": step_id, "description": description, **({"depends_on": [STEPS[i - 1][0]]} if i else {})}
            for i, (step_id, description) in enumerate(STEPS)
        ])

    def checkpoint(self, step_id: str) -> None:
        try:
            saved = self.hub.checkpoints.save(self.session_id, expected_version=self.version, state=self.state, current_step=step_id,
                                              label=f"after-{step_id}")
        except Conflict as error:  # another process of this session saved meanwhile: it is ahead of us
            raise SystemExit(f"checkpoint conflict: {error.details}") from error
        self.version = saved.version

    def tool(self, step_id: str, name: str, args: dict[str, Any], run: Callable[..., dict[str, Any]]) -> dict[str, Any]:
        """Runs a tool and logs the call; the call id is the step's, so a retry is one call."""
        started = time.monotonic()
        result = run(**args)
        self.hub.tool_calls.record(self.session_id, name, args=args, result=result, call_id=f"{self.session_id}.{step_id}", step_id=step_id,
                                   duration_ms=int((time.monotonic() - started) * 1000))
        self.state["tools"][name] = self.state["tools"].get(name, 0) + 1
        return result

    # The steps: each returns its summary, or None when the task cannot go on.

    def lookup_customer(self) -> str:
        customer = self.tool("lookup_customer", "lookup_customer", {"ticket": self.ticket}, lookup_customer)
        self.state["facts"].update(name=customer["name"], email=customer["email"], order=customer["order"])
        return f"customer {customer['name']}, order {customer['order']}"

    def check_order(self) -> str:
        order = self.tool("check_order", "check_order", {"order": self.state["facts"]["order"]}, check_order)
        self.state["facts"]["total"] = order["total"]
        return f"order {order['order']}: {order['damage_report']}, {order['total']:.2f} EUR"

    def refund(self) -> str | None:
        facts = self.state["facts"]
        args = {"order": facts["order"], "amount": facts["total"]}
        # One request per session, however often this step starts (a crash while waiting).
        approval = self.hub.approvals.request(
            session_id=self.session_id, tool="issue_refund", args=args, context={"ticket": self.ticket, "reason": "damaged on arrival"},
            idempotency_key=f"{self.session_id}.refund",
        )
        if not approval.decided:
            self.say(f"waiting for an operator to approve refund #{approval.id} ({args['amount']:.2f} EUR): console → Approvals")
            approval = self.hub.wait_for_approval(approval.id, timeout=self.approval_timeout)
        if approval.status == "pending":
            self.say(f"refund #{approval.id} still waits for an operator; run again to keep waiting")
            return PENDING
        if approval.status not in ("approved", "edited"):
            self.say(f"refund {approval.status}: {approval.reason or 'no reason given'}")
            self.hub.plans.update_step(self.session_id, "refund", status="failed", summary=f"{approval.status}: {approval.reason}")
            self.state["facts"]["refund"] = approval.status
            return None
        refund = self.tool("refund", "issue_refund", dict(approval.args), issue_refund)
        facts["refunded"] = refund["amount"]
        return f"refund {refund['refund_id']} of {refund['amount']:.2f} EUR ({approval.status} by {approval.decided_by})"

    def notify_customer(self) -> str:
        facts = self.state["facts"]
        fallback = (f"Dear {facts['name']}, we are sorry your order {facts['order']} arrived damaged. "
                    f"We have refunded {facts['refunded']:.2f} EUR; it reaches your account in 3-5 days.")
        body = write(f"Write a short, kind email to {facts['name']}: order {facts['order']} arrived damaged and we refunded "
                     f"{facts['refunded']:.2f} EUR.", fallback)
        self.tool("notify_customer", "send_email", {"to": facts["email"], "body": body}, send_email)
        self.hub.sessions.append_message(self.session_id, "assistant", body)
        return f"emailed {facts['name']}"

    def finish(self, started: float, *, outcome: str) -> int:
        facts = self.state["facts"]
        if outcome == "success":
            fallback = (f"Ticket {self.ticket}: looked up the customer and order {facts['order']}, checked the damage report, "
                        f"asked an operator before refunding (approved), refunded {facts['refunded']:.2f} EUR and emailed the customer. "
                        "What worked: checking the damage report before asking for the refund.")
        else:
            fallback = f"Ticket {self.ticket}: the refund of order {facts['order']} was {facts.get('refund')}; the customer was not refunded."
        narrative = write(f"In 3 sentences, what this support task did and what worked: {self.state}", fallback)
        episode = self.hub.episodes.create(
            user_id=self.user_id, task=TASK, outcome=outcome, narrative=narrative, session_id=self.session_id,
            tools_used=self.state["tools"], elapsed_ms=int((time.monotonic() - started) * 1000),
            metadata={"ticket": self.ticket},
        )
        self.state["episode"] = episode.id
        self.checkpoint("finished")
        self.say(f"episode #{episode.id} written ({outcome})")
        return 0 if outcome == "success" else 1


def next_open_ticket(hub: MemoryHub, first: int = 1042) -> str:
    """The first demo ticket whose session has not finished: the one a crash left
    unfinished, else a new one."""
    number = first
    while True:
        try:
            state = hub.checkpoints.latest(f"support-T-{number}").state
        except NotFound:
            return f"T-{number}"
        if "episode" not in state:
            return f"T-{number}"
        number += 1


def parse_arguments(argv: list[str] | None, *, doc: str, make_target: str, session: str, crash_after: str,
                    steps: int | None = None) -> argparse.Namespace:
    """The command line the example agents share (tests/agent_processes.py drives them by it)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hub", default=os.environ.get("MEMORYHUB_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--key", default=os.environ.get("MEMORYHUB_API_KEY"), help="an agent key (default: $MEMORYHUB_API_KEY)")
    parser.add_argument("--ticket", help="default: the first of T-1042, T-1043… not finished yet (so a run after a crash resumes it)")
    parser.add_argument("--session", help=f"the session id (default: {session})")
    parser.add_argument("--user-id", default="maria.rossi")
    parser.add_argument("--crash-after-step", type=int, metavar="N", choices=range(1, steps + 1) if steps else None,
                        help=f"exit hard ({CRASH_EXIT_CODE}) right after {crash_after}")
    parser.add_argument("--approval-timeout", type=float, default=900, help="seconds to wait for the operator")
    options = parser.parse_args(argv)
    if not options.key:
        parser.error(f"an agent key is needed: --key or MEMORYHUB_API_KEY (`make {make_target}` issues one)")
    return options


def reporting_an_unreachable_hub(run: Callable[[], int], *, hub: str, make_target: str) -> int:
    """`run()`, or a two-line error where no hub answers at `hub` (a traceback said less)."""
    try:
        return run()
    except ConnectionFailed as failure:
        print(f"error: no hub answers at {hub} ({failure}).", file=sys.stderr)
        print(f"Start one with `make run`; a hub on another port needs the same PORT here: `PORT=9000 make {make_target}`.", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    options = parse_arguments(argv, doc=__doc__, make_target="example-agent", session="support-<ticket>",
                              crash_after="step N's checkpoint")
    return reporting_an_unreachable_hub(lambda: run(options), hub=options.hub, make_target="example-agent")


def run(options: argparse.Namespace) -> int:
    with MemoryHub(base_url=options.hub, api_key=options.key) as hub:
        ticket = options.ticket or next_open_ticket(hub)
        agent = SupportAgent(hub, session_id=options.session or f"support-{ticket}", user_id=options.user_id, ticket=ticket,
                             crash_after_step=options.crash_after_step, approval_timeout=options.approval_timeout,
                             say=lambda line: print(line, flush=True))
        return agent.run()


if __name__ == "__main__":
    sys.exit(main())
