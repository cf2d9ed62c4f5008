"""A CPU host's coherent cache hierarchy, compiled: private L1 and L2 per core, a shared LLC
inclusive of them with a directory, MESI between the cores, and a stream prefetcher at each L2
(ALP's Table 1: L1 32 KB 8-way 4 cycles, L2 256 KB 8-way 7 cycles with a 16-entry stream
prefetcher, LLC 8 MB 16-way 27 cycles inclusive with MESI, 64-byte lines). The caches are
:mod:`ndpsim.hw.cache`'s set-associative LRU caches.

An access is looked up level by level when the core asks (the latency of each level it passes
is added; ZSim's caches work this way, Sanchez and Kozyrakis, ISCA 2013): a hit answers at
once. An LLC miss allocates one of the LLC's MSHRs and leaves the fetch to the caller, who
sends the read of the line's block (memory answers in blocks of one or more lines) to memory and
calls :func:`fill_from_memory` when it returns, then :func:`complete_miss` for each access that
waited on that MSHR (a second miss to a block in flight merges there instead of reading memory
again).

Coherence lives in the LLC's directory, a sharer mask and an owner beside each line's tag:

* the L2 holds everything its L1 holds, and the LLC everything any private cache holds; an LLC
  victim is invalidated in every private cache that holds it (a back-invalidation), its dirty
  data written to memory;
* a read finding another core owning the line (Exclusive or Modified) downgrades it to Shared:
  the owner's dirty data moves to the LLC; a core reading a line nobody else holds owns it
  (Exclusive);
* a write, or a write hitting a private copy the core does not own (an upgrade, which asks the
  directory at the LLC's latency), invalidates every other copy; the writer owns the line,
  Modified;
* each invalidation or downgrade round costs ``coherence_cycles`` (the directory's messages to
  the other cores and their answers: an assumption) and is counted per core reached.

The prefetcher follows ascending streams of L2 accesses (the L1's misses): an access to the line
a stream expects advances it and prefetches the next ``prefetch_degree`` lines into the L2
(from the LLC, or from memory through :data:`CpuCaches.prefetch_line`, each on an LLC MSHR that
later misses merge into, which the caller fetches like a miss and fills with
:func:`fill_from_memory` and :func:`fill_prefetched`); any other access starts a stream in the
least recently used entry.
Dirty LLC victims wait in :data:`CpuCaches.writeback_line` for the caller to write to memory.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndpsim.hw import cache as cachemod
from ndpsim.numba_cache import compiled

# parameters (CpuCaches.params)
(C_CORES, C_PERIOD_PS, C_L1_CYCLES, C_L2_CYCLES, C_LLC_CYCLES, C_COHERENCE_CYCLES,
 C_PREFETCH_DEGREE, C_BLOCK_SHIFT) = range(8)  # fmt: skip
CACHE_PARAMS = 8

# what an access found
HIT, MISS, MERGED, RETRY = 0, 1, 2, 3

# counters per core
(X_L1_HITS, X_L1_MISSES, X_L2_HITS, X_L2_MISSES, X_LLC_HITS, X_LLC_MISSES, X_LLC_MERGED,
 X_UPGRADES, X_INVALIDATIONS, X_DOWNGRADES, X_BACK_INVALIDATIONS, X_WRITEBACKS,
 X_PREFETCHES) = range(13)  # fmt: skip
CACHE_STAT_NAMES = (
    "l1_hits", "l1_misses", "l2_hits", "l2_misses", "llc_hits", "llc_misses", "llc_merged",
    "upgrades", "invalidations", "downgrades", "back_invalidations", "writebacks",
    "prefetches",
)  # fmt: skip

#: The most cores one directory tracks (a sharer mask is one 64-bit word).
MAX_CORES = 63


class CpuCaches(NamedTuple):
    params: np.ndarray  # int64[CACHE_PARAMS]
    l1: cachemod.Caches  # one per core
    l2: cachemod.Caches  # one per core
    llc: cachemod.Caches  # one, shared
    sharers: np.ndarray  # int64[llc sets, llc ways]: the cores holding each LLC line privately
    owner: np.ndarray  # int64[llc sets, llc ways]: the core owning it (E or M), or -1
    stream_next: np.ndarray  # int64[cores, streams]: the line each stream expects next, or -1
    stream_stamp: np.ndarray  # int64[cores, streams]: last use, for LRU
    stats: np.ndarray  # int64[cores, len(CACHE_STAT_NAMES)]
    writeback_line: np.ndarray  # int64[capacity]: dirty LLC victims for memory
    writeback_used: np.ndarray  # int64[1]
    prefetch_line: np.ndarray  # int64[capacity]: lines the prefetchers want from memory
    prefetch_core: np.ndarray  # int64[capacity]
    prefetch_mshr: np.ndarray  # int64[capacity]: the LLC MSHR each holds
    prefetch_used: np.ndarray  # int64[1]
    clock: np.ndarray  # int64[1]: the prefetchers' LRU clock


def build_caches(cores: int, period_ps: int, line_bytes: int, l1: tuple[int, int, int],
                 l2: tuple[int, int, int], llc: tuple[int, int, int], llc_mshrs: int,
                 coherence_cycles: int, streams: int, prefetch_degree: int,
                 block_lines: int = 1, capacity: int = 4096) -> CpuCaches:  # fmt: skip
    """The hierarchy of ``cores`` cores; each level as (bytes, ways, latency cycles). Memory
    answers in blocks of ``block_lines`` lines (a power of two): one read brings them all."""
    if block_lines < 1 or block_lines & (block_lines - 1):
        raise ValueError(f"a memory block is a power of two of lines, got {block_lines}")
    if not 1 <= cores <= MAX_CORES:
        raise ValueError(f"a directory tracks 1 to {MAX_CORES} cores, got {cores}")
    p = np.zeros(CACHE_PARAMS, dtype=np.int64)
    p[[C_CORES, C_PERIOD_PS, C_L1_CYCLES, C_L2_CYCLES, C_LLC_CYCLES, C_COHERENCE_CYCLES,
       C_PREFETCH_DEGREE, C_BLOCK_SHIFT]] = (cores, period_ps, l1[2], l2[2], llc[2],
                                             coherence_cycles, prefetch_degree,
                                             block_lines.bit_length() - 1)  # fmt: skip
    shared = cachemod.build_caches(1, llc[0], llc[1], line_bytes, llc_mshrs)
    return CpuCaches(
        params=p,
        l1=cachemod.build_caches(cores, l1[0], l1[1], line_bytes, 1),
        l2=cachemod.build_caches(cores, l2[0], l2[1], line_bytes, 1),
        llc=shared,
        sharers=np.zeros(shared.tags.shape[1:], dtype=np.int64),
        owner=np.full(shared.tags.shape[1:], -1, dtype=np.int64),
        stream_next=np.full((cores, max(streams, 1)), -1, dtype=np.int64),
        stream_stamp=np.zeros((cores, max(streams, 1)), dtype=np.int64),
        stats=np.zeros((cores, len(CACHE_STAT_NAMES)), dtype=np.int64),
        writeback_line=np.zeros(capacity, dtype=np.int64),
        writeback_used=np.zeros(1, dtype=np.int64),
        prefetch_line=np.zeros(capacity, dtype=np.int64),
        prefetch_core=np.zeros(capacity, dtype=np.int64),
        prefetch_mshr=np.zeros(capacity, dtype=np.int64),
        prefetch_used=np.zeros(1, dtype=np.int64),
        clock=np.zeros(1, dtype=np.int64),
    )


@compiled(inline=True)
def _cycles(h, n):
    return n * h.params[C_PERIOD_PS]


@compiled(inline=True)
def _private_dirty(h, core, line):
    """Whether ``core``'s L1 or L2 copy of ``line`` is dirty."""
    s, w = cachemod.way_of(h.l1, core, line)
    if w >= 0 and h.l1.dirty[core, s, w]:
        return True
    s, w = cachemod.way_of(h.l2, core, line)
    return w >= 0 and h.l2.dirty[core, s, w]


