"""A demo workspace for a first look at the console (`manage.py seed_demo`).

Everything is written the way agents and operators write it, through the domain's
services: redaction, the timeline, the audit log, the purge and its receipt are the
real ones, so the demo shows the hub as it behaves. It is written in one transaction:
a failure leaves nothing behind, so a half-seeded `demo` is never mistaken for a
stranger's workspace on the next run.
"""

from __future__ import annotations

from functools import lru_cache

import json
import time
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.hashers import check_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q

from memoryhub.approvals.models import Approval, ApprovalStatus, Decision, RuleScope
from memoryhub.approvals.services import ApprovalInput, approval_decide, approval_request
from memoryhub.checkpoints.models import Checkpoint
from memoryhub.checkpoints.services import checkpoint_fork, checkpoint_save
from memoryhub.core.jobs import JobStatus
from memoryhub.compliance.models import PurgeRequest
from memoryhub.compliance.services import purge_request, purge_run
from memoryhub.conversations.messages import MessageInput, message_append, message_edit
from memoryhub.conversations.models import Message, Session
from memoryhub.conversations.sessions import session_branch, session_create
from memoryhub.conversations.summaries import session_summarise
from memoryhub.core import services
from memoryhub.core.audit import audit_record
from memoryhub.core.errors import ApplicationError
from memoryhub.core.models import Agent, AuditEntry, Membership, Role, Store, Workspace
from memoryhub.core.registry import user_models
from memoryhub.core.selectors import Principal, agent_actor
from memoryhub.episodes.models import Episode
from memoryhub.episodes.services import EpisodeInput, episode_record
from memoryhub.memory.models import MemoryEntry
from memoryhub.graph.services import RuleInput, graph_edge_add, graph_rules_replace
from memoryhub.memory.models import PredicateKind
from memoryhub.memory.services import MemoryInput, memory_review, memory_write
from memoryhub.plans.services import StepInput, plan_replace, step_transition
from memoryhub.privacy.services import retention_policy_set
from memoryhub.tools.models import ToolCall
from memoryhub.tools.services import ToolCallInput, tool_call_record
from memoryhub.usage import metering

DEMO_SLUG = "demo"
DEMO_USERNAME = "demo"
DEFAULT_PASSWORD = "demo-memoryhub"
ACTOR = "command:seed_demo"
# The audit entry that says "this workspace is the demo": what tells the demo from a
# real workspace that happens to be called `demo` (the audit log cannot be edited).
SEEDED_ACTION = "demo_seeded"
# Teammates who decide and purge beside the demo login; they never log in (no password).
# Names inside the demo, so they cannot be mistaken for (or be) real operators.
APPROVER_USERNAME = "priya@demo"
COMPLIANCE_USERNAME = "marc@demo"
PURGED_USER = "daniel.weber"
# Every record names a user_id; knowledge about no end user (policies, runbooks) is
# filed under the organisation, so that purging a customer never takes a policy along.
ORGANISATION = "org:northwind"
DAY = 86400


@dataclass
class DemoOutcome:
    """What seed_demo did: `seeded`, `already` (seeded before) or `skipped` (--if-empty
    found real data), with what to print."""

    status: str
    message: str
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass
class _Demo:
    workspace: Workspace
    admin: Membership
    approver: Membership
    dpo: Membership
    agents: dict[str, Agent]


# --- reads --------------------------------------------------------------------------


def _holds_data(workspace: Workspace) -> bool:
    """Agents, operators or any record about an end user: what someone set up or an
    agent wrote (an empty workspace is all `issue_key` leaves before its first use)."""
    if Agent.objects.filter(workspace=workspace).exists() or Membership.objects.filter(workspace=workspace).exists():
        return True
    return any(model._default_manager.filter(workspace_id=workspace.pk).exists() for model in user_models())


def _workspaces_in_use() -> list[str]:
    """Slugs of the workspaces someone set up (agents, operators) or that hold records."""
    slugs = set(Workspace.objects.filter(Q(agents__isnull=False) | Q(memberships__isnull=False)).values_list("slug", flat=True))
    if not slugs:
        # Records with neither agents nor operators are rare (a workspace's timeline of
        # sweeps); one cheap look per table finds them, where a per-workspace walk would
        # cost a query per table and workspace.
        for model in user_models():
            slug = model._default_manager.values_list("workspace__slug", flat=True).first()
            if slug is not None:
                slugs.add(slug)
    return sorted(slugs)


def demo_counts(*, workspace: Workspace) -> dict[str, int]:
    """What a workspace holds, as the command's summary reports it."""
    sessions = Session.objects.filter(workspace=workspace)
    memories = MemoryEntry.objects.filter(workspace=workspace)
    return {
        "agents": Agent.objects.filter(workspace=workspace).count(),
        "stores": Store.objects.filter(workspace=workspace).count(),
        "end_users": sessions.values("user_id").distinct().count(),
        "sessions": sessions.count(),
        "messages": Message.objects.filter(workspace=workspace).count(),
        "tool_calls": ToolCall.objects.filter(workspace=workspace).count(),
        "checkpoints": Checkpoint.objects.filter(workspace=workspace).count(),
        "approvals": Approval.objects.filter(workspace=workspace).count(),
        "pending_approvals": Approval.objects.filter(workspace=workspace, status=ApprovalStatus.PENDING).count(),
        "memories": memories.filter(invalidated_at__isnull=True).count(),
        "superseded_facts": memories.filter(invalidated_at__isnull=False).count(),
        "episodes": Episode.objects.filter(workspace=workspace).count(),
        "finished_purges": PurgeRequest.objects.filter(workspace=workspace, dry_run=False, status=JobStatus.DONE).count(),
    }


