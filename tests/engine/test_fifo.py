"""The compiled FIFO queues: first in first out, many queues over one link array, a link that is
a column of a 2-D array, and any mix of operations agreeing with ``collections.deque``."""

from __future__ import annotations

from collections import deque

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ndpsim.engine import fifo


def family(queues: int, items: int):
    """``queues`` empty queues over ``items`` items: (head, tail, link)."""
    return (np.full(queues, -1, dtype=np.int64), np.full(queues, -1, dtype=np.int64),
            np.full(items, -1, dtype=np.int64))  # fmt: skip


def drain(head, link, q) -> list[int]:
    out = []
    while not fifo.empty(head, q):
        out.append(int(fifo.pop(head, link, q)))
    return out


def test_items_leave_in_the_order_they_came():
    head, tail, link = family(1, 8)
    for item in (5, 2, 7, 0):
        fifo.push(head, tail, link, 0, item)
    assert fifo.length(head, link, 0) == 4
    assert fifo.peek(head, 0) == 5
    assert drain(head, link, 0) == [5, 2, 7, 0]
    assert fifo.empty(head, 0) and fifo.peek(head, 0) == -1 and fifo.length(head, link, 0) == 0


def test_an_emptied_queue_takes_items_again():
    head, tail, link = family(1, 4)
    fifo.push(head, tail, link, 0, 1)
    assert drain(head, link, 0) == [1]
    fifo.push(head, tail, link, 0, 3)  # the stale tail is not followed
    fifo.push(head, tail, link, 0, 1)
    assert drain(head, link, 0) == [3, 1]


def test_queues_of_one_family_share_the_links_and_keep_apart():
    head, tail, link = family(3, 9)
    for item in range(9):
        fifo.push(head, tail, link, item % 3, item)
    assert [fifo.length(head, link, q) for q in range(3)] == [3, 3, 3]
    assert drain(head, link, 1) == [1, 4, 7]
    assert drain(head, link, 0) == [0, 3, 6]
    assert drain(head, link, 2) == [2, 5, 8]


def test_the_link_may_be_a_column_of_a_table():
    head, tail, _ = family(2, 0)
    fields = np.zeros((6, 3), dtype=np.int64)
    for item in (4, 1, 5):
        fifo.push(head, tail, fields[:, 2], 1, item)
    assert fields[:, :2].sum() == 0  # only the link column was written
    assert drain(head, fields[:, 2], 1) == [4, 1, 5]


# An operation is ("push", queue) of the next unused item, or ("pop", queue).
_OPERATIONS = st.lists(st.tuples(st.sampled_from(["push", "push", "pop"]), st.integers(0, 3)),
                       max_size=200)  # fmt: skip


@given(_OPERATIONS)
def test_any_mix_of_pushes_and_pops_agrees_with_deques(operations):
    head, tail, link = family(4, len(operations))
    reference = [deque() for _ in range(4)]
    for item, (op, q) in enumerate(operations):
        if op == "push":
            fifo.push(head, tail, link, q, item)
            reference[q].append(item)
        elif reference[q]:
            assert fifo.peek(head, q) == reference[q][0]
            assert fifo.pop(head, link, q) == reference[q].popleft()
        else:
            assert fifo.empty(head, q)
        assert fifo.length(head, link, q) == len(reference[q])
    for q in range(4):
        assert drain(head, link, q) == list(reference[q])
