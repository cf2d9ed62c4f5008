"""The compiled event queue: pop order (time, priority, insertion sequence), a full queue refusing
events, growing a queue without losing or reordering events, and run-to-run determinism."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ndpsim.engine import events as ev


def drain(q) -> list[tuple[int, int, int, int]]:
    out = []
    while ev.size(q):
        out.append(tuple(int(x) for x in ev.pop(q)))
    return out


# An operation is ("push", time, priority) or ("pop",).
_PUSH = st.tuples(st.just("push"), st.integers(0, 20), st.integers(0, 3))
_POP = st.tuples(st.just("pop"))
_OPERATIONS = st.lists(st.one_of(_PUSH, _PUSH, _POP), max_size=120)


def run_operations(operations, capacity: int = 8):
    """Apply the operations to a queue that grows when full; returns the pops, including the
    final drain, as (time, kind, arg0, arg1)."""
    q = ev.event_queue(capacity)
    pops = []
    for seq, op in enumerate(operations):
        if op[0] == "push":
            _, time, priority = op
            if not ev.push(q, time, seq, priority, -seq, priority):
                q = ev.grown(q)
                assert ev.push(q, time, seq, priority, -seq, priority)
        elif ev.size(q):
            pops.append(tuple(int(x) for x in ev.pop(q)))
    return pops + drain(q)


def reference_operations(operations):
    """The same, with a list sorted by (time, priority, sequence) standing in for the heap."""
    pending: list[tuple[int, int, int]] = []
    pops = []

    def take():
        pending.sort()
        time, priority, seq = pending.pop(0)
        return (time, seq, priority, -seq)

    for seq, op in enumerate(operations):
        if op[0] == "push":
            _, time, priority = op
            pending.append((time, priority, seq))
        elif pending:
            pops.append(take())
    while pending:
        pops.append(take())
    return pops


@settings(max_examples=200, deadline=None)
@given(_OPERATIONS)
def test_events_come_out_in_time_priority_insertion_order(operations):
    assert run_operations(operations) == reference_operations(operations)


@settings(max_examples=50, deadline=None)
@given(_OPERATIONS)
def test_same_operations_twice_give_identical_pops(operations):
    assert run_operations(operations) == run_operations(operations)


def test_events_at_equal_time_pop_in_insertion_order():
    q = ev.event_queue(64)
    for i in range(40):
        assert ev.push(q, 1000, i, i * 2, i * 3)
    assert drain(q) == [(1000, i, i * 2, i * 3) for i in range(40)]


def test_lower_priority_value_pops_first_at_equal_time():
    q = ev.event_queue(16)
    ev.push(q, 50, 1, 0, 0, 2)
    ev.push(q, 50, 2, 0, 0, 0)
    ev.push(q, 50, 3, 0, 0, 1)
    ev.push(q, 40, 4, 0, 0, 3)  # earlier time beats any priority
    ev.push(q, 50, 5, 0, 0, 0)
    assert [kind for _, kind, _, _ in drain(q)] == [4, 2, 5, 3, 1]


def test_peek_time_is_the_next_time_and_minus_one_when_empty():
    q = ev.event_queue(8)
    assert ev.peek_time(q) == -1
    ev.push(q, 30, 0, 0, 0)
    ev.push(q, 10, 0, 0, 0)
    assert ev.peek_time(q) == 10
    assert ev.size(q) == 2
    ev.pop(q)
    assert ev.peek_time(q) == 30
    ev.pop(q)
    assert ev.peek_time(q) == -1
    assert ev.size(q) == 0


def test_a_full_queue_refuses_a_push_and_schedules_nothing():
    q = ev.event_queue(4)
    for t in (4, 3, 2, 1):
        assert ev.push(q, t, t, 0, 0)
    assert not ev.push(q, 0, 99, 0, 0)
    assert ev.size(q) == 4
    assert ev.peek_time(q) == 1
    # a pop frees room for exactly one more
    assert ev.pop(q) == (1, 1, 0, 0)
    assert ev.push(q, 0, 7, 0, 0)
    assert not ev.push(q, 0, 8, 0, 0)
    assert [kind for _, kind, _, _ in drain(q)] == [7, 2, 3, 4]


def test_grown_queue_keeps_pending_events_in_order_and_accepts_more():
    q = ev.event_queue(8)
    scheduled = []  # (time, priority, sequence, kind)

    def schedule(queue, time, kind, priority):
        scheduled.append((time, priority, len(scheduled), kind))
        return ev.push(queue, time, kind, 0, 0, priority)

    schedule(q, 5, 100, 0)
    assert ev.pop(q)[1] == 100  # leaves a used-then-freed slot behind
    for i in range(8):
        assert schedule(q, 10 - i % 3, i, i % 2)
    assert not ev.push(q, 0, 0, 0, 0)
    g = ev.grown(q)
    assert ev.size(g) == ev.size(q) == 8
    assert ev.peek_time(g) == ev.peek_time(q)
    for i in range(8):
        assert schedule(g, 9, 200 + i, i % 2)
    assert not ev.push(g, 9, 999, 0, 0)
    assert ev.size(g) == 16

    expected = [(t, kind, 0, 0) for t, _, _, kind in sorted(scheduled) if kind != 100]
    assert drain(g) == expected