@compiled(inline=True)
def _clean(h, core, line):
    """``core`` keeps a clean copy (its dirty data has gone to the LLC)."""
    s, w = cachemod.way_of(h.l1, core, line)
    if w >= 0:
        h.l1.dirty[core, s, w] = False
    s, w = cachemod.way_of(h.l2, core, line)
    if w >= 0:
        h.l2.dirty[core, s, w] = False


@compiled
def _drop_private(h, core, line):
    """``core`` loses its copies of ``line``; returns whether one was dirty."""
    dirty = _private_dirty(h, core, line)
    cachemod.invalidate(h.l1, core, line)
    cachemod.invalidate(h.l2, core, line)
    return dirty


@compiled
def _invalidate_others(h, core, s, w, line):
    """Every other holder of LLC line (s, w) loses it; returns how many there were."""
    others = h.sharers[s, w] & ~(1 << core)
    reached = 0
    for o in range(h.params[C_CORES]):
        if (others >> o) & 1:
            if _drop_private(h, o, line):
                h.llc.dirty[0, s, w] = True
            reached += 1
    h.stats[core, X_INVALIDATIONS] += reached
    h.sharers[s, w] &= 1 << core
    return reached


@compiled
def _directory(h, core, line, write, t):
    """The directory's part of ``core``'s access to ``line`` (in the LLC): returns when the
    access may complete, a coherence round later if it had to reach other cores."""
    s, w = cachemod.way_of(h.llc, 0, line)
    owner = h.owner[s, w]
    if write:
        if _invalidate_others(h, core, s, w, line) > 0:
            t += _cycles(h, h.params[C_COHERENCE_CYCLES])
        h.owner[s, w] = core
    else:
        if owner >= 0 and owner != core:  # Exclusive or Modified elsewhere: to Shared
            if _private_dirty(h, owner, line):
                _clean(h, owner, line)
                h.llc.dirty[0, s, w] = True
            h.stats[core, X_DOWNGRADES] += 1
            h.owner[s, w] = -1
            t += _cycles(h, h.params[C_COHERENCE_CYCLES])
        elif h.sharers[s, w] & ~(1 << core) == 0:
            h.owner[s, w] = core  # nobody else holds it: Exclusive
    h.sharers[s, w] |= 1 << core
    return t


