"""The memory requests in flight: what the fields of a record of the engine's pool
(:mod:`ndpsim.engine.pool`) mean to the components on a request's path (cores, caches, host
interface, cube network, vaults).

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

from ndpsim.engine.pool import Pool, grown, in_use, record_pool, release
from ndpsim.engine.pool import allocate as pool_allocate
from ndpsim.numba_cache import compiled

# request kinds; SNDP's partitioned execution adds read-and-forward (RDF: read a line for an
# NSU) and write-address (WTA: tell an NSU where a store goes) packets
R_LOAD, R_STORE, R_ATOMIC, R_REDUCTION, R_RDF, R_WTA = range(6)
# who sent a request (Q_SOURCE): a host core through the L2, or a stack unit from the logic layer
FROM_GPU, FROM_STACK = 0, 1

(Q_LINE, Q_KIND, Q_SM, Q_SLOT, Q_LOAD, Q_BYTES, Q_NEXT, Q_ISSUED, Q_CUBE, Q_CHANNEL,
 Q_RANK, Q_BANKGROUP, Q_BANK, Q_ROW, Q_COLUMN, Q_SLICE, Q_L2_NEXT, Q_BACKLOG_NEXT,
 Q_SOURCE, Q_TARGET, Q_HIT, Q_PROGRAM, Q_NODE, Q_DEST) = range(24)  # fmt: skip
REQUEST_FIELDS = 24
# Q_TARGET: the stack whose NSU an RDF/WTA packet is for; Q_HIT: an RDF hit in the GPU's L1;
# Q_PROGRAM: the program whose launch must wait for it (-1: none; several programs at once);
# Q_NODE, Q_DEST: the router a packet crossing a network hop by hop has reached, and the one it
# goes to (ndpsim.hw.hops.next_hop)


#: The requests in flight: an engine pool of REQUEST_FIELDS fields per request.
RequestPool = Pool


def request_pool(capacity: int) -> RequestPool:
    return record_pool(capacity, REQUEST_FIELDS)


@compiled(inline=True)
def allocate(pool):
    """A fresh request id, or -1 when the pool is exhausted."""
    rid = pool_allocate(pool)
    if rid >= 0:
        pool.fields[rid, Q_NEXT] = -1  # the first request on an L1 MSHR ends its list
    return rid


@compiled(inline=True)
def new(pool, line, kind, sender, slot, size_bytes, now):
    """A request from the pool (the caller made sure one is free) of ``kind`` for ``size_bytes``
    of ``line``, sent at ``now`` by slot ``slot`` of core ``sender`` (-1: neither). The fields
    only some requests use (Q_LOAD, Q_SOURCE, Q_TARGET, Q_HIT) are the caller's to set."""
    rid = allocate(pool)
    f = pool.fields[rid]
    f[Q_LINE] = line
    f[Q_KIND] = kind
    f[Q_SM] = sender
    f[Q_SLOT] = slot
    f[Q_BYTES] = size_bytes
    f[Q_ISSUED] = now
    f[Q_PROGRAM] = -1
    return rid


@compiled(inline=True)
def reads(kind):
    """Whether a request of ``kind`` reads its line from DRAM (an atomic fetches the line, is
    done at the L2, and writes the result through as a separate write)."""
    return kind in (R_LOAD, R_ATOMIC, R_RDF)


__all__ = ["RequestPool", "allocate", "grown", "in_use", "new", "reads", "release", "request_pool"]
