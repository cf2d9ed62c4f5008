"""The pool of memory requests in flight, as parallel arrays with a free list.

A request is one cache-line transaction on its way through the memory system. Whoever holds a
request id may read and write its fields. A request can wait in three lists at once, each with
its own link: on an L1 MSHR (``Q_NEXT``), on an L2 MSHR or in its slice's queue for a free one
(``Q_L2_NEXT``), and in a memory controller's backlog when its queue is full
(``Q_BACKLOG_NEXT``). The queues are :mod:`ndpsim.engine.fifo` families, which set the link of
an item they take; an MSHR's list is kept by its cache. An SNDP packet (RDF/WTA)
names its offload instance in ``Q_SLOT`` and the stream position of its memory instruction in
``Q_LOAD``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

# request kinds; SNDP's partitioned execution adds read-and-forward (RDF: read a line for an
# NSU) and write-address (WTA: tell an NSU where a store goes) packets
R_LOAD, R_STORE, R_ATOMIC, R_REDUCTION, R_RDF, R_WTA = range(6)
# who sent a request (Q_SOURCE): a GPU SM through the L2, or a stack SM from the logic layer
FROM_GPU, FROM_STACK = 0, 1

(Q_LINE, Q_KIND, Q_SM, Q_SLOT, Q_LOAD, Q_BYTES, Q_NEXT, Q_ISSUED, Q_CUBE, Q_CHANNEL,
 Q_RANK, Q_BANKGROUP, Q_BANK, Q_ROW, Q_COLUMN, Q_SLICE, Q_L2_NEXT, Q_BACKLOG_NEXT,
 Q_SOURCE, Q_TARGET, Q_HIT) = range(21)  # fmt: skip
REQUEST_FIELDS = 21
# Q_TARGET: the stack whose NSU an RDF/WTA packet is for; Q_HIT: an RDF hit in the GPU's L1


class RequestPool(NamedTuple):
    fields: np.ndarray  # int64[capacity, REQUEST_FIELDS]
    free: np.ndarray  # int64[capacity]: stack of free ids
    meta: np.ndarray  # int64[2]: free count, most ever in use


def request_pool(capacity: int) -> RequestPool:
    return RequestPool(
        fields=np.zeros((capacity, REQUEST_FIELDS), dtype=np.int64),
        free=np.arange(capacity - 1, -1, -1, dtype=np.int64),
        meta=np.array([capacity, 0], dtype=np.int64),
    )


@njit(cache=True, inline="always")
def allocate(pool):
    """A fresh request id, or -1 when the pool is exhausted."""
    n = pool.meta[0]
    if n == 0:
        return -1
    n -= 1
    pool.meta[0] = n
    used = pool.free.shape[0] - n
    if used > pool.meta[1]:
        pool.meta[1] = used
    rid = pool.free[n]
    pool.fields[rid, Q_NEXT] = -1  # the first request on an L1 MSHR ends its list
    return rid


@njit(cache=True, inline="always")
def release(pool, rid):
    pool.free[pool.meta[0]] = rid
    pool.meta[0] += 1


def in_use(pool: RequestPool) -> int:
    return int(pool.free.shape[0] - pool.meta[0])


def grown(pool: RequestPool) -> RequestPool:
    """The same requests in a pool with twice the room (ids stay valid)."""
    capacity = pool.fields.shape[0]
    bigger = request_pool(2 * capacity)
    bigger.fields[:capacity] = pool.fields
    free_now = int(pool.meta[0])
    extra = np.arange(2 * capacity - 1, capacity - 1, -1, dtype=np.int64)
    bigger.free[: len(extra)] = extra
    bigger.free[len(extra) : len(extra) + free_now] = pool.free[:free_now]
    bigger.meta[:] = (len(extra) + free_now, pool.meta[1])
    return bigger
