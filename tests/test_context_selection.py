"""Property tests of context selection (hypothesis): budgets, protected messages,
order, orphans, idempotence."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from memoryhub.conversations.context import estimate_tokens, select, units_of


@dataclass
class Msg:
    seq: int
    role: str
    content: str = ""
    tool_calls: list[dict] | None = None
    tool_call_id: str | None = None
    pinned: bool = False


@st.composite
def histories(draw: st.DrawFn) -> list[Msg]:
    """Valid histories as the API stores them: tool results follow their call; a call
    may still wait for some of its results at the end."""
    messages: list[Msg] = []
    seq = 0
    calls = 0
    for _ in range(draw(st.integers(0, 40))):
        kind = draw(st.sampled_from(["system", "user", "assistant", "assistant_calls"]))
        pinned = draw(st.booleans()) if draw(st.integers(0, 4)) == 0 else False
        content = draw(st.text(alphabet="abc de", max_size=60))
        seq += 1
        if kind == "assistant_calls":
            n = draw(st.integers(1, 3))
            ids = [f"c{calls + i}" for i in range(n)]
            calls += n
            messages.append(Msg(seq, "assistant", content, [{"id": i, "type": "function", "function": {"name": "f"}} for i in ids], pinned=pinned))
            answered = draw(st.integers(0, n)) if draw(st.integers(0, 5)) == 0 else n
            for call_id in ids[:answered]:
                seq += 1
                messages.append(Msg(seq, "tool", content, tool_call_id=call_id, pinned=draw(st.booleans()) and pinned))
        else:
            messages.append(Msg(seq, kind, content, pinned=pinned))
    return messages


def orphans(messages: list[Msg]) -> list[Msg]:
    call_ids = {c["id"] for m in messages for c in (m.tool_calls or [])}
    result_ids = {m.tool_call_id for m in messages if m.role == "tool"}
    bad = [m for m in messages if m.role == "tool" and m.tool_call_id not in call_ids]
    bad += [m for m in messages if m.tool_calls and {c["id"] for c in m.tool_calls} - result_ids]
    return bad


budgets = st.one_of(st.none(), st.integers(0, 30))
strategies_ = st.sampled_from(["truncate", "window"])


@settings(max_examples=300, deadline=None)
@given(histories(), strategies_, budgets, st.one_of(st.none(), st.integers(0, 400)), st.integers(0, 5))
def test_it_keeps_every_promise(history: list[Msg], strategy: str, max_messages: int | None, max_tokens: int | None, pin_first: int) -> None:
    result = select(history, strategy=strategy, max_messages=max_messages, max_tokens=max_tokens, pin_first=pin_first).messages
    # Order kept: a subsequence of the history.
    seqs = [m.seq for m in result]
    assert seqs == sorted(seqs) and set(seqs) <= {m.seq for m in history}
    # Never an orphan.
    assert orphans(result) == []
    # System messages always; pinned and the first K in `window` (unless their own unit is incomplete).
    complete = {id(m) for u in units_of(history) if not orphans(u.messages) for m in u.messages}
    protected = [m for m in history if id(m) in complete and (m.role == "system" or (strategy == "window" and (m.pinned or m.seq in {h.seq for h in history[:pin_first]})))]
    kept = {id(m) for m in result}
    assert all(id(m) in kept for m in protected)
    # Budgets hold, unless the protected messages alone exceed them.
    protected_units = [u for u in units_of(history) if any(id(m) in {id(p) for p in protected} for m in u.messages)]
    protected_count = sum(u.size for u in protected_units)
    protected_tokens = sum(u.tokens for u in protected_units)
    if max_messages is not None:
        assert len(result) <= max(max_messages, protected_count)
    if max_tokens is not None:
        assert sum(estimate_tokens(m) for m in result) <= max(max_tokens, protected_tokens)
    # Idempotent.
    again = select(result, strategy=strategy, max_messages=max_messages, max_tokens=max_tokens, pin_first=pin_first).messages
    assert [m.seq for m in again] == seqs


def test_it_keeps_the_newest_messages_in_a_window() -> None:
    history = [Msg(1, "system", "rules")] + [Msg(i, "user" if i % 2 else "assistant", f"m{i}") for i in range(2, 12)]
    result = select(history, strategy="window", max_messages=4).messages
    assert [m.seq for m in result] == [1, 9, 10, 11]


def test_it_drops_a_call_and_its_results_together() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f"}}
    history = [Msg(1, "user", "q"), Msg(2, "assistant", "", [call]), Msg(3, "tool", "r", tool_call_id="c1"), Msg(4, "assistant", "answer")]
    # Room for 2: the call/result pair (2 messages) does not fit beside the answer, so
    # the window ends at the answer rather than opening on the tool result.
    assert [m.seq for m in select(history, strategy="window", max_messages=2).messages] == [4]
    assert [m.seq for m in select(history, strategy="window", max_messages=3).messages] == [2, 3, 4]


def test_it_returns_protected_messages_even_over_budget() -> None:
    history = [Msg(1, "system", "a"), Msg(2, "system", "b"), Msg(3, "user", "c", pinned=True), Msg(4, "user", "d")]
    assert [m.seq for m in select(history, strategy="window", max_messages=1).messages] == [1, 2, 3]
    assert [m.seq for m in select(history, strategy="truncate", max_messages=1).messages] == [1, 2]
