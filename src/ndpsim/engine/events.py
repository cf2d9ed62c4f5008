"""A compiled priority queue of events, ordered by (time, priority, sequence).

The sequence number is the order of insertion, so two events at the same time and priority
always come out in the order they were scheduled: runs are deterministic. An event carries a
kind and two integer arguments (for example a component index and a request id); what they mean
is up to the model that drains the queue.

The heap orders slot numbers only; an event's fields stay in their slot until it is popped, and
sifting moves a hole rather than swapping, so each level of the heap costs one comparison and one
integer move.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit


class EventQueue(NamedTuple):
    time: np.ndarray  # int64[capacity], by slot
    key: np.ndarray  # int64[capacity]: priority << 48 | sequence (lower first)
    kind: np.ndarray  # int64[capacity]
    arg0: np.ndarray
    arg1: np.ndarray
    heap: np.ndarray  # int64[capacity]: slots in heap order
    free: np.ndarray  # int64[capacity]: stack of free slots
    meta: np.ndarray  # int64[3]: size, next sequence number, free slots


def event_queue(capacity: int = 1 << 16) -> EventQueue:
    return EventQueue(
        time=np.zeros(capacity, dtype=np.int64),
        key=np.zeros(capacity, dtype=np.int64),
        kind=np.zeros(capacity, dtype=np.int64),
        arg0=np.zeros(capacity, dtype=np.int64),
        arg1=np.zeros(capacity, dtype=np.int64),
        heap=np.zeros(capacity, dtype=np.int64),
        free=np.arange(capacity - 1, -1, -1, dtype=np.int64),
        meta=np.array([0, 0, capacity], dtype=np.int64),
    )


@njit(cache=True, inline="always")
def _before(q, a, b):
    """Whether slot ``a``'s event comes before slot ``b``'s."""
    ta = q.time[a]
    tb = q.time[b]
    return ta < tb or (ta == tb and q.key[a] < q.key[b])


@njit(cache=True, inline="always")
def push(q, time, kind, arg0, arg1, priority=0):
    """Schedule an event. Returns False (and schedules nothing) if the queue is full."""
    if q.meta[2] == 0:
        return False
    q.meta[2] -= 1
    slot = q.free[q.meta[2]]
    q.time[slot] = time
    q.key[slot] = (priority << 48) | q.meta[1]
    q.kind[slot] = kind
    q.arg0[slot] = arg0
    q.arg1[slot] = arg1
    q.meta[1] += 1
    i = q.meta[0]
    q.meta[0] = i + 1
    while i > 0:
        parent = (i - 1) >> 1
        p_slot = q.heap[parent]
        if _before(q, slot, p_slot):
            q.heap[i] = p_slot
            i = parent
        else:
            break
    q.heap[i] = slot
    return True


@njit(cache=True, inline="always")
def peek_time(q):
    """Time of the next event, or -1 if the queue is empty."""
    return q.time[q.heap[0]] if q.meta[0] > 0 else -1


@njit(cache=True, inline="always")
def pop(q):
    """Remove the next event; returns (time, kind, arg0, arg1). The queue must not be empty."""
    top = q.heap[0]
    result = (q.time[top], q.kind[top], q.arg0[top], q.arg1[top])
    q.free[q.meta[2]] = top
    q.meta[2] += 1
    n = q.meta[0] - 1
    q.meta[0] = n
    if n > 0:
        last = q.heap[n]
        i = 0
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            c_slot = q.heap[child]
            if child + 1 < n:
                r_slot = q.heap[child + 1]
                if _before(q, r_slot, c_slot):
                    child += 1
                    c_slot = r_slot
            if _before(q, c_slot, last):
                q.heap[i] = c_slot
                i = child
            else:
                break
        q.heap[i] = last
    return result


def size(q: EventQueue) -> int:
    return int(q.meta[0])


def grown(q: EventQueue) -> EventQueue:
    """The same events in a queue with twice the room."""
    capacity = q.time.shape[0]
    bigger = event_queue(capacity * 2)
    for name in ("time", "key", "kind", "arg0", "arg1", "heap"):
        getattr(bigger, name)[:capacity] = getattr(q, name)
    free_now = int(q.meta[2])
    extra = np.arange(2 * capacity - 1, capacity - 1, -1, dtype=np.int64)
    bigger.free[: len(extra)] = extra
    bigger.free[len(extra) : len(extra) + free_now] = q.free[:free_now]
    bigger.meta[:] = (q.meta[0], q.meta[1], len(extra) + free_now)
    return bigger
