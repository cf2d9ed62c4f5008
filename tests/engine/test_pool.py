"""The engine's record pool: ids handed out and taken back, the most ever in use, and growing
without moving a record."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit

from ndpsim.engine.pool import allocate, grown, in_use, record_pool, release


@njit(cache=True)
def _take(pool, n):
    out = np.empty(n, dtype=np.int64)
    for k in range(n):
        out[k] = allocate(pool)
    return out


@njit(cache=True)
def _give(pool, rid):
    release(pool, rid)


def test_ids_are_distinct_until_exhausted_and_come_back_when_released():
    pool = record_pool(4, 3)
    ids = _take(pool, 5)
    assert sorted(ids[:4]) == [0, 1, 2, 3] and ids[4] == -1
    assert in_use(pool) == 4
    _give(pool, ids[1])
    assert in_use(pool) == 3 and _take(pool, 1)[0] == ids[1]
    assert pool.meta[1] == 4  # the most ever in use


@given(st.lists(st.booleans(), max_size=200))
def test_growing_keeps_every_record_and_id(steps):
    pool = record_pool(2, 2)
    held: list[int] = []
    for take in steps:
        if take or not held:
            rid = int(_take(pool, 1)[0])
            if rid < 0:
                pool = grown(pool)
                rid = int(_take(pool, 1)[0])
            pool.fields[rid] = (rid, 7)
            held.append(rid)
        else:
            _give(pool, held.pop(0))
    assert len(set(held)) == len(held) == in_use(pool)
    for rid in held:
        assert tuple(pool.fields[rid]) == (rid, 7)


def test_a_pool_needs_room_and_fields():
    with pytest.raises(ValueError):
        record_pool(0, 3)
