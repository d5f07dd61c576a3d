"""Metering: each model call counted where the provider is called (memoryhub.memory.
embeddings, .rerankers, memoryhub.conversations.summary_backends), attributed to the workspace,
agent and end user the code around it serves (`attributed`, `about_user`).

Counting costs no database round trip on the hot path: a call adds to sums kept in this
process, per minute and key, and those are written every MEMORYHUB_USAGE_FLUSH_SECONDS
(and whenever usage is read here) in two statements, minutes and days at once. A budget
is checked against the month's days (read at most once a second per workspace) plus what
this process has not written yet.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar, Token
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache

import django.dispatch
from django.conf import settings
from django.db import close_old_connections, connection

from memoryhub.core import tasking
from memoryhub.core.errors import ApplicationError
from memoryhub.usage.ledger import (
    BudgetRead,
    Key,
    Sums,
    budget_read_kept,
    budget_read_keep,
    forget_budget,
    pending_add,
    pending_cost,
    pending_taken,
    this_month,
)
from memoryhub.usage.selectors import month_spent_stored
from memoryhub.usage.services import usage_write

logger = logging.getLogger(__name__)
MILLION = Decimal(1_000_000)
# How long a workspace's budget and month's spending read from the database stand.
BUDGET_READ_SECONDS = 1.0
# Past this many keys a call writes the sums itself instead of waiting for the flusher.
MAX_PENDING_KEYS = 5000

# Sent once a month per workspace, when the month's cost reaches the budget's `warn_at`
# (memoryhub.timeline puts it on the workspace's feed: this layer sits below it).
budget_warning = django.dispatch.Signal()
# Sent once a month per workspace, when the month's cost reaches the budget's limit.
budget_exceeded = django.dispatch.Signal()


@dataclass(frozen=True)
class Attribution:
    workspace_id: int
    agent_id: int | None = None
    user_id: str = ""


_attribution: ContextVar[Attribution | None] = ContextVar("memoryhub_usage_attribution", default=None)
_hub_work: ContextVar[bool] = ContextVar("memoryhub_usage_hub_work", default=False)


class UnattributedModelCall(RuntimeError):
    """A priced model call that no workspace is attributed with: refused before it is made.
    Every path that calls a model attributes its calls (a request's view, an MCP tool, a
    job, a console page); one that does not is a bug, and must fail closed rather than
    give the call away unmetered and outside any budget."""

    def __init__(self, provider: str) -> None:
        super().__init__(f"A call to the priced model provider {provider!r} outside any workspace's attribution was refused.")


@contextlib.contextmanager
def hub_work() -> Iterator[None]:
    """Model calls made inside are the hub's own work across workspaces (re-embedding after
    a model change): no workspace's bill or budget."""
    token = _hub_work.set(True)
    try:
        yield
    finally:
        _hub_work.reset(token)


@contextlib.contextmanager
def attributed(*, workspace_id: int, agent_id: int | None = None, user_id: str = "") -> Iterator[None]:
    """Model calls made inside are the workspace's (and the agent's, and the user's)."""
    token = _attribution.set(Attribution(workspace_id=workspace_id, agent_id=agent_id, user_id=user_id))
    try:
        yield
    finally:
        _attribution.reset(token)


def attribute(*, workspace_id: int, agent_id: int | None = None) -> Token[Attribution | None]:
    """`attributed` for code that cannot hold a `with` around its calls (a view's
    `initial` and `finalize_response`): `release` the token after."""
    return _attribution.set(Attribution(workspace_id=workspace_id, agent_id=agent_id))


def release(token: Token[Attribution | None]) -> None:
    with contextlib.suppress(ValueError):  # set in another context (a view answered from another thread)
        _attribution.reset(token)


@contextlib.contextmanager
def about_user(user_id: str | None) -> Iterator[None]:
    """Narrows the calls inside to one end user (a search of one user's memories, a write
    about one user), within the workspace and agent already attributed."""
    current = _attribution.get()
    if current is None or not user_id:
        yield
        return
    token = _attribution.set(Attribution(workspace_id=current.workspace_id, agent_id=current.agent_id, user_id=user_id))
    try:
        yield
    finally:
        _attribution.reset(token)


def attribution() -> Attribution | None:
    return _attribution.get()


# -- prices and budgets -------------------------------------------------------------------

@dataclass(frozen=True)
class Price:
    input_per_million: Decimal = Decimal(0)
    output_per_million: Decimal = Decimal(0)

    @property
    def free(self) -> bool:
        return not self.input_per_million and not self.output_per_million

    def cost(self, input_tokens: int, output_tokens: int) -> Decimal:
        return (input_tokens * self.input_per_million + output_tokens * self.output_per_million) / MILLION


@lru_cache(maxsize=8)
def _prices(raw: str) -> dict[str, Price]:
    table = json.loads(raw or "{}")
    return {
        name: Price(Decimal(str(price.get("input_per_million", 0))), Decimal(str(price.get("output_per_million", 0))))
        for name, price in table.items()
    }


def price_of(provider: str) -> Price:
    """MEMORYHUB_PRICES: `{provider: {input_per_million, output_per_million}}`; a provider
    it does not name costs nothing."""
    return _prices(settings.MEMORYHUB_PRICES).get(provider, Price())


def estimated_tokens(texts: list[str]) -> int:
    """What a call will read, before it is made, for a budget to judge it: about four
    characters a token (a tokenizer's count would cost a search more than its check)."""
    return sum(len(text) for text in texts) // 4 + len(texts)


