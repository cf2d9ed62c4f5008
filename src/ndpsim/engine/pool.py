"""A pool of records for compiled code: rows of int64 fields, handed out and taken back by id.

A model keeps what is in flight (memory requests, packets, operations) as rows of one array
rather than as objects: compiled code reads and writes a record's fields by its id, and ids
return to a stack of free ones when released. The pool never moves a record, so an id stays
valid when the pool grows (:func:`grown`, between runs of compiled code). What the fields mean
is the model's business; ``meta`` counts the free ids and the most ever in use.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndpsim.numba_cache import compiled


class Pool(NamedTuple):
    fields: np.ndarray  # int64[capacity, fields]
    free: np.ndarray  # int64[capacity]: stack of free ids
    meta: np.ndarray  # int64[2]: free count, most ever in use


def record_pool(capacity: int, fields: int) -> Pool:
    """An empty pool with room for ``capacity`` records of ``fields`` fields."""
    if capacity < 1 or fields < 1:
        raise ValueError(f"a pool needs room and fields, got {capacity} x {fields}")
    return Pool(
        fields=np.zeros((capacity, fields), dtype=np.int64),
        free=np.arange(capacity - 1, -1, -1, dtype=np.int64),
        meta=np.array([capacity, 0], dtype=np.int64),
    )


@compiled(inline=True)
def allocate(pool):
    """A free record's id, or -1 when the pool is exhausted; its fields hold whatever its last
    user left."""
    n = pool.meta[0]
    if n == 0:
        return -1
    n -= 1
    pool.meta[0] = n
    used = pool.free.shape[0] - n
    if used > pool.meta[1]:
        pool.meta[1] = used
    return pool.free[n]


@compiled(inline=True)
def release(pool, rid):
    pool.free[pool.meta[0]] = rid
    pool.meta[0] += 1


def in_use(pool: Pool) -> int:
    return int(pool.free.shape[0] - pool.meta[0])


def grown(pool: Pool) -> Pool:
    """The same records in a pool with twice the room (ids stay valid)."""
    capacity, width = pool.fields.shape
    bigger = record_pool(2 * capacity, width)
    bigger.fields[:capacity] = pool.fields
    free_now = int(pool.meta[0])
    extra = np.arange(2 * capacity - 1, capacity - 1, -1, dtype=np.int64)
    bigger.free[: len(extra)] = extra
    bigger.free[len(extra) : len(extra) + free_now] = pool.free[:free_now]
    bigger.meta[:] = (len(extra) + free_now, pool.meta[1])
    return bigger


__all__ = ["Pool", "allocate", "grown", "in_use", "record_pool", "release"]