@compiled
def _fill_l2_only(h, core, line):
    """Bring ``line`` into ``core``'s L2; its victim leaves the core's L1 too, its dirty data
    goes to the LLC, and the directory forgets the core holds it."""
    victim, dirty = cachemod.fill(h.l2, core, line, False)
    if victim != cachemod.INVALID:
        dirty = _drop_private(h, core, victim) or dirty
        s, w = cachemod.way_of(h.llc, 0, victim)
        if w >= 0:
            h.llc.dirty[0, s, w] = h.llc.dirty[0, s, w] or dirty
            h.sharers[s, w] &= ~(1 << core)
            if h.owner[s, w] == core:
                h.owner[s, w] = -1


@compiled
def _fill_private(h, core, line, write):
    """Bring ``line`` into ``core``'s L2 and L1, keeping L1 within L2 and both within the LLC."""
    _fill_l2_only(h, core, line)
    victim, dirty = cachemod.fill(h.l1, core, line, write)
    if victim != cachemod.INVALID and dirty:
        cachemod.fill(h.l2, core, victim, True)  # the L2 holds it: mark it dirty there


@compiled
def _prefetch(h, core, line):
    """Train ``core``'s stream prefetcher with an L2 access to ``line``."""
    h.clock[0] += 1
    streams = h.stream_next.shape[1]
    hit = -1
    oldest = 0
    for k in range(streams):
        if h.stream_next[core, k] == line:
            hit = k
        if h.stream_stamp[core, k] < h.stream_stamp[core, oldest]:
            oldest = k
    if hit < 0:  # a new stream, expecting the next line
        h.stream_next[core, oldest] = line + 1
        h.stream_stamp[core, oldest] = h.clock[0]
        return
    h.stream_next[core, hit] = line + 1
    h.stream_stamp[core, hit] = h.clock[0]
    for q in range(line + 1, line + 1 + h.params[C_PREFETCH_DEGREE]):
        if cachemod.probe(h.l2, core, q):
            continue
        h.stats[core, X_PREFETCHES] += 1
        if cachemod.probe(h.llc, 0, q):
            _directory(h, core, q, False, 0)
            _fill_l2_only(h, core, q)
        elif (cachemod.mshr_find(h.llc, 0, q >> h.params[C_BLOCK_SHIFT]) < 0
              and h.prefetch_used[0] < len(h.prefetch_line)):  # fmt: skip
            # a demand miss meanwhile waits on the block's MSHR
            m = cachemod.mshr_allocate(h.llc, 0, q >> h.params[C_BLOCK_SHIFT])
            if m < 0:
                return
            n = h.prefetch_used[0]
            h.prefetch_line[n], h.prefetch_core[n], h.prefetch_mshr[n] = q, core, m
            h.prefetch_used[0] = n + 1