def _is_demo(workspace: Workspace) -> bool:
    return AuditEntry.objects.filter(workspace_id=workspace.pk, action=SEEDED_ACTION).exists()


def _taken_usernames() -> list[str]:
    """Demo usernames someone already has: seeding would set the password of a real
    account, or make a real operator a member of the demo."""
    names = [DEMO_USERNAME, APPROVER_USERNAME, COMPLIANCE_USERNAME]
    accounts = get_user_model().objects.filter(username__in=names)
    if _seeded_before():
        # Left behind by a demo workspace that was deleted (users outlive workspaces):
        # ours to reuse, unless someone made one of them an operator elsewhere since.
        accounts = accounts.filter(memberships__isnull=False)
    return sorted(set(accounts.values_list("username", flat=True)))


def demo_login() -> tuple[str, str] | None:
    """The demo's documented login (username, password) while its admin is a member of
    the demo workspace and still has the documented password; else None. One query:
    the login page asks on every view."""
    account = get_user_model().objects.filter(username=DEMO_USERNAME, memberships__workspace__slug=DEMO_SLUG).only("password").first()
    if account is None or not _is_documented_password(account.password):
        return None
    return DEMO_USERNAME, DEFAULT_PASSWORD


@lru_cache(maxsize=8)
def _is_documented_password(encoded: str) -> bool:
    # Hashing costs a fifth of a second: once per stored hash, not once per page view.
    return check_password(DEFAULT_PASSWORD, encoded)


def _seeded_before() -> bool:
    """Whether a demo was ever seeded in this hub (the audit log outlives workspaces)."""
    return AuditEntry.objects.filter(action=SEEDED_ACTION).exists()


# --- the command's entry point --------------------------------------------------------


def demo_seed(*, password: str = DEFAULT_PASSWORD, if_empty: bool = False) -> DemoOutcome:
    """Seed the demo workspace, once. Refuses (ApplicationError) a `demo` workspace it
    did not make that holds data, and the demo's usernames when accounts have them;
    with `if_empty`, does nothing (and says why) when any workspace holds data."""
    existing = Workspace.objects.filter(slug=DEMO_SLUG).first()
    if existing is not None and _is_demo(existing):
        return DemoOutcome(status="already", message="demo workspace already seeded")
    if if_empty and _seeded_before():
        return DemoOutcome(
            status="skipped", message="demo data not seeded: the demo workspace was deleted; `manage.py seed_demo` seeds it again"
        )
    if if_empty:
        # A `demo` not made here counts too: `make run` must never fail on one.
        in_use = _workspaces_in_use()
        if in_use:
            named = ", ".join(in_use[:3]) + (" and others" if len(in_use) > 3 else "")
            return DemoOutcome(
                status="skipped",
                message=f"demo data not seeded: this hub holds data already (workspace {named}); `manage.py seed_demo` adds it anyway",
            )
    if existing is not None and _holds_data(existing):
        raise ApplicationError(
            "A workspace named `demo` exists and holds data seed_demo did not write; nothing was changed.",
            code="DEMO_WORKSPACE_TAKEN",
        )
    taken = _taken_usernames()
    if taken:
        raise ApplicationError(f"The account(s) {', '.join(taken)} exist already; nothing was changed.", code="DEMO_OPERATOR_TAKEN")
    try:
        password_validation.validate_password(password)
    except ValidationError as exc:
        raise ApplicationError("The demo password is refused: " + " ".join(exc.messages), code="INVALID_PASSWORD") from None
    started = time.monotonic()
    with transaction.atomic():
        demo = _tenancy(password=password)
        _seed_everything(demo)
        counts = demo_counts(workspace=demo.workspace)
        audit_record(action=SEEDED_ACTION, actor=ACTOR, workspace=demo.workspace, details=counts)
    return DemoOutcome(status="seeded", message="demo workspace seeded", counts=counts, seconds=time.monotonic() - started)


def _tenancy(*, password: str) -> _Demo:
    workspace = services.workspace_get_or_create(slug=DEMO_SLUG)
    admin = services.operator_get_or_create(username=DEMO_USERNAME, workspace=workspace, role=Role.ADMIN)
    # No service sets an operator's password (people use `changepassword`); this is
    # what that command does, for the one account whose password is documented.
    admin.user.set_password(password)
    admin.user.save(update_fields=["password"])
    approver = services.operator_get_or_create(username=APPROVER_USERNAME, workspace=workspace, role=Role.APPROVER)
    dpo = services.operator_get_or_create(username=COMPLIANCE_USERNAME, workspace=workspace, role=Role.COMPLIANCE)
    agents: dict[str, Agent] = {}
    # One store each: an agent in several stores (none named `default`) cannot record
    # an episode, whose input names no store.
    for name, store in (("support-bot", "support"), ("research-agent", "research"), ("ops-agent", "ops")):
        key, _ = services.agent_key_provision(workspace=workspace, store=store, agent=name, label="demo key", actor=ACTOR)
        agents[name] = key.agent
    return _Demo(workspace=workspace, admin=admin, approver=approver, dpo=dpo, agents=agents)


def _seed_everything(demo: _Demo) -> None:
    # Before anything is written: messages and memories are stored as this says.
    services.workspace_redaction_set(membership=demo.admin, redact_messages=True, redact_memories=True)
    retention_policy_set(membership=demo.admin, kind="tool_outputs", value=90)
    # The model calls each story makes (embeddings, summaries) are metered as an agent's
    # requests are, to the agent telling it: the Usage page has real figures to show.
    for story, agent in (
        (_refund_story, "support-bot"), (_address_story, "support-bot"), (_research_story, "research-agent"),
        (_restore_story, "ops-agent"), (_upgrade_story, "ops-agent"), (_dns_story, "ops-agent"), (_knowledge, "research-agent"),
        (_places_and_doubts, "support-bot"), (_closure_story, "support-bot"),
    ):
        with metering.attributed(workspace_id=demo.workspace.pk, agent_id=demo.agents[agent].pk):
            story(demo)
    metering.flush()


