"""First-in first-out queues for compiled code, as intrusive singly linked lists.

The items are small integers (request ids, offload instances). Each item has one link, in an
array its owner keeps (``link[item]``: the next item, -1 at the end), and a family of queues
(one per channel, per L2 slice, per stack) is two arrays: the first and the last item of each.
No queue allocates or has a capacity, and an item joins and leaves in O(1). An item waits in at
most one queue of a family at a time, so one link serves the whole family; a request may wait
in several families at once, with a link for each (a column of the request pool's fields).

A queue is empty when its ``head`` is -1; its ``tail`` is then stale, and only ``push`` reads
it. Families start with every head at -1.
"""

from __future__ import annotations

from ndpsim.numba_cache import compiled


@compiled(inline=True)
def push(head, tail, link, q, item):
    """Append ``item`` to queue ``q``."""
    link[item] = -1
    if head[q] < 0:
        head[q] = item
    else:
        link[tail[q]] = item
    tail[q] = item


@compiled(inline=True)
def pop(head, link, q):
    """Remove and return the first item of queue ``q``, which must not be empty."""
    item = head[q]
    head[q] = link[item]
    return item


@compiled(inline=True)
def peek(head, q):
    """The first item of queue ``q`` (-1 if it is empty), left in the queue."""
    return head[q]


@compiled(inline=True)
def empty(head, q):
    return head[q] < 0


@compiled(inline=True)
def length(head, link, q):
    """How many items queue ``q`` holds: a walk, for checks and diagnostics, not hot paths."""
    n = 0
    item = head[q]
    while item >= 0:
        n += 1
        item = link[item]
    return n
