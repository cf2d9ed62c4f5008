"""A compiled priority queue of events, ordered by (time, priority, sequence).

The sequence number is the order of insertion, so two events at the same time and priority
always come out in the order they were scheduled: runs are deterministic. An event carries a
kind and two integer arguments (for example a component index and a request id); what they mean
is up to the model that drains the queue.

The heap is 4-ary and keeps each entry's ordering key (time, then priority and sequence) inline,
next to the slot that holds the event's payload. A saturated link can leave tens of thousands of
events pending; then every level of the heap is a cache miss, and this layout makes a level one
miss (four siblings share a cache line) instead of one per child, over half as many levels.
Sifting moves a hole rather than swapping.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndpsim.numba_cache import compiled

ARITY = 4


class EventQueue(NamedTuple):
    heap_time: np.ndarray  # int64[capacity], in heap order
    heap_key: np.ndarray  # int64[capacity]: priority << 48 | sequence (lower first)
    heap_slot: np.ndarray  # int64[capacity]: where the entry's payload is
    kind: np.ndarray  # int64[capacity], by slot
    arg0: np.ndarray
    arg1: np.ndarray
    free: np.ndarray  # int64[capacity]: stack of free slots
    meta: np.ndarray  # int64[4]: size, next sequence number, free slots, events handled (the
    # engine's loop counts those it popped, so that a stepped run can stop after so many)


def event_queue(capacity: int = 1 << 16) -> EventQueue:
    return EventQueue(
        heap_time=np.zeros(capacity, dtype=np.int64),
        heap_key=np.zeros(capacity, dtype=np.int64),
        heap_slot=np.zeros(capacity, dtype=np.int64),
        kind=np.zeros(capacity, dtype=np.int64),
        arg0=np.zeros(capacity, dtype=np.int64),
        arg1=np.zeros(capacity, dtype=np.int64),
        free=np.arange(capacity - 1, -1, -1, dtype=np.int64),
        meta=np.array([0, 0, capacity, 0], dtype=np.int64),
    )


@compiled(inline=True)
def push(q, time, kind, arg0, arg1, priority=0):
    """Schedule an event. Returns False (and schedules nothing) if the queue is full."""
    if q.meta[2] == 0:
        return False
    q.meta[2] -= 1
    slot = q.free[q.meta[2]]
    q.kind[slot] = kind
    q.arg0[slot] = arg0
    q.arg1[slot] = arg1
    key = (priority << 48) | q.meta[1]
    q.meta[1] += 1
    i = q.meta[0]
    q.meta[0] = i + 1
    ht, hk, hs = q.heap_time, q.heap_key, q.heap_slot
    while i > 0:
        parent = (i - 1) >> 2
        pt = ht[parent]
        if time < pt or (time == pt and key < hk[parent]):
            ht[i] = pt
            hk[i] = hk[parent]
            hs[i] = hs[parent]
            i = parent
        else:
            break
    ht[i] = time
    hk[i] = key
    hs[i] = slot
    return True


@compiled(inline=True)
def peek_time(q):
    """Time of the next event, or -1 if the queue is empty."""
    return q.heap_time[0] if q.meta[0] > 0 else -1


@compiled(inline=True)
def pop(q):
    """Remove the next event; returns (time, kind, arg0, arg1). The queue must not be empty."""
    ht, hk, hs = q.heap_time, q.heap_key, q.heap_slot
    top = hs[0]
    result = (ht[0], q.kind[top], q.arg0[top], q.arg1[top])
    q.free[q.meta[2]] = top
    q.meta[2] += 1
    n = q.meta[0] - 1
    q.meta[0] = n
    if n > 0:
        # sift the last entry down from the root
        lt, lk, ls = ht[n], hk[n], hs[n]
        i = 0
        while True:
            first = ARITY * i + 1
            if first >= n:
                break
            best = first
            bt, bk = ht[first], hk[first]
            for c in range(first + 1, min(first + ARITY, n)):
                ct = ht[c]
                if ct < bt or (ct == bt and hk[c] < bk):
                    best, bt, bk = c, ct, hk[c]
            if bt < lt or (bt == lt and bk < lk):
                ht[i] = bt
                hk[i] = bk
                hs[i] = hs[best]
                i = best
            else:
                break
        ht[i] = lt
        hk[i] = lk
        hs[i] = ls
    return result


def size(q: EventQueue) -> int:
    return int(q.meta[0])


def handled(q: EventQueue) -> int:
    """Events the engine's loop has taken from ``q`` so far."""
    return int(q.meta[3])


def grown(q: EventQueue) -> EventQueue:
    """The same events in a queue with twice the room."""
    capacity = q.heap_time.shape[0]
    bigger = event_queue(capacity * 2)
    for name in ("heap_time", "heap_key", "heap_slot", "kind", "arg0", "arg1"):
        getattr(bigger, name)[:capacity] = getattr(q, name)
    free_now = int(q.meta[2])
    extra = np.arange(2 * capacity - 1, capacity - 1, -1, dtype=np.int64)
    bigger.free[: len(extra)] = extra
    bigger.free[len(extra) : len(extra) + free_now] = q.free[:free_now]
    bigger.meta[:] = (q.meta[0], q.meta[1], len(extra) + free_now, q.meta[3])
    return bigger
