"""What this process has counted and not written yet, and what it last read of each
workspace's budget: the state metering keeps in memory (memoryhub/usage/metering.py),
below the selectors and services that read and write the database, so that each of them
can take what it needs of it without importing metering back."""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal


def this_month(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).strftime("%Y-%m")


@dataclass
class Sums:
    calls: int = 0
    items: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    duration_ms: int = 0
    cost: Decimal = Decimal(0)

    def add(self, other: Sums) -> None:
        self.calls += other.calls
        self.items += other.items
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.duration_ms += other.duration_ms
        self.cost += other.cost


@dataclass(frozen=True)
class Key:
    workspace_id: int
    agent_id: int | None
    user_id: str
    provider: str
    operation: str
    minute: datetime


@dataclass
class _Pending:
    sums: dict[Key, Sums] = field(default_factory=lambda: defaultdict(Sums))
    # Per workspace and month, the cost in `sums`: what a budget check adds, without a walk.
    cost: dict[tuple[int, str], Decimal] = field(default_factory=lambda: defaultdict(Decimal))


_pending = _Pending()
_lock = threading.Lock()


def pending_add(key: Key, sums: Sums) -> int:
    """Counts `sums` under `key`; how many keys are pending now."""
    with _lock:
        _pending.sums[key].add(sums)
        if sums.cost:
            _pending.cost[(key.workspace_id, this_month(key.minute))] += sums.cost
        return len(_pending.sums)


def pending_cost(workspace_id: int) -> Decimal:
    """What this process counted for the workspace this month and has not written yet."""
    with _lock:
        return _pending.cost.get((workspace_id, this_month()), Decimal(0))


def pending_user_forgotten(workspace_id: int, user_id: str) -> int:
    """The sums counted about one end user, kept but no longer theirs (user_id ""): a
    purge erases the person, not what the calls cost. How many keys were theirs."""
    with _lock:
        theirs = [key for key in _pending.sums if key.workspace_id == workspace_id and key.user_id == user_id]
        for key in theirs:
            _pending.sums[replace(key, user_id="")].add(_pending.sums.pop(key))
        return len(theirs)


def pending_taken() -> dict[Key, Sums]:
    """The sums counted so far, taken out (with their running costs): counting starts afresh."""
    with _lock:
        taken, _pending.sums, _pending.cost = _pending.sums, defaultdict(Sums), defaultdict(Decimal)
    return taken


@dataclass
class BudgetRead:
    """A workspace's budget and the month's written spending, as read at `at` (monotonic)."""

    at: float
    month: str
    limit: Decimal | None
    warn_at: Decimal | None
    spent: Decimal


_reads: dict[int, BudgetRead] = {}
_reads_lock = threading.Lock()


def budget_read_kept(workspace_id: int) -> BudgetRead | None:
    with _reads_lock:
        return _reads.get(workspace_id)


def budget_read_keep(workspace_id: int, read: BudgetRead) -> None:
    with _reads_lock:
        _reads[workspace_id] = read


def forget_budget(workspace_id: int) -> None:
    """A budget changed: read it afresh on the next call."""
    with _reads_lock:
        _reads.pop(workspace_id, None)