@compiled
def access(h, core, line, write, t):
    """``core`` reads (or writes) ``line`` at ``t``: ``(time, outcome, mshr)``. HIT: the data is
    there at ``time``. MISS: the caller reads the line's block from memory from ``time`` on;
    MERGED: the block is already on its way, on LLC MSHR ``mshr`` (the caller parks the access
    there); RETRY: every LLC MSHR is busy."""
    t += _cycles(h, h.params[C_L1_CYCLES])
    if cachemod.lookup(h.l1, core, line):
        h.stats[core, X_L1_HITS] += 1
        if write:
            t = _upgrade(h, core, line, t)
            cachemod.fill(h.l1, core, line, True)
        return t, HIT, -1
    h.stats[core, X_L1_MISSES] += 1
    t += _cycles(h, h.params[C_L2_CYCLES])
    if h.params[C_PREFETCH_DEGREE] > 0:
        _prefetch(h, core, line)
    if cachemod.lookup(h.l2, core, line):
        h.stats[core, X_L2_HITS] += 1
        if write:
            t = _upgrade(h, core, line, t)
        _fill_private(h, core, line, write)
        return t, HIT, -1
    h.stats[core, X_L2_MISSES] += 1
    t += _cycles(h, h.params[C_LLC_CYCLES])
    if cachemod.lookup(h.llc, 0, line):
        h.stats[core, X_LLC_HITS] += 1
        t = _directory(h, core, line, write, t)
        _fill_private(h, core, line, write)
        return t, HIT, -1
    h.stats[core, X_LLC_MISSES] += 1
    block = line >> h.params[C_BLOCK_SHIFT]
    m = cachemod.mshr_find(h.llc, 0, block)
    if m >= 0:
        h.stats[core, X_LLC_MERGED] += 1
        return t, MERGED, m
    m = cachemod.mshr_allocate(h.llc, 0, block)
    if m < 0:
        return t, RETRY, -1
    return t, MISS, m


@compiled
def _upgrade(h, core, line, t):
    """A write hit on a private copy: a copy ``core`` owns is written at once; another asks
    the directory, which invalidates the other copies."""
    s, w = cachemod.way_of(h.llc, 0, line)
    if h.owner[s, w] == core:
        return t
    h.stats[core, X_UPGRADES] += 1
    return _directory(h, core, line, True, t + _cycles(h, h.params[C_LLC_CYCLES]))


@compiled
def _into_llc(h, core, line):
    """Insert ``line`` into the LLC: its victim leaves every private cache and, dirty, goes to
    memory; the new line has no private copy yet."""
    victim, dirty = cachemod.fill(h.llc, 0, line, False)
    if victim != cachemod.INVALID:
        for o in range(h.params[C_CORES]):
            if cachemod.probe(h.l2, o, victim) or cachemod.probe(h.l1, o, victim):
                dirty = _drop_private(h, o, victim) or dirty
                h.stats[o, X_BACK_INVALIDATIONS] += 1
        if dirty and h.writeback_used[0] < len(h.writeback_line):
            h.writeback_line[h.writeback_used[0]] = victim
            h.writeback_used[0] += 1
            h.stats[core, X_WRITEBACKS] += 1
    s, w = cachemod.way_of(h.llc, 0, line)
    h.sharers[s, w] = 0
    h.owner[s, w] = -1


@compiled
def fill_from_memory(h, core, block, mshr):
    """Memory answered the read of ``block`` (LLC MSHR ``mshr``, allocated by ``core``'s miss
    or prefetch): each of its lines the LLC lacks goes in. Returns the head of the MSHR's
    waiting list (the caller's ids), -1 for none."""
    shift = h.params[C_BLOCK_SHIFT]
    for line in range(block << shift, (block + 1) << shift):
        if not cachemod.probe(h.llc, 0, line):
            _into_llc(h, core, line)
    return cachemod.mshr_release(h.llc, 0, mshr)


@compiled
def complete_miss(h, core, line, write, t):
    """An access that missed the LLC gets its line (now in the LLC) at ``t``; returns when its
    data is there (a coherence round later if another core took the line meanwhile)."""
    t = _directory(h, core, line, write, t)
    _fill_private(h, core, line, write)
    return t


@compiled
def fill_prefetched(h, core, line):
    """A prefetch from memory for ``core`` arrived (after :func:`fill_from_memory`)."""
    _directory(h, core, line, False, 0)
    _fill_l2_only(h, core, line)


__all__ = ["CACHE_STAT_NAMES", "HIT", "MERGED", "MISS", "RETRY", "CpuCaches", "access",
           "build_caches", "complete_miss", "fill_from_memory", "fill_prefetched"]  # fmt: skip
