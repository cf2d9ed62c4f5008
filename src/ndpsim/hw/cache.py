"""Set-associative caches with LRU replacement, compiled.

A cache holds line addresses (byte address >> log2(line size)). ``lookup`` answers hit or miss and
refreshes the line's age on a hit; ``fill`` inserts a line and reports the victim; write-through or
write-back is the caller's policy (``fill(..., dirty=True)`` and the returned victim tell it what
to write back). Miss status holding registers (MSHRs) are a small table of lines in flight.

Caches that share the lines between them (the slices of an L2, line ``l`` in slice
``l mod slices``) index their sets with the line's number within its slice, ``l // slices``:
indexing with ``l`` itself would confine each slice to the sets congruent to it, a fraction of
its capacity.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndpsim.numba_cache import compiled

INVALID = -1


class Caches(NamedTuple):
    """Several caches of the same shape (one per SM, per slice, ...), indexed first by cache."""

    tags: np.ndarray  # int64[caches, sets, ways]: line address or INVALID
    stamp: np.ndarray  # int64[caches, sets, ways]: last use, for LRU
    dirty: np.ndarray  # bool[caches, sets, ways]
    clock: np.ndarray  # int64[caches]
    mshr_line: np.ndarray  # int64[caches, mshrs]: line in flight or INVALID
    mshr_head: np.ndarray  # int64[caches, mshrs]: first waiting request (caller's id), or -1
    mshr_used: np.ndarray  # int64[caches]
    interleave: np.ndarray  # int64[1]: caches the lines are spread over (set: line // this)


def build_caches(count: int, size_bytes: int, ways: int, line_bytes: int, mshrs: int,
                 interleave: int = 1) -> Caches:  # fmt: skip
    """``count`` caches of ``size_bytes`` each. ``interleave``: how many caches the lines are
    spread over, line ``l`` living in cache ``l mod interleave`` (an L2's slices); 1 when each
    cache may hold any line (private L1s)."""
    sets = max(1, size_bytes // (ways * line_bytes))
    return Caches(
        tags=np.full((count, sets, ways), INVALID, dtype=np.int64),
        stamp=np.zeros((count, sets, ways), dtype=np.int64),
        dirty=np.zeros((count, sets, ways), dtype=np.bool_),
        clock=np.zeros(count, dtype=np.int64),
        mshr_line=np.full((count, max(mshrs, 1)), INVALID, dtype=np.int64),
        mshr_head=np.full((count, max(mshrs, 1)), -1, dtype=np.int64),
        mshr_used=np.zeros(count, dtype=np.int64),
        interleave=np.array([interleave], dtype=np.int64),
    )


@compiled(inline=True)
def _set_of(c, line):
    return (line // c.interleave[0]) % c.tags.shape[1]


@compiled(inline=True)
def lookup(c, cache, line):
    """Whether ``line`` is present; a hit makes it the most recently used."""
    s = _set_of(c, line)
    c.clock[cache] += 1
    for w in range(c.tags.shape[2]):
        if c.tags[cache, s, w] == line:
            c.stamp[cache, s, w] = c.clock[cache]
            return True
    return False


@compiled(inline=True)
def probe(c, cache, line):
    """Whether ``line`` is present, without touching its age."""
    s = _set_of(c, line)
    for w in range(c.tags.shape[2]):
        if c.tags[cache, s, w] == line:
            return True
    return False


@compiled(inline=True)
def way_of(c, cache, line):
    """``(set, way)`` holding ``line``, way -1 when absent (for state kept beside the tags, such
    as a directory's sharers)."""
    s = _set_of(c, line)
    for w in range(c.tags.shape[2]):
        if c.tags[cache, s, w] == line:
            return s, w
    return s, -1


@compiled(inline=True)
def fill(c, cache, line, dirty):
    """Insert ``line`` (or mark it dirty if present). Returns the evicted line and whether it was
    dirty: ``(INVALID, False)`` when nothing valid was evicted."""
    s = _set_of(c, line)
    c.clock[cache] += 1
    victim = 0
    oldest = c.stamp[cache, s, 0]
    for w in range(c.tags.shape[2]):
        tag = c.tags[cache, s, w]
        if tag == line:
            c.stamp[cache, s, w] = c.clock[cache]
            c.dirty[cache, s, w] = c.dirty[cache, s, w] or dirty
            return INVALID, False
        if tag == INVALID:
            victim = w
            oldest = -1
        elif oldest >= 0 and c.stamp[cache, s, w] < oldest:
            victim = w
            oldest = c.stamp[cache, s, w]
    evicted = c.tags[cache, s, victim]
    was_dirty = evicted != INVALID and c.dirty[cache, s, victim]
    c.tags[cache, s, victim] = line
    c.stamp[cache, s, victim] = c.clock[cache]
    c.dirty[cache, s, victim] = dirty
    return evicted, was_dirty


@compiled(inline=True)
def invalidate(c, cache, line):
    """Drop ``line`` if present; returns whether it was."""
    s = _set_of(c, line)
    for w in range(c.tags.shape[2]):
        if c.tags[cache, s, w] == line:
            c.tags[cache, s, w] = INVALID
            c.dirty[cache, s, w] = False
            return True
    return False


@compiled
def flush(c, cache):
    """Invalidate every line of one cache (a write-through cache holds nothing dirty; a
    write-back user writes its dirty lines back first). Lines in flight keep their MSHRs."""
    c.tags[cache, :, :] = INVALID
    c.dirty[cache, :, :] = False


@compiled(inline=True)
def mshr_find(c, cache, line):
    """The MSHR tracking ``line``, or -1."""
    for m in range(c.mshr_line.shape[1]):
        if c.mshr_line[cache, m] == line:
            return m
    return -1


@compiled(inline=True)
def mshr_allocate(c, cache, line):
    """A free MSHR for ``line``, or -1 if all are busy."""
    if c.mshr_used[cache] >= c.mshr_line.shape[1]:
        return -1
    for m in range(c.mshr_line.shape[1]):
        if c.mshr_line[cache, m] == INVALID:
            c.mshr_line[cache, m] = line
            c.mshr_head[cache, m] = -1
            c.mshr_used[cache] += 1
            return m
    return -1


@compiled(inline=True)
def mshr_release(c, cache, m):
    """Free an MSHR; returns the head of its waiting list."""
    head = c.mshr_head[cache, m]
    c.mshr_line[cache, m] = INVALID
    c.mshr_head[cache, m] = -1
    c.mshr_used[cache] -= 1
    return head
