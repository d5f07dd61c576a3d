"""A demo workspace for a first look at the console (`manage.py seed_demo`).

Everything is written the way agents and operators write it, through the domain's
services: redaction, the timeline, the audit log, the purge and its receipt are the
real ones, so the demo shows the hub as it behaves. It is written in one transaction:
a failure leaves nothing behind, so a half-seeded `demo` is never mistaken for a
stranger's workspace on the next run.

What it holds is data: stories in demo_story.toml, beside this module, whose actions
(`session`, `say`, `ask`, `decide`…, listed at the top of that file) this module reads
whole, refusing any it cannot do before a row is written, then hands one by one to the
services.
"""

from __future__ import annotations

from functools import lru_cache

import json
import time
import tomllib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

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
from memoryhub.graph.services import RuleInput, graph_edge_add, graph_rules_replace
from memoryhub.memory.models import MemoryEntry, PredicateKind
from memoryhub.memory.services import REVIEW_ACTIONS, MemoryInput, memory_review, memory_write
from memoryhub.plans.models import StepStatus
from memoryhub.plans.services import StepInput, plan_replace, step_transition
from memoryhub.privacy.services import retention_policy_set
from memoryhub.tools.models import ToolCall, ToolCallStatus
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
# The customer the demo's purge erases (named again in demo_story.toml).
PURGED_USER = "daniel.weber"
DAY = 86400
STORY_FILE = Path(__file__).with_name("demo_story.toml")
# One store each: an agent in several stores (none named `default`) cannot record an
# episode, whose input names no store.
AGENT_STORES = {"support-bot": "support", "research-agent": "research", "ops-agent": "ops"}
# Who does an operator's action (`by` in the story file): the _Demo field of that name.
OPERATORS = ("admin", "approver", "dpo")


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