# --- small helpers, so the stories read like conversations ----------------------------


def _call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def _system(text: str) -> MessageInput:
    return MessageInput(role="system", content=text, pinned=True)


def _user(text: str) -> MessageInput:
    return MessageInput(role="user", content=text)


def _assistant(text: str, *calls: dict[str, Any]) -> MessageInput:
    return MessageInput(role="assistant", content=text, tool_calls=list(calls) or None)


def _result(call_id: str, text: str) -> MessageInput:
    return MessageInput(role="tool", content=text, tool_call_id=call_id)


def _session(demo: _Demo, *, agent: str, session_id: str, user_id: str, **metadata: Any) -> Session:
    session, _ = session_create(agent=demo.agents[agent], session_id=session_id, user_id=user_id, metadata=metadata)
    return session


def _say(session: Session, *messages: MessageInput) -> None:
    message_append(session=session, messages=list(messages), actor=agent_actor(session.agent))


def _plan(session: Session, goal: str, *steps: tuple[str, str, list[str]]) -> None:
    plan_replace(
        session=session, goal=goal, steps=[StepInput(step_id=s, description=d, depends_on=deps) for s, d, deps in steps],
        actor=agent_actor(session.agent),
    )


def _step(session: Session, step_id: str, *moves: str, summary: str | None = None) -> None:
    """Walk a step through `moves` (running, done…); the summary goes with the last."""
    for index, status in enumerate(moves):
        step_transition(
            session=session, step_id=step_id, status=status, summary=summary if index == len(moves) - 1 else None,
            actor=agent_actor(session.agent),
        )


def _tool(
    session: Session, call_id: str, tool: str, args: Any, result: Any, *, step_id: str | None = None,
    status: str = "ok", duration_ms: int | None = None, cost: float | None = None, result_summary: str | None = None,
) -> None:
    tool_call_record(
        session=session,
        item=ToolCallInput(
            tool=tool, args=args, result=result, call_id=call_id, status=status, step_id=step_id, duration_ms=duration_ms, cost=cost,
            result_summary=result_summary,
        ),
        actor=agent_actor(session.agent),
    )


def _checkpoint(session: Session, state: dict[str, Any], *, step: str = "", label: str = "") -> int:
    session.refresh_from_db(fields=["checkpoint_version"])
    saved = checkpoint_save(
        session=session, expected_version=session.checkpoint_version, state=state, current_step=step, label=label,
        actor=agent_actor(session.agent),
    )
    return saved.version


def _ask(session: Session, tool: str, args: dict[str, Any], *, context: Any, expires_days: int | None = None,
         allowed: tuple[str, ...] = (Decision.APPROVE, Decision.EDIT, Decision.REJECT), schema: dict[str, Any] | None = None) -> Approval:
    approval, _ = approval_request(
        session=session,
        item=ApprovalInput(
            tool=tool, args=args, allowed_decisions=list(allowed), context=context,
            expires_in=expires_days * DAY if expires_days else None, response_schema=schema,
        ),
    )
    return approval


def _remember(demo: _Demo, agent: str, *items: MemoryInput) -> None:
    memory_write(agent=demo.agents[agent], items=list(items))


def _fact(user_id: str, subject: str, predicate: str, value: str, *, store: str) -> MemoryInput:
    return MemoryInput(
        content=f"{subject} {predicate} {value}.", user_id=user_id, store=store, memory_type="factual",
        data={"subject": subject, "predicate": predicate, "object": value}, tags=["profile"],
    )


def _facts_over_time(demo: _Demo, agent: str, user_id: str, subject: str, predicate: str, *values: str, store: str) -> None:
    """One fact that changed: each value is written after the previous one, so each
    supersedes the last, as when an agent learns something new."""
    for value in values:
        _remember(demo, agent, _fact(user_id, subject, predicate, value, store=store))


def _episode(demo: _Demo, agent: str, session: Session | None, **fields: Any) -> None:
    episode_record(agent=demo.agents[agent], item=EpisodeInput(**fields), session=session)


# --- the stories ----------------------------------------------------------------------

SUPPORT_PROMPT = (
    "You are Northwind's support assistant. Be brief and friendly, verify the customer before touching their account, "
    "and ask a human before any refund or discount over €50."
)


