"""The compiled core of a GPU attached to memory cubes: events and SM clocks, interleaved.

A memory request's life after it leaves an SM (:mod:`ndpsim.hw.gpu.sm`):

1. ``L2_REQUEST``: it reaches its L2 slice through the crossbar. A load hit answers after the hit
   latency; a miss joins the MSHR of its line, or takes one and goes to memory. Stores and
   reductions are written through (and update a present line); atomics are done at the L2.
2. ``MEM_ARRIVE``: after the host-to-cube link, it enters its vault's controller queue, or that
   channel's backlog when the queue is full.
3. ``DRAM_TICK``: a channel controller issues commands; finished requests become ``DRAM_DONE``.
4. ``DRAM_DONE``: read data (or a write acknowledgement) crosses the cube-to-host link.
5. ``L2_FILL``: the line fills the L2 and answers everyone waiting on its MSHR.
6. ``SM_FILL``: the line reaches the SM, fills the L1 and completes the loads waiting on it.

Events at a time come before the SM clock edge at that time, so data arriving at ``t`` can be
used by an instruction issued at ``t``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ndpsim.engine import events as ev
from ndpsim.hw import cache as cachemod
from ndpsim.hw import link as linkmod
from ndpsim.hw.dram import controller as ctl
from ndpsim.hw.dram.mapping import BANK, BANKGROUP, CHANNEL, COLUMN, CUBE, RANK, ROW, decode
from ndpsim.hw.gpu import requests as rq
from ndpsim.hw.gpu import sm as smmod
from ndpsim.hw.gpu.sm import NEVER
from ndpsim.hw.gpu.work import W_NUM_CTAS

EV_L2_REQUEST = smmod.EV_L2_REQUEST
EV_MEM_ARRIVE, EV_DRAM_TICK, EV_DRAM_DONE, EV_L2_FILL, EV_SM_FILL = 2, 3, 4, 5, 6

(M_SLICES, M_L2_LATENCY, M_L2_PERIOD, M_XBAR_LATENCY, M_HEADER, M_LINE, M_TCK, M_CUBES,
 M_CHANNELS_PER_CUBE, M_L2_ENABLED) = range(10)  # fmt: skip
MEM_PARAMS = 10

(L_ACCESSES, L_HITS, L_MISSES, L_MERGES, L_MSHR_FULL, L_WRITES, L_ATOMICS, L_FILLS,
 L_DRAM_READS, L_DRAM_WRITES) = range(10)  # fmt: skip
L2_STAT_NAMES = (
    "accesses", "hits", "misses", "mshr_merges", "mshr_full_retries", "write_throughs",
    "atomics", "fills", "dram_reads", "dram_writes",
)  # fmt: skip

# advance() results
FINISHED, EPOCH_END, EVENTS_FULL, STUCK = 0, 1, 2, 3
#: advance() stops while at least this many event slots are free, so one SM round (a few
#: hundred line transactions at most) can never overflow the queue; the caller then grows it.
EVENT_HEADROOM = 1 << 14


class MemorySide(NamedTuple):
    """The L2 slices and everything beyond them."""

    params: np.ndarray  # int64[MEM_PARAMS]
    slice_port: np.ndarray  # int64[slices]: link from the slice back to the SMs
    to_cube: np.ndarray  # int64[cubes]: host-to-cube link
    from_cube: np.ndarray  # int64[cubes]: cube-to-host link
    map_bits: np.ndarray
    map_xor: np.ndarray
    backlog_head: np.ndarray  # int64[channels]: requests waiting for a full controller queue
    backlog_tail: np.ndarray
    tick_at: np.ndarray  # int64[channels]: the pending DRAM_TICK of each channel (ps)
    mshr_wait_head: np.ndarray  # int64[slices]: requests waiting for a free L2 MSHR (FIFO)
    mshr_wait_tail: np.ndarray
    fields: np.ndarray  # int64[7]: scratch for address decoding
    nodes: np.ndarray  # int64[5]: scratch for the DRAM controller
    stats: np.ndarray  # int64[slices, len(L2_STAT_NAMES)]
    progress: np.ndarray  # int64[2]: requests completed, time of the last completion


# ---------------------------------------------------------------------------- handlers
@njit(cache=True, inline="always")
def _to_memory(mem, links, events, pool, rid, now):
    """Send request ``rid`` (its line already physical) over its cube's link to its vault."""
    f = pool.fields[rid]
    decode(mem.map_bits, mem.map_xor, f[rq.Q_LINE] * mem.params[M_LINE], mem.fields)
    cube = mem.fields[CUBE]
    f[rq.Q_CUBE] = cube
    f[rq.Q_CHANNEL] = cube * mem.params[M_CHANNELS_PER_CUBE] + mem.fields[CHANNEL]
    f[rq.Q_RANK] = mem.fields[RANK]
    f[rq.Q_BANKGROUP] = mem.fields[BANKGROUP]
    f[rq.Q_BANK] = mem.fields[BANK]
    f[rq.Q_ROW] = mem.fields[ROW]
    f[rq.Q_COLUMN] = mem.fields[COLUMN]
    header = mem.params[M_HEADER]
    if f[rq.Q_KIND] == rq.R_LOAD:
        arrival = linkmod.send(links, mem.to_cube[cube], now, header, linkmod.READ_REQUEST)
    else:
        arrival = linkmod.send(links, mem.to_cube[cube], now, header + f[rq.Q_BYTES],
                               linkmod.WRITE_REQUEST)  # fmt: skip
    ev.push(events, arrival, EV_MEM_ARRIVE, rid, 0)