class BudgetExceeded(ApplicationError):
    def __init__(self, *, limit: Decimal, spent: Decimal) -> None:
        super().__init__(
            f"This workspace's model budget for the month ({limit}) is spent ({spent}): calls to priced models are refused until "
            "the 1st (UTC) or a higher limit.",
            code="BUDGET_EXCEEDED", status=429, details={"limit": float(limit), "spent": float(spent)},
        )
        # The budget starts again on the 1st, 00:00 UTC.
        now = datetime.now(UTC)
        following = datetime(now.year + now.month // 12, now.month % 12 + 1, 1, tzinfo=UTC)
        self.headers["Retry-After"] = str(max(1, math.ceil((following - now).total_seconds())))


def _budget_read(workspace_id: int) -> BudgetRead:
    month = this_month()
    read = budget_read_kept(workspace_id)
    if read is not None and read.month == month and time.monotonic() - read.at < BUDGET_READ_SECONDS:
        return read
    with connection.cursor() as cursor:
        cursor.execute("SELECT monthly_limit, warn_at FROM usage_budget WHERE workspace_id = %s", [workspace_id])
        row = cursor.fetchone()
    limit, warn_at = row if row else (None, None)
    spent = month_spent_stored(workspace_id=workspace_id, month=month) if limit is not None or warn_at is not None else Decimal(0)
    read = BudgetRead(at=time.monotonic(), month=month, limit=limit, warn_at=warn_at, spent=spent)
    budget_read_keep(workspace_id, read)
    return read


def ensure_within_budget(*, provider: str, input_tokens: Callable[[], int]) -> None:
    """Refuses (429 BUDGET_EXCEEDED) a call to a priced provider that the workspace's month
    has no room for: spent already, or spent by this call's input (a batch is judged whole,
    before any of it is written). A priced call no workspace is attributed with is refused
    (UnattributedModelCall), unless it is the hub's own work (`hub_work`)."""
    current = _attribution.get()
    price = price_of(provider)
    if price.free:
        return
    if current is None:
        if _hub_work.get():
            return
        raise UnattributedModelCall(provider)
    read = _budget_read(current.workspace_id)
    if read.limit is None:
        return
    spent = read.spent + pending_cost(current.workspace_id)
    # The call's own input counted only here, for a priced provider under a budget.
    if spent >= read.limit or spent + price.cost(input_tokens(), 0) > read.limit:
        raise BudgetExceeded(limit=read.limit, spent=spent)


# -- counting -----------------------------------------------------------------------------

def record(*, provider: str, operation: str, items: int, input_tokens: int, output_tokens: int, duration_ms: float) -> None:
    """One model call, done."""
    sums = Sums(1, items, input_tokens, output_tokens, round(duration_ms), price_of(provider).cost(input_tokens, output_tokens))
    current = _attribution.get()
    if current is None:  # the hub's own work across workspaces (re-embedding): no workspace's bill
        return
    minute = datetime.now(UTC).replace(second=0, microsecond=0)
    crowded = pending_add(Key(current.workspace_id, current.agent_id, current.user_id, provider, operation, minute), sums) >= MAX_PENDING_KEYS
    if crowded:
        flush()
    else:
        _start_flusher()


def flush() -> int:
    """Writes what this process counted (minutes and days), and gives the month's warning
    of each workspace whose spending reached it. The sums written are taken out first:
    a call counted meanwhile waits for the next flush, none is counted twice."""
    taken = pending_taken()
    if not taken:
        return 0
    try:
        usage_write(taken)
    except Exception:  # a lost minute of counts is better than a failed search; logged
        logger.exception("usage could not be written: %d keys dropped", len(taken))
        return 0
    for workspace_id in {key.workspace_id for key in taken}:
        forget_budget(workspace_id)
        _warn_if_reached(workspace_id)
    return len(taken)


def discard_pending() -> int:
    """Drops what this process counted and has not written; how many keys. For a test
    process between tests: its counts belong to a database rolled back or flushed, and
    written later they would land in the next test's (or, at exit, the developer's own)."""
    return len(pending_taken())


def _warn_if_reached(workspace_id: int) -> None:
    read = _budget_read(workspace_id)
    for threshold, column, signal in ((read.warn_at, "warned_month", budget_warning), (read.limit, "exceeded_month", budget_exceeded)):
        if threshold is None or read.spent < threshold:
            continue
        with connection.cursor() as cursor:
            # Once a month, whichever process gets there first.
            cursor.execute(
                f"UPDATE usage_budget SET {column} = %s WHERE workspace_id = %s AND {column} <> %s", [read.month, workspace_id, read.month],
            )
            first = cursor.rowcount == 1
        if first:
            signal.send(sender="usage", workspace_id=workspace_id, spent=read.spent, warn_at=read.warn_at, limit=read.limit)


_flusher: threading.Thread | None = None
_flusher_lock = threading.Lock()


def _start_flusher() -> None:
    global _flusher
    if settings.MEMORYHUB_USAGE_FLUSH_SECONDS <= 0 or (_flusher is not None and _flusher.is_alive()):
        return
    with _flusher_lock:
        if _flusher is not None and _flusher.is_alive():
            return
        _flusher = tasking.thread("memoryhub-usage-flush", _flush_forever)


def _flush_forever() -> None:
    while True:
        time.sleep(settings.MEMORYHUB_USAGE_FLUSH_SECONDS)
        close_old_connections()
        try:
            flush()
        finally:
            connection.close()


@atexit.register
def _flush_at_exit() -> None:
    with contextlib.suppress(Exception):
        flush()