def _refund_story(demo: _Demo) -> None:
    """A double charge: PII in tool output (redacted), a plan half done, three
    checkpoints, a pending approval, and a fork that offers store credit instead."""
    s = _session(demo, agent="support-bot", session_id="sup-maria-double-charge", user_id="maria.garcia", channel="chat", locale="en")
    _plan(
        s, "Refund the duplicate charge on order A-20931",
        ("verify", "Verify the customer's identity", []),
        ("charges", "Find the charges for order A-20931", ["verify"]),
        ("approval", "Get approval for the refund (over €50)", ["charges"]),
        ("refund", "Refund the duplicate charge", ["approval"]),
        ("confirm", "Confirm the refund to the customer", ["refund"]),
    )
    _say(
        s,
        _system(SUPPORT_PROMPT),
        _user("Hi! I was charged twice for my order A-20931 last Friday. My email is maria.garcia@example.com."),
        _assistant("Sorry about that, let me look at your account.", _call("call_a20931_lookup", "lookup_customer", user_id="maria.garcia")),
        _result(
            "call_a20931_lookup",
            '{"name": "Maria Garcia", "email": "maria.garcia@example.com", "phone": "+34 612 345 678", '
            '"card_on_file": "4111 1111 1111 1111", "tier": "Plus", "customer_since": "2023"}',
        ),
    )
    _step(s, "verify", "running")
    _tool(
        s, "call_a20931_lookup", "lookup_customer", {"user_id": "maria.garcia", "fields": ["email", "phone", "payment_method"]},
        {"name": "Maria Garcia", "email": "maria.garcia@example.com", "phone": "+34 612 345 678", "card_on_file": "4111 1111 1111 1111",
         "tier": "Plus", "customer_since": "2023"},
        step_id="verify", duration_ms=142, cost=0.0004,
    )
    _step(s, "verify", "done", summary="The email matches the account; Plus customer since 2023.")
    _checkpoint(s, {"order_id": "A-20931", "verified": True, "tier": "Plus", "next": "find the charges"}, step="charges")
    _step(s, "charges", "running")
    _say(
        s,
        _assistant("Thanks, you're verified. Now the charges for A-20931.", _call("call_a20931_charges", "list_charges", order_id="A-20931")),
        _result(
            "call_a20931_charges",
            '[{"charge": "ch_3PqL1x", "amount": 89.90, "currency": "EUR", "status": "captured"}, '
            '{"charge": "ch_3PqL7k", "amount": 89.90, "currency": "EUR", "status": "captured"}]',
        ),
    )
    _tool(
        s, "call_a20931_charges", "list_charges", {"order_id": "A-20931"},
        [{"charge": "ch_3PqL1x", "amount": 89.90, "currency": "EUR", "status": "captured", "seconds_apart": 0},
         {"charge": "ch_3PqL7k", "amount": 89.90, "currency": "EUR", "status": "captured", "seconds_apart": 38}],
        step_id="charges", duration_ms=311, cost=0.0009,
        result_summary="Two captured charges of €89.90, 38 seconds apart; ch_3PqL7k is the duplicate.",
    )
    _step(s, "charges", "done", summary="Two charges of €89.90, 38 s apart: ch_3PqL7k is the duplicate.")
    forked_from = _checkpoint(
        s, {"order_id": "A-20931", "verified": True, "duplicate_charge": "ch_3PqL7k", "amount": 89.90, "next": "ask for approval"},
        step="approval",
    )
    _step(s, "approval", "running")
    _ask(
        s, "issue_refund",
        {"order_id": "A-20931", "charge_id": "ch_3PqL7k", "amount": 89.90, "currency": "EUR", "reason": "duplicate charge"},
        context={"why": "Duplicate charge confirmed by list_charges; refunds over €50 need a human.", "plan_step": "approval"},
        expires_days=7,
        schema={"type": "object", "required": ["order_id", "charge_id", "amount"],
                "properties": {"amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 89.90}}},
    )
    _say(
        s,
        _assistant(
            "I can see two identical charges of €89.90, 38 seconds apart: the second one is a duplicate. Refunds of that size need "
            "a colleague's approval; I've asked for it and will confirm as soon as it's through."
        ),
        _user("Thanks. How long until I see the money back?"),
        _assistant("Once it's approved, a refund reaches your card in 3 to 5 business days. I'll send you a confirmation by email."),
    )
    _checkpoint(
        s, {"order_id": "A-20931", "verified": True, "duplicate_charge": "ch_3PqL7k", "amount": 89.90, "waiting_for": "issue_refund approval"},
        step="approval", label="awaiting-approval",
    )
    # The road not taken: from v2, store credit needs no approval.
    fork = checkpoint_fork(session=s, from_version=forked_from, new_session_id="sup-maria-store-credit", actor=agent_actor(s.agent))
    _say(
        fork,
        _assistant("I could refund the duplicate €89.90, or add it as store credit right away, no waiting. Which do you prefer?"),
        _user("Store credit is fine, I'm ordering again next week anyway."),
        _assistant("Done: €89.90 of store credit is on your account and will apply automatically at checkout."),
    )
    _checkpoint(fork, {"order_id": "A-20931", "resolution": "store credit", "amount": 89.90}, step="confirm", label="store-credit")
    _facts_over_time(demo, "support-bot", "maria.garcia", "Maria Garcia", "prefers to be contacted in", "English", "Spanish", store="support")


def _address_story(demo: _Demo) -> None:
    """An address change: an approval an operator corrected (edit), an SMS whose phone
    number is redacted from the args, an edited message, a finished plan, an episode."""
    s = _session(demo, agent="support-bot", session_id="sup-kenji-new-address", user_id="kenji.tanaka", channel="email", locale="en")
    _plan(
        s, "Deliver order B-11802 to the customer's new address",
        ("shipment", "Check that B-11802 has not shipped", []),
        ("change", "Change the delivery address (approval)", ["shipment"]),
        ("notify", "Tell the customer the new delivery date", ["change"]),
    )
    _say(
        s,
        _system(SUPPORT_PROMPT),
        _user("Hello, I moved from Osaka to Kyoto last week. Can order B-11802 still go to the new address? It's the one on my profile now."),
        _assistant("Let me check where B-11802 is.", _call("call_b11802_track", "track_shipment", order_id="B-11802")),
        _result("call_b11802_track", "Status: label created, not picked up yet. Carrier: Yamato. Recipient phone: +81 90 1234 5678."),
    )
    _step(s, "shipment", "running")
    _tool(
        s, "call_b11802_track", "track_shipment", {"order_id": "B-11802"},
        "Status: label created, not picked up yet. Carrier: Yamato. Recipient phone: +81 90 1234 5678.",
        step_id="shipment", duration_ms=520,
    )
    _step(s, "shipment", "done", summary="Label created, not picked up: the address can still change.")
    _step(s, "change", "running")
    approval = _ask(
        s, "update_shipping_address", {"order_id": "B-11802", "address_id": "addr_kyoto_2", "postcode": "600-8261"},
        context={"why": "The customer moved; the order has not left the warehouse."}, expires_days=7,
    )
    approval_decide(
        membership=demo.approver, approval=approval, decision=Decision.EDIT,
        args={"order_id": "B-11802", "address_id": "addr_kyoto_2", "postcode": "600-8216"},
        reason="Two digits of the postcode were swapped; checked against the profile.",
    )
    _tool(
        s, "call_b11802_address", "update_shipping_address", {"order_id": "B-11802", "address_id": "addr_kyoto_2", "postcode": "600-8216"},
        {"ok": True, "carrier_updated": True, "new_eta": "Thursday"}, step_id="change", duration_ms=870,
    )
    _step(s, "change", "done", summary="Address changed (postcode corrected by an operator); new delivery on Thursday.")
    _step(s, "notify", "running")
    _tool(
        s, "call_b11802_sms", "send_sms",
        {"to": "+81 90 1234 5678", "text": "Northwind: order B-11802 will now be delivered to your Kyoto address on Thursday."},
        {"queued": True, "segments": 1}, step_id="notify", duration_ms=95, cost=0.0075,
    )
    _step(s, "notify", "done", summary="SMS sent.")
    _say(
        s,
        _assistant("Done! B-11802 now goes to your Kyoto address and should arrive on Thrusday. I've also sent you an SMS."),
        _user("Perfect, thank you!"),
    )
    s.refresh_from_db(fields=["last_seq"])
    # The agent fixed its own typo: the console shows both revisions.
    message_edit(
        session=s, seq=s.last_seq - 1, actor=agent_actor(s.agent),
        content="Done! B-11802 now goes to your Kyoto address and should arrive on Thursday. I've also sent you an SMS.",
    )
    _checkpoint(s, {"order_id": "B-11802", "address": "addr_kyoto_2", "eta": "Thursday", "done": True}, step="notify", label="resolved")
    _facts_over_time(demo, "support-bot", "kenji.tanaka", "Kenji Tanaka", "lives in", "Osaka", "Kyoto", store="support")
    _remember(demo, "support-bot", _fact("kenji.tanaka", "Kenji Tanaka", "prefers deliveries", "in the evening", store="support"))
    _episode(
        demo, "support-bot", s, user_id="kenji.tanaka", task="Change the delivery address of an order that has not shipped",
        outcome="success",
        narrative=(
            "The customer moved and wanted an unshipped order sent to the new address. Tracking showed the label was created but "
            "not picked up, so the change was still possible. An operator corrected a swapped postcode before approving. "
            "The carrier accepted the new address and the customer got an SMS with the new date."
        ),
        tools_used={"track_shipment": 1, "update_shipping_address": 1, "send_sms": 1}, elapsed_ms=184_000, cost=0.0112,
    )


RESEARCH_PROMPT = (
    "You are a research assistant. Cite your sources, keep facts apart from estimates, and keep a list of open questions."
)


def _research_story(demo: _Demo) -> None:
    """A research task: a failed tool call and step, a summary link, two checkpoints,
    and a branch that explores another scope."""
    s = _session(demo, agent="research-agent", session_id="res-amara-battery-recycling", user_id="amara.okafor", project="market-briefs")
    _plan(
        s, "One-page brief: EV battery recycling in the EU (Germany and France)",
        ("scope", "Agree the scope with the requester", []),
        ("search", "Search for market size and main players", ["scope"]),
        ("primary", "Read the Battery Regulation on the Commission's site", ["scope"]),
        ("draft", "Draft the one-page brief", ["search"]),
        ("review", "Review the draft with the requester", ["draft"]),
    )
    _say(
        s,
        _system(RESEARCH_PROMPT),
        _user("I need a one-page brief on the EU market for EV battery recycling: size, main players, and what the new Battery Regulation changes."),
        _assistant(
            "Starting with the market size.", _call("call_amara_search", "web_search", query="EU EV battery recycling market size 2025")
        ),
        _result(
            "call_amara_search",
            "1. Analyst note: EU battery recycling revenue estimated at €1.6–2.3 bn for 2025.\n"
            "2. Trade press: Umicore, BASF, Eramet and Li-Cycle expanding capacity in Belgium, Germany and France.\n"
            "3. Regulation (EU) 2023/1542: lithium recovery targets of 50% by 2027 and 80% by 2031.",
        ),
    )
    _step(s, "scope", "running")
    _step(s, "scope", "done", summary="EU market, one page, for an investment committee.")
    _step(s, "search", "running")
    _tool(
        s, "call_amara_search", "web_search", {"query": "EU EV battery recycling market size 2025"},
        {"results": 3, "top": "EU battery recycling revenue estimated at €1.6–2.3 bn for 2025"}, step_id="search", duration_ms=1840, cost=0.005,
    )
    _step(s, "search", "done", summary="Market €1.6–2.3 bn (2025, estimates); Umicore, BASF, Eramet, Li-Cycle.")
    _checkpoint(
        s, {"sources": 1, "market_size_eur_bn": [1.6, 2.3], "players": ["Umicore", "BASF", "Eramet", "Li-Cycle"], "open_questions": ["UK in or out?"]},
        step="primary",
    )
    _step(s, "primary", "running")
    _say(
        s,
        _assistant(
            "Now the regulation itself.",
            _call("call_amara_fetch", "fetch_url", url="https://environment.ec.europa.eu/topics/waste-and-recycling/batteries_en"),
        ),
        _result("call_amara_fetch", "Error: the request timed out after 30 s."),
    )
    _tool(
        s, "call_amara_fetch", "fetch_url", {"url": "https://environment.ec.europa.eu/topics/waste-and-recycling/batteries_en"},
        "Error: the request timed out after 30 s.", step_id="primary", status="error", duration_ms=30_000,
    )
    _step(s, "primary", "failed", summary="The Commission's page timed out; the targets come from secondary sources for now.")
    _say(
        s,
        _assistant(
            "The Commission's page timed out, so the regulation's targets come from secondary sources for now; I'll mark them as such. "
            "Should the brief cover all of the EU?"
        ),
        _user("Focus on Germany and France, and leave the UK out."),
        _assistant(
            "Noted: Germany and France only. In those two: BASF's Schwarzheide plant and Li-Cycle's Magdeburg hub in Germany, Eramet "
            "and Suez in France, and Umicore's Belgian plants serving both. The regulation adds recycled-content minimums from 2031."
        ),
        _user("Great, please draft it."),
    )
    _step(s, "draft", "running")
    session_summarise(session=s, actor=agent_actor(s.agent))
    _checkpoint(
        s,
        {"sources": 3, "market_size_eur_bn": [1.6, 2.3], "countries": ["DE", "FR"],
         "players": ["BASF", "Li-Cycle", "Eramet", "Suez", "Umicore"], "open_questions": ["Primary source for the 2031 targets"]},
        step="draft", label="before-draft",
    )
    # Another scope, explored from the first answer: a branch is its own session.
    branch = session_branch(
        session=s, new_session_id="res-amara-battery-recycling-uk", upto_seq=4, label="with the UK", actor=agent_actor(s.agent)
    )
    _say(
        branch,
        _user("Before we narrow it down: how would the UK compare?"),
        _assistant(
            "The UK market is smaller (estimates around £0.3 bn for 2025) and outside the EU regulation; its own targets are under "
            "consultation. I'd keep it as a one-paragraph comparison."
        ),
    )
    _facts_over_time(
        demo, "research-agent", "amara.okafor", "Amara Okafor", "wants briefs as", "slides", "a one-page memo", store="research"
    )


def _restore_story(demo: _Demo) -> None:
    """An operations task: a rejected raw command, an approved restore, and a remembered
    rule ("always approve restart_service") that decides the next request by itself."""
    s = _session(demo, agent="ops-agent", session_id="ops-liam-staging-restore", user_id="liam.obrien", cluster="stg-eu-1")
    _plan(
        s, "Restore the stg-eu-1 staging database to last night's snapshot",
        ("snapshot", "Find last night's snapshot", []),
        ("restore", "Restore it (approval)", ["snapshot"]),
        ("restart", "Restart the app servers", ["restore"]),
        ("verify", "Check the app against the restored data", ["restart"]),
    )
    _say(
        s,
        _system("You are the on-call operations agent of Northwind's hosted platform. Anything destructive needs a human's approval."),
        _user(
            "A bad migration wiped our staging database around 09:40. Can you restore last night's snapshot? "
            "Call me on +44 7911 123456 if anything looks odd."
        ),
        _assistant("On it. Looking for last night's snapshot.", _call("call_stg_snapshots", "list_snapshots", cluster="stg-eu-1")),
        _result("call_stg_snapshots", "snap-nightly-0200 (healthy, 14.2 GB, taken at 02:00)\nsnap-nightly-prev (healthy, 14.1 GB)"),
    )
    _step(s, "snapshot", "running")
    _tool(
        s, "call_stg_snapshots", "list_snapshots", {"cluster": "stg-eu-1"},
        "snap-nightly-0200 (healthy, 14.2 GB, taken at 02:00)\nsnap-nightly-prev (healthy, 14.1 GB)", step_id="snapshot", duration_ms=610,
    )
    _step(s, "snapshot", "done", summary="snap-nightly-0200 is healthy (14.2 GB).")
    _step(s, "restore", "running")
    raw = _ask(
        s, "run_shell", {"host": "stg-eu-1-db", "command": "pg_restore --clean --dbname staging /backups/snap-nightly-0200.dump"},
        context={"why": "Fastest way to restore the snapshot."}, expires_days=1,
    )
    approval_decide(
        membership=demo.admin, approval=raw, decision=Decision.REJECT,
        reason="Never a raw pg_restore on a shared cluster: use restore_snapshot, which fences the other tenants.",
    )
    managed = _ask(
        s, "restore_snapshot", {"cluster": "stg-eu-1", "snapshot": "snap-nightly-0200"},
        context={"why": "Staging was wiped by a migration at 09:40; this replaces its data with last night's."}, expires_days=1,
    )
    approval_decide(membership=demo.admin, approval=managed, decision=Decision.APPROVE, reason="Staging only; the customer asked for it.")
    _tool(
        s, "call_stg_restore", "restore_snapshot", {"cluster": "stg-eu-1", "snapshot": "snap-nightly-0200"},
        "Restore of snap-nightly-0200 finished in 6 min 12 s. Notified liam.obrien@example.org.", step_id="restore", duration_ms=372_000,
        cost=0.42,
    )
    _step(s, "restore", "done", summary="Restored in 6 min 12 s.")
    _step(s, "restart", "running")
    restart = _ask(s, "restart_service", {"cluster": "stg-eu-1", "service": "app"}, context={"why": "Pick up the restored data."})
    approval_decide(
        membership=demo.admin, approval=restart, decision=Decision.APPROVE, remember="tool", remember_scope=RuleScope.WORKSPACE,
        reason="Restarting a service is always safe to do.",
    )
    _tool(s, "call_stg_restart_app", "restart_service", {"cluster": "stg-eu-1", "service": "app"}, "app: 3/3 instances healthy", step_id="restart")
    # Decided at once by the remembered rule: no one was asked.
    _ask(s, "restart_service", {"cluster": "stg-eu-1", "service": "worker"}, context={"why": "The workers cache the schema too."})
    _tool(
        s, "call_stg_restart_worker", "restart_service", {"cluster": "stg-eu-1", "service": "worker"}, "worker: 2/2 instances healthy",
        step_id="restart",
    )
    _step(s, "restart", "done", summary="App and workers restarted and healthy.")
    _step(s, "verify", "running")
    _say(
        s,
        _assistant(
            "Staging is back at last night's state: the restore took about 6 minutes and the app and workers are restarted. "
            "Anything written after 02:00 is gone. I'm running the smoke tests now."
        ),
        _user("Perfect, thanks!"),
    )
    _checkpoint(s, {"cluster": "stg-eu-1", "restored_from": "snap-nightly-0200", "restarted": ["app", "worker"]}, step="verify")
    _episode(
        demo, "ops-agent", s, user_id="liam.obrien", task="Restore a staging database after a bad migration", outcome="success",
        narrative=(
            "A migration wiped the staging database and the customer asked for last night's snapshot. The first plan, a raw "
            "pg_restore, was rejected: on a shared cluster only restore_snapshot is allowed. The managed restore took about six "
            "minutes, then the app and workers were restarted. Asking for restore_snapshot first would have saved a round trip."
        ),
        tools_used={"list_snapshots": 1, "restore_snapshot": 1, "restart_service": 2}, elapsed_ms=540_000, cost=0.42,
    )


def _upgrade_story(demo: _Demo) -> None:
    """A plan change: the fact about the plan is superseded, a discount waits for a human."""
    s = _session(demo, agent="support-bot", session_id="sup-sofia-upgrade", user_id="sofia.rossi", channel="chat", locale="it")
    _say(
        s,
        _system(SUPPORT_PROMPT),
        _user("Ciao! I'd like to move from Starter to Pro. I've been with you for three years: is there a loyalty discount?"),
        _assistant("Let me check your subscription.", _call("call_sofia_subscription", "get_subscription", user_id="sofia.rossi")),
        _result("call_sofia_subscription", "plan: Starter since October 2023; billing: direct debit from IT60 X054 2811 1010 0000 0123 456"),
    )
    _tool(
        s, "call_sofia_subscription", "get_subscription", {"user_id": "sofia.rossi"},
        {"plan": "Starter", "since": "October 2023", "billing": "direct debit", "iban": "IT60 X054 2811 1010 0000 0123 456"}, duration_ms=98,
    )
    _tool(s, "call_sofia_upgrade", "change_plan", {"user_id": "sofia.rossi", "plan": "Pro"}, {"ok": True, "effective": "today"}, duration_ms=230)
    _ask(
        s, "apply_discount", {"user_id": "sofia.rossi", "percent": 20, "months": 12},
        context={"why": "Three years on Starter; loyalty discounts over €50 a year need approval."}, expires_days=30,
        schema={"type": "object", "required": ["percent", "months"],
                "properties": {"percent": {"type": "integer", "minimum": 1, "maximum": 30}, "months": {"type": "integer", "maximum": 12}}},
    )
    _say(
        s,
        _assistant(
            "You're on Pro from today. A 20% loyalty discount on your first year is with a colleague for approval; "
            "you'll hear from us within a day."
        ),
        _user("Grazie mille!"),
    )
    _facts_over_time(demo, "support-bot", "sofia.rossi", "Sofia Rossi", "is subscribed to", "the Starter plan", "the Pro plan", store="support")


def _dns_story(demo: _Demo) -> None:
    """An operator's `suspend`: the session waits on the Approvals page to be reactivated."""
    s = _session(demo, agent="ops-agent", session_id="ops-sofia-dns-cleanup", user_id="sofia.rossi", domain="rossi-ceramics.example")
    _say(
        s,
        _user("Please clean up the old DNS records of rossi-ceramics.example; we moved the shop to a new host."),
        _assistant("I found 14 records pointing at the old host. Deleting them needs an approval; I've asked for it."),
    )
    approval = _ask(
        s, "delete_dns_records", {"zone": "rossi-ceramics.example", "records": 14, "pointing_at": "old-shop-host"},
        context={"why": "The customer moved the shop; the old records still resolve."}, expires_days=2,
        allowed=(Decision.APPROVE, Decision.REJECT, Decision.SUSPEND),
    )
    approval_decide(
        membership=demo.approver, approval=approval, decision=Decision.SUSPEND,
        reason="14 records at once: wait for the customer's written confirmation of the list.",
    )


def _knowledge(demo: _Demo) -> None:
    """What the agents know beyond one conversation: policies, a runbook, a concept,
    and an episode from an earlier task."""
    _remember(
        demo, "support-bot",
        MemoryInput(
            content="Refunds and discounts over €50 need a human's approval; smaller ones the bot may grant on its own.",
            user_id=ORGANISATION, store="support", scope="global", tags=["policy", "refunds"],
        ),
        MemoryInput(
            content="Orders can be re-addressed until the carrier picks them up; after that, open a carrier claim instead.",
            user_id=ORGANISATION, store="support", scope="shared", tags=["policy", "shipping"],
        ),
    )
    _remember(
        demo, "ops-agent",
        MemoryInput(
            content="Restore a staging database from its nightly snapshot with restore_snapshot, then restart the app and workers.",
            user_id=ORGANISATION, store="ops", scope="shared", memory_type="procedural", tags=["runbook", "staging"],
            data={
                "task": "Restore a staging database",
                "steps": ["list_snapshots for the cluster", "restore_snapshot (needs approval)", "restart_service app and worker",
                          "run the smoke tests"],
                "preconditions": ["The customer asked for the restore in writing"],
            },
        ),
        MemoryInput(
            content="Snapshots of the stg-eu-1 cluster are taken every night at 02:00 UTC and kept for 14 days.",
            user_id=ORGANISATION, store="ops", scope="shared", tags=["staging", "backups"],
        ),
    )
    _remember(
        demo, "research-agent",
        MemoryInput(
            content="The EU Battery Regulation (2023/1542) sets lithium recovery targets of 50% by 2027 and 80% by 2031, "
            "and minimum recycled content in new batteries from 2031.",
            user_id=ORGANISATION, store="research", scope="shared", memory_type="semantic", tags=["regulation", "batteries"],
            data={"concept": "EU Battery Regulation", "category": "regulation", "related_concepts": ["battery recycling", "recycled content"]},
        ),
    )
    _episode(
        demo, "research-agent", None, user_id="amara.okafor", task="Market brief on heat pump subsidies in Italy", outcome="success",
        narrative=(
            "The requester wanted a one-page memo for an investment committee. Two analyst notes and the ministry's own page "
            "gave the figures; the ministry page was slow and was fetched twice. The memo kept estimates apart from official "
            "numbers, which the requester liked. Agreeing the audience first saved a rewrite."
        ),
        tools_used={"web_search": 4, "fetch_url": 3}, elapsed_ms=1_260_000, cost=0.031,
    )


def _places_and_doubts(demo: _Demo) -> None:
    """A small graph (where the warehouses and a customer are, with a transitive rule that
    infers the rest), a memory written twice, and one an agent doubts: what the Graph and
    Review pages show."""
    graph_rules_replace(membership=demo.admin, rules=[RuleInput(predicate="part of", kind=PredicateKind.TRANSITIVE)])
    agent = demo.agents["support-bot"]
    for subject, predicate, place, user_id in (
        ("Alfama", "part of", "Lisbon", ORGANISATION), ("Lisbon", "part of", "Portugal", ORGANISATION),
        ("Warehouse EU-2", "located in", "Lisbon", ORGANISATION), ("Warehouse EU-1", "located in", "Rotterdam", ORGANISATION),
        ("Rotterdam", "part of", "Netherlands", ORGANISATION), ("Maria Garcia", "lives in", "Alfama", "maria.garcia"),
        ("Maria Garcia", "ships from", "Warehouse EU-2", "maria.garcia"),
    ):
        graph_edge_add(agent=agent, subject=subject, predicate=predicate, object=place, user_id=user_id, store="support")
    # Written twice: kept beside the first, the pair waits in Review's duplicates.
    for text in ("Maria prefers email to phone calls.", "maria prefers email to phone calls"):
        memory_write(agent=agent, items=[MemoryInput(content=text, user_id="maria.garcia", store="support", tags=["preferences"])])
    doubted = memory_write(agent=agent, items=[MemoryInput(
        content="Customers in Portugal may return items within 60 days.", user_id=ORGANISATION, store="support", scope="shared",
        tags=["policy", "returns"],
    )])[0].entry
    memory_review(
        principal=Principal(kind="agent", workspace=demo.workspace, agent=agent), entry=doubted, action="flag",
        reason="The returns policy page says 30 days; this came from a customer's message.",
    )


def _closure_story(demo: _Demo) -> None:
    """A customer asks to be forgotten: a session, a fact and an episode about him, then
    a compliance officer previews and runs the purge, which leaves a receipt and a block."""
    s = _session(demo, agent="support-bot", session_id="sup-daniel-close-account", user_id=PURGED_USER, channel="email", locale="de")
    _say(
        s,
        _system(SUPPORT_PROMPT),
        _user("Please close my account and delete everything you have about me. My email is daniel.weber@example.net."),
        _assistant(
            "I've closed your account. Our privacy team will erase everything we hold about you and confirm by email.",
            _call("call_daniel_close", "close_account", user_id=PURGED_USER),
        ),
        _result("call_daniel_close", '{"closed": true}'),
    )
    _tool(
        s, "call_daniel_close", "close_account", {"user_id": PURGED_USER, "notify": "daniel.weber@example.net"}, {"closed": True},
        duration_ms=410,
    )
    _remember(demo, "support-bot", _fact(PURGED_USER, "Daniel Weber", "asked for", "erasure of his data", store="support"))
    _episode(
        demo, "support-bot", s, user_id=PURGED_USER, task="Close an account and hand the erasure to the privacy team", outcome="handoff",
        narrative=(
            "The customer asked to close his account and erase his data. The account was closed at once; the erasure itself "
            "is the privacy team's. He was told to expect a confirmation by email."
        ),
        tools_used={"close_account": 1}, elapsed_ms=45_000,
    )
    purge_request(membership=demo.dpo, user_id=PURGED_USER, dry_run=True)
    purge = purge_request(membership=demo.dpo, user_id=PURGED_USER, dry_run=False, block_new_writes=True)
    # The job runs here rather than in the background: the command must leave a finished
    # purge, and inside this transaction no worker could see the request yet. The job
    # queued at commit then finds it done and does nothing.
    done = purge_run(purge_id=purge.pk)
    if done.status != JobStatus.DONE:
        raise ApplicationError(f"The demo purge ended {done.status}.", code="DEMO_PURGE_FAILED")