@njit(cache=True, inline="always")
def _wake_channel(mem, events, ch, now):
    tck = mem.params[M_TCK]
    t = ((now + tck - 1) // tck) * tck
    if t < mem.tick_at[ch]:
        mem.tick_at[ch] = t
        ev.push(events, t, EV_DRAM_TICK, ch, 0)


@njit(cache=True, inline="always")
def _enqueue(dram, pool, rid, cycle):
    f = pool.fields[rid]
    return ctl.enqueue(dram, f[rq.Q_CHANNEL], f[rq.Q_KIND] != rq.R_LOAD, rid, f[rq.Q_RANK],
                       f[rq.Q_BANKGROUP], f[rq.Q_BANK], f[rq.Q_ROW], f[rq.Q_COLUMN],
                       cycle)  # fmt: skip


@njit(cache=True, inline="always")
def _mem_arrive(mem, dram, events, pool, rid, now):
    ch = pool.fields[rid, rq.Q_CHANNEL]
    cycle = now // mem.params[M_TCK]
    if mem.backlog_head[ch] < 0 and _enqueue(dram, pool, rid, cycle):
        _wake_channel(mem, events, ch, now)
        return
    # The controller queue is full: wait, in arrival order, for room.
    pool.fields[rid, rq.Q_BACKLOG_NEXT] = -1
    if mem.backlog_head[ch] < 0:
        mem.backlog_head[ch] = rid
    else:
        pool.fields[mem.backlog_tail[ch], rq.Q_BACKLOG_NEXT] = rid
    mem.backlog_tail[ch] = rid


@njit(cache=True, inline="always")
def _dram_tick(mem, dram, events, pool, ch, now):
    if now != mem.tick_at[ch]:
        return  # superseded by an earlier tick
    mem.tick_at[ch] = NEVER
    tck = mem.params[M_TCK]
    cycle = now // tck
    wake = ctl.tick(dram, ch, cycle, mem.nodes)
    for i in range(dram.done_count[0]):
        ev.push(events, dram.done_cycle[i] * tck, EV_DRAM_DONE, dram.done_tag[i], 0)
    dram.done_count[0] = 0
    while mem.backlog_head[ch] >= 0 and _enqueue(dram, pool, mem.backlog_head[ch], cycle):
        mem.backlog_head[ch] = pool.fields[mem.backlog_head[ch], rq.Q_BACKLOG_NEXT]
        wake = min(wake, cycle + 1)
    if wake < ctl.NEVER:
        t = wake * tck
        if t < mem.tick_at[ch]:
            mem.tick_at[ch] = t
            ev.push(events, t, EV_DRAM_TICK, ch, 0)


@njit(cache=True, inline="always")
def _respond(mem, links, events, pool, rid, slice_, now):
    """Send line data from slice ``slice_`` to the SM of ``rid``."""
    size_bytes = mem.params[M_HEADER] + mem.params[M_LINE]
    arrival = linkmod.send(links, mem.slice_port[slice_], now, size_bytes, linkmod.READ_DATA)
    ev.push(events, arrival + mem.params[M_XBAR_LATENCY], EV_SM_FILL, rid, 0)


@njit(cache=True, inline="always")
def _l2_request(mem, l2, links, events, pool, rid, now):
    f = pool.fields[rid]
    line = f[rq.Q_LINE]
    slice_ = line % mem.params[M_SLICES]
    f[rq.Q_SLICE] = slice_
    st = mem.stats[slice_]
    kind = f[rq.Q_KIND]
    latency = mem.params[M_L2_LATENCY]
    enabled = mem.params[M_L2_ENABLED] != 0
    st[L_ACCESSES] += 1
    if kind == rq.R_STORE or kind == rq.R_REDUCTION:
        if enabled and cachemod.lookup(l2, slice_, line):
            st[L_HITS] += 1
        st[L_WRITES] += 1
        st[L_DRAM_WRITES] += 1
        _to_memory(mem, links, events, pool, rid, now + latency)
        return
    if kind == rq.R_ATOMIC:
        st[L_ATOMICS] += 1
    if enabled and cachemod.lookup(l2, slice_, line):
        st[L_HITS] += 1
        _respond(mem, links, events, pool, rid, slice_, now + latency)
        return
    st[L_MISSES] += 1
    if enabled:
        mshr = cachemod.mshr_find(l2, slice_, line)
        if mshr >= 0:
            st[L_MERGES] += 1
            f[rq.Q_L2_NEXT] = l2.mshr_head[slice_, mshr]
            l2.mshr_head[slice_, mshr] = rid
            return
        mshr = cachemod.mshr_allocate(l2, slice_, line)
        if mshr < 0:  # wait, in order, for a fill to free an MSHR
            st[L_MSHR_FULL] += 1
            f[rq.Q_L2_NEXT] = -1
            if mem.mshr_wait_head[slice_] < 0:
                mem.mshr_wait_head[slice_] = rid
            else:
                pool.fields[mem.mshr_wait_tail[slice_], rq.Q_L2_NEXT] = rid
            mem.mshr_wait_tail[slice_] = rid
            return
        f[rq.Q_L2_NEXT] = -1  # it heads the MSHR's waiting list
        l2.mshr_head[slice_, mshr] = rid
    st[L_DRAM_READS] += 1
    _to_memory(mem, links, events, pool, rid, now + latency)


@njit(cache=True, inline="always")
def _dram_done(mem, links, events, pool, rid, now):
    f = pool.fields[rid]
    cube = f[rq.Q_CUBE]
    header = mem.params[M_HEADER]
    if f[rq.Q_KIND] == rq.R_LOAD or f[rq.Q_KIND] == rq.R_ATOMIC:
        arrival = linkmod.send(links, mem.from_cube[cube], now, header + mem.params[M_LINE],
                               linkmod.READ_DATA)  # fmt: skip
        ev.push(events, arrival, EV_L2_FILL, rid, 0)
        return
    linkmod.send(links, mem.from_cube[cube], now, header, linkmod.WRITE_ACK)
    mem.progress[0] += 1
    mem.progress[1] = now
    rq.release(pool, rid)


@njit(cache=True, inline="always")
def _l2_fill(mem, l2, links, events, pool, rid, now):
    f = pool.fields[rid]
    line = f[rq.Q_LINE]
    slice_ = f[rq.Q_SLICE]
    mem.stats[slice_, L_FILLS] += 1
    if mem.params[M_L2_ENABLED] == 0:
        _respond(mem, links, events, pool, rid, slice_, now)
        return
    cachemod.fill(l2, slice_, line, False)
    mshr = cachemod.mshr_find(l2, slice_, line)
    waiter = cachemod.mshr_release(l2, slice_, mshr)
    while waiter >= 0:
        nxt = pool.fields[waiter, rq.Q_L2_NEXT]
        _respond(mem, links, events, pool, waiter, slice_, now)
        waiter = nxt
    # An MSHR is free again: requests waiting for one go on, oldest first, for as long as
    # MSHRs stay free (one that hits or merges takes none, so the next may go too).
    while mem.mshr_wait_head[slice_] >= 0 and l2.mshr_used[slice_] < l2.mshr_line.shape[1]:
        blocked = mem.mshr_wait_head[slice_]
        mem.mshr_wait_head[slice_] = pool.fields[blocked, rq.Q_L2_NEXT]
        pool.fields[blocked, rq.Q_L2_NEXT] = -1
        _l2_request(mem, l2, links, events, pool, blocked, now)


@njit(cache=True, inline="always")
def _sm_fill(sm, work, l1, mem, pool, rid, now):
    f = pool.fields[rid]
    s = f[rq.Q_SM]
    mem.progress[0] += 1
    mem.progress[1] = now
    smmod.memory_freed(sm, s, now)
    if f[rq.Q_KIND] == rq.R_ATOMIC or sm.params[smmod.S_L1_ENABLED] == 0:
        smmod.complete_transaction(sm, work, s, f[rq.Q_SLOT], f[rq.Q_LOAD], now)
        rq.release(pool, rid)
        return
    line = f[rq.Q_LINE]
    cachemod.fill(l1, s, line, False)
    mshr = cachemod.mshr_find(l1, s, line)
    waiter = cachemod.mshr_release(l1, s, mshr)
    while waiter >= 0:
        w = pool.fields[waiter]
        nxt = w[rq.Q_NEXT]
        smmod.complete_transaction(sm, work, s, w[rq.Q_SLOT], w[rq.Q_LOAD], now)
        rq.release(pool, waiter)
        waiter = nxt


# ------------------------------------------------------------------------------- loop
@njit(cache=True, _nrt=False)
def advance(sm, work, l1, pool, links, events, sm_port, page, mem, l2, dram, sm_last, until):
    """Run until every CTA finished and every request completed (``FINISHED``), the next thing
    happens after ``until`` (``EPOCH_END``), the event queue is nearly full (``EVENTS_FULL``:
    grow it and call again), or nothing at all can happen any more although work is left
    (``STUCK``). Returns (status, time reached)."""
    period = sm.params[smmod.S_PERIOD]
    sms = sm.params[smmod.S_COUNT]
    schedulers = sm.params[smmod.S_SCHEDULERS]
    requests = pool.free.shape[0]
    num_ctas = work.params[W_NUM_CTAS]
    now = 0
    while True:
        if events.meta[2] < EVENT_HEADROOM:
            return EVENTS_FULL, now
        if sm.counters[3] == num_ctas and pool.meta[0] == requests:
            # Every CTA finished and every request (writes included) completed; what is left
            # in the queue (refresh ticks) belongs to the memory, not to this kernel.
            end = mem.progress[1]
            for s in range(sms):
                end = max(end, sm_last[s])
            return FINISHED, end
        t_event = ev.peek_time(events)
        if t_event < 0:
            t_event = NEVER
        t_sm = sm.sm_min[0]
        now = min(t_event, t_sm)
        if now >= NEVER:
            return STUCK, now
        if now > until:
            return EPOCH_END, until
        if t_event <= t_sm:
            t, kind, a0, _ = ev.pop(events)
            if kind == EV_L2_REQUEST:
                _l2_request(mem, l2, links, events, pool, a0, t)
            elif kind == EV_MEM_ARRIVE:
                _mem_arrive(mem, dram, events, pool, a0, t)
            elif kind == EV_DRAM_TICK:
                _dram_tick(mem, dram, events, pool, a0, t)
            elif kind == EV_DRAM_DONE:
                _dram_done(mem, links, events, pool, a0, t)
            elif kind == EV_L2_FILL:
                _l2_fill(mem, l2, links, events, pool, a0, t)
            elif kind == EV_SM_FILL:
                _sm_fill(sm, work, l1, mem, pool, a0, t)
            continue
        t_sm = NEVER
        for s in range(sms):
            if sm.sm_next[s] != now:
                if sm.sm_next[s] < t_sm:
                    t_sm = sm.sm_next[s]
                continue
            # cycles the SM slept through count as stalls of the kind it went to sleep with
            skipped = (now - sm_last[s]) // period - 1
            if skipped > 0:
                reason = smmod.T_STALL_DEPENDENCY if sm.sm_warps[s] > 0 else smmod.T_STALL_IDLE
                sm.stats[s, reason] += skipped * schedulers
            sm_last[s] = now
            smmod.cycle(sm, work, l1, pool, links, events, sm_port, page, s, now)
            if sm.sm_next[s] < t_sm:
                t_sm = sm.sm_next[s]
        sm.sm_min[0] = t_sm