class DemoStoryError(ApplicationError):
    """The story file asks for what the interpreter cannot do: an unknown action, a field
    missing, misspelt or of the wrong type, a name used before it is given."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="DEMO_STORY_INVALID")


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


def demo_seed(*, password: str = DEFAULT_PASSWORD, if_empty: bool = False, data: Mapping[str, Any] | None = None) -> DemoOutcome:
    """Seed the demo workspace, once. Refuses (ApplicationError) a `demo` workspace it
    did not make that holds data, and the demo's usernames when accounts have them;
    with `if_empty`, does nothing (and says why) when any workspace holds data. `data` is
    the story file as parsed (by default, read from STORY_FILE)."""
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
    # Read whole before anything is written: a slip in the file costs no rollback.
    stories = _stories_read(_story_file() if data is None else data)
    started = time.monotonic()
    with transaction.atomic():
        demo = _tenancy(password=password)
        _seed_everything(demo, stories)
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
    for name, store in AGENT_STORES.items():
        key, _ = services.agent_key_provision(workspace=workspace, store=store, agent=name, label="demo key", actor=ACTOR)
        agents[name] = key.agent
    return _Demo(workspace=workspace, admin=admin, approver=approver, dpo=dpo, agents=agents)


def _seed_everything(demo: _Demo, stories: list[_Story]) -> None:
    # Before anything is written: messages and memories are stored as this says.
    services.workspace_redaction_set(membership=demo.admin, redact_messages=True, redact_memories=True)
    retention_policy_set(membership=demo.admin, kind="tool_outputs", value=90)
    for story in stories:
        run = _Run(demo=demo)
        # The model calls each story makes (embeddings, summaries) are metered as an
        # agent's requests are: the Usage page has real figures to show.
        with metering.attributed(workspace_id=demo.workspace.pk, agent_id=demo.agents[story.metered_to].pk):
            for action in story.actions:
                try:
                    made = action.act(run)
                except ApplicationError as exc:
                    # What the domain refused, with where the file asked for it.
                    raise ApplicationError(f"{action.where}: {exc.message}", code=exc.code, details=exc.details) from exc
                if action.opens:
                    run.current = made
                if action.name is not None:
                    run.named[action.name] = made
    metering.flush()


# --- reading the story file -------------------------------------------------------------

_T = TypeVar("_T")
# What an action does once read: its services called, in the story being written.
_Act = Callable[["_Run"], object]
_REQUIRED: Any = object()
_JSON = (str, int, float, bool, dict, list)
_TYPE_NAMES = {str: "text", int: "an integer", float: "a number", bool: "true or false", dict: "a table", list: "an array"}


def _story_file() -> dict[str, Any]:
    try:
        with STORY_FILE.open("rb") as file:
            return tomllib.load(file)
    except tomllib.TOMLDecodeError as exc:
        raise DemoStoryError(f"{STORY_FILE.name}: {exc}") from None


class _Fields:
    """One table of the file (an action, or a message, step or item inside one), read
    field by field: a field missing or of the wrong type is refused as it is read, and
    one never read by `done()`, so that a misspelt optional field is not skipped."""

    def __init__(self, raw: object, where: str) -> None:
        if not isinstance(raw, dict):
            raise DemoStoryError(f"{where}: expected a table, found {_TYPE_NAMES.get(type(raw), type(raw).__name__)}")
        self.raw: dict[str, Any] = raw
        self.where = where
        self._read: set[str] = set()

    def get(self, key: str, kind: type | tuple[type, ...] = str, default: Any = _REQUIRED, *, choices: Collection[str] | None = None) -> Any:
        self._read.add(key)
        types = kind if isinstance(kind, tuple) else (kind,)
        if key not in self.raw:
            if default is _REQUIRED:
                raise self.error(f"missing field `{key}`")
            return default
        value = self.raw[key]
        # A bool is an int to isinstance; `duration_ms = true` is a slip all the same.
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            expected = " or ".join(_TYPE_NAMES[kind] for kind in types)
            raise self.error(f"`{key}` must be {expected}, not {_TYPE_NAMES.get(type(value), type(value).__name__)}")
        if choices is not None and value not in choices:
            raise self.error(f"`{key}` is {value!r}, not one of {', '.join(choices)}")
        return value

    def texts(self, key: str, default: Any = _REQUIRED, *, choices: Collection[str] | None = None) -> list[str]:
        values = self.get(key, list, default)
        for value in values:
            if not isinstance(value, str) or (choices is not None and value not in choices):
                raise self.error(f"`{key}` holds {value!r}; it takes " + (f"{', '.join(choices)}" if choices else "text only"))
        return values

    def each(self, key: str, read: Callable[[_Fields], _T], *, label: str, default: Any = _REQUIRED) -> list[_T]:
        """What `read` makes of each table of the array `key`."""
        made = []
        for number, raw in enumerate(self.get(key, list, default), 1):
            item = _Fields(raw, f"{self.where}, {label} {number}")
            made.append(read(item))
            item.done()
        return made

    def done(self) -> None:
        unread = sorted(set(self.raw) - self._read)
        if unread:
            raise self.error("unknown field " + ", ".join(f"`{key}`" for key in unread))

    def error(self, message: str) -> DemoStoryError:
        return DemoStoryError(f"{self.where}: {message}")


@dataclass(frozen=True)
class _Action:
    """How the interpreter takes an action: `read` checks its fields and returns what it
    does; `on_session`, it acts on the story's session, so one must be open; `opens`, what
    it returns is the session the next actions act on; `names`, the kind of thing its `as`
    names (none: it takes no `as`)."""

    read: Callable[[_Fields, _Reading], _Act]
    on_session: bool = False
    opens: bool = False
    names: str = ""


@dataclass(frozen=True)
class _StoryAction:
    where: str
    act: _Act
    opens: bool
    name: str | None  # its `as`


@dataclass
class _Story:
    name: str
    metered_to: str
    actions: list[_StoryAction]


@dataclass
class _Reading:
    """A story as it is read: its agent, the prompts, and the names given by `as` so far,
    each with the kind of thing it names."""

    agent: str
    prompts: dict[str, str]
    names: dict[str, str] = field(default_factory=dict)

    def agent_of(self, action: _Fields) -> str:
        return action.get("agent", str, self.agent, choices=AGENT_STORES)

    def operator(self, action: _Fields) -> str:
        return action.get("by", choices=OPERATORS)

    def refer(self, action: _Fields, key: str, kind: str) -> str:
        name = action.get(key)
        if self.names.get(name) != kind:
            raise action.error(f"`{key}` = {json.dumps(name)} names no {kind}: give one `as = {json.dumps(name)}` earlier in the story")
        return name


@dataclass
class _Run:
    """A story as it is written: the session its actions act on, and what `as` named."""

    demo: _Demo
    current: Session | None = None
    named: dict[str, Any] = field(default_factory=dict)

    @property
    def session(self) -> Session:
        if self.current is None:  # reading the story refused this already
            raise RuntimeError("no session is open")
        return self.current

    def actor(self) -> str:
        return agent_actor(self.session.agent)


def _stories_read(data: Mapping[str, Any]) -> list[_Story]:
    """Every story of the file, checked whole before anything is written."""
    top = _Fields(dict(data), STORY_FILE.name)
    prompts = top.get("prompts", dict, {})
    if not all(isinstance(text, str) for text in prompts.values()):
        raise top.error("a prompt is text")
    stories: list[_Story] = []
    for number, raw in enumerate(top.get("story", list), 1):
        story = _Fields(raw, f"{STORY_FILE.name}: story {number}")
        story_name = story.get("name")
        story.where = f"{STORY_FILE.name}: story {json.dumps(story_name)}"
        if any(known.name == story_name for known in stories):
            raise story.error("a second story of this name")
        agent = story.get("agent", choices=AGENT_STORES)
        metered_to = story.get("metered_to", str, agent, choices=AGENT_STORES)
        story.get("about")  # for the reader of the file
        reading = _Reading(agent=agent, prompts=prompts)
        actions: list[_StoryAction] = []
        for index, raw_action in enumerate(story.get("do", list), 1):
            action = _Fields(raw_action, f"{story.where}, action {index}")
            kind = action.get("action")
            if kind not in _ACTIONS:
                raise action.error(f"unknown action {json.dumps(kind)}; the actions are {', '.join(_ACTIONS)}")
            action.where += f" ({kind})"
            spec = _ACTIONS[kind]
            if spec.on_session and not any(earlier.opens for earlier in actions):
                raise action.error("no session to act on: a `session` action comes first")
            name = action.get("as", str, None) if spec.names else None
            if name is not None:
                if name in reading.names:
                    raise action.error(f"the name {json.dumps(name)} is given twice")
                reading.names[name] = spec.names
            actions.append(_StoryAction(where=action.where, act=spec.read(action, reading), opens=spec.opens, name=name))
            action.done()
        story.done()
        stories.append(_Story(name=story_name, metered_to=metered_to, actions=actions))
    top.done()
    return stories


# --- the actions: each reads its fields, so that a slip is refused before anything is
# written, and returns what it does -----------------------------------------------------


def _session(action: _Fields, story: _Reading) -> _Act:
    agent, session_id, user_id = story.agent_of(action), action.get("session_id"), action.get("user_id")
    metadata = action.get("metadata", dict, {})
    return lambda run: session_create(agent=run.demo.agents[agent], session_id=session_id, user_id=user_id, metadata=metadata)[0]


def _plan(action: _Fields, story: _Reading) -> _Act:
    goal = action.get("goal")
    steps = action.each("steps", _plan_step, label="step")
    return lambda run: plan_replace(session=run.session, goal=goal, steps=steps, actor=run.actor())


def _plan_step(step: _Fields) -> StepInput:
    return StepInput(step_id=step.get("step_id"), description=step.get("description"), depends_on=step.texts("depends_on", []))


def _say(action: _Fields, story: _Reading) -> _Act:
    messages = action.each("messages", lambda message: _message(message, story.prompts), label="message")
    return lambda run: message_append(session=run.session, messages=messages, actor=run.actor())


def _message(message: _Fields, prompts: dict[str, str]) -> MessageInput:
    roles = [role for role in ("system", "user", "assistant", "tool") if role in message.raw]
    if len(roles) != 1:
        raise message.error("a message is one of `system` (a prompt's name), `user`, `assistant` or `tool` (its text)")
    if roles == ["system"]:
        return MessageInput(role="system", content=prompts[message.get("system", choices=prompts)], pinned=True)
    if roles == ["assistant"]:
        calls = message.each("calls", _tool_call, label="call", default=[])
        return MessageInput(role="assistant", content=message.get("assistant"), tool_calls=calls or None)
    if roles == ["tool"]:
        return MessageInput(role="tool", content=message.get("tool"), tool_call_id=message.get("call_id"))
    return MessageInput(role="user", content=message.get("user"))


def _tool_call(call: _Fields) -> dict[str, Any]:
    call_id, name, arguments = call.get("id"), call.get("name"), call.get("arguments", dict, {})
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def _step(action: _Fields, story: _Reading) -> _Act:
    step_id, status = action.get("step_id"), action.get("status", choices=StepStatus.values)
    summary = action.get("summary", str, None)
    return lambda run: step_transition(session=run.session, step_id=step_id, status=status, summary=summary, actor=run.actor())


def _tool(action: _Fields, story: _Reading) -> _Act:
    item = ToolCallInput(
        tool=action.get("tool"), args=action.get("args", _JSON), result=action.get("result", _JSON), call_id=action.get("call_id"),
        status=action.get("status", str, ToolCallStatus.OK, choices=ToolCallStatus.values),
        step_id=action.get("step_id", str, None), duration_ms=action.get("duration_ms", int, None),
        cost=action.get("cost", (int, float), None), result_summary=action.get("result_summary", str, None),
    )
    return lambda run: tool_call_record(session=run.session, item=item, actor=run.actor())


def _checkpoint(action: _Fields, story: _Reading) -> _Act:
    state, current_step, label = action.get("state", _JSON), action.get("current_step", str, ""), action.get("label", str, "")

    def act(run: _Run) -> tuple[Session, int]:
        session = run.session
        # The next version of what the session holds now (a fork starts at v1).
        session.refresh_from_db(fields=["checkpoint_version"])
        saved = checkpoint_save(
            session=session, expected_version=session.checkpoint_version, state=state, current_step=current_step, label=label,
            actor=run.actor(),
        )
        return session, saved.version

    return act


def _ask(action: _Fields, story: _Reading) -> _Act:
    expires_days = action.get("expires_days", int, None)
    item = ApprovalInput(
        tool=action.get("tool"), args=action.get("args", dict), context=action.get("context", _JSON),
        allowed_decisions=action.texts("allowed_decisions", [Decision.APPROVE, Decision.EDIT, Decision.REJECT], choices=Decision.values),
        expires_in=expires_days * DAY if expires_days else None, response_schema=action.get("response_schema", dict, None),
    )
    return lambda run: approval_request(session=run.session, item=item)[0]


def _decide(action: _Fields, story: _Reading) -> _Act:
    approval, by = story.refer(action, "approval", "approval"), story.operator(action)
    decision, args = action.get("decision", choices=Decision.values), action.get("args", dict, None)
    reason = action.get("reason", str, "")
    # The service takes any word but `none` and `exact` for `tool`: a slip would remember a wildcard.
    remember = action.get("remember", str, "none", choices=("none", "tool", "exact"))
    remember_scope = action.get("remember_scope", str, RuleScope.WORKSPACE, choices=RuleScope.values)
    return lambda run: approval_decide(
        membership=getattr(run.demo, by), approval=run.named[approval], decision=decision, args=args, reason=reason,
        remember=remember, remember_scope=remember_scope,
    )


def _fork(action: _Fields, story: _Reading) -> _Act:
    checkpoint, new_session_id = story.refer(action, "from", "checkpoint"), action.get("new_session_id")

    def act(run: _Run) -> Session:
        session, version = run.named[checkpoint]
        return checkpoint_fork(session=session, from_version=version, new_session_id=new_session_id, actor=agent_actor(session.agent))

    return act


def _branch(action: _Fields, story: _Reading) -> _Act:
    new_session_id, upto_seq, label = action.get("new_session_id"), action.get("upto_seq", int, None), action.get("label", str, "")
    return lambda run: session_branch(session=run.session, new_session_id=new_session_id, upto_seq=upto_seq, label=label, actor=run.actor())


def _summarise(action: _Fields, story: _Reading) -> _Act:
    return lambda run: session_summarise(session=run.session, actor=run.actor())


def _edit_message(action: _Fields, story: _Reading) -> _Act:
    seq, content = action.get("seq", int), action.get("content")
    if seq == 0:
        raise action.error("`seq` counts from 1, or back from -1 (the last message)")

    def act(run: _Run) -> None:
        session = run.session
        if seq < 0:
            session.refresh_from_db(fields=["last_seq"])
        message_edit(session=session, seq=seq if seq > 0 else session.last_seq + 1 + seq, content=content, actor=run.actor())

    return act


# What a `remember` item may set besides its content and user_id; the rest keeps
# MemoryInput's defaults.
_MEMORY_FIELDS = {"store": str, "scope": str, "memory_type": str, "tags": list, "data": dict}


def _memory(item: _Fields) -> MemoryInput:
    given = {key: item.get(key, types) for key, types in _MEMORY_FIELDS.items() if key in item.raw}
    return MemoryInput(content=item.get("content"), user_id=item.get("user_id"), **given)


def _remember(action: _Fields, story: _Reading) -> _Act:
    agent, items = story.agent_of(action), action.each("items", _memory, label="item")
    if "as" in action.raw and len(items) != 1:
        raise action.error(f"`as` names the one memory a `remember` writes; this one writes {len(items)}")
    return lambda run: memory_write(agent=run.demo.agents[agent], items=items)[0].entry


def _fact(action: _Fields, story: _Reading) -> _Act:
    return _facts(action, story, [action.get("value")])


def _facts_over_time(action: _Fields, story: _Reading) -> _Act:
    return _facts(action, story, action.texts("values"))


def _facts(action: _Fields, story: _Reading, values: list[str]) -> _Act:
    agent, user_id, store = story.agent_of(action), action.get("user_id"), action.get("store")
    subject, predicate = action.get("subject"), action.get("predicate")
    items = [
        MemoryInput(
            content=f"{subject} {predicate} {value}.", user_id=user_id, store=store, memory_type="factual",
            data={"subject": subject, "predicate": predicate, "object": value}, tags=["profile"],
        )
        for value in values
    ]

    def act(run: _Run) -> None:
        # One write each, in order: each value supersedes the last, as when an agent
        # learns something new.
        for item in items:
            memory_write(agent=run.demo.agents[agent], items=[item])

    return act


_EPISODE_FIELDS = {"tools_used": dict, "elapsed_ms": int, "cost": (int, float)}


def _episode(action: _Fields, story: _Reading) -> _Act:
    agent = story.agent_of(action)
    given = {key: action.get(key, types) for key, types in _EPISODE_FIELDS.items() if key in action.raw}
    item = EpisodeInput(
        user_id=action.get("user_id"), task=action.get("task"), outcome=action.get("outcome"), narrative=action.get("narrative"), **given,
    )
    return lambda run: episode_record(agent=run.demo.agents[agent], item=item, session=run.current)


def _graph_rules(action: _Fields, story: _Reading) -> _Act:
    by, rules = story.operator(action), action.each("rules", _rule, label="rule")
    return lambda run: graph_rules_replace(membership=getattr(run.demo, by), rules=rules)


def _rule(rule: _Fields) -> RuleInput:
    return RuleInput(predicate=rule.get("predicate"), kind=rule.get("kind", choices=PredicateKind.values), inverse=rule.get("inverse", str, ""))


def _edges(action: _Fields, story: _Reading) -> _Act:
    agent, store = story.agent_of(action), action.get("store", str, None)
    edges = action.each("edges", lambda edge: {key: edge.get(key) for key in ("subject", "predicate", "object", "user_id")}, label="edge")

    def act(run: _Run) -> None:
        for edge in edges:
            graph_edge_add(agent=run.demo.agents[agent], store=store, **edge)

    return act


def _review(action: _Fields, story: _Reading) -> _Act:
    agent, entry = story.agent_of(action), story.refer(action, "entry", "memory")
    verdict, reason = action.get("verdict", choices=REVIEW_ACTIONS), action.get("reason", str, "")

    def act(run: _Run) -> None:
        principal = Principal(kind="agent", workspace=run.demo.workspace, agent=run.demo.agents[agent])
        memory_review(principal=principal, entry=run.named[entry], action=verdict, reason=reason)

    return act


def _purge(action: _Fields, story: _Reading) -> _Act:
    by, user_id = story.operator(action), action.get("user_id")
    dry_run, block_new_writes = action.get("dry_run", bool), action.get("block_new_writes", bool, False)

    def act(run: _Run) -> None:
        purge = purge_request(membership=getattr(run.demo, by), user_id=user_id, dry_run=dry_run, block_new_writes=block_new_writes)
        if dry_run:
            return
        # The job runs here rather than in the background: the command must leave a finished
        # purge, and inside this transaction no worker could see the request yet. The job
        # queued at commit then finds it done and does nothing.
        done = purge_run(purge_id=purge.pk)
        if done.status != JobStatus.DONE:
            raise ApplicationError(f"The demo purge ended {done.status}.", code="DEMO_PURGE_FAILED")

    return act


_ACTIONS = {
    "session": _Action(_session, opens=True),
    "plan": _Action(_plan, on_session=True),
    "say": _Action(_say, on_session=True),
    "step": _Action(_step, on_session=True),
    "tool": _Action(_tool, on_session=True),
    "checkpoint": _Action(_checkpoint, on_session=True, names="checkpoint"),
    "ask": _Action(_ask, on_session=True, names="approval"),
    "decide": _Action(_decide),
    "fork": _Action(_fork, opens=True),
    "branch": _Action(_branch, on_session=True, opens=True),
    "summarise": _Action(_summarise, on_session=True),
    "edit_message": _Action(_edit_message, on_session=True),
    "remember": _Action(_remember, names="memory"),
    "fact": _Action(_fact),
    "facts_over_time": _Action(_facts_over_time),
    "episode": _Action(_episode),
    "graph_rules": _Action(_graph_rules),
    "edges": _Action(_edges),
    "review": _Action(_review),
    "purge": _Action(_purge),
}
